//! The worker, the sender and the inbox against the port mocks: what each event
//! produces for whom, what is stored and marked, and how each attempt's outcome is
//! recorded.

use super::*;
use crate::ServiceError;
use crate::fixtures::{alice, any_mission, principal, service_type};
use consular_domain::notification::{
    AfterAttempt, Email, EmailPreferences, EmailStatus, Language, Notification, NotificationKind, Produced,
};
use consular_domain::representation::{RepresentationKind, ServiceScope};
use consular_domain::{
    Appointment, CitizenId, DocumentId, DocumentRef, DomainEvent, EmailId, MissionId, NotificationId,
    PrincipalId, PrincipalKind, RequestStatus, ServiceRequest, Slot, StaffMember, Subject, fixtures,
};
use consular_domain::{AppointmentRef, Citizen, Page, Representation, ServiceTypeId};
use consular_ports::{
    Claim, MailError, Mailer, MockAppointmentRepository, MockCitizenRepository, MockClock, MockMailer,
    MockNotificationRepository, MockRepresentationRepository, MockRequestRepository,
    MockServiceTypeRepository, MockStaffRepository, OutboxEvent, RepoError,
};
use serde_json::json;
use std::sync::{Arc, Mutex};
use time::OffsetDateTime;
use time::macros::datetime;
use uuid::Uuid;

const NOW: OffsetDateTime = datetime!(2026-11-23 10:00 UTC);

/// An email made at `NOW`, pending.
pub(crate) fn email() -> Email {
    Email {
        language: Language::Fr,
        status: EmailStatus::Sending,
        attempts: 1,
        next_attempt_at: None,
        ..fixtures::email("ana@example.org", NotificationKind::RequestSubmitted, NOW)
    }
}

fn clock() -> Arc<MockClock> {
    let mut clock = MockClock::new();
    clock.expect_now().return_const(NOW);
    Arc::new(clock)
}

/// A French-speaking citizen's request, assigned to `staff`.
struct World {
    request: ServiceRequest,
    staff: StaffMember,
}

fn world() -> World {
    let mission = MissionId::new();
    let mut new = alice(mission);
    new.preferred_language = "fr-BE".into();
    let citizen = new.into_citizen(CitizenId::new(), NOW);
    let staff = StaffMember { email: "clerk@mission.example".into(), ..fixtures::staff_member(mission, NOW) };
    let actor = Subject { kind: PrincipalKind::Citizen, id: PrincipalId(citizen.id.as_uuid()) };
    let visa = service_type(true);
    let (request, _, _) = ServiceRequest::submit(
        &consular_domain::NewRequest::for_service(visa.id),
        &citizen,
        &visa,
        Some(staff.id),
        actor,
        NOW,
    );
    World { request, staff }
}

/// The ports of `world`, with `notifications` and `mailer` given; the citizen has no
/// representative.
fn service(
    world: &World,
    notifications: MockNotificationRepository,
    mailer: Option<MockMailer>,
) -> NotificationService {
    service_in(world, notifications, mailer, Household::default())
}

/// What a test of representatives adds to `world`: the citizen's birth date, their
/// representations (ended ones included, as the port gives them), the other citizens
/// (the representatives), and the service type of the appointments.
#[derive(Default)]
struct Household {
    born: Option<time::Date>,
    representations: Vec<Representation>,
    others: Vec<Citizen>,
    appointment_service: Option<ServiceTypeId>,
}

