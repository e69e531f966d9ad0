//! Helpers of `tests/requests.rs`: the people a portal would have (citizens and staff
//! members registered with their own API clients), service types, submissions, status
//! changes, messages and notes through the API, and the transactional outbox read from
//! the database. Only the committed part of the harness (`consular_tests`) is used.

use consular_ports::OutboxEvent;
use consular_tests::reqwest::{Method, Response, StatusCode};
use consular_tests::{TestApp, header};
use serde_json::{Value, json};

pub const REQUESTS: &str = "/api/v1/requests";
pub const CITIZENS: &str = "/api/v1/citizens";
pub const STAFF: &str = "/api/v1/staff";
pub const SERVICES: &str = "/api/v1/services";
// Not every test binary that includes this module books (the requests suite does not).
#[allow(dead_code)]
pub const APPOINTMENTS: &str = "/api/v1/appointments";
#[allow(dead_code)]
pub const SLOTS: &str = "/api/v1/appointments/slots";

/// `/api/v1/requests/{id}` followed by `rest` (`""`, `"/status"`, `"/messages"`...).
pub fn at(id: &str, rest: &str) -> String {
    format!("{REQUESTS}/{id}{rest}")
}

/// The text member `key` of `value`; panics when it is not text.
pub fn text(value: &Value, key: &str) -> String {
    value[key].as_str().unwrap_or_else(|| panic!("no text `{key}` in {value}")).to_owned()
}

/// The `id` of every item.
pub fn ids(items: &[Value]) -> Vec<String> {
    items.iter().map(|item| text(item, "id")).collect()
}

/// An RFC 3339 instant of a response, in UTC.
pub fn instant(value: &Value) -> time::OffsetDateTime {
    let raw = value.as_str().unwrap_or_else(|| panic!("not an instant: {value}"));
    assert!(raw.ends_with('Z'), "not in UTC: {raw}");
    time::OffsetDateTime::parse(raw, &time::format_description::well_known::Rfc3339)
        .unwrap_or_else(|e| panic!("not RFC 3339 ({e}): {raw}"))
}

/// `path?query`, form-encoded as a browser (and the server's `Link`) would.
pub fn with_query(path: &str, query: &[(&str, &str)]) -> String {
    let url = reqwest::Url::parse_with_params(&format!("http://localhost{path}"), query).expect("a URL");
    match url.query() {
        Some(q) if !q.is_empty() => format!("{}?{q}", url.path()),
        _ => url.path().to_owned(),
    }
}

/// The target of a `Link: <...>; rel="next"` header, if any.
pub fn next_link(response: &Response) -> Option<String> {
    let link = header(response.headers(), "link");
    let target = link.strip_prefix('<')?.split_once(">; rel=\"next\"")?.0;
    Some(target.to_owned())
}

/// The status and JSON body of a response (panics on a body that is not JSON).
pub async fn json_of(response: Response) -> (StatusCode, Value) {
    let status = response.status();
    let raw = response.text().await.expect("a body");
    let body = serde_json::from_str(&raw).unwrap_or_else(|e| panic!("not JSON ({e}): {raw}"));
    (status, body)
}

/// Checks the status of `response` and returns its JSON body.
pub async fn expect(response: Response, want: StatusCode, what: &str) -> Value {
    let (status, body) = json_of(response).await;
    assert_eq!(status, want, "{what}: {body}");
    body
}

/// A citizen or staff member registered with their own client (`issue_client: true`),
/// and a token of that client.
#[derive(Debug, Clone)]
pub struct Person {
    pub id: String,
    pub token: String,
}

impl Person {
    /// `{"kind": kind, "id": id}`, as the API names an actor.
    pub fn actor(&self, kind: &str) -> Value {
        json!({ "kind": kind, "id": self.id })
    }
}

/// `POST path` as `token`; panics unless 201.
pub async fn created(app: &TestApp, path: &str, token: &str, body: &Value) -> Value {
    expect(app.post_json(path, token, body).await, StatusCode::CREATED, &format!("POST {path}")).await
}

async fn person(app: &TestApp, path: &str, admin: &str, mut body: Value) -> Person {
    body["issue_client"] = json!(true);
    let body = created(app, path, admin, &body).await;
    let client_id = text(&body["client"], "client_id");
    let secret = text(&body["client"], "client_secret");
    let token = app.token_for(&client_id, &secret, None).await.access_token;
    Person { id: text(&body, "id"), token }
}

