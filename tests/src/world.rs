//! Request bodies and fixtures of the missions, catalog, citizens, staff and audit suites,
//! and [`World`]: two missions with a caller of every kind on each side.

use crate::app::TestApp;
use crate::http::header;
use crate::tokens::Principal;
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use reqwest::header::HeaderMap;
use reqwest::{Response, StatusCode};
use serde_json::{Value, json};

pub const SERVICES: &str = "/api/v1/services";
pub const CITIZENS: &str = "/api/v1/citizens";
pub const STAFF: &str = "/api/v1/staff";
pub const AUDIT_EVENTS: &str = "/api/v1/audit-events";

/// Valid fields for a new mission with `code`.
pub fn mission_body(code: &str) -> Value {
    json!({
        "code": code,
        "name": format!("Embassy {code}"),
        "country": "FR",
        "city": "Paris",
        "timezone": "Europe/Paris",
    })
}

/// Valid fields for a new service type with `code` (two stages, two document kinds).
pub fn service_body(code: &str) -> Value {
    json!({
        "code": code,
        "name": format!("Service {code}"),
        "description": "Renew an expiring passport",
        "fee": { "amount_minor": 8600, "currency": "EUR" },
        "sla_days": 21,
        "required_documents": ["passport_photo", "old_passport"],
        "stages": [
            { "name": "Document check", "description": "Documents are complete and valid" },
            { "name": "Printing", "description": "" },
        ],
    })
}

/// Valid fields for a new citizen of `mission_id` with passport number `passport`.
pub fn citizen_body(mission_id: &str, passport: &str) -> Value {
    json!({
        "mission_id": mission_id,
        "given_name": "Alice",
        "family_name": "Martin",
        "date_of_birth": "1990-04-12",
        "place_of_birth": "Lyon",
        "nationality": "FR",
        "passport_number": passport,
        "passport_expiry": "2031-04-11",
        "email": "alice.martin@example.org",
        "phone": "+33612345678",
        "address": { "line1": "1 Main Street", "city": "Ottawa", "country": "CA" },
        "preferred_language": "fr",
    })
}

/// Valid fields for a new staff member of `mission_id` named `name`, without assignments.
pub fn staff_body(mission_id: &str, name: &str) -> Value {
    json!({
        "mission_id": mission_id,
        "name": name,
        "email": "officer@mission.example",
        "job_title": "Consular officer",
    })
}

/// The `pointer` of every entry of a problem's `errors`, in order (each entry must have
/// a `code` and a `message` too).
pub fn error_pointers(problem: &Value) -> Vec<String> {
    problem["errors"]
        .as_array()
        .unwrap_or_else(|| panic!("no errors[] in {problem}"))
        .iter()
        .map(|e| {
            assert!(e["code"].as_str().is_some_and(|c| !c.is_empty()), "{e}");
            assert!(e["message"].as_str().is_some_and(|m| !m.is_empty()), "{e}");
            e["pointer"].as_str().unwrap_or_else(|| panic!("no pointer in {e}")).to_owned()
        })
        .collect()
}

/// `(pointer, code)` of every entry of a problem's `errors`, in order.
pub fn error_codes(problem: &Value) -> Vec<(String, String)> {
    error_pointers(problem)
        .into_iter()
        .zip(problem["errors"].as_array().into_iter().flatten())
        .map(|(pointer, e)| (pointer, e["code"].as_str().unwrap_or_default().to_owned()))
        .collect()
}

/// The text member `key` of `value`; panics when it is not text.
pub fn text(value: &Value, key: &str) -> String {
    value[key].as_str().unwrap_or_else(|| panic!("no text `{key}` in {value}")).to_owned()
}

/// An RFC 3339 instant of a response (text in UTC, `Z`); panics otherwise.
pub fn instant(value: &Value) -> time::OffsetDateTime {
    let text = value.as_str().unwrap_or_else(|| panic!("not an instant: {value}"));
    assert!(text.ends_with('Z'), "not in UTC: {text}");
    time::OffsetDateTime::parse(text, &time::format_description::well_known::Rfc3339)
        .unwrap_or_else(|e| panic!("not RFC 3339 ({e}): {text}"))
}

/// The claims of an access token (not verified: the server made it).
pub fn token_claims(token: &str) -> Value {
    let payload = token.split('.').nth(1).expect("a JWS");
    serde_json::from_slice(&URL_SAFE_NO_PAD.decode(payload).expect("base64url claims")).expect("JSON claims")
}

