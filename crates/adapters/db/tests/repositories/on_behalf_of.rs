//! Whom a change was made for (`on_behalf_of`, migration 000028; docs/representation.md
//! "Traceability"): stored beside the actor on every trace a representative's change
//! writes (audit entry, request history, message, document, appointment history) and
//! read back as written; absent when the actor acted for themself.

use super::*;
use consular_domain::{
    Appointment, AppointmentChange, AppointmentEntry, Document, NewDocument, NewRequest, RequestChange,
    ScanStatus, Slot, Trace, fixtures,
};
use consular_ports::{AppointmentRepository, BookOutcome, DocumentRepository, SlotUpsert};

fn message_by(request: RequestId, actor: Trace) -> Message {
    Message {
        id: Uuid::now_v7(),
        request_id: request,
        author: actor.actor,
        on_behalf_of: actor.on_behalf_of,
        body: "For my daughter".to_owned(),
        created_at: now(),
    }
}

async fn every_trace_of_a_representative_keeps_whom_they_acted_for(db: Database) {
    let paris = stored_mission(&db, "fr-paris").await;
    let passport = stored_service_type(&db, "passport").await;
    let child = stored_citizen(&db, paris.id, "AA1").await;
    let parent = fixtures::acting_for(paris.id, child.id);
    let audit = |resource: &str, id: Uuid| WriteMeta {
        audit: vec![AuditRecord::new(Some(&parent), now(), AuditAction::Created, resource, id, vec![])],
        ..WriteMeta::default()
    };

    // The submission, by the parent for the child.
    let input = NewRequest::for_service(passport.id);
    let (mut r, first, _) = ServiceRequest::submit(&input, &child, &passport, None, &parent, now());
    let submitted = audit("service_request", r.id.0);
    RequestRepository::insert(&db, &r, &first, &submitted).await.unwrap();
    // A message by the parent, one by the child themself.
    let for_child = message_by(r.id, Trace::from(&parent));
    RequestRepository::add_message(&db, &for_child, &WriteMeta::default()).await.unwrap();
    let own = message_by(r.id, Trace::from(first_entry(&r).actor.unwrap()));
    RequestRepository::add_message(&db, &own, &WriteMeta::default()).await.unwrap();
    // The child's photo, uploaded by the parent.
    let new = NewDocument {
        mission_id: paris.id,
        citizen_id: child.id,
        request_id: Some(r.id),
        kind: "passport_photo".to_owned(),
        file_name: "photo.jpg".to_owned(),
        media_type: "image/jpeg".to_owned(),
        size_bytes: 2048,
        sha256: "ab".repeat(32),
        scan: ScanStatus::Clean,
    };
    let photo = Document::upload(new, "documents/0001".to_owned(), &parent, now());
    DocumentRepository::insert(&db, &photo, &audit("document", photo.id.0)).await.unwrap();
    // A booking for the child's request, by the parent.
    let slot = Slot {
        service_types: vec![passport.id],
        ..fixtures::slot(paris.id, now() + Duration::days(3), now())
    };
    let upsert = SlotUpsert { slots: vec![(slot.clone(), None)], cancelled: vec![] };
    AppointmentRepository::upsert_slots(&db, &upsert, &WriteMeta::default()).await.unwrap();
    let booking = Appointment::book(&slot, child.id, passport.id, Some(r.id), parent.subject, now());
    let booked = AppointmentEntry::of(&booking, AppointmentChange::Booked, &parent).unwrap();
    let none = WriteMeta::default();
    let outcome = AppointmentRepository::book(&db, &booking, &booked, None, now(), &none).await;
    assert_eq!(outcome.unwrap(), BookOutcome::Booked);
    // The parent withdraws the request.
    let version = r.version;
    let cancel =
        RequestChange { action: Some(Action::To(RequestStatus::Cancelled)), reason: None, assignee: None };
    let cancelled = r.change(Role::Citizen, cancel, Some(Trace::from(&parent)), now()).unwrap().entry;
    RequestRepository::update(&db, &r, version, cancelled.clone(), &WriteMeta::default()).await.unwrap();

    let detail = RequestRepository::detail(&db, r.id, false).await.unwrap().unwrap();
    assert_eq!(detail.history, vec![first, cancelled.unwrap()]);
    assert!(detail.history.iter().all(|h| h.on_behalf_of == Some(child.id)));
    assert_eq!(detail.messages, vec![for_child.clone(), own]);
    assert_eq!(
        detail.messages.iter().map(|m| m.on_behalf_of).collect::<Vec<_>>(),
        vec![Some(child.id), None]
    );
    assert_eq!(detail.documents, vec![photo.clone()]);
    assert_eq!(detail.documents[0].on_behalf_of, Some(child.id));
    assert_eq!(detail.appointments, vec![booked]);
    assert_eq!(detail.appointments[0].on_behalf_of, Some(child.id));
    let trail = db.audit_trail("service_request", r.id.0).await.unwrap();
    assert_eq!(trail, submitted.audit);
    assert_eq!((trail[0].actor, trail[0].on_behalf_of), (Some(parent.subject), Some(child.id)));
    assert_eq!(db.audit_trail("document", photo.id.0).await.unwrap()[0].on_behalf_of, Some(child.id));
    // The listing reads the same column.
    let listed =
        AuditRepository::list(&db, AuditFilter::default(), PageRequest::default(), Consistency::Latest);
    let ours: Vec<_> = listed.await.unwrap().items.into_iter().filter(|e| e.resource_id == r.id.0).collect();
    assert_eq!(ours, submitted.audit);

    // Only a citizen's token acts for someone: the database refuses anything else.
    let staff = Subject { kind: PrincipalKind::Staff, id: PrincipalId::new() };
    let forged = message_by(r.id, Trace { actor: staff, on_behalf_of: Some(child.id) });
    assert!(RequestRepository::add_message(&db, &forged, &WriteMeta::default()).await.is_err());
}

on_both_databases!(every_trace_of_a_representative_keeps_whom_they_acted_for);
