//! The use cases of service requests against the port mocks.

use super::*;
use crate::ServiceError;
use crate::fixtures::{alice, principal, service_type};
use consular_domain::fixtures;
use consular_domain::{
    Action, Citizen, CitizenId, Document, DocumentStatus, MissionId, NewCitizen, Page, PageRequest,
    PrincipalId, PrincipalKind, RegistrationStatus, RequestId, RequestStatus, ServiceRequest, ServiceType,
    StaffId, Subject,
};
use consular_ports::{
    Clock, Consistency, MockAppointmentRepository, MockCitizenRepository, MockClock, MockDocumentRepository,
    MockIdempotencyRepository, MockRequestRepository, MockServiceTypeRepository, MockStaffRepository, Note,
    RequestFilter, RequestRecord, SystemClock,
};
use std::sync::Arc;
use time::{Duration, OffsetDateTime};
use uuid::Uuid;

fn citizen(mission: MissionId) -> Citizen {
    NewCitizen { registration_status: RegistrationStatus::Active, ..alice(mission) }
        .into_citizen(CitizenId::new(), OffsetDateTime::UNIX_EPOCH)
}

/// `request`'s detail as the repository reads it: no history, thread, documents or
/// bookings, and `notes` when they were asked for.
fn record(request: ServiceRequest, notes: Option<Vec<Note>>) -> RequestRecord {
    RequestRecord {
        request,
        required_documents: vec![],
        history: vec![],
        messages: vec![],
        notes,
        documents: vec![],
        appointments: vec![],
    }
}

struct Fixture {
    requests: MockRequestRepository,
    citizens: MockCitizenRepository,
    service_types: MockServiceTypeRepository,
    staff: MockStaffRepository,
    documents: MockDocumentRepository,
    appointments: MockAppointmentRepository,
    idempotency: MockIdempotencyRepository,
}

impl Fixture {
    fn new() -> Self {
        Fixture {
            requests: MockRequestRepository::new(),
            citizens: MockCitizenRepository::new(),
            service_types: MockServiceTypeRepository::new(),
            staff: MockStaffRepository::new(),
            documents: MockDocumentRepository::new(),
            appointments: MockAppointmentRepository::new(),
            idempotency: MockIdempotencyRepository::new(),
        }
    }

    fn with_citizen(mut self, c: Citizen) -> Self {
        self.citizens.expect_get().returning(move |id| Ok((id == c.id).then(|| c.clone())));
        self
    }

    fn with_type(mut self, t: ServiceType) -> Self {
        self.service_types.expect_get().returning(move |id| Ok((id == t.id).then(|| t.clone())));
        self
    }

    /// `request` with no history, thread, documents or bookings, and `notes` (returned
    /// only when the use case asks for notes), as the repository's one read of a detail.
    fn with_detail(mut self, request: ServiceRequest, notes: Vec<Note>) -> Self {
        self.requests.expect_detail().returning(move |id, with_notes| {
            Ok((id == request.id).then(|| record(request.clone(), with_notes.then(|| notes.clone()))))
        });
        self
    }

    fn service(self) -> RequestService {
        self.service_with(Arc::new(SystemClock))
    }

    /// The service with a clock stopped at `now`.
    fn service_at(self, now: OffsetDateTime) -> RequestService {
        let mut clock = MockClock::new();
        clock.expect_now().returning(move || now);
        self.service_with(Arc::new(clock))
    }

    fn service_with(self, clock: Arc<dyn Clock>) -> RequestService {
        RequestService::new(RequestPorts {
            requests: Arc::new(self.requests),
            appointments: Arc::new(self.appointments),
            citizens: Arc::new(self.citizens),
            service_types: Arc::new(self.service_types),
            staff: Arc::new(self.staff),
            documents: Arc::new(self.documents),
            idempotency: Arc::new(self.idempotency),
            missions: Arc::new(crate::fixtures::any_mission()),
            access: crate::fixtures::access_recorder(),
            clock,
        })
    }
}

fn stored_request(mission: MissionId, citizen: CitizenId, status: RequestStatus) -> ServiceRequest {
    let t = service_type(true);
    ServiceRequest {
        status,
        sla_due_at: OffsetDateTime::UNIX_EPOCH,
        version: 3,
        ..fixtures::service_request(mission, citizen, &t, OffsetDateTime::UNIX_EPOCH)
    }
}