/// A mission (its id).
pub async fn mission(app: &TestApp, admin: &str, code: &str) -> String {
    text(&app.create_mission(admin, code).await, "id")
}

/// A service type with these stages and SLA; the creation response.
pub async fn service_type(app: &TestApp, admin: &str, code: &str, stages: &[&str], sla_days: i64) -> Value {
    let stages: Vec<Value> =
        stages.iter().map(|name| json!({ "name": name, "description": format!("{name} step") })).collect();
    let body = json!({
        "code": code,
        "name": format!("Service {code}"),
        "description": "A consular service",
        "fee": { "amount_minor": 8600, "currency": "EUR" },
        "sla_days": sla_days,
        // No required documents: the workflow tests approve requests without uploading
        // any (the approval gate is tested in tests/documents.rs).
        "required_documents": [],
        "stages": stages,
    });
    created(app, SERVICES, admin, &body).await
}

/// The three stages of the standard type.
pub const STAGES: [&str; 3] = ["Document check", "Interview", "Printing"];

/// Deactivates a service type.
pub async fn deactivate(app: &TestApp, admin: &str, service: &str) {
    let response =
        app.patch_json(&format!("{SERVICES}/{service}"), admin, Some("*"), &json!({ "active": false })).await;
    expect(response, StatusCode::OK, "deactivation").await;
}

/// A citizen of `mission` with passport `passport`, registered with their client.
pub async fn citizen(app: &TestApp, admin: &str, mission: &str, passport: &str) -> Person {
    citizen_with(app, admin, mission, passport, "alice.martin@example.org", "fr").await
}

/// The same with the citizen's email address and preferred language.
pub async fn citizen_with(
    app: &TestApp,
    admin: &str,
    mission: &str,
    passport: &str,
    email: &str,
    language: &str,
) -> Person {
    let body = json!({
        "mission_id": mission,
        "given_name": "Alice",
        "family_name": format!("Citizen {passport}"),
        "date_of_birth": "1990-04-12",
        "place_of_birth": "Lyon",
        "nationality": "FR",
        "passport_number": passport,
        "passport_expiry": "2031-04-11",
        "email": email,
        "phone": "+33612345678",
        "address": { "line1": "1 Main Street", "city": "Ottawa", "country": "CA" },
        "preferred_language": language,
        "registration_status": "active",
    });
    person(app, CITIZENS, admin, body).await
}

/// A staff member of `mission` assigned to `types`, created with their client.
pub async fn staff(app: &TestApp, admin: &str, mission: &str, name: &str, types: &[&str]) -> Person {
    let body = json!({
        "mission_id": mission,
        "name": name,
        "email": "officer@mission.example",
        "job_title": "Consular officer",
        "service_type_ids": types,
    });
    person(app, STAFF, admin, body).await
}

/// Mission X (`fr-paris`) with a three-stage service type, one staff member assigned to
/// it and one citizen; the global admin's token.
pub struct Cast {
    pub admin: String,
    pub mission: String,
    pub service: String,
    pub staff: Person,
    pub citizen: Person,
}

pub async fn cast(app: &TestApp) -> Cast {
    let admin = app.admin_token().await;
    let mission = mission(app, &admin, "fr-paris").await;
    let service = text(&service_type(app, &admin, "passport_renewal", &STAGES, 21).await, "id");
    let staff = staff(app, &admin, &mission, "Xavier Staff", &[service.as_str()]).await;
    let citizen = citizen(app, &admin, &mission, "X0000A").await;
    Cast { admin, mission, service, staff, citizen }
}

/// `POST /requests` as `token` with `body`; panics unless 201 (checks Location and ETag).
pub async fn submit(app: &TestApp, token: &str, body: &Value) -> Value {
    let response = app.post_json(REQUESTS, token, body).await;
    let location = header(response.headers(), "location");
    let etag = header(response.headers(), "etag");
    let request = expect(response, StatusCode::CREATED, "submission").await;
    assert_eq!(location, at(&text(&request, "id"), ""), "{request}");
    assert_eq!(etag, "\"1\"", "{request}");
    request
}

