//! What an archive holds, as JSON values a citizen can read: their profile, their
//! requests with the stage history and the message thread (never the staff's internal
//! notes: the history and thread are read without them), their documents' metadata (the
//! files are copied beside it by `build.rs`), appointments, notifications and the access
//! log (who else read the citizen's data). Every instant is RFC 3339. Nothing here
//! writes; `build.rs` puts the values in the archive.

use crate::ServiceError;
use consular_domain::notification::{Notification, Recipient};
use consular_domain::page::MAX_LIMIT;
use consular_domain::{
    AccessEntry, Appointment, Citizen, Document, HistoryEntry, PageRequest, PrincipalId, PrincipalKind,
    Subject,
};
use consular_ports::{
    AccessLogRepository, AppointmentFilter, AppointmentRepository, Consistency, DocumentFilter,
    DocumentRepository, Message, NotificationRepository, RequestFilter, RequestRecord, RequestRepository,
};
use serde_json::{Value, json};
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;

/// The README at the archive's root.
pub(super) fn readme(citizen: &Citizen, export_id: &str, at: OffsetDateTime) -> String {
    format!(
        "Your data held by the consular service\n\
         ======================================\n\n\
         Export {export_id} of citizen {citizen}, made {made}.\n\n\
         profile.json        your registration: names, birth, passport, contact details, address,\n                    \
         emergency contact, language, status\n\
         requests.json       your service requests, each with its stage history and the messages\n                    \
         exchanged with the mission (the staff's internal notes are not part of it)\n\
         documents.json      the documents you or the mission uploaded for you (deleted ones are\n                    \
         gone), with the path of each file in this archive\n\
         documents/          the files themselves, documents/<document id>/<file name>\n\
         appointments.json   your appointments, past and upcoming, cancelled ones included\n\
         notifications.json  the notifications the service sent you\n\
         access_log.json     who else read your data: each read by staff or an admin, with their\n                    \
         mission, role and API client, what they read and when\n\n\
         Every file is JSON (UTF-8); times are RFC 3339 in UTC. The archive can be downloaded\n\
         until it expires, 7 days after it was made.\n",
        citizen = citizen.id,
        made = instant(at),
    )
}

pub(super) fn instant(at: OffsetDateTime) -> Value {
    Value::String(at.format(&Rfc3339).unwrap_or_else(|_| at.to_string()))
}

fn maybe(at: Option<OffsetDateTime>) -> Value {
    at.map_or(Value::Null, instant)
}

fn who(subject: Option<Subject>) -> Value {
    match subject {
        None => json!("system"),
        Some(s) => json!(s.kind.as_str()),
    }
}

pub(super) fn profile(c: &Citizen) -> Value {
    json!({
        "id": c.id,
        "mission_id": c.mission_id,
        "given_name": c.given_name,
        "family_name": c.family_name,
        "date_of_birth": c.date_of_birth.to_string(),
        "place_of_birth": c.place_of_birth,
        "nationality": c.nationality,
        "passport_number": c.passport_number,
        "passport_expiry": c.passport_expiry.to_string(),
        "email": c.email,
        "phone": c.phone,
        "address": c.address,
        "emergency_contact": c.emergency_contact,
        "preferred_language": c.preferred_language,
        "registration_status": c.registration_status.as_str(),
        "registered_at": instant(c.registered_at),
        "activated_at": maybe(c.activated_at),
        "deregistered_at": maybe(c.deregistered_at),
        "updated_at": instant(c.updated_at),
    })
}

fn history(h: &HistoryEntry) -> Value {
    json!({
        "at": instant(h.at),
        "by": who(h.actor),
        "from_status": h.from_status.map(|s| s.as_str()),
        "to_status": h.to_status.as_str(),
        "from_stage": h.from_stage,
        "to_stage": h.to_stage,
        "reason": h.reason,
    })
}

fn message(m: &Message) -> Value {
    json!({
        "id": m.id,
        "from": m.author.kind.as_str(),
        "body": m.body,
        "at": instant(m.created_at),
    })
}

/// A request with its history and thread: built from a detail read without notes.
fn request(record: &RequestRecord) -> Value {
    let r = &record.request;
    json!({
        "id": r.id,
        "service_type_id": r.service_type_id,
        "status": r.status.as_str(),
        "stages": r.stages.iter().map(|s| s.name.as_str()).collect::<Vec<_>>(),
        "current_stage": r.current_stage,
        "submitted_at": instant(r.submitted_at),
        "due_at": instant(r.sla_due_at),
        "closed_at": maybe(r.closed_at),
        "updated_at": instant(r.updated_at),
        "history": record.history.iter().map(history).collect::<Vec<_>>(),
        "messages": record.messages.iter().map(message).collect::<Vec<_>>(),
    })
}

/// Where a document's file goes in the archive: its id, then the last segment of the
/// name it was uploaded under (kept without separators, docs/documents.md).
pub(super) fn document_path(d: &Document) -> String {
    format!("documents/{}/{}", d.id, d.file_name)
}

