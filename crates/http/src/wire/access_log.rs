//! The wire of `/api/v1/citizens/{me,id}/access-log`: one entry of a citizen's access log
//! and the list parameters.

use crate::wire::common::{ActorBody, closed_set};
use consular_domain::{AccessEntry, AccessRole, AccessedData};
use serde::{Deserialize, Serialize};
use time::OffsetDateTime;
use utoipa::{IntoParams, ToSchema};
use uuid::Uuid;

closed_set!(AccessedDataName from AccessedData, "What was read: `profile` (the object is the citizen), `request` (its details), `document` (a download URL), `appointment`, `request_notifications` (a request's notifications and their emails), `citizen_list` (the profile on a page of the citizens list; the object is the citizen), `export` (a ready export's download URL given to an admin; the object is the export). Later versions may add kinds.");
closed_set!(AccessRoleName from AccessRole, "The role the reader acted in, from their token: `admin` or `staff`.");

/// One read of the citizen's personal data by someone other than the citizen.
#[derive(Debug, Serialize, ToSchema)]
pub struct AccessEntryBody {
    pub id: Uuid,
    #[serde(with = "time::serde::rfc3339")]
    #[schema(value_type = String, format = DateTime)]
    pub at: OffsetDateTime,
    /// Who read.
    pub actor: ActorBody,
    /// The reader's mission; null for a global admin.
    pub actor_mission_id: Option<Uuid>,
    #[schema(value_type = AccessRoleName)]
    pub actor_role: String,
    /// The API client the reader used.
    pub client_id: Uuid,
    #[schema(value_type = AccessedDataName)]
    pub what: String,
    /// The citizen, request, document or appointment read.
    pub object_id: Uuid,
}

impl From<AccessEntry> for AccessEntryBody {
    fn from(e: AccessEntry) -> Self {
        AccessEntryBody {
            id: e.id.as_uuid(),
            at: e.at,
            actor: ActorBody::from(e.actor),
            actor_mission_id: e.actor_mission.map(|m| m.as_uuid()),
            actor_role: e.actor_role.as_str().to_owned(),
            client_id: e.client_id.as_uuid(),
            what: e.what.as_str().to_owned(),
            object_id: e.object_id,
        }
    }
}

#[derive(Debug, Serialize, ToSchema)]
pub struct AccessEntryList {
    pub items: Vec<AccessEntryBody>,
    pub next_cursor: Option<String>,
}

#[derive(Debug, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct AccessLogParams {
    /// Page size, 1 to 100 (default 20).
    #[param(minimum = 1, maximum = 100)]
    pub limit: Option<i64>,
    /// The `next_cursor` of the previous page.
    #[param(min_length = 22, max_length = 22, pattern = "^[A-Za-z0-9_-]{22}$")]
    pub cursor: Option<String>,
}
