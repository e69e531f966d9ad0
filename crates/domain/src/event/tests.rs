//! The stored form of every event kind, and the events the state machines return.

use super::*;
use crate::{
    Action, Appointment, AppointmentAction, Document, DocumentStatus, NewDocument, PrincipalId, Reason,
    RequestChange, Role, ScanStatus, ServiceRequest, Subject, fixtures,
};
use serde_json::json;
use std::collections::BTreeSet;
use time::macros::datetime;

const REQUEST: &str = "019ab1f2-7c3d-7e41-9a52-6b7c8d9e0f12";
const CITIZEN: &str = "019ab1e0-1a2b-7c3d-8e4f-5a6b7c8d9e0f";
const MISSION: &str = "019ab1d0-0f1e-7d2c-9b3a-495867748392";
const SERVICE: &str = "019ab1d4-3c2b-7a19-8f7e-6d5c4b3a2918";
const STAFF: &str = "019ab1d8-aa11-7b22-8c33-dd44ee55ff66";
const MESSAGE: &str = "019ab20a-5b6c-7d8e-9f0a-1b2c3d4e5f60";
const DOCUMENT: &str = "019ab214-0e1d-7c2b-8a39-48576a6b7c8d";
const APPOINTMENT: &str = "019ab230-9a8b-7c6d-8e5f-4a3b2c1d0e9f";
const SLOT: &str = "019ab1fa-1122-7334-8556-677889900aab";
const EARLIER_SLOT: &str = "019ab1f9-ffee-7ddc-8bba-998877665544";

fn uuid(text: &str) -> Uuid {
    text.parse().unwrap()
}

/// A row of `outbox_events`: kind, aggregate and payload, as the code before typed events
/// wrote it (its `json!` calls, with the values of one case of each).
fn stored_rows() -> Vec<(&'static str, &'static str, Value)> {
    // documents/mod.rs `event`: `{ document_id, citizen_id, request_id, kind }` and the extra
    // fields of each kind.
    let document = |request: Option<&str>, extra: Value| {
        let mut payload = json!({ "document_id": DOCUMENT, "citizen_id": CITIZEN,
                                  "request_id": request, "kind": "passport_photo" });
        if let (Some(payload), Value::Object(extra)) = (payload.as_object_mut(), extra) {
            payload.extend(extra);
        }
        payload
    };
    // appointments/mod.rs `event`, and the extra fields of each change.
    let appointment = |request: Option<&str>, extra: Value| {
        let mut payload = json!({
            "appointment_id": APPOINTMENT,
            "citizen_id": CITIZEN,
            "mission_id": MISSION,
            "slot_id": SLOT,
            "request_id": request,
            "starts_at": "2027-03-02T09:00:00Z",
        });
        if let (Some(payload), Value::Object(extra)) = (payload.as_object_mut(), extra) {
            payload.extend(extra);
        }
        payload
    };
    vec![
        (
            "request.submitted",
            REQUEST,
            json!({ "citizen_id": CITIZEN, "service_type_id": SERVICE, "mission_id": MISSION }),
        ),
        ("request.assigned", REQUEST, json!({ "assignee_id": STAFF, "previous_assignee_id": null })),
        ("request.assigned", REQUEST, json!({ "assignee_id": null, "previous_assignee_id": STAFF })),
        (
            "request.status_changed",
            REQUEST,
            json!({ "from": "in_review", "to": "action_required", "reason": "The photo is missing" }),
        ),
        (
            "request.status_changed",
            REQUEST,
            json!({ "from": "submitted", "to": "cancelled", "reason": null }),
        ),
        ("request.stage_advanced", REQUEST, json!({ "from_stage": 0, "to_stage": 1, "stage": "Interview" })),
        (
            "message.posted",
            REQUEST,
            json!({ "message_id": MESSAGE, "author_kind": "staff", "citizen_id": CITIZEN }),
        ),
        ("document.uploaded", REQUEST, document(Some(REQUEST), json!({ "media_type": "image/jpeg" }))),
        ("document.uploaded", DOCUMENT, document(None, json!({ "media_type": "application/pdf" }))),
        ("document.verified", REQUEST, document(Some(REQUEST), json!({}))),
        (
            "document.rejected",
            REQUEST,
            document(Some(REQUEST), json!({ "reason": "Quotes \" and ünïcode ✓" })),
        ),
        ("document.deleted", DOCUMENT, document(None, json!({}))),
        ("appointment.booked", REQUEST, appointment(Some(REQUEST), json!({}))),
        ("appointment.rescheduled", APPOINTMENT, appointment(None, json!({ "from_slot_id": EARLIER_SLOT }))),
        ("appointment.cancelled", REQUEST, appointment(Some(REQUEST), json!({ "cancelled_by": "citizen" }))),
        ("appointment.cancelled", APPOINTMENT, appointment(None, json!({ "cancelled_by": "staff" }))),
        ("appointment.cancelled_by_mission", APPOINTMENT, appointment(None, json!({}))),
        ("appointment.attended", REQUEST, appointment(Some(REQUEST), json!({}))),
        ("appointment.no_show", APPOINTMENT, appointment(None, json!({}))),
        ("appointment.reminder", REQUEST, appointment(Some(REQUEST), json!({}))),
    ]
}

