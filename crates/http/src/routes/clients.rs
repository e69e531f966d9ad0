//! `/api/v1/auth/clients`: API clients, managed by admins (docs/api.md, "Clients,
//! principals and scopes").

use crate::extract::{ApiJson, ApiQuery, Authenticated, PageParams, idempotency};
use crate::problem::{ApiError, Problem};
use crate::respond::{self, Resource, list, with_etag};
use crate::state::AppState;
use crate::wire::{ScopeName, wire_enum};
use actix_web::{HttpRequest, HttpResponse, get, post, web};
use consular_application::clients::Actor;
use consular_domain::{
    ApiClient, ClientId, ClientStatus, MissionId, NewClient, PrincipalId, PrincipalKind, Scope, ScopeSet,
};
use serde::{Deserialize, Serialize};
use time::OffsetDateTime;
use utoipa::ToSchema;
use uuid::Uuid;

wire_enum!(PrincipalKindName mirrors PrincipalKind { Admin, Staff, Citizen });
wire_enum!(ClientStatusName mirrors ClientStatus { Active, Disabled });

/// An API client. `client_secret` appears only in the response that created or rotated it.
#[derive(Debug, Serialize, ToSchema)]
pub struct ClientBody {
    pub client_id: Uuid,
    pub name: String,
    pub scopes: Vec<ScopeName>,
    pub principal_kind: PrincipalKindName,
    pub principal_id: Uuid,
    /// Absent for global admins.
    pub mission_id: Option<Uuid>,
    pub status: ClientStatusName,
    #[serde(with = "time::serde::rfc3339")]
    #[schema(value_type = String, format = DateTime)]
    pub created_at: OffsetDateTime,
    #[serde(with = "time::serde::rfc3339")]
    #[schema(value_type = String, format = DateTime)]
    pub updated_at: OffsetDateTime,
    /// Shown once; store it safely. Never returned again.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub client_secret: Option<String>,
}

impl ClientBody {
    fn new(client: &ApiClient, secret: Option<&str>) -> Self {
        ClientBody {
            client_id: client.id.as_uuid(),
            name: client.name.clone(),
            scopes: client.scopes.iter().map(ScopeName::from).collect(),
            principal_kind: client.subject.kind.into(),
            principal_id: client.subject.id.as_uuid(),
            mission_id: client.mission.map(|m| m.as_uuid()),
            status: client.status.into(),
            created_at: client.created_at,
            updated_at: client.updated_at,
            client_secret: secret.map(str::to_owned),
        }
    }
}

#[derive(Debug, Serialize, ToSchema)]
pub struct ClientList {
    pub items: Vec<ClientBody>,
    pub next_cursor: Option<String>,
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateClient {
    #[schema(
        example = "citizen portal",
        min_length = 1,
        max_length = 100,
        pattern = r"^[^\s\x00-\x1f\x7f-\x9f](?:[^\x00-\x1f\x7f-\x9f]*[^\s\x00-\x1f\x7f-\x9f])?$"
    )]
    pub name: String,
    /// `admin`, `staff`, `admin` + `staff`, or `citizen` alone.
    #[schema(min_items = 1, max_items = 2)]
    pub scopes: Vec<ScopeName>,
    /// Required for staff and citizen clients; absent makes a global admin.
    pub mission_id: Option<Uuid>,
    /// The principal the client acts for, a new one when absent: an existing principal of
    /// the kind the scopes name, in the client's mission (422 otherwise).
    pub principal_id: Option<Uuid>,
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
    security(("bearer" = [])),
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
    security(("bearer" = [])),
    extensions(("x-maturity" = json!("Beta"))),
    responses(
        (status = 201, description = "Created", body = ClientBody, headers(
            ("Location" = String, description = "The new client"),
            ("ETag" = String, description = "Its version"))),
        (status = 409, description = "The Idempotency-Key is in use", body = Problem, content_type = "application/problem+json"),
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
    let input = body.value;
    let new = NewClient {
        name: input.name,
        scopes: input.scopes.into_iter().map(Scope::from).collect::<ScopeSet>(),
        mission: input.mission_id.map(MissionId),
        principal: input.principal_id.map(PrincipalId),
    };
    let written = state.clients.create(&actor, new, key.as_ref()).await?;
    let resource =
        Resource { location: client_path(written.value.client.id), version: written.value.client.version };
    Ok(respond::created(&written, Some(resource), |issued| {
        ClientBody::new(&issued.client, issued.secret.as_deref())
    }))
}

/// Get an API client (admin).
#[utoipa::path(
    tag = "clients",
    operation_id = "get_client",
    params(("id" = Uuid, Path, description = "Client id")),
    security(("bearer" = [])),
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
    security(("bearer" = [])),
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
    security(("bearer" = [])),
    extensions(("x-maturity" = json!("Beta"))),
    responses(
        (status = 200, description = "The client with its new secret", body = ClientBody, headers(("ETag" = String, description = "Its version"))),
        (status = 409, description = "The client is disabled", body = Problem, content_type = "application/problem+json"),
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