/// `path?query`, with the query parameters form-encoded (as a `Link` header's are).
pub fn with_query(path: &str, query: &[(&str, &str)]) -> String {
    let url = reqwest::Url::parse_with_params(&format!("http://localhost{path}"), query).expect("a URL");
    match url.query() {
        Some(query) if !query.is_empty() => format!("{}?{query}", url.path()),
        _ => url.path().to_owned(),
    }
}

/// The next-page path of a `Link: <path>; rel="next"` header.
pub fn next_link(headers: &HeaderMap) -> Option<String> {
    let link = header(headers, "link");
    let target = link.strip_prefix('<')?.split_once(">; rel=\"next\"")?.0;
    Some(target.to_owned())
}

/// A principal created together with its resource (`issue_client: true`): the creation
/// response, and a token obtained with the issued credentials.
#[derive(Debug, Clone)]
pub struct Issued {
    /// The creation response (with `client.client_secret`).
    pub body: Value,
    /// The citizen's or staff member's id.
    pub id: String,
    pub client_id: String,
    pub token: String,
}

/// Two missions X and Y, and a caller of every kind on each side: the global admin, a
/// mission admin of each, a staff member of each (created with their client), citizens
/// A and B of X and C of Y (registered with their clients), an active and an inactive
/// service type.
pub struct World {
    pub admin: String,
    pub x: String,
    pub y: String,
    pub admin_x: Principal,
    pub admin_y: Principal,
    pub staff_x: Issued,
    pub staff_y: Issued,
    pub citizen_a: Issued,
    pub citizen_b: Issued,
    pub citizen_c: Issued,
    pub service: Value,
    pub inactive_service: Value,
}

impl TestApp {
    /// `POST /api/v1/missions` with valid fields; panics unless 201. The mission.
    pub async fn create_mission(&self, token: &str, code: &str) -> Value {
        let response = self.post_json("/api/v1/missions", token, &mission_body(code)).await;
        let status = response.status();
        let body: Value = response.json().await.expect("a JSON body");
        assert_eq!(status, StatusCode::CREATED, "mission creation failed: {body}");
        body
    }

    /// `POST path` with `body`; panics unless 201. The body.
    pub async fn create_at(&self, path: &str, token: &str, body: &Value) -> Value {
        let response = self.post_json(path, token, body).await;
        let status = response.status();
        let body: Value = response.json().await.expect("a JSON body");
        assert_eq!(status, StatusCode::CREATED, "POST {path} failed: {body}");
        body
    }

    /// `POST /api/v1/services` with [`service_body`]; panics unless 201.
    pub async fn create_service(&self, token: &str, code: &str) -> Value {
        self.create_at(SERVICES, token, &service_body(code)).await
    }

    /// `PATCH /api/v1/services/{id}` with `{"active": false}` (`If-Match: *`); panics unless 200.
    pub async fn deactivate_service(&self, token: &str, service: &Value) -> Value {
        let path = format!("{SERVICES}/{}", text(service, "id"));
        let response = self.patch_json(&path, token, Some("*"), &json!({ "active": false })).await;
        let status = response.status();
        let body: Value = response.json().await.expect("a JSON body");
        assert_eq!(status, StatusCode::OK, "deactivation failed: {body}");
        body
    }

    /// A token obtained with the client issued in a creation response (`client`).
    pub async fn issued(&self, body: Value) -> Issued {
        let client_id = text(&body["client"], "client_id");
        let secret = text(&body["client"], "client_secret");
        let token = self.token_for(&client_id, &secret, None).await.access_token;
        Issued { id: text(&body, "id"), client_id, token, body }
    }

    /// Registers a citizen with their client (`issue_client: true`) and gets them a token.
    pub async fn citizen_with_client(&self, token: &str, mut body: Value) -> Issued {
        body["issue_client"] = json!(true);
        let created = self.create_at(CITIZENS, token, &body).await;
        self.issued(created).await
    }

    /// Creates a staff member with their client (`issue_client: true`) and gets them a token.
    pub async fn staff_with_client(&self, token: &str, mut body: Value) -> Issued {
        body["issue_client"] = json!(true);
        let created = self.create_at(STAFF, token, &body).await;
        self.issued(created).await
    }