/// The ports of `world` and `household`, with `notifications` and `mailer` given. The
/// representations are paged one per page, and read once per batch.
fn service_in(
    world: &World,
    notifications: MockNotificationRepository,
    mailer: Option<MockMailer>,
    household: Household,
) -> NotificationService {
    let (request, staff) = (world.request.clone(), world.staff.clone());
    let mut requests = MockRequestRepository::new();
    requests.expect_get().returning(move |_| Ok(Some(request.clone())));
    let mut citizens = MockCitizenRepository::new();
    let mission = world.request.mission_id;
    let citizen_id = world.request.citizen_id;
    let Household { born, representations, others, appointment_service } = household;
    citizens.expect_get().returning(move |id| {
        if let Some(other) = others.iter().find(|c| c.id == id) {
            return Ok(Some(other.clone()));
        }
        let mut new = alice(mission);
        new.preferred_language = "fr-BE".into();
        let citizen = new.into_citizen(citizen_id, NOW);
        Ok(Some(Citizen { date_of_birth: born.unwrap_or(citizen.date_of_birth), ..citizen }))
    });
    let mut held = MockRepresentationRepository::new();
    let reads = held.expect_for_dependant();
    if !representations.is_empty() {
        // Once per batch: a page each.
        reads.times(representations.len());
    }
    reads.returning(move |dependant, page| {
        assert_eq!(dependant, citizen_id, "only the citizen an event concerns has representatives read");
        let start = page.after.map_or(0, |after| {
            representations.iter().position(|r| r.id.as_uuid() == after).map_or(0, |i| i + 1)
        });
        let items: Vec<_> = representations.iter().skip(start).take(1).cloned().collect();
        let next_after = (start + 1 < representations.len()).then(|| items[0].id.as_uuid());
        Ok(Page { items, next_after })
    });
    let mut appointments = MockAppointmentRepository::new();
    appointments.expect_get().returning(move |id| {
        Ok(appointment_service.map(|service| Appointment { id, service_type_id: service, ..booked(mission) }))
    });
    let mut members = MockStaffRepository::new();
    members.expect_get().returning(move |_| Ok(Some(staff.clone())));
    let mut service_types = MockServiceTypeRepository::new();
    service_types.expect_get().returning(|_| Ok(Some(service_type(true))));
    NotificationService::new(
        NotificationPorts {
            notifications: Arc::new(notifications),
            requests: Arc::new(requests),
            citizens: Arc::new(citizens),
            staff: Arc::new(members),
            missions: Arc::new(any_mission()),
            service_types: Arc::new(service_types),
            representations: Arc::new(held),
            appointments: Arc::new(appointments),
            mailer: mailer.map(|m| Arc::new(m) as Arc<dyn Mailer>),
            access: crate::fixtures::access_recorder(),
            clock: clock(),
        },
        WorkerConfig { node: "node-a".into(), ..WorkerConfig::default() },
    )
}

fn event(raised: DomainEvent) -> OutboxEvent {
    OutboxEvent::new(&raised, NOW).unwrap()
}

/// The `request.submitted` event of `world`'s request.
fn submitted(world: &World) -> OutboxEvent {
    let r = &world.request;
    event(DomainEvent::RequestSubmitted {
        request_id: r.id,
        citizen_id: r.citizen_id,
        service_type_id: r.service_type_id,
        mission_id: r.mission_id,
    })
}

/// What `complete_events` was called with: the events marked, and what they produced.
type Completed = Arc<Mutex<Vec<(Vec<Uuid>, Vec<Produced>)>>>;

/// A repository whose claim returns `events` once and which keeps what is completed.
fn claiming(events: Vec<OutboxEvent>, completed: Completed) -> MockNotificationRepository {
    let mut repo = MockNotificationRepository::new();
    repo.expect_claim_events().times(1).returning(move |claim: &Claim| {
        assert_eq!((claim.node.as_str(), claim.now), ("node-a", NOW));
        assert!(claim.lease_until > claim.now);
        Ok(events.clone())
    });
    repo.expect_preferences().returning(|_| Ok(EmailPreferences::default()));
    repo.expect_complete_events().times(1).returning(move |node, done, produced, now| {
        assert_eq!((node, now), ("node-a", NOW));
        completed.lock().unwrap().push((done.to_vec(), produced.to_vec()));
        Ok(produced.len() as u64)
    });
    repo
}

