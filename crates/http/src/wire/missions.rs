//! The wire of `/api/v1/missions`: a mission, the bodies that create and update one, and
//! the problems these operations document.

use crate::wire::common::problem_response;
use consular_domain::{Mission, MissionChanges, NewMission};
use serde::{Deserialize, Serialize};
use time::OffsetDateTime;
use utoipa::ToSchema;
use uuid::Uuid;

/// A mission: an embassy or consulate.
#[derive(Debug, Serialize, ToSchema)]
pub struct MissionBody {
    pub id: Uuid,
    /// Stable public code, e.g. `fr-paris`.
    pub code: String,
    pub name: String,
    /// ISO 3166-1 alpha-2.
    pub country: String,
    pub city: String,
    /// IANA time zone.
    pub timezone: String,
    #[serde(with = "time::serde::rfc3339")]
    #[schema(value_type = String, format = DateTime)]
    pub created_at: OffsetDateTime,
    #[serde(with = "time::serde::rfc3339")]
    #[schema(value_type = String, format = DateTime)]
    pub updated_at: OffsetDateTime,
}

impl From<Mission> for MissionBody {
    fn from(m: Mission) -> Self {
        MissionBody {
            id: m.id.as_uuid(),
            code: m.code,
            name: m.name,
            country: m.country,
            city: m.city,
            timezone: m.timezone,
            created_at: m.created_at,
            updated_at: m.updated_at,
        }
    }
}

#[derive(Debug, Serialize, ToSchema)]
pub struct MissionList {
    pub items: Vec<MissionBody>,
    /// Pass as `cursor` to get the next page; null on the last page.
    pub next_cursor: Option<String>,
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateMission {
    #[schema(example = "fr-paris", max_length = 64, pattern = "^[a-z]{2}(-[a-z0-9]+)+$")]
    pub code: String,
    #[schema(
        example = "Embassy in Paris",
        min_length = 1,
        max_length = 200,
        pattern = r"^[^\s\x00-\x1f\x7f-\x9f](?:[^\x00-\x1f\x7f-\x9f]*[^\s\x00-\x1f\x7f-\x9f])?$"
    )]
    pub name: String,
    #[schema(example = "FR", pattern = "^[A-Z]{2}$")]
    pub country: String,
    #[schema(
        example = "Paris",
        min_length = 1,
        max_length = 100,
        pattern = r"^[^\s\x00-\x1f\x7f-\x9f](?:[^\x00-\x1f\x7f-\x9f]*[^\s\x00-\x1f\x7f-\x9f])?$"
    )]
    pub city: String,
    #[schema(example = "Europe/Paris")]
    pub timezone: String,
}

/// Fields to change; absent fields stay as they are. The code never changes.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct UpdateMission {
    #[schema(
        min_length = 1,
        max_length = 200,
        pattern = r"^[^\s\x00-\x1f\x7f-\x9f](?:[^\x00-\x1f\x7f-\x9f]*[^\s\x00-\x1f\x7f-\x9f])?$"
    )]
    pub name: Option<String>,
    #[schema(pattern = "^[A-Z]{2}$")]
    pub country: Option<String>,
    #[schema(
        min_length = 1,
        max_length = 100,
        pattern = r"^[^\s\x00-\x1f\x7f-\x9f](?:[^\x00-\x1f\x7f-\x9f]*[^\s\x00-\x1f\x7f-\x9f])?$"
    )]
    pub city: Option<String>,
    pub timezone: Option<String>,
}

impl From<CreateMission> for NewMission {
    fn from(m: CreateMission) -> Self {
        NewMission { code: m.code, name: m.name, country: m.country, city: m.city, timezone: m.timezone }
    }
}

impl From<UpdateMission> for MissionChanges {
    fn from(m: UpdateMission) -> Self {
        MissionChanges { name: m.name, country: m.country, city: m.city, timezone: m.timezone }
    }
}

problem_response! {
    /// 412 of an update.
    MissionChanged = 412, "The mission changed since you read it";
}