#[tokio::test]
async fn a_citizen_submits_for_themself_and_the_least_loaded_member_is_assigned() {
    let mission = MissionId::new();
    let alice = citizen(mission);
    let visa = service_type(true);
    let staff_id = StaffId::new();
    let mut fixture = Fixture::new().with_citizen(alice.clone()).with_type(visa.clone());
    fixture.requests.expect_least_loaded_staff().returning(move |_, _| Ok(Some(staff_id)));
    let (alice_id, visa_stages) = (alice.id, visa.stages.clone());
    fixture
        .requests
        .expect_insert()
        .withf(move |r, first, meta| {
            let kinds: Vec<&str> = meta.events.iter().map(|e| e.kind.as_str()).collect();
            r.citizen_id == alice_id
                && r.status == RequestStatus::Submitted
                && r.stages == visa_stages
                && r.assignee_id == Some(staff_id)
                && r.sla_due_at - r.submitted_at == Duration::days(10)
                && first.to_status == RequestStatus::Submitted
                && kinds == ["request.submitted", "request.assigned"]
        })
        .times(1)
        .returning(|_, _, _| Ok(()));
    let me = principal(PrincipalKind::Citizen, alice.id.as_uuid(), "citizen", Some(mission));
    let input = NewRequest::for_service(visa.id);
    let submitted = fixture.service().submit(&me, input, None).await.unwrap();
    assert_eq!((submitted.value.request.citizen_id, submitted.value.overdue), (alice_id, false));
}

/// A parent acting for their child (`On-Behalf-Of`) submits and writes for the child: the
/// request is the child's, and its first history entry, its message and their audit
/// entries record the parent as the actor and the child as whom they acted for
/// (docs/representation.md "Traceability").
#[tokio::test]
async fn a_representatives_submission_and_message_record_whom_they_acted_for() {
    let mission = MissionId::new();
    let child = citizen(mission);
    let visa = service_type(true);
    let parent = fixtures::acting_for(mission, child.id);
    let (child_id, parent_subject) = (child.id, parent.subject);
    let mut fixture = Fixture::new().with_citizen(child.clone()).with_type(visa.clone());
    fixture.requests.expect_least_loaded_staff().returning(|_, _| Ok(None));
    fixture
        .requests
        .expect_insert()
        .withf(move |r, first, meta| {
            r.citizen_id == child_id
                && (first.actor, first.on_behalf_of) == (Some(parent_subject), Some(child_id))
                && meta
                    .audit
                    .iter()
                    .all(|a| (a.actor, a.on_behalf_of) == (Some(parent_subject), Some(child_id)))
        })
        .times(1)
        .returning(|_, _, _| Ok(()));
    let stored = stored_request(mission, child.id, RequestStatus::Submitted);
    let stored_id = stored.id;
    fixture.requests.expect_get().returning(move |id| Ok((id == stored_id).then(|| stored.clone())));
    fixture
        .requests
        .expect_add_message()
        .withf(move |m, meta| {
            (m.author, m.on_behalf_of) == (parent_subject, Some(child_id))
                && meta.audit.iter().all(|a| a.on_behalf_of == Some(child_id))
        })
        .times(1)
        .returning(|_, _| Ok(()));
    let service = fixture.service();

    let submitted = service.submit(&parent, NewRequest::for_service(visa.id), None).await.unwrap();
    assert_eq!(submitted.value.request.citizen_id, child.id);
    let posted = service.post_message(&parent, stored_id, "For my daughter".to_owned(), None).await.unwrap();
    assert_eq!((posted.value.author, posted.value.on_behalf_of), (parent.subject, Some(child.id)));
}