#[tokio::test]
async fn each_event_is_told_to_whom_the_table_says_in_their_language_and_all_are_marked() {
    let world = world();
    let (request, citizen_id) = (world.request.id, world.request.citizen_id);
    let events = vec![
        event(DomainEvent::RequestStatusChanged {
            request_id: request,
            from: RequestStatus::Submitted,
            to: RequestStatus::InReview,
            reason: Some("checked".into()),
        }),
        event(DomainEvent::MessagePosted {
            request_id: request,
            message_id: Uuid::now_v7(),
            author_kind: PrincipalKind::Citizen,
            citizen_id,
        }),
        event(DomainEvent::DocumentUploaded {
            document: DocumentRef {
                document_id: DocumentId::new(),
                citizen_id,
                request_id: Some(request),
                kind: "passport_photo".into(),
            },
            media_type: "image/jpeg".into(),
        }),
        OutboxEvent { kind: "something.new".into(), ..submitted(&world) },
    ];
    let ids: Vec<Uuid> = events.iter().map(|e| e.id).collect();
    let completed = Arc::new(Mutex::new(Vec::new()));
    let service = service(&world, claiming(events, completed.clone()), Some(MockMailer::new()));
    let dispatched = service.dispatch().await.unwrap();
    assert_eq!((dispatched.events, dispatched.notifications), (4, 2));

    let completed = completed.lock().unwrap();
    let (done, produced) = &completed[0];
    assert_eq!(done, &ids, "every claimed event is marked, even those nobody hears");
    let status: &Notification = &produced[0].notification;
    assert_eq!(status.kind, NotificationKind::RequestStatusChanged);
    assert_eq!(status.recipient_id.as_uuid(), world.request.citizen_id.as_uuid());
    assert_eq!(status.request_id, Some(world.request.id));
    assert_eq!(status.mission_id, Some(world.request.mission_id));
    assert_eq!(status.details.status.as_deref(), Some("in_review"));
    assert_eq!(status.details.reason.as_deref(), Some("checked"));
    assert_eq!(status.details.service.as_deref(), Some("Visa"));
    assert_eq!(produced[0].email.as_ref().map(|e| e.language), Some(Language::Fr));
    let message = &produced[1].notification;
    assert_eq!(message.kind, NotificationKind::MessageFromCitizen);
    assert_eq!(message.recipient_id.as_uuid(), world.staff.id.as_uuid());
    assert_eq!(
        produced[1].email.as_ref().map(|e| (e.to.as_str(), e.language)),
        Some(("clerk@mission.example", Language::En))
    );
}

#[tokio::test]
async fn without_a_mailer_notifications_are_in_app_only() {
    let world = world();
    let events = vec![submitted(&world)];
    let completed = Arc::new(Mutex::new(Vec::new()));
    let service = service(&world, claiming(events, completed.clone()), None);
    service.dispatch().await.unwrap();
    let produced = &completed.lock().unwrap()[0].1;
    assert_eq!(produced.len(), 1);
    assert_eq!(produced[0].email, None);
}

#[tokio::test]
async fn a_failed_lookup_stores_and_marks_nothing() {
    let world = world();
    let events = vec![submitted(&world)];
    let mut repo = MockNotificationRepository::new();
    repo.expect_claim_events().returning(move |_| Ok(events.clone()));
    repo.expect_preferences().returning(|_| Err(RepoError::Unavailable("down".into())));
    repo.expect_complete_events().never();
    let service = service(&world, repo, None);
    assert!(matches!(service.dispatch().await, Err(ServiceError::Unavailable(_))));
}

#[tokio::test]
async fn an_empty_claim_completes_nothing() {
    let world = world();
    let mut repo = MockNotificationRepository::new();
    repo.expect_claim_events().returning(|_| Ok(Vec::new()));
    repo.expect_complete_events().never();
    assert_eq!(service(&world, repo, None).dispatch().await.unwrap().events, 0);
}

