//! The request the matrix sends for an operation and a principal: the path with the
//! owner's object (or the principal's fresh one) in it, the query, a valid body, the
//! headers the OpenAPI document declares (`If-Match: *` where it is required, a new
//! `Idempotency-Key` where one is accepted) and the credentials of the principal.

use crate::fixtures::{Fixtures, Fresh, client_body, day, new_citizen};
use crate::rules::{Operation, Who};
use consular_tests::files::{file_part, form, pdf};
use consular_tests::reqwest::{Method, RequestBuilder};
use consular_tests::{TestApp, mission_body, service_body, staff_body};
use serde_json::{Value, json};

/// What the OpenAPI document says about an operation's headers.
#[derive(Debug, Clone, Copy, Default)]
pub struct Headers {
    pub if_match_required: bool,
    pub idempotency_key: bool,
}

/// A request body.
pub enum Payload {
    Empty,
    Json(Value),
    /// `application/x-www-form-urlencoded` (the OAuth endpoints).
    Form(Vec<(&'static str, String)>),
    /// The upload form's text parts; a small PDF is the file part.
    Upload(Vec<(&'static str, String)>),
}

/// One call of the matrix.
pub struct Call {
    pub method: Method,
    /// The path, with the query.
    pub path: String,
    pub payload: Payload,
    /// Whether the principal's bearer token goes with it (not at the token endpoints,
    /// where the client authenticates in the form).
    pub bearer: bool,
    pub headers: Headers,
    /// The number of the call, for unique keys.
    pub n: usize,
}

impl Call {
    /// Everything the caller sent that may name an id: ids it sent may come back (a
    /// problem's `instance`) without being a leak.
    pub fn sent(&self) -> String {
        let payload = match &self.payload {
            Payload::Empty => String::new(),
            Payload::Json(body) => body.to_string(),
            Payload::Form(fields) | Payload::Upload(fields) => {
                fields.iter().map(|(k, v)| format!("{k}={v}&")).collect()
            }
        };
        format!("{} {payload}", self.path).to_lowercase()
    }

    /// The request to send as `who` (holding `token`, empty for nobody).
    pub fn build(&self, app: &TestApp, token: &str) -> RequestBuilder {
        let mut request = app.request(self.method.clone(), &self.path);
        if self.bearer && !token.is_empty() {
            request = request.bearer_auth(token);
        }
        if !self.path.contains("/content?") {
            request = request.header("accept", "application/json");
        }
        if self.headers.if_match_required {
            request = request.header("if-match", "*");
        }
        if self.headers.idempotency_key {
            request = request.header("idempotency-key", format!("matrix-{}", self.n));
        }
        match &self.payload {
            Payload::Empty => request,
            Payload::Json(body) => request.json(body),
            Payload::Form(fields) => request.form(fields),
            Payload::Upload(fields) => {
                let fields: Vec<(&str, &str)> = fields.iter().map(|(k, v)| (*k, v.as_str())).collect();
                request.multipart(form(&fields, file_part(pdf(400, 7), "scan.pdf", "application/pdf")))
            }
        }
    }
}

/// The call of `op` as `who`; `n` numbers it (unique codes, passport numbers, keys).
/// Panics for an operation the table names but nothing here fills.
pub fn call(op: &Operation, headers: Headers, who: Who, f: &Fixtures, n: usize) -> Call {
    let caller = f.caller(who);
    let credentials = || match who {
        Who::Anonymous => Vec::new(),
        _ => vec![("client_id", caller.client_id.clone()), ("client_secret", caller.secret.clone())],
    };
    let fresh = |kind: Fresh| Some(f.fresh(kind, who).to_owned());
    let own = |id: &str| Some(id.to_owned());
    let m1 = &f.m1;
    let (target, query, payload): (Option<String>, String, Payload) = match op.id {
        "get_jwks" | "health_live" | "health_ready" | "openapi" => (None, String::new(), Payload::Empty),
        "create_token" => {
            let mut form = vec![("grant_type", "client_credentials".to_owned())];
            form.extend(credentials());
            (None, String::new(), Payload::Form(form))
        }
        "refresh_token" => {
            let mut form =
                vec![("grant_type", "refresh_token".to_owned()), ("refresh_token", f.owner_refresh.clone())];
            form.extend(credentials());
            (None, String::new(), Payload::Form(form))
        }
        "revoke_token" => (None, String::new(), Payload::Form(vec![("token", f.owner_spare_access.clone())])),
        "list_clients"
        | "list_missions"
        | "list_services"
        | "list_citizens"
        | "list_staff"
        | "list_requests"
        | "list_documents"
        | "list_appointments"
        | "list_audit_events"
        | "list_notifications"
        | "get_notification_preferences"
        | "mark_all_notifications_read" => (None, String::new(), Payload::Empty),
        "create_client" => (None, String::new(), Payload::Json(client_body(m1, Some(&f.owner)))),
        "get_client" => (own(&f.owner_client), String::new(), Payload::Empty),
        "rotate_client_secret" => (own(&f.spare_client), String::new(), Payload::Empty),
        "disable_client" => (fresh(Fresh::DisableClient), String::new(), Payload::Empty),
        "create_mission" => (None, String::new(), Payload::Json(mission_body(&format!("fr-matrix-{n}")))),
        "get_mission" => (own(m1), String::new(), Payload::Empty),
        "update_mission" => {
            (own(m1), String::new(), Payload::Json(json!({ "name": format!("Embassy {n}") })))
        }
        "create_service" => (None, String::new(), Payload::Json(service_body(&format!("matrix_{n}")))),
        "get_service" => (own(&f.service), String::new(), Payload::Empty),
        "update_service" => {
            (own(&f.service), String::new(), Payload::Json(json!({ "description": format!("Revised {n}") })))
        }
        "register_citizen" => (None, String::new(), Payload::Json(new_citizen(m1, n))),
        "get_citizen" => (own(&f.owner), String::new(), Payload::Empty),
        "list_my_access_log" => (None, String::new(), Payload::Empty),
        "list_citizen_access_log" => (own(&f.owner), String::new(), Payload::Empty),
        "start_my_export" => (None, String::new(), Payload::Empty),
        "get_my_export" => (None, String::new(), Payload::Empty),
        "start_citizen_export" | "get_citizen_export" | "erase_citizen" => {
            (own(&f.owner), String::new(), Payload::Empty)
        }
        "download_export_archive" => {
            let (path, query) = f.export_url.split_once('?').expect("a signed URL with its query");
            let expected = format!("/api/v1/exports/{}/archive", f.export);
            assert!(path.ends_with(&expected), "a download URL of the archive: {}", f.export_url);
            (None, format!("?{query}"), Payload::Empty)
        }
        "list_my_representatives" | "list_my_dependants" => (None, String::new(), Payload::Empty),
        "list_representatives" | "get_representative" => (own(&f.owner), String::new(), Payload::Empty),
        "create_representative" => (
            own(&f.owner),
            String::new(),
            Payload::Json(json!({
                "representative_id": f.neighbour,
                "kind": "authorised_representative",
                "valid_from": day(-1),
                "evidence_document_id": f.document,
            })),
        ),
        "end_representative" => {
            (own(&f.owner), String::new(), Payload::Json(json!({ "reason": format!("Matrix end {n}") })))
        }
        "update_citizen" => {
            (own(&f.owner), String::new(), Payload::Json(json!({ "phone": format!("+336123{n:05}") })))
        }
        "create_staff" => (None, String::new(), Payload::Json(staff_body(m1, &format!("Matrix Staff {n}")))),
        "get_staff" | "get_staff_queue" => (own(&f.staff), String::new(), Payload::Empty),
        "update_staff_assignments" => {
            (own(&f.staff), String::new(), Payload::Json(json!({ "service_type_ids": [f.service] })))
        }
        "submit_request" => (
            None,
            String::new(),
            Payload::Json(json!({ "service_type_id": f.service, "citizen_id": f.owner })),
        ),
        "get_request"
        | "list_request_notes"
        | "list_request_messages"
        | "list_request_documents"
        | "list_request_notifications" => (own(&f.request), String::new(), Payload::Empty),
        "change_request_status" => (
            fresh(Fresh::StatusRequest),
            String::new(),
            Payload::Json(json!({ "status": "in_review", "reason": "Documents complete" })),
        ),
        "add_request_note" => {
            (own(&f.request), String::new(), Payload::Json(json!({ "body": format!("Matrix note {n}") })))
        }
        "post_request_message" => {
            (own(&f.request), String::new(), Payload::Json(json!({ "body": format!("Matrix message {n}") })))
        }
        "cancel_request" => (fresh(Fresh::CancelRequest), String::new(), Payload::Json(json!({}))),
        "upload_document" => (
            None,
            String::new(),
            Payload::Upload(vec![
                ("kind", format!("kind_{:02}", 2 + who.index())),
                ("request_id", f.request.clone()),
                ("citizen_id", f.owner.clone()),
            ]),
        ),
        "get_document" => (own(&f.document), String::new(), Payload::Empty),
        "download_document_content" => {
            let (path, query) = f.download_url.split_once('?').expect("a signed URL with its query");
            let expected = format!("/api/v1/documents/{}/content", f.document);
            assert!(path.ends_with(&expected), "a download URL of the document: {}", f.download_url);
            (own(&f.document), format!("?{query}"), Payload::Empty)
        }
        "verify_document" => {
            (fresh(Fresh::VerifyDocument), String::new(), Payload::Json(json!({ "status": "verified" })))
        }
        "delete_document" => (fresh(Fresh::DeleteDocument), String::new(), Payload::Empty),
        "submit_slots" => {
            let slot = json!({
                "starts_at": format!("{}T09:00", day(20)),
                "minutes": 30,
                "capacity": 5,
                "service_type_ids": [f.service],
            });
            (None, String::new(), Payload::Json(json!({ "mission_id": m1, "slots": [slot] })))
        }
        "list_slots" => (None, format!("?mission_id={m1}&service_type_id={}", f.service), Payload::Empty),
        "book_appointment" => (
            None,
            String::new(),
            Payload::Json(json!({
                "slot_id": f.slot,
                "service_type_id": f.service,
                "citizen_id": f.owner,
                "request_id": f.fresh(Fresh::BookRequest, who),
            })),
        ),
        "get_appointment" => (own(&f.appointment), String::new(), Payload::Empty),
        "reschedule_appointment" => (
            fresh(Fresh::RescheduleAppointment),
            String::new(),
            Payload::Json(json!({ "slot_id": f.later_slot })),
        ),
        "record_attendance" => {
            (own(&f.appointment), String::new(), Payload::Json(json!({ "status": "attended" })))
        }
        "cancel_appointment" => (fresh(Fresh::CancelAppointment), String::new(), Payload::Empty),
        "mark_notification_read" => (own(&f.notification), String::new(), Payload::Empty),
        "update_notification_preferences" => {
            let on = json!({
                "requests": true, "messages": true, "documents": true, "appointments": true, "assignments": true,
            });
            (None, String::new(), Payload::Json(json!({ "email": on })))
        }
        "analytics_overview" | "analytics_services" | "analytics_staff" => {
            (None, format!("?mission_id={m1}"), Payload::Empty)
        }
        other => panic!("the matrix has no call for `{other}`: add one to calls.rs"),
    };
    let path = match target {
        Some(id) => op.path.replace("{id}", &id),
        None => op.path.to_owned(),
    };
    // The owner's export, in the exports' paths.
    let path = path.replace("{export_id}", &f.export);
    // The owner's representation by the neighbour.
    let path = path.replace("{rid}", &f.representation);
    assert!(!path.contains('{'), "{}: a path parameter left unfilled in {path}", op.id);
    let method = Method::from_bytes(op.method.as_bytes()).expect("an HTTP method");
    let bearer = !matches!(op.id, "create_token" | "refresh_token");
    Call { method, path: format!("{path}{query}"), payload, bearer, headers, n }
}