#[test]
fn a_stored_row_of_every_kind_decodes_and_encodes_to_the_same_row() {
    let rows = stored_rows();
    let kinds: BTreeSet<EventKind> = rows.iter().map(|(kind, ..)| kind.parse().unwrap()).collect();
    assert_eq!(kinds, EventKind::ALL.into_iter().collect(), "a row of every kind");
    for (kind, aggregate, payload) in rows {
        // As the column holds it: SQLite's text, PostgreSQL's jsonb read back.
        let column = payload.to_string();
        let read: Value = serde_json::from_str(&column).unwrap();
        let event = DomainEvent::decode(kind, uuid(aggregate), &read)
            .unwrap_or_else(|e| panic!("{kind} {column}: {e}"));
        assert_eq!(event.kind().as_str(), kind);
        assert_eq!(event.aggregate_id(), uuid(aggregate), "{kind}");
        let written = event.payload().unwrap();
        assert_eq!(written, payload, "{kind}");
        assert_eq!(written.to_string(), column, "{kind}: byte for byte");
    }
}

#[test]
fn decoded_rows_carry_typed_values() {
    let decode = |kind: &str, aggregate: &str, payload: Value| {
        DomainEvent::decode(kind, uuid(aggregate), &payload).unwrap()
    };
    let rows = stored_rows();
    let (kind, aggregate, payload) = rows[3].clone();
    assert_eq!(
        decode(kind, aggregate, payload),
        DomainEvent::RequestStatusChanged {
            request_id: RequestId(uuid(REQUEST)),
            from: RequestStatus::InReview,
            to: RequestStatus::ActionRequired,
            reason: Some("The photo is missing".into()),
        }
    );
    let (kind, aggregate, payload) = rows[6].clone();
    let message = decode(kind, aggregate, payload);
    assert!(matches!(message, DomainEvent::MessagePosted { author_kind: PrincipalKind::Staff, .. }));
    assert_eq!(message.request_id(), Some(RequestId(uuid(REQUEST))));
    let (kind, aggregate, payload) = rows[8].clone();
    let unattached = decode(kind, aggregate, payload);
    assert_eq!(unattached.request_id(), None, "a document's own aggregate is no request");
    assert_eq!(unattached.document().map(|d| d.kind.as_str()), Some("passport_photo"));
    let (kind, aggregate, payload) = rows[14].clone();
    let cancelled = decode(kind, aggregate, payload);
    assert_eq!(cancelled.appointment().map(|a| a.starts_at), Some(datetime!(2027-03-02 09:00 UTC)));
    assert!(matches!(
        cancelled,
        DomainEvent::AppointmentCancelled { cancelled_by: CancelledBy::Citizen, .. }
    ));
    assert_eq!(cancelled.appointment_change(), Some(AppointmentChange::Cancelled));
}