#[tokio::test]
async fn a_replayed_submission_answers_as_submitted_however_late() {
    let mission = MissionId::new();
    let alice = citizen(mission);
    let visa = service_type(true);
    let first = stored_request(mission, alice.id, RequestStatus::Submitted);
    let me = principal(PrincipalKind::Citizen, alice.id.as_uuid(), "citizen", Some(mission));
    let owner = me.client_id;
    let stored = consular_ports::StoredOutcome {
        resource_id: first.id.as_uuid(),
        snapshot: serde_json::to_value(&first).unwrap(),
    };
    let mut fixture = Fixture::new();
    fixture.idempotency.expect_find().returning(move |_, key, now| {
        Ok(Some(consular_ports::IdempotencyRecord {
            owner,
            key: key.to_owned(),
            fingerprint: "f".into(),
            outcome: stored.clone(),
            created_at: now,
            expires_at: now,
        }))
    });
    let late = first.sla_due_at + Duration::days(1);
    assert!(first.is_overdue(late), "past its SLA when replayed");
    let key = crate::IdempotencyRequest { key: "k".into(), fingerprint: "f".into() };
    let input = NewRequest::for_service(visa.id);
    let replayed = fixture.service_at(late).submit(&me, input, Some(&key)).await.unwrap();
    assert!(replayed.replayed);
    assert_eq!(replayed.value, RequestView { request: first, overdue: false });
}

#[tokio::test]
async fn an_inactive_type_takes_no_request_and_other_missions_citizens_are_unknown() {
    let mission = MissionId::new();
    let alice = citizen(mission);
    let closed = service_type(false);
    let svc = Fixture::new().with_citizen(alice.clone()).with_type(closed.clone()).service();
    let me = principal(PrincipalKind::Citizen, alice.id.as_uuid(), "citizen", Some(mission));
    let result = svc.submit(&me, NewRequest::for_service(closed.id), None).await;
    assert!(matches!(result, Err(ServiceError::Conflict { code: "service_inactive", .. })));
    let foreign_staff = principal(PrincipalKind::Staff, Uuid::now_v7(), "staff", Some(MissionId::new()));
    let input = NewRequest { citizen_id: Some(alice.id), ..NewRequest::for_service(closed.id) };
    let result = svc.submit(&foreign_staff, input, None).await;
    assert!(matches!(result, Err(ServiceError::Validation(e)) if e.0[0].pointer == "/citizen_id"));
}

#[tokio::test]
async fn an_illegal_change_names_the_allowed_ones_and_a_stale_etag_is_refused() {
    let mission = MissionId::new();
    let request = stored_request(mission, CitizenId::new(), RequestStatus::Submitted);
    let id = request.id;
    let mut fixture = Fixture::new();
    fixture.requests.expect_get().returning(move |_| Ok(Some(request.clone())));
    fixture.requests.expect_update().never();
    let svc = fixture.service();
    let staff = principal(PrincipalKind::Staff, Uuid::now_v7(), "staff", Some(mission));
    let to =
        |status| StatusChange { action: Some(Action::To(status)), reason: Some("r".into()), assignee: None };
    let approve = to(RequestStatus::Approved);
    let Err(ServiceError::IllegalTransition { allowed, .. }) =
        svc.change(&staff, id, approve.clone(), None).await
    else {
        panic!("expected an illegal transition")
    };
    assert_eq!(allowed, ["in_review", "cancelled"]);
    assert!(matches!(
        svc.change(&staff, id, to(RequestStatus::InReview), Some(&[2])).await,
        Err(ServiceError::PreconditionFailed)
    ));
    // A status change without a reason is refused before anything is read.
    let unexplained = StatusChange { reason: None, ..to(RequestStatus::InReview) };
    assert!(matches!(
        svc.change(&staff, id, unexplained, Some(&[3])).await,
        Err(ServiceError::Validation(e)) if e.0[0].pointer == "/reason" && e.0[0].code == "required"
    ));
}

#[tokio::test]
async fn a_legal_change_writes_history_and_its_event() {
    let mission = MissionId::new();
    let request = stored_request(mission, CitizenId::new(), RequestStatus::Submitted);
    let id = request.id;
    let mut fixture = Fixture::new();
    fixture.requests.expect_get().returning(move |_| Ok(Some(request.clone())));
    fixture
        .requests
        .expect_update()
        .withf(|r, expected, entry, meta| {
            r.status == RequestStatus::InReview
                && *expected == 3
                && entry.as_ref().is_some_and(|e| e.reason.as_deref() == Some("looks complete"))
                && meta.events.len() == 1
                && meta.events[0].kind == "request.status_changed"
        })
        .times(1)
        .returning(|_, _, _, _| Ok(()));
    let staff = principal(PrincipalKind::Staff, Uuid::now_v7(), "staff", Some(mission));
    let review = StatusChange {
        action: Some(Action::To(RequestStatus::InReview)),
        reason: Some("looks complete".into()),
        assignee: None,
    };
    let changed = fixture.service().change(&staff, id, review, Some(&[3])).await.unwrap();
    assert_eq!(changed.request.version, 4);
}