/// A citizen submits a request of `service` for themself; the request.
pub async fn submit_own(app: &TestApp, citizen: &Person, service: &str) -> Value {
    submit(app, &citizen.token, &json!({ "service_type_id": service })).await
}

/// `GET /requests/{id}` as `token`; panics unless 200. `(ETag, details)`.
pub async fn read(app: &TestApp, token: &str, id: &str) -> (String, Value) {
    let response = app.get(&at(id, ""), token).await;
    let etag = header(response.headers(), "etag");
    let body = expect(response, StatusCode::OK, "GET request").await;
    assert!(etag.starts_with('"') && etag.ends_with('"'), "a strong ETag: {etag}");
    (etag, body)
}

/// `PATCH /requests/{id}/status` as `token`, with `If-Match: etag` when given.
pub async fn patch(app: &TestApp, token: &str, id: &str, etag: Option<&str>, body: &Value) -> Response {
    app.patch_json(&at(id, "/status"), token, etag, body).await
}

/// Reads the request, applies `body` with its ETag, and checks the 200: the returned
/// ETag is new and matches a fresh read. The changed request.
pub async fn change(app: &TestApp, token: &str, id: &str, body: &Value) -> Value {
    let (before, _) = read(app, token, id).await;
    let response = patch(app, token, id, Some(&before), body).await;
    let after = header(response.headers(), "etag");
    let changed = expect(response, StatusCode::OK, &format!("PATCH {body}")).await;
    assert_ne!(after, before, "the ETag changes with every change");
    assert_eq!(read(app, token, id).await.0, after, "the PATCH answers the current ETag");
    changed
}

/// A status change with a reason.
pub fn to(status: &str, reason: &str) -> Value {
    json!({ "status": status, "reason": reason })
}

/// `POST /requests/{id}/{kind}` (`messages` or `notes`) with `body`; panics unless 201.
pub async fn post(app: &TestApp, token: &str, id: &str, kind: &str, body: &str) -> Value {
    created(app, &at(id, &format!("/{kind}")), token, &json!({ "body": body })).await
}

/// A POST with an `Idempotency-Key`.
pub async fn post_keyed(app: &TestApp, path: &str, token: &str, key: &str, body: &Value) -> Response {
    app.authed(Method::POST, path, token)
        .header("idempotency-key", key)
        .json(body)
        .send()
        .await
        .expect("POST")
}

/// Every item of a list from `path` on, following `Link: rel="next"` (and checking it
/// agrees with `next_cursor`).
pub async fn list_all(app: &TestApp, token: &str, path: &str) -> Vec<Value> {
    let mut items = Vec::new();
    let mut next = Some(path.to_owned());
    let mut pages = 0;
    while let Some(path) = next {
        pages += 1;
        assert!(pages <= 100, "the list at {path} does not end");
        let response = app.get(&path, token).await;
        next = next_link(&response);
        let page = expect(response, StatusCode::OK, &format!("GET {path}")).await;
        items.extend(page["items"].as_array().unwrap_or_else(|| panic!("no items: {page}")).clone());
        match page["next_cursor"].as_str() {
            Some(cursor) => {
                let link = next.as_deref().unwrap_or_else(|| panic!("next_cursor without Link: {page}"));
                assert!(link.ends_with(&format!("cursor={cursor}")), "{link} vs {cursor}");
            }
            None => assert!(next.is_none(), "a Link on the last page of {path}"),
        }
    }
    items
}

/// The ids of the requests `token` lists with `query`, every page.
pub async fn listed(app: &TestApp, token: &str, query: &[(&str, &str)]) -> Vec<String> {
    ids(&list_all(app, token, &with_query(REQUESTS, query)).await)
}

/// Every event of the transactional outbox, oldest first, read from the database.
pub async fn outbox(app: &TestApp) -> Vec<OutboxEvent> {
    let db = consular_db::Database::connect(&consular_db::DbConfig::new(app.settings.database_url.clone()))
        .expect("a database handle");
    let events = db.outbox_events(None, 10_000).await.expect("the outbox");
    db.close();
    events
}

/// The kinds of the outbox events about request `id`, oldest first.
pub async fn event_kinds(app: &TestApp, id: &str) -> Vec<String> {
    outbox(app).await.into_iter().filter(|e| e.aggregate_id.to_string() == id).map(|e| e.kind).collect()
}
