//! The worker, the sender and the inbox against the port mocks: what each event
//! produces for whom, what is stored and marked, and how each attempt's outcome is
//! recorded.

use super::*;
use crate::ServiceError;
use crate::fixtures::{alice, any_mission, principal, service_type};
use consular_domain::notification::{
    AfterAttempt, Email, EmailPreferences, EmailStatus, Language, Notification, NotificationKind, Produced,
};
use consular_domain::{
    Appointment, CitizenId, DocumentId, DocumentRef, DomainEvent, EmailId, MissionId, NotificationId,
    PrincipalId, PrincipalKind, RequestStatus, ServiceRequest, Slot, StaffMember, Subject, fixtures,
};
use consular_ports::{
    Claim, MailError, Mailer, MockCitizenRepository, MockClock, MockMailer, MockNotificationRepository,
    MockRequestRepository, MockServiceTypeRepository, MockStaffRepository, OutboxEvent, RepoError,
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

/// The ports of `world`, with `notifications` and `mailer` given.
fn service(
    world: &World,
    notifications: MockNotificationRepository,
    mailer: Option<MockMailer>,
) -> NotificationService {
    let (request, staff) = (world.request.clone(), world.staff.clone());
    let mut requests = MockRequestRepository::new();
    requests.expect_get().returning(move |_| Ok(Some(request.clone())));
    let mut citizens = MockCitizenRepository::new();
    let mission = world.request.mission_id;
    let citizen_id = world.request.citizen_id;
    citizens.expect_get().returning(move |_| {
        let mut new = alice(mission);
        new.preferred_language = "fr-BE".into();
        Ok(Some(new.into_citizen(citizen_id, NOW)))
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
