//! `/api/v1/auth/clients`: API clients, managed by admins (docs/api.md, "Clients,
//! principals and scopes"). The bodies are in `crate::wire::clients`.

use crate::extract::{ApiJson, ApiQuery, Authenticated, PageParams, idempotency};
use crate::problem::ApiError;
use crate::respond::{self, Resource, list, with_etag};
use crate::state::AppState;
use crate::wire::IdempotencyKeyInUse;
use crate::wire::clients::{ClientBody, ClientDisabled, ClientList, CreateClient};
use actix_web::{HttpRequest, HttpResponse, get, post, web};
use consular_application::clients::Actor;
use consular_domain::ClientId;
use utoipa_actix_web::service_config::ServiceConfig;
use uuid::Uuid;

/// Registers this area's operations, in the order actix tries them (`super::register`).
pub fn register(cfg: &mut ServiceConfig) {
    cfg.service(list_clients)
        .service(create_client)
        .service(get_client)
        .service(disable_client)
        .service(rotate_client_secret);
}

fn client_path(id: ClientId) -> String {
    format!("/api/v1/auth/clients/{id}")
}

/// List API clients (admin).
///
/// A mission admin sees the clients of their mission only.
#[utoipa::path(
    tag = "clients",
    operation_id = "list_clients",
    params(PageParams),
    security(("oauth2" = ["admin"])),
    extensions(("x-maturity" = json!("Beta"))),
    responses((status = 200, description = "A page of clients", body = ClientList,
        headers(("Link" = String, description = "The next page, when there is one"))))
)]
#[get("/api/v1/auth/clients")]
pub async fn list_clients(
    req: HttpRequest,
    state: web::Data<AppState>,
    Authenticated(actor): Authenticated,
    ApiQuery(page): ApiQuery<PageParams>,
) -> Result<HttpResponse, ApiError> {
    let page = state.clients.list(Actor::Principal(&actor), page.to_request()?).await?;
    Ok(list(&req, page, |c| ClientBody::new(&c, None)))
}

/// Create an API client (admin).
///
/// The response carries `client_secret`, once. A replay through `Idempotency-Key`
/// returns the same client without the secret (the secret is never stored).
#[utoipa::path(
    tag = "clients",
    operation_id = "create_client",
    request_body = CreateClient,
    params(("Idempotency-Key" = Option<String>, Header, description = "Replays the first response (without the secret)")),
    security(("oauth2" = ["admin"])),
    extensions(("x-maturity" = json!("Beta"))),
    responses(
        (status = 201, description = "Created", body = ClientBody, headers(
            ("Location" = String, description = "The new client"),
            ("ETag" = String, description = "Its version"))),
        IdempotencyKeyInUse,
    )
)]
#[post("/api/v1/auth/clients")]
pub async fn create_client(
    req: HttpRequest,
    state: web::Data<AppState>,
    Authenticated(actor): Authenticated,
    body: ApiJson<CreateClient>,
) -> Result<HttpResponse, ApiError> {
    let key = idempotency(&req, &body.raw)?;
    let written = state.clients.create(&actor, body.value.into(), key.as_ref()).await?;
    let resource =
        Resource { location: client_path(written.value.client.id), version: written.value.client.version };
    Ok(respond::created(&written, Some(resource), |issued| {
        ClientBody::new(&issued.client, issued.secret.as_deref())
    }))
}

/// Get an API client (admin).
///
/// Its scopes, principal, mission and status, never its secret. A mission admin reads
/// only the clients of their own mission (others are 404); a global admin reads every
/// client.
#[utoipa::path(
    tag = "clients",
    operation_id = "get_client",
    params(("id" = Uuid, Path, description = "Client id")),
    security(("oauth2" = ["admin"])),
    extensions(("x-maturity" = json!("Beta"))),
    responses((status = 200, description = "The client", body = ClientBody, headers(("ETag" = String, description = "Its version"))))
)]
#[get("/api/v1/auth/clients/{id}")]
pub async fn get_client(
    state: web::Data<AppState>,
    Authenticated(actor): Authenticated,
    id: web::Path<Uuid>,
) -> Result<HttpResponse, ApiError> {
    let client = state.clients.get(Actor::Principal(&actor), ClientId(id.into_inner())).await?;
    Ok(with_etag(&ClientBody::new(&client, None), client.version))
}

/// Disable an API client (admin).
///
/// Its tokens are refused by every node within a second and it gets no new ones.
/// Disabling a disabled client changes nothing.
#[utoipa::path(
    tag = "clients",
    operation_id = "disable_client",
    params(("id" = Uuid, Path, description = "Client id")),
    security(("oauth2" = ["admin"])),
    extensions(("x-maturity" = json!("Beta"))),
    responses((status = 200, description = "The disabled client", body = ClientBody, headers(("ETag" = String, description = "Its version"))))
)]
#[post("/api/v1/auth/clients/{id}/disable")]
pub async fn disable_client(
    state: web::Data<AppState>,
    Authenticated(actor): Authenticated,
    id: web::Path<Uuid>,
) -> Result<HttpResponse, ApiError> {
    let client = state.clients.disable(Actor::Principal(&actor), ClientId(id.into_inner())).await?;
    Ok(with_etag(&ClientBody::new(&client, None), client.version))
}

/// Give an API client a new secret (admin).
///
/// The old secret stops working at once; tokens already issued stay valid until they
/// expire or are revoked. The new secret is shown once.
#[utoipa::path(
    tag = "clients",
    operation_id = "rotate_client_secret",
    params(("id" = Uuid, Path, description = "Client id")),
    security(("oauth2" = ["admin"])),
    extensions(("x-maturity" = json!("Beta"))),
    responses(
        (status = 200, description = "The client with its new secret", body = ClientBody, headers(("ETag" = String, description = "Its version"))),
        ClientDisabled,
    )
)]
#[post("/api/v1/auth/clients/{id}/rotate-secret")]
pub async fn rotate_client_secret(
    state: web::Data<AppState>,
    Authenticated(actor): Authenticated,
    id: web::Path<Uuid>,
) -> Result<HttpResponse, ApiError> {
    let rotated = state.clients.rotate_secret(&actor, ClientId(id.into_inner())).await?;
    Ok(with_etag(&ClientBody::new(&rotated.client, Some(&rotated.secret)), rotated.client.version))
}