#[tokio::test]
async fn citizens_never_see_notes_and_cannot_change_status() {
    let mission = MissionId::new();
    let alice = citizen(mission);
    let request = stored_request(mission, alice.id, RequestStatus::InReview);
    let id = request.id;
    let author = Subject { kind: PrincipalKind::Staff, id: PrincipalId::new() };
    let note = Note {
        id: Uuid::now_v7(),
        request_id: id,
        author,
        body: "secret".into(),
        created_at: OffsetDateTime::UNIX_EPOCH,
    };
    let mut fixture = Fixture::new().with_detail(request.clone(), vec![note]);
    fixture.requests.expect_get().returning(move |_| Ok(Some(request.clone())));
    let svc = fixture.service();
    let me = principal(PrincipalKind::Citizen, alice.id.as_uuid(), "citizen", Some(mission));
    let mine = svc.get(&me, id).await.unwrap();
    assert!(mine.timeline.iter().all(|item| !matches!(item, TimelineItem::Note(_))));
    let staff = principal(PrincipalKind::Staff, Uuid::now_v7(), "staff", Some(mission));
    let theirs = svc.get(&staff, id).await.unwrap();
    assert!(theirs.timeline.iter().any(|item| matches!(item, TimelineItem::Note(_))));
    assert!(matches!(
        svc.notes(&me, id, PageRequest::default()).await,
        Err(ServiceError::InsufficientScope { .. })
    ));
    let cancel = StatusChange {
        action: Some(Action::To(RequestStatus::Cancelled)),
        reason: Some("r".into()),
        assignee: None,
    };
    assert!(matches!(svc.change(&me, id, cancel, None).await, Err(ServiceError::InsufficientScope { .. })));
    let other = principal(PrincipalKind::Citizen, Uuid::now_v7(), "citizen", Some(mission));
    assert!(matches!(svc.get(&other, id).await, Err(ServiceError::NotFound)));
}

/// Notes are not even read for a caller who may not work on requests; staff of another
/// mission get a 404 without them either.
#[tokio::test]
async fn a_citizens_detail_read_does_not_ask_for_notes() {
    let mission = MissionId::new();
    let alice = citizen(mission);
    let request = stored_request(mission, alice.id, RequestStatus::InReview);
    let id = request.id;
    for (caller, asks_for_notes, found) in [
        (principal(PrincipalKind::Citizen, alice.id.as_uuid(), "citizen", Some(mission)), false, true),
        (principal(PrincipalKind::Staff, Uuid::now_v7(), "staff", Some(mission)), true, true),
        (principal(PrincipalKind::Staff, Uuid::now_v7(), "staff", Some(MissionId::new())), true, false),
    ] {
        let mut fixture = Fixture::new();
        let stored = request.clone();
        fixture
            .requests
            .expect_detail()
            .times(1)
            .withf(move |_, notes| *notes == asks_for_notes)
            .returning(move |_, notes| Ok(Some(record(stored.clone(), notes.then(Vec::new)))));
        let got = fixture.service().get(&caller, id).await;
        assert_eq!(got.is_ok(), found, "{:?}", caller.subject);
        if !found {
            assert!(matches!(got, Err(ServiceError::NotFound)));
        }
    }
}