#[tokio::test]
async fn each_attempt_is_recorded_by_the_retry_policy() {
    let world = world();
    let to = |address: &str| Email { to: address.into(), ..email() };
    let emails = vec![to("ok@example.org"), to("busy@example.org"), to("reject@example.org")];
    let by_id: std::collections::HashMap<EmailId, String> =
        emails.iter().map(|e| (e.id, e.to.clone())).collect();
    let mut repo = MockNotificationRepository::new();
    repo.expect_claim_emails().times(1).returning(move |_| Ok(emails.clone()));
    repo.expect_renew_email_lease().times(3).returning(|_, _, _, _| Ok(true));
    let recorded = Arc::new(Mutex::new(Vec::new()));
    let keep = recorded.clone();
    repo.expect_record_attempt().times(3).returning(move |id, node, after: AfterAttempt, error, now| {
        assert_eq!((node, now), ("node-a", NOW));
        keep.lock().unwrap().push((by_id[&id].clone(), after, error));
        Ok(true)
    });
    let mut mailer = MockMailer::new();
    mailer.expect_send().times(3).returning(|email| match email.to.as_str() {
        "busy@example.org" => Err(MailError::Temporary("451 4.3.0 try again later".into())),
        "reject@example.org" => Err(MailError::Permanent("550 5.1.1 no such mailbox".into())),
        _ => Ok(()),
    });
    let sent = service(&world, repo, Some(mailer)).send_emails().await.unwrap();
    assert_eq!(
        (sent.claimed, sent.delivered, sent.temporary_failures, sent.permanent_failures),
        (3, 1, 1, 1)
    );
    let mut recorded = recorded.lock().unwrap().clone();
    recorded.sort_by(|a, b| a.0.cmp(&b.0));
    let (busy, ok, reject) = (&recorded[0], &recorded[1], &recorded[2]);
    assert_eq!((ok.1.status, ok.1.next_attempt_at, ok.2.clone()), (EmailStatus::Delivered, None, None));
    assert_eq!(busy.1.status, EmailStatus::TemporaryFailure);
    let retry = busy.1.next_attempt_at.unwrap() - NOW;
    assert!(retry > time::Duration::seconds(23) && retry <= time::Duration::seconds(30), "{retry}");
    assert_eq!(busy.2.as_deref(), Some("451 4.3.0 try again later"));
    assert_eq!((reject.1.status, reject.1.next_attempt_at), (EmailStatus::PermanentFailure, None));
}

#[tokio::test]
async fn an_email_whose_lease_was_lost_is_not_sent() {
    let world = world();
    let (kept, lost) = (email(), email());
    let (kept_id, lost_id) = (kept.id, lost.id);
    let mut repo = MockNotificationRepository::new();
    repo.expect_claim_emails().times(1).returning(move |claim: &Claim| {
        assert_eq!(claim.limit, WorkerConfig::default().email_claim(), "the claim fits the lease");
        Ok(vec![kept.clone(), lost.clone()])
    });
    // The database says which lease still holds: the renewal is the check.
    let renewed = Arc::new(Mutex::new(Vec::new()));
    let keep = renewed.clone();
    repo.expect_renew_email_lease().times(2).returning(move |id, node, now, lease_until| {
        assert_eq!((node, now, lease_until), ("node-a", NOW, NOW + time::Duration::seconds(60)));
        keep.lock().unwrap().push(id);
        Ok(id == kept_id)
    });
    repo.expect_record_attempt().times(1).returning(move |id, _, after: AfterAttempt, _, _| {
        assert_eq!((id, after.status), (kept_id, EmailStatus::Delivered));
        Ok(true)
    });
    let mut mailer = MockMailer::new();
    let seen = renewed.clone();
    mailer.expect_send().times(1).returning(move |email| {
        assert_ne!(email.id, lost_id, "an email without its lease was sent");
        assert!(seen.lock().unwrap().contains(&email.id), "sent before its lease was renewed");
        Ok(())
    });
    let sent = service(&world, repo, Some(mailer)).send_emails().await.unwrap();
    assert_eq!((sent.claimed, sent.delivered, sent.lost), (2, 1, 1));
}

#[tokio::test]
async fn a_failed_lease_renewal_sends_nothing() {
    let world = world();
    let mut repo = MockNotificationRepository::new();
    repo.expect_claim_emails().times(1).returning(|_| Ok(vec![email()]));
    repo.expect_renew_email_lease()
        .times(1)
        .returning(|_, _, _, _| Err(RepoError::Unavailable("down".into())));
    repo.expect_record_attempt().never();
    let mut mailer = MockMailer::new();
    mailer.expect_send().never();
    let result = service(&world, repo, Some(mailer)).send_emails().await;
    assert!(matches!(result, Err(ServiceError::Unavailable(_))), "{result:?}");
}