pub(super) fn document(d: &Document) -> Value {
    json!({
        "id": d.id,
        "request_id": d.request_id,
        "kind": d.kind,
        "status": d.status.as_str(),
        "file_name": d.file_name,
        "media_type": d.media_type,
        "size_bytes": d.size_bytes,
        "sha256": d.sha256,
        "uploaded_by": d.uploaded_by.kind.as_str(),
        "uploaded_at": instant(d.created_at),
        "decided_at": maybe(d.decided_at),
        "rejection_reason": d.rejection_reason.as_ref().map(|r| r.as_str().to_owned()),
        "file": document_path(d),
    })
}

fn appointment(a: &Appointment) -> Value {
    json!({
        "id": a.id,
        "request_id": a.request_id,
        "service_type_id": a.service_type_id,
        "starts_at": instant(a.starts_at),
        "ends_at": instant(a.ends_at),
        "status": a.status.as_str(),
        "booked_by": a.booked_by.kind.as_str(),
        "cancelled_at": maybe(a.cancelled_at),
        "booked_at": instant(a.created_at),
    })
}

fn notification(n: &Notification) -> Value {
    json!({
        "id": n.id,
        "kind": n.kind.as_str(),
        "request_id": n.request_id,
        "details": n.details,
        "at": instant(n.created_at),
        "read_at": maybe(n.read_at),
    })
}

fn access(e: &AccessEntry) -> Value {
    json!({
        "id": e.id,
        "at": instant(e.at),
        "by": { "kind": e.actor.kind.as_str(), "id": e.actor.id },
        "mission_id": e.actor_mission,
        "role": e.actor_role.as_str(),
        "client_id": e.client_id,
        "what": e.what.as_str(),
        "object_id": e.object_id,
    })
}

fn first_page<C>() -> PageRequest<C> {
    PageRequest { limit: MAX_LIMIT, after: None }
}

/// Every request of the citizen, oldest first, each with its history and thread.
pub(super) async fn requests(repo: &dyn RequestRepository, citizen: &Citizen) -> Result<Value, ServiceError> {
    let filter = RequestFilter { citizen_id: Some(citizen.id), ..RequestFilter::default() };
    let mut ids = Vec::new();
    let mut page = first_page();
    loop {
        let got = repo.list(filter.clone(), page, Consistency::Latest).await?;
        ids.extend(got.items.iter().map(|r| r.id));
        match got.next_after {
            Some(after) => page = PageRequest { limit: MAX_LIMIT, after: Some(after) },
            None => break,
        }
    }
    ids.reverse();
    let mut out = Vec::with_capacity(ids.len());
    for id in ids {
        // `false`: the staff's internal notes are not read at all.
        if let Some(record) = repo.detail(id, false).await? {
            out.push(request(&record));
        }
    }
    Ok(Value::Array(out))
}

/// The citizen's live documents, oldest first.
pub(super) async fn documents(
    repo: &dyn DocumentRepository,
    citizen: &Citizen,
) -> Result<Vec<Document>, ServiceError> {
    let filter = DocumentFilter { citizen_id: Some(citizen.id), ..DocumentFilter::default() };
    let mut out = Vec::new();
    let mut page = first_page();
    loop {
        let got = repo.list(filter.clone(), page).await?;
        out.extend(got.items);
        match got.next_after {
            Some(after) => page = PageRequest { limit: MAX_LIMIT, after: Some(after) },
            None => break,
        }
    }
    out.reverse();
    Ok(out)
}

/// The citizen's appointments in start order.
pub(super) async fn appointments(
    repo: &dyn AppointmentRepository,
    citizen: &Citizen,
) -> Result<Value, ServiceError> {
    let filter = AppointmentFilter { citizen_id: Some(citizen.id), ..AppointmentFilter::default() };
    let mut out = Vec::new();
    let mut page = first_page();
    loop {
        let got = repo.list(filter.clone(), page).await?;
        out.extend(got.items.iter().map(appointment));
        match got.next_after {
            Some(after) => page = PageRequest { limit: MAX_LIMIT, after: Some(after) },
            None => break,
        }
    }
    Ok(Value::Array(out))
}

/// The citizen's inbox, oldest first.
pub(super) async fn notifications(
    repo: &dyn NotificationRepository,
    citizen: &Citizen,
) -> Result<Value, ServiceError> {
    let recipient = Recipient {
        id: PrincipalId(citizen.id.as_uuid()),
        kind: PrincipalKind::Citizen,
        mission: Some(citizen.mission_id),
    };
    let mut out = Vec::new();
    let mut page = first_page();
    loop {
        let got = repo.list(recipient, false, page).await?;
        out.extend(got.items.iter().map(notification));
        match got.next_after {
            Some(after) => page = PageRequest { limit: MAX_LIMIT, after: Some(after) },
            None => break,
        }
    }
    out.reverse();
    Ok(Value::Array(out))
}

/// Who read the citizen's data, oldest first.
pub(super) async fn access_log(
    repo: &dyn AccessLogRepository,
    citizen: &Citizen,
) -> Result<Value, ServiceError> {
    let mut out = Vec::new();
    let mut page = first_page();
    loop {
        let got = repo.list(citizen.id, page).await?;
        out.extend(got.items.iter().map(access));
        match got.next_after {
            Some(after) => page = PageRequest { limit: MAX_LIMIT, after: Some(after) },
            None => break,
        }
    }
    out.reverse();
    Ok(Value::Array(out))
}