#[tokio::test]
async fn lists_are_scoped_to_the_caller() {
    let mission = MissionId::new();
    let citizen_id = Uuid::now_v7();
    let mut fixture = Fixture::new();
    fixture
        .requests
        .expect_list()
        // A citizen's list is read current; staff lists may come from a replica that has
        // replayed the staff member's own writes (docs/operations.md "Read replicas").
        .withf(move |f, _, read| {
            f.citizen_id == Some(CitizenId(citizen_id))
                && f.mission_id == Some(mission)
                && *read == Consistency::Latest
        })
        .times(1)
        .returning(|_, _, _| Ok(Page { items: vec![], next_after: None }));
    fixture
        .requests
        .expect_list()
        .withf(move |f, _, read| {
            f.mission_id == Some(mission)
                && f.overdue_at.is_some()
                && matches!(read, Consistency::OwnWrites(subject) if subject.kind == PrincipalKind::Staff)
        })
        .times(1)
        .returning(|_, _, _| Ok(Page { items: vec![], next_after: None }));
    let svc = fixture.service();
    let me = principal(PrincipalKind::Citizen, citizen_id, "citizen", Some(mission));
    svc.list(&me, RequestFilter::default(), PageRequest::default()).await.unwrap();
    let someone_else = RequestFilter { citizen_id: Some(CitizenId::new()), ..Default::default() };
    assert!(svc.list(&me, someone_else, PageRequest::default()).await.unwrap().items.is_empty());
    // The same id through a client of another mission lists nothing of this mission.
    let other_mission = RequestFilter { mission_id: Some(MissionId::new()), ..Default::default() };
    assert!(svc.list(&me, other_mission, PageRequest::default()).await.unwrap().items.is_empty());
    let staff = principal(PrincipalKind::Staff, Uuid::now_v7(), "staff", Some(mission));
    let overdue = RequestFilter { overdue: Some(true), ..Default::default() };
    svc.list(&staff, overdue, PageRequest::default()).await.unwrap();
    let elsewhere = RequestFilter { mission_id: Some(MissionId::new()), ..Default::default() };
    assert!(svc.list(&staff, elsewhere, PageRequest::default()).await.unwrap().items.is_empty());
}

#[tokio::test]
async fn a_queue_is_for_the_member_themself_or_an_admin_of_the_mission() {
    let mission = MissionId::new();
    let member = fixtures::staff_member(mission, OffsetDateTime::UNIX_EPOCH);
    let id = member.id;
    let mut fixture = Fixture::new();
    fixture.staff.expect_get().returning(move |_| Ok(Some(member.clone())));
    fixture.requests.expect_queue().returning(|_, _| Ok(vec![]));
    let svc = fixture.service();
    let me = principal(PrincipalKind::Staff, id.as_uuid(), "staff", Some(mission));
    let colleague = principal(PrincipalKind::Staff, Uuid::now_v7(), "staff", Some(mission));
    let admin = principal(PrincipalKind::Admin, Uuid::now_v7(), "admin", Some(mission));
    assert!(svc.queue(&me, id).await.is_ok());
    assert!(svc.queue(&admin, id).await.is_ok());
    assert!(matches!(svc.queue(&colleague, id).await, Err(ServiceError::NotFound)));
}

#[tokio::test]
async fn overdue_is_judged_at_the_injected_clock() {
    let mission = MissionId::new();
    let mut request = stored_request(mission, CitizenId::new(), RequestStatus::InReview);
    request.sla_due_at = OffsetDateTime::UNIX_EPOCH + Duration::days(10);
    let id = request.id;
    let staff = principal(PrincipalKind::Staff, Uuid::now_v7(), "staff", Some(mission));
    for (day, overdue) in [(9, false), (11, true)] {
        let mut fixture = Fixture::new().with_detail(request.clone(), vec![]);
        let listed = request.clone();
        fixture
            .requests
            .expect_list()
            .returning(move |_, _, _| Ok(Page { items: vec![listed.clone()], next_after: None }));
        let svc = fixture.service_at(OffsetDateTime::UNIX_EPOCH + Duration::days(day));
        assert_eq!(svc.get(&staff, id).await.unwrap().overdue, overdue, "day {day}");
        let page = svc.list(&staff, RequestFilter::default(), PageRequest::default()).await.unwrap();
        assert_eq!(page.items[0].overdue, overdue, "day {day}");
    }
}