    /// Every item of a list, following the `Link: rel="next"` header from `path` (which
    /// may carry a query), and checking that it agrees with `next_cursor`.
    pub async fn list_all(&self, path: &str, token: &str) -> Vec<Value> {
        let mut items = Vec::new();
        let mut next = Some(path.to_owned());
        let mut pages = 0;
        while let Some(path) = next {
            pages += 1;
            assert!(pages <= 200, "the list at {path} does not end");
            let response = self.get(&path, token).await;
            let status = response.status();
            let headers = response.headers().clone();
            let page: Value = response.json().await.expect("a JSON list");
            assert_eq!(status, StatusCode::OK, "GET {path}: {page}");
            items.extend(page["items"].as_array().unwrap_or_else(|| panic!("no items in {page}")).clone());
            next = next_link(&headers);
            match page["next_cursor"].as_str() {
                Some(cursor) => {
                    let link = next.as_deref().unwrap_or_else(|| panic!("next_cursor without Link: {page}"));
                    assert!(link.ends_with(&format!("cursor={cursor}")), "{link} vs {cursor}");
                }
                None => assert!(next.is_none(), "a Link header on the last page of {path}"),
            }
        }
        items
    }

    /// The ids of every item of a list (see [`TestApp::list_all`]).
    pub async fn listed_ids(&self, path: &str, token: &str) -> Vec<String> {
        self.list_all(path, token).await.iter().map(|item| text(item, "id")).collect()
    }

    /// Sets up a [`World`].
    pub async fn world(&self) -> World {
        let admin = self.admin_token().await;
        let x = text(&self.create_mission(&admin, "fr-paris").await, "id");
        let y = text(&self.create_mission(&admin, "de-berlin").await, "id");
        let admin_x = self.principal_by(&admin, &["admin"], Some(&x)).await;
        let admin_y = self.principal_by(&admin, &["admin"], Some(&y)).await;
        let service = self.create_service(&admin, "passport_renewal").await;
        let inactive_service = self.create_service(&admin, "old_visa").await;
        let inactive_service = self.deactivate_service(&admin, &inactive_service).await;
        let staff_x = self.staff_with_client(&admin, staff_body(&x, "Xavier Staff")).await;
        let staff_y = self.staff_with_client(&admin, staff_body(&y, "Yann Staff")).await;
        let mut b = citizen_body(&x, "X0000B");
        b["given_name"] = json!("Bruno");
        let mut c = citizen_body(&y, "Y0000C");
        c["given_name"] = json!("Clara");
        World {
            citizen_a: self.citizen_with_client(&admin, citizen_body(&x, "X0000A")).await,
            citizen_b: self.citizen_with_client(&admin, b).await,
            citizen_c: self.citizen_with_client(&admin, c).await,
            admin,
            x,
            y,
            admin_x,
            admin_y,
            staff_x,
            staff_y,
            service,
            inactive_service,
        }
    }
}

impl World {
    /// Every caller, by name, with its token.
    pub fn callers(&self) -> [(&'static str, &str); 8] {
        [
            ("global admin", &self.admin),
            ("admin of X", &self.admin_x.token),
            ("admin of Y", &self.admin_y.token),
            ("staff of X", &self.staff_x.token),
            ("staff of Y", &self.staff_y.token),
            ("citizen A of X", &self.citizen_a.token),
            ("citizen B of X", &self.citizen_b.token),
            ("citizen C of Y", &self.citizen_c.token),
        ]
    }
}

/// What a request should answer: a status and, for a problem, its `code`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Expect {
    Ok,
    Created,
    /// 404 `not_found`.
    NotFound,
    /// 403 `insufficient_scope`.
    Scope,
    /// 403 `forbidden`.
    Forbidden,
}

impl Expect {
    /// Checks `response` against this expectation (`what` names the case) and returns its body.
    pub async fn check(self, response: Response, what: &str) -> Value {
        let status = response.status().as_u16();
        let text = response.text().await.expect("a body");
        let body: Value = serde_json::from_str(&text).unwrap_or(Value::Null);
        let (want, code) = match self {
            Expect::Ok => (200, None),
            Expect::Created => (201, None),
            Expect::NotFound => (404, Some("not_found")),
            Expect::Scope => (403, Some("insufficient_scope")),
            Expect::Forbidden => (403, Some("forbidden")),
        };
        assert_eq!(status, want, "{what}: expected {self:?}, got {status}: {text}");
        if let Some(code) = code {
            assert_eq!(body["code"], code, "{what}: {text}");
        }
        body
    }
}
