//! The wire of `/api/v1/auth/clients`: an API client, the body that creates one, and the
//! problems these operations document.

use crate::wire::common::{PrincipalKindName, ScopeName, problem_response, wire_enum};
use consular_domain::{ApiClient, ClientStatus, MissionId, NewClient, PrincipalId, Scope, ScopeSet};
use serde::{Deserialize, Serialize};
use time::OffsetDateTime;
use utoipa::ToSchema;
use uuid::Uuid;

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
    /// `secret`: in the response that created or rotated it only.
    pub fn new(client: &ApiClient, secret: Option<&str>) -> Self {
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

impl From<CreateClient> for NewClient {
    fn from(input: CreateClient) -> Self {
        NewClient {
            name: input.name,
            scopes: input.scopes.into_iter().map(Scope::from).collect::<ScopeSet>(),
            mission: input.mission_id.map(MissionId),
            principal: input.principal_id.map(PrincipalId),
        }
    }
}

problem_response! {
    /// 409 of a rotation.
    ClientDisabled = 409, "The client is disabled";
}