/// The approval gate: a request whose type requires a kind without a verified document
/// cannot be approved; the refusal names the kind and writes nothing.
#[tokio::test]
async fn approval_waits_for_every_required_document_to_be_verified() {
    use consular_domain::{Document, DocumentStatus, NewDocument, Role, ScanStatus};
    let mission = MissionId::new();
    let mut request = stored_request(mission, CitizenId::new(), RequestStatus::InReview);
    let mut t = service_type(true);
    t.id = request.service_type_id;
    t.required_documents = vec!["passport_photo".into(), "old_passport".into()];
    request.version = 3;
    let staff = principal(PrincipalKind::Staff, Uuid::now_v7(), "staff", Some(mission));
    let document = |kind: &str, verified: bool| {
        let new = NewDocument {
            mission_id: mission,
            citizen_id: request.citizen_id,
            request_id: Some(request.id),
            kind: kind.into(),
            file_name: "scan.pdf".into(),
            media_type: "application/pdf".into(),
            size_bytes: 10,
            sha256: "ab".repeat(32),
            scan: ScanStatus::NotConfigured,
        };
        let mut d = Document::upload(new, "documents/x".into(), staff.subject, OffsetDateTime::UNIX_EPOCH);
        if verified {
            d.verify(Role::Staff, staff.subject, OffsetDateTime::UNIX_EPOCH).unwrap();
        }
        assert_eq!(d.status == DocumentStatus::Verified, verified);
        d
    };
    let approve = StatusChange {
        action: Some(Action::To(RequestStatus::Approved)),
        reason: Some("ok".into()),
        assignee: None,
    };
    for (documents, missing) in [
        (vec![], vec!["passport_photo", "old_passport"]),
        (vec![document("passport_photo", true), document("old_passport", false)], vec!["old_passport"]),
        (vec![document("passport_photo", true), document("old_passport", true)], vec![]),
    ] {
        let mut fixture = Fixture::new().with_type(t.clone());
        let stored = request.clone();
        fixture.requests.expect_get().returning(move |_| Ok(Some(stored.clone())));
        fixture.documents.expect_for_request().returning(move |_| Ok(documents.clone()));
        fixture
            .requests
            .expect_update()
            .times(usize::from(missing.is_empty()))
            .returning(|_, _, _, _| Ok(()));
        let result = fixture.service().change(&staff, request.id, approve.clone(), Some(&[3])).await;
        match result {
            Ok(changed) => assert!(missing.is_empty() && changed.request.status == RequestStatus::Approved),
            Err(ServiceError::RequiredDocumentsMissing(kinds)) => assert_eq!(kinds, missing),
            Err(other) => panic!("unexpected {other:?}"),
        }
    }
}

/// A document's timeline items: its upload, its decision and its deletion, each by whoever
/// did it; a tombstone keeps what was decided (never shown as another upload).
#[test]
fn a_deleted_documents_history_stays_in_the_timeline() {
    use consular_domain::{NewDocument, Reason, Role, ScanStatus};
    let at = |hours| OffsetDateTime::UNIX_EPOCH + Duration::hours(hours);
    let (owner, staff) = (
        Subject { kind: PrincipalKind::Citizen, id: PrincipalId::new() },
        Subject { kind: PrincipalKind::Staff, id: PrincipalId::new() },
    );
    let new = NewDocument {
        mission_id: MissionId::new(),
        citizen_id: CitizenId::new(),
        request_id: Some(RequestId::new()),
        kind: "passport_photo".into(),
        file_name: "photo.pdf".into(),
        media_type: "application/pdf".into(),
        size_bytes: 10,
        sha256: "ab".repeat(32),
        scan: ScanStatus::Clean,
    };
    let mut rejected = Document::upload(new.clone(), "documents/a".into(), owner, at(1));
    rejected.reject(Role::Staff, Reason::required(Some("Blurred".into())).unwrap(), staff, at(2)).unwrap();
    rejected.delete(Role::Citizen, owner, at(3)).unwrap();
    let seen: Vec<_> = DocumentEvent::of(&rejected)
        .into_iter()
        .map(|e| (e.status, e.actor, e.at, e.reason, e.document_id))
        .collect();
    let id = rejected.id;
    assert_eq!(
        seen,
        [
            (DocumentStatus::Uploaded, Some(owner), at(1), None, id),
            (DocumentStatus::Rejected, Some(staff), at(2), Some("Blurred".to_owned()), id),
            (DocumentStatus::Deleted, Some(owner), at(3), None, id),
        ]
    );

    let mut verified = Document::upload(new, "documents/b".into(), owner, at(1));
    verified.verify(Role::Staff, staff, at(2)).unwrap();
    verified.delete(Role::Staff, staff, at(3)).unwrap();
    // A tombstone written before who deleted was kept.
    verified.deleted_by = None;
    let seen: Vec<_> = DocumentEvent::of(&verified).into_iter().map(|e| (e.status, e.actor)).collect();
    assert_eq!(
        seen,
        [
            (DocumentStatus::Uploaded, Some(owner)),
            (DocumentStatus::Verified, Some(staff)),
            (DocumentStatus::Deleted, None),
        ]
    );
}
