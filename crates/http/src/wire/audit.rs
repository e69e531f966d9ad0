//! The wire of `/api/v1/audit-events`: an audit entry and the list parameters.

use crate::wire::common::{ActorBody, closed_set};
use consular_domain::{AuditAction, AuditRecord};
use serde::{Deserialize, Serialize};
use time::OffsetDateTime;
use utoipa::{IntoParams, ToSchema};
use uuid::Uuid;

closed_set!(AuditActionName from AuditAction, "What an audit entry records; later versions may add actions.");

/// One create, update or state change.
#[derive(Debug, Serialize, ToSchema)]
pub struct AuditEventBody {
    pub id: Uuid,
    #[serde(with = "time::serde::rfc3339")]
    #[schema(value_type = String, format = DateTime)]
    pub at: OffsetDateTime,
    /// Absent when the operator acted through the command line.
    pub actor: Option<ActorBody>,
    /// Whom the actor acted for (`On-Behalf-Of`: the dependant's citizen id); absent
    /// when they acted for themself.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub on_behalf_of: Option<Uuid>,
    pub client_id: Option<Uuid>,
    /// The address the change was requested from (behind trusted proxies, the client they
    /// forwarded for); absent for the command line and for entries older than this field.
    pub client_address: Option<String>,
    #[schema(value_type = AuditActionName)]
    pub action: String,
    pub resource_type: String,
    pub resource_id: Uuid,
    pub changed_fields: Vec<String>,
}

impl From<AuditRecord> for AuditEventBody {
    fn from(r: AuditRecord) -> Self {
        AuditEventBody {
            id: r.id.as_uuid(),
            at: r.at,
            actor: r.actor.map(ActorBody::from),
            on_behalf_of: r.on_behalf_of.map(|c| c.as_uuid()),
            client_id: r.client_id.map(|c| c.as_uuid()),
            client_address: r.client_address.map(|a| a.to_string()),
            action: r.action,
            resource_type: r.resource_type,
            resource_id: r.resource_id,
            changed_fields: r.changed_fields,
        }
    }
}

#[derive(Debug, Serialize, ToSchema)]
pub struct AuditEventList {
    pub items: Vec<AuditEventBody>,
    pub next_cursor: Option<String>,
}

#[derive(Debug, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct AuditListParams {
    /// Page size, 1 to 100 (default 20).
    #[param(minimum = 1, maximum = 100)]
    pub limit: Option<i64>,
    /// The `next_cursor` of the previous page.
    #[param(min_length = 22, max_length = 22, pattern = "^[A-Za-z0-9_-]{22}$")]
    pub cursor: Option<String>,
    /// e.g. `mission`, `api_client`, `citizen`, `staff_member`, `service_type`.
    #[param(min_length = 1, max_length = 64)]
    pub resource_type: Option<String>,
    pub resource_id: Option<Uuid>,
    /// The principal who acted.
    pub actor_id: Option<Uuid>,
}
