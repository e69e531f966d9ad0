//! The wire of `/api/v1/staff`: a staff member with their assignments, the bodies that
//! create one and replace its assignments, the list parameters, and the problems these
//! operations document.

use crate::wire::common::{IssuedClientBody, problem_response};
use consular_application::clients::IssuedClient;
use consular_domain::{Assignments, MissionId, NewStaffMember, ServiceTypeId, StaffMember};
use consular_ports::StaffFilter;
use serde::{Deserialize, Serialize};
use time::OffsetDateTime;
use utoipa::{IntoParams, ToSchema};
use uuid::Uuid;

/// A staff member with their service assignments.
#[derive(Debug, Serialize, ToSchema)]
pub struct StaffBody {
    pub id: Uuid,
    pub mission_id: Uuid,
    pub name: String,
    pub email: String,
    pub job_title: String,
    pub active: bool,
    /// The service types whose requests this member handles.
    pub service_type_ids: Vec<Uuid>,
    #[serde(with = "time::serde::rfc3339")]
    #[schema(value_type = String, format = DateTime)]
    pub created_at: OffsetDateTime,
    #[serde(with = "time::serde::rfc3339")]
    #[schema(value_type = String, format = DateTime)]
    pub updated_at: OffsetDateTime,
    /// Only in the creation response, when `issue_client` was set.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub client: Option<IssuedClientBody>,
}

impl StaffBody {
    /// `issued`: the client created with the member, in the creation response only.
    pub fn new(m: &StaffMember, issued: Option<&IssuedClient>) -> Self {
        StaffBody {
            id: m.id.as_uuid(),
            mission_id: m.mission_id.as_uuid(),
            name: m.name.clone(),
            email: m.email.clone(),
            job_title: m.job_title.clone(),
            active: m.active,
            service_type_ids: m.service_type_ids.iter().map(|s| s.as_uuid()).collect(),
            created_at: m.created_at,
            updated_at: m.updated_at,
            client: issued.map(IssuedClientBody::from),
        }
    }
}

#[derive(Debug, Serialize, ToSchema)]
pub struct StaffList {
    pub items: Vec<StaffBody>,
    pub next_cursor: Option<String>,
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateStaff {
    pub mission_id: Uuid,
    #[schema(
        min_length = 1,
        max_length = 200,
        pattern = r"^[^\s\x00-\x1f\x7f-\x9f](?:[^\x00-\x1f\x7f-\x9f]*[^\s\x00-\x1f\x7f-\x9f])?$"
    )]
    pub name: String,
    #[schema(format = Email, max_length = 254)]
    pub email: String,
    #[schema(
        min_length = 1,
        max_length = 100,
        pattern = r"^[^\s\x00-\x1f\x7f-\x9f](?:[^\x00-\x1f\x7f-\x9f]*[^\s\x00-\x1f\x7f-\x9f])?$"
    )]
    pub job_title: String,
    /// Active service types of the catalog.
    #[serde(default)]
    #[schema(max_items = 100)]
    pub service_type_ids: Vec<Uuid>,
    /// Also create the member's API client (scope `staff`) and return its credentials once.
    #[serde(default)]
    pub issue_client: bool,
}

/// The complete new list of assignments.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct UpdateAssignments {
    #[schema(max_items = 100)]
    pub service_type_ids: Vec<Uuid>,
}

#[derive(Debug, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct StaffListParams {
    /// Page size, 1 to 100 (default 20).
    #[param(minimum = 1, maximum = 100)]
    pub limit: Option<i64>,
    /// The `next_cursor` of the previous page.
    #[param(min_length = 22, max_length = 22, pattern = "^[A-Za-z0-9_-]{22}$")]
    pub cursor: Option<String>,
    pub mission_id: Option<Uuid>,
    /// Members assigned to this service type.
    pub service_type_id: Option<Uuid>,
    pub active: Option<bool>,
}

/// The member to create; `issue_client` is read apart.
impl From<CreateStaff> for NewStaffMember {
    fn from(input: CreateStaff) -> Self {
        NewStaffMember {
            mission_id: MissionId(input.mission_id),
            name: input.name,
            email: input.email,
            job_title: input.job_title,
            service_type_ids: input.service_type_ids.into_iter().map(ServiceTypeId).collect(),
        }
    }
}

impl From<UpdateAssignments> for Assignments {
    fn from(input: UpdateAssignments) -> Self {
        Assignments { service_type_ids: input.service_type_ids.into_iter().map(ServiceTypeId).collect() }
    }
}

/// The filter of the list; its page (`limit`, `cursor`) is read apart.
impl From<StaffListParams> for StaffFilter {
    fn from(params: StaffListParams) -> Self {
        StaffFilter {
            mission_id: params.mission_id.map(MissionId),
            service_type_id: params.service_type_id.map(ServiceTypeId),
            active: params.active,
        }
    }
}

problem_response! {
    /// 412 of an update.
    MemberChanged = 412, "The member changed since you read it";
}