#[tokio::test]
async fn another_principals_notification_is_not_found_and_stays_unread() {
    let world = world();
    let notification = Notification {
        mission_id: Some(world.request.mission_id),
        request_id: Some(world.request.id),
        ..fixtures::notification(PrincipalId(world.request.citizen_id.as_uuid()), PrincipalKind::Citizen, NOW)
    };
    let mut repo = MockNotificationRepository::new();
    let stored = notification.clone();
    repo.expect_get().returning(move |_| Ok(Some(stored.clone())));
    repo.expect_mark_read()
        .times(1)
        .returning(move |_, now| Ok(Some(Notification { read_at: Some(now), ..notification.clone() })));
    let service = service(&world, repo, None);
    let stranger =
        principal(PrincipalKind::Citizen, Uuid::now_v7(), "citizen", Some(world.request.mission_id));
    assert!(matches!(service.mark_read(&stranger, NotificationId::new()).await, Err(ServiceError::NotFound)));
    let owner = principal(
        PrincipalKind::Citizen,
        world.request.citizen_id.as_uuid(),
        "citizen",
        Some(world.request.mission_id),
    );
    let read = service.mark_read(&owner, NotificationId::new()).await.unwrap();
    assert_eq!(read.read_at, Some(NOW));
}

#[tokio::test]
async fn reminders_are_written_for_due_appointments_only() {
    let world = world();
    let appointment = |starts_at: OffsetDateTime, updated_at: OffsetDateTime| {
        let slot = Slot {
            ends_at: starts_at + time::Duration::minutes(15),
            ..fixtures::slot(world.request.mission_id, starts_at, updated_at)
        };
        let by =
            Subject { kind: PrincipalKind::Citizen, id: PrincipalId(world.request.citizen_id.as_uuid()) };
        let (citizen, service_type) = (world.request.citizen_id, world.request.service_type_id);
        Appointment::book(&slot, citizen, service_type, Some(world.request.id), by, updated_at)
    };
    let due = appointment(NOW + time::Duration::hours(20), NOW - time::Duration::days(5));
    let just_booked = appointment(NOW + time::Duration::hours(20), NOW - time::Duration::hours(1));
    let due_id = due.id;
    let mut repo = MockNotificationRepository::new();
    repo.expect_reminder_candidates().returning(move |from, until, _| {
        assert_eq!((from, until), (NOW, NOW + time::Duration::hours(24)));
        Ok(vec![due.clone(), just_booked.clone()])
    });
    repo.expect_schedule_reminder().times(1).returning(move |id, _, event| {
        assert_eq!(id, due_id);
        assert_eq!(event.kind, "appointment.reminder");
        assert_eq!(event.payload["appointment_id"], json!(due_id));
        Ok(true)
    });
    assert_eq!(service(&world, repo, None).schedule_reminders().await.unwrap(), 1);
}

// ---------------------------------------------------------------------- representatives

/// An appointment of mission `mission` booked a week before `NOW`, in two days.
fn booked(mission: MissionId) -> Appointment {
    let starts_at = NOW + time::Duration::days(2);
    let slot = fixtures::slot(mission, starts_at, NOW - time::Duration::days(7));
    let by = Subject { kind: PrincipalKind::Staff, id: PrincipalId::new() };
    Appointment::book(&slot, CitizenId::new(), ServiceTypeId::new(), None, by, NOW - time::Duration::days(7))
}

/// A citizen of `world`'s mission writing in `language` at `address`.
fn representative(world: &World, language: &str, address: &str) -> Citizen {
    let mut new = alice(world.request.mission_id);
    new.preferred_language = language.into();
    new.email = address.into();
    new.into_citizen(CitizenId::new(), NOW)
}

/// A representation of `world`'s citizen held by `by`, from a year before `NOW`.
fn held(world: &World, by: &Citizen, kind: RepresentationKind, services: ServiceScope) -> Representation {
    Representation {
        dependant_id: world.request.citizen_id,
        representative_id: by.id,
        mission_id: world.request.mission_id,
        kind,
        services,
        valid_from: NOW.date() - time::Duration::days(365),
        ..fixtures::representation()
    }
}

/// Who each produced notification went to, about whom.
fn told(produced: &[Produced]) -> Vec<(Uuid, Option<CitizenId>)> {
    produced.iter().map(|p| (p.notification.recipient_id.as_uuid(), p.notification.on_behalf_of)).collect()
}