#[test]
fn a_row_this_version_cannot_read_is_refused() {
    let request = uuid(REQUEST);
    assert!(DomainEvent::decode("request.note_added", request, &json!({})).is_err(), "an unknown kind");
    let missing = json!({ "from": "submitted", "reason": null });
    assert!(DomainEvent::decode("request.status_changed", request, &missing).is_err(), "no `to`");
    let unknown_status = json!({ "from": "submitted", "to": "lost", "reason": null });
    assert!(DomainEvent::decode("request.status_changed", request, &unknown_status).is_err());
    // A field a newer version added is ignored.
    let newer = json!({ "from": "submitted", "to": "in_review", "reason": null, "channel": "counter" });
    assert!(DomainEvent::decode("request.status_changed", request, &newer).is_ok());
}

#[test]
fn every_appointment_change_is_recorded_by_its_event() {
    for change in AppointmentChange::ALL {
        let kind: EventKind = format!("appointment.{change}").parse().unwrap();
        let (_, aggregate, payload) = stored_rows().into_iter().find(|(k, ..)| *k == kind.as_str()).unwrap();
        let event = DomainEvent::decode(kind.as_str(), uuid(aggregate), &payload).unwrap();
        assert_eq!(event.appointment_change(), Some(change));
    }
}

// ------------------------------------------------------------- what transitions return

const NOW: OffsetDateTime = datetime!(2026-11-23 10:00 UTC);

fn staff_subject() -> Subject {
    Subject { kind: PrincipalKind::Staff, id: PrincipalId::new() }
}

#[test]
fn a_submission_and_a_change_return_their_events() {
    let citizen = fixtures::citizen(MissionId::new(), NOW);
    let service_type = fixtures::service_type(NOW);
    let staff = StaffId::new();
    let actor = Subject { kind: PrincipalKind::Citizen, id: PrincipalId(citizen.id.as_uuid()) };
    let (mut request, _, events) = ServiceRequest::submit(
        &crate::NewRequest::for_service(service_type.id),
        &citizen,
        &service_type,
        Some(staff),
        actor,
        NOW,
    );
    assert_eq!(
        events,
        [
            DomainEvent::RequestSubmitted {
                request_id: request.id,
                citizen_id: citizen.id,
                service_type_id: service_type.id,
                mission_id: citizen.mission_id,
            },
            DomainEvent::RequestAssigned {
                request_id: request.id,
                assignee_id: Some(staff),
                previous_assignee_id: None,
            },
        ]
    );
    let change =
        RequestChange::parse(Some(Action::To(RequestStatus::InReview)), Some("Complete".into()), Some(None))
            .unwrap();
    let changed = request.change(Role::Staff, change, None, NOW).unwrap();
    assert_eq!(
        changed.events,
        [
            DomainEvent::RequestStatusChanged {
                request_id: request.id,
                from: RequestStatus::Submitted,
                to: RequestStatus::InReview,
                reason: Some("Complete".into()),
            },
            DomainEvent::RequestAssigned {
                request_id: request.id,
                assignee_id: None,
                previous_assignee_id: Some(staff)
            },
        ]
    );
    let advance = RequestChange::parse(Some(Action::AdvanceStage), None, None).unwrap();
    let advanced = request.change(Role::Staff, advance, None, NOW).unwrap();
    assert_eq!(
        advanced.events,
        [DomainEvent::RequestStageAdvanced {
            request_id: request.id,
            from_stage: 0,
            to_stage: 1,
            stage: Some(service_type.stages[1].name.clone()),
        }]
    );
    assert_eq!(
        request.reassign(Some(staff), NOW),
        Some(DomainEvent::RequestAssigned {
            request_id: request.id,
            assignee_id: Some(staff),
            previous_assignee_id: None
        })
    );
    assert_eq!(request.reassign(Some(staff), NOW), None, "no change, no event");
}

