//! The routes, one module per area, and the response helpers they share.

/// An enum of the wire that mirrors a domain enum (the domain does not depend on utoipa
/// or serde naming): snake_case values, an OpenAPI schema, and conversions both ways.
/// The domain enum must be in scope under `$domain`.
macro_rules! wire_enum {
    ($(#[$meta:meta])* $name:ident mirrors $domain:ident { $($variant:ident),+ $(,)? }) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize, utoipa::ToSchema)]
        #[serde(rename_all = "snake_case")]
        pub enum $name {
            $($variant),+
        }

        impl From<$name> for $domain {
            fn from(value: $name) -> Self {
                match value {
                    $($name::$variant => $domain::$variant),+
                }
            }
        }

        impl From<$domain> for $name {
            fn from(value: $domain) -> Self {
                match value {
                    $($domain::$variant => $name::$variant),+
                }
            }
        }
    };
}

pub mod audit;
pub mod auth;
pub mod citizens;
pub mod clients;
pub mod missions;
pub mod ops;
pub mod requests;
pub mod services;
pub mod staff;

use crate::extract::{encode_cursor, etag, next_link};
use actix_web::http::StatusCode;
use actix_web::http::header::{self, HeaderValue};
use actix_web::{HttpRequest, HttpResponse};
use consular_application::Written;
use consular_domain::Page;
use consular_ports::StoredResponse;
use serde::Serialize;
use utoipa_actix_web::service_config::ServiceConfig;

/// Registers every documented route; the OpenAPI document is generated from the same call.
pub fn register(cfg: &mut ServiceConfig) {
    cfg.service(auth::create_token)
        .service(auth::refresh_token)
        .service(auth::revoke_token)
        .service(auth::jwks)
        .service(clients::list_clients)
        .service(clients::create_client)
        .service(clients::get_client)
        .service(clients::disable_client)
        .service(clients::rotate_client_secret)
        .service(missions::list_missions)
        .service(missions::create_mission)
        .service(missions::get_mission)
        .service(missions::update_mission)
        .service(services::list_services)
        .service(services::create_service)
        .service(services::get_service)
        .service(services::update_service)
        .service(citizens::list_citizens)
        .service(citizens::register_citizen)
        .service(citizens::get_citizen)
        .service(citizens::update_citizen)
        .service(staff::list_staff)
        .service(staff::create_staff)
        .service(staff::get_staff)
        .service(staff::update_staff_assignments)
        .service(requests::list_requests)
        .service(requests::submit_request)
        .service(requests::get_request)
        .service(requests::change_request_status)
        .service(requests::cancel_request)
        .service(requests::add_request_note)
        .service(requests::list_request_notes)
        .service(requests::list_request_messages)
        .service(requests::post_request_message)
        .service(requests::get_staff_queue)
        .service(audit::list_audit_events)
        .service(ops::live)
        .service(ops::ready)
        .service(ops::metrics)
        .service(ops::openapi);
}

time::serde::format_description!(pub iso_date, Date, "[year]-[month]-[day]");

/// The API client issued together with a citizen or staff member.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct IssuedClientBody {
    pub client_id: uuid::Uuid,
    /// Shown once, in the response that created the client; never in a replay.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub client_secret: Option<String>,
    pub scopes: Vec<clients::ScopeName>,
}

impl From<consular_application::citizens::IssuedClient<'_>> for IssuedClientBody {
    fn from(issued: consular_application::citizens::IssuedClient<'_>) -> Self {
        IssuedClientBody {
            client_id: issued.client.id.as_uuid(),
            client_secret: issued.secret.map(str::to_owned),
            scopes: issued.client.scopes.iter().map(clients::ScopeName::from).collect(),
        }
    }
}

/// A JSON response as it is sent and, for idempotent creations, stored.
pub fn stored_json<T: Serialize>(
    status: StatusCode,
    body: &T,
    headers: Vec<(String, String)>,
) -> StoredResponse {
    StoredResponse { status: status.as_u16(), headers, body: serde_json::to_string(body).unwrap_or_default() }
}

/// The headers of a created resource: where it lives and its ETag.
pub fn created_headers(location: String, version: i64) -> Vec<(String, String)> {
    vec![("location".to_owned(), location), ("etag".to_owned(), etag(version))]
}

/// Sends a written (fresh or replayed) response.
pub fn send(written: Written) -> HttpResponse {
    let status = StatusCode::from_u16(written.response.status).unwrap_or(StatusCode::OK);
    let mut response = HttpResponse::build(status);
    response.content_type("application/json");
    for (name, value) in &written.response.headers {
        if let Ok(value) = HeaderValue::from_str(value) {
            response.insert_header((name.as_str(), value));
        }
    }
    if written.replayed {
        response.insert_header(("idempotent-replayed", "true"));
    }
    response.body(written.response.body)
}

/// A JSON resource with its ETag.
pub fn with_etag<T: Serialize>(body: &T, version: i64) -> HttpResponse {
    HttpResponse::Ok().insert_header((header::ETAG, etag(version))).json(body)
}

/// A list page: `{items, next_cursor}` and a `Link` header to the next page.
#[derive(Debug, Serialize)]
pub struct ListBody<T> {
    pub items: Vec<T>,
    pub next_cursor: Option<String>,
}

pub fn list<T, D: Serialize>(req: &HttpRequest, page: Page<T>, to_dto: impl Fn(T) -> D) -> HttpResponse {
    let next_cursor = page.next_after.map(encode_cursor);
    let mut response = HttpResponse::Ok();
    if let Some(cursor) = &next_cursor {
        response.insert_header((header::LINK, next_link(req, cursor)));
    }
    response.json(ListBody { items: page.items.into_iter().map(to_dto).collect(), next_cursor })
}