#[tokio::test]
async fn a_minors_news_goes_to_the_representatives_in_force_whose_mandate_covers_its_service() {
    let world = world();
    let child = world.request.citizen_id;
    // The request is a visa's; the uncle's guardianship and the appointment are passports'.
    let passport = ServiceTypeId::new();
    let mother = representative(&world, "en-GB", "mother@example.org");
    let uncle = representative(&world, "fr", "uncle@example.org");
    let father = representative(&world, "fr", "father@example.org");
    let household = Household {
        born: Some(NOW.date() - time::Duration::days(365 * 10)),
        representations: vec![
            held(&world, &mother, RepresentationKind::Parent, ServiceScope::All),
            held(&world, &uncle, RepresentationKind::Guardian, ServiceScope::Only(vec![passport])),
            Representation {
                ended_at: Some(NOW - time::Duration::days(1)),
                ended_by: Some(Subject { kind: PrincipalKind::Staff, id: PrincipalId::new() }),
                end_reason: Some("custody".into()),
                ..held(&world, &father, RepresentationKind::Parent, ServiceScope::All)
            },
        ],
        others: vec![mother.clone(), uncle.clone(), father],
        appointment_service: Some(passport),
    };
    let status = event(DomainEvent::RequestStatusChanged {
        request_id: world.request.id,
        from: RequestStatus::Submitted,
        to: RequestStatus::InReview,
        reason: None,
    });
    let appointment =
        AppointmentRef { citizen_id: child, ..AppointmentRef::of(&booked(world.request.mission_id)) };
    let reminder = event(DomainEvent::AppointmentReminder { appointment });
    let completed = Arc::new(Mutex::new(Vec::new()));
    let service = service_in(
        &world,
        claiming(vec![status, reminder], completed.clone()),
        Some(MockMailer::new()),
        household,
    );
    let dispatched = service.dispatch().await.unwrap();
    assert_eq!(dispatched.notifications, 3);
    let produced = &completed.lock().unwrap()[0].1;
    let about = Some(child);
    assert_eq!(
        told(produced),
        [(mother.id.as_uuid(), about), (mother.id.as_uuid(), about), (uncle.id.as_uuid(), about)],
        "the visa request's status to the mother (all services) only; the passport appointment to \
         both; never the child while a representative hears, never the ended father's"
    );
    let name = alice(world.request.mission_id).given_name;
    let emails: Vec<_> = produced
        .iter()
        .filter_map(|p| p.email.as_ref().map(|e| (e.to.as_str(), e.language, e.about.as_deref())))
        .collect();
    let mother_en = ("mother@example.org", Language::En, Some(name.as_str()));
    let uncle_fr = ("uncle@example.org", Language::Fr, Some(name.as_str()));
    assert_eq!(
        emails,
        [mother_en, mother_en, uncle_fr],
        "each in their own language, at their own address, naming the child"
    );
}

#[tokio::test]
async fn an_adult_hears_beside_their_representative_and_a_minor_alone_when_none_is_in_force() {
    let world = world();
    let attorney = representative(&world, "fr", "attorney@example.org");
    let cases = [
        (
            None,
            RepresentationKind::AuthorisedRepresentative,
            vec![
                (world.request.citizen_id.as_uuid(), None),
                (attorney.id.as_uuid(), Some(world.request.citizen_id)),
            ],
        ),
        (
            Some(NOW.date() - time::Duration::days(365 * 10)),
            RepresentationKind::AuthorisedRepresentative,
            vec![(world.request.citizen_id.as_uuid(), None)],
        ),
    ];
    for (born, kind, expected) in cases {
        let household = Household {
            born,
            representations: vec![held(&world, &attorney, kind, ServiceScope::All)],
            others: vec![attorney.clone()],
            appointment_service: None,
        };
        let completed = Arc::new(Mutex::new(Vec::new()));
        let service =
            service_in(&world, claiming(vec![submitted(&world)], completed.clone()), None, household);
        service.dispatch().await.unwrap();
        assert_eq!(told(&completed.lock().unwrap()[0].1), expected, "born {born:?}");
    }
}