#[test]
fn document_decisions_return_their_events() {
    let new = NewDocument {
        mission_id: MissionId::new(),
        citizen_id: CitizenId::new(),
        request_id: Some(RequestId::new()),
        kind: "passport_photo".into(),
        file_name: "photo.jpg".into(),
        media_type: "image/jpeg".into(),
        size_bytes: 1024,
        sha256: "a".repeat(64),
        scan: ScanStatus::Clean,
    };
    let mut rejected = Document::upload(new.clone(), "documents/a".into(), staff_subject(), NOW);
    let reason = Reason::required(Some("Blurred".into())).unwrap();
    let event = rejected.reject(Role::Staff, reason, staff_subject(), NOW).unwrap();
    let reference = DocumentRef::of(&rejected);
    assert_eq!(
        event,
        DomainEvent::DocumentRejected { document: reference.clone(), reason: "Blurred".into() }
    );
    assert_eq!(event.aggregate_id(), new.request_id.unwrap().as_uuid(), "the request's stream");
    let deleted = rejected.delete(Role::Staff, staff_subject(), NOW).unwrap();
    assert_eq!(deleted, DomainEvent::DocumentDeleted { document: reference });
    assert_eq!(rejected.status, DocumentStatus::Deleted);

    let mut verified = Document::upload(new, "documents/b".into(), staff_subject(), NOW);
    let event = verified.verify(Role::Staff, staff_subject(), NOW).unwrap();
    assert_eq!(event, DomainEvent::DocumentVerified { document: DocumentRef::of(&verified) });
}

#[test]
fn appointment_changes_return_their_events() {
    let mission = MissionId::new();
    let starts_at = NOW + time::Duration::days(7);
    let served = ServiceTypeId::new();
    let from = crate::Slot { service_types: vec![served], ..fixtures::slot(mission, starts_at, NOW) };
    let later = starts_at + time::Duration::hours(1);
    let to = crate::Slot { service_types: vec![served], ..fixtures::slot(mission, later, NOW) };
    let book = |request| Appointment::book(&from, CitizenId::new(), served, request, staff_subject(), NOW);

    let mut moved = book(None);
    let event = moved.reschedule(Role::Staff, &from, &to, NOW).unwrap();
    assert_eq!(
        event,
        DomainEvent::AppointmentRescheduled {
            appointment: AppointmentRef::of(&moved),
            from_slot_id: from.id
        }
    );
    assert_eq!(event.appointment().map(|a| a.starts_at), Some(to.starts_at), "at its new time");
    assert_eq!(event.aggregate_id(), moved.id.as_uuid(), "no request: its own stream");

    let mut cancelled = book(Some(RequestId::new()));
    let event = cancelled.cancel(Role::Citizen, &from, NOW).unwrap();
    assert_eq!(
        event,
        DomainEvent::AppointmentCancelled {
            appointment: AppointmentRef::of(&cancelled),
            cancelled_by: CancelledBy::Citizen
        }
    );
    assert_eq!(Some(event.aggregate_id()), cancelled.request_id.map(|r| r.as_uuid()));

    let mut closed = book(None);
    let event = closed.cancel_by_mission(NOW).unwrap();
    assert_eq!(
        event,
        DomainEvent::AppointmentCancelledByMission { appointment: AppointmentRef::of(&closed) }
    );

    for (action, change) in [
        (AppointmentAction::Attend, AppointmentChange::Attended),
        (AppointmentAction::MarkNoShow, AppointmentChange::NoShow),
    ] {
        let mut a = book(None);
        let event = a.record_attendance(Role::Staff, action, starts_at).unwrap();
        assert_eq!(event.appointment_change(), Some(change));
        assert_eq!(event.appointment(), Some(&AppointmentRef::of(&a)));
    }
}
