//! The wire of `/api/v1/services`, the catalog: a service type with its fee and stages,
//! the bodies that create and update one, the list parameters, and the problems these
//! operations document.

use crate::wire::common::{StageBody, problem_response};
use consular_domain::{Money, NewServiceType, ServiceType, ServiceTypeChanges, Stage};
use serde::{Deserialize, Serialize};
use time::OffsetDateTime;
use utoipa::{IntoParams, ToSchema};
use uuid::Uuid;

/// An amount in the currency's minor unit (e.g. cents).
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct MoneyBody {
    #[schema(minimum = 0, maximum = 100_000_000_000i64, example = 8600)]
    pub amount_minor: i64,
    /// ISO 4217.
    #[schema(pattern = "^[A-Z]{3}$", example = "EUR")]
    pub currency: String,
}

impl From<MoneyBody> for Money {
    fn from(m: MoneyBody) -> Self {
        Money { amount_minor: m.amount_minor, currency: m.currency }
    }
}

/// A service type of the catalog.
#[derive(Debug, Serialize, ToSchema)]
pub struct ServiceTypeBody {
    pub id: Uuid,
    pub code: String,
    pub name: String,
    pub description: String,
    pub fee: MoneyBody,
    /// Days from submission to completion.
    pub sla_days: i32,
    /// Days a request of this type is kept after it ended (completed, rejected or
    /// cancelled) before erasure may delete it.
    pub retention_days: i32,
    /// Document kinds a request needs.
    pub required_documents: Vec<String>,
    /// The ordered workflow stages.
    pub stages: Vec<StageBody>,
    pub active: bool,
    #[serde(with = "time::serde::rfc3339")]
    #[schema(value_type = String, format = DateTime)]
    pub created_at: OffsetDateTime,
    #[serde(with = "time::serde::rfc3339")]
    #[schema(value_type = String, format = DateTime)]
    pub updated_at: OffsetDateTime,
}

impl From<&ServiceType> for ServiceTypeBody {
    fn from(s: &ServiceType) -> Self {
        ServiceTypeBody {
            id: s.id.as_uuid(),
            code: s.code.clone(),
            name: s.name.clone(),
            description: s.description.clone(),
            fee: MoneyBody { amount_minor: s.fee.amount_minor, currency: s.fee.currency.clone() },
            sla_days: s.sla_days,
            retention_days: s.retention_days,
            required_documents: s.required_documents.clone(),
            stages: s
                .stages
                .iter()
                .map(|st| StageBody { name: st.name.clone(), description: st.description.clone() })
                .collect(),
            active: s.active,
            created_at: s.created_at,
            updated_at: s.updated_at,
        }
    }
}

#[derive(Debug, Serialize, ToSchema)]
pub struct ServiceTypeList {
    pub items: Vec<ServiceTypeBody>,
    pub next_cursor: Option<String>,
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateServiceType {
    /// Stable public code.
    #[schema(pattern = "^[a-z][a-z0-9_]{0,63}$", example = "passport_renewal")]
    pub code: String,
    #[schema(
        min_length = 1,
        max_length = 200,
        pattern = r"^[^\s\x00-\x1f\x7f-\x9f](?:[^\x00-\x1f\x7f-\x9f]*[^\s\x00-\x1f\x7f-\x9f])?$"
    )]
    pub name: String,
    #[serde(default)]
    #[schema(max_length = 4000)]
    pub description: String,
    pub fee: MoneyBody,
    #[schema(minimum = 1, maximum = 365)]
    pub sla_days: i32,
    /// Days a request is kept after it ended before erasure may delete it; defaults to
    /// 3650 (ten years). (No schema `default`: generated TypeScript clients would make the
    /// field required, as they do for every property with one.)
    #[serde(default = "retention_default")]
    #[schema(minimum = 0, maximum = 36500)]
    pub retention_days: i32,
    #[serde(default)]
    #[schema(max_items = 30, inline)]
    pub required_documents: Vec<DocumentKind>,
    #[schema(min_items = 1, max_items = 30)]
    pub stages: Vec<StageBody>,
    /// Defaults to true.
    #[serde(default = "active_default")]
    pub active: bool,
}

/// A document kind: lower-case letters, digits and underscores.
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[schema(value_type = String, pattern = "^[a-z][a-z0-9_]{0,63}$", example = "passport_photo")]
pub struct DocumentKind(pub String);

fn active_default() -> bool {
    true
}

fn retention_default() -> i32 {
    consular_domain::DEFAULT_RETENTION_DAYS
}

/// Fields to change; absent fields stay. Send `{"active": false}` to deactivate.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct UpdateServiceType {
    #[schema(
        min_length = 1,
        max_length = 200,
        pattern = r"^[^\s\x00-\x1f\x7f-\x9f](?:[^\x00-\x1f\x7f-\x9f]*[^\s\x00-\x1f\x7f-\x9f])?$"
    )]
    pub name: Option<String>,
    #[schema(max_length = 4000)]
    pub description: Option<String>,
    pub fee: Option<MoneyBody>,
    #[schema(minimum = 1, maximum = 365)]
    pub sla_days: Option<i32>,
    #[schema(minimum = 0, maximum = 36500)]
    pub retention_days: Option<i32>,
    #[schema(max_items = 30)]
    pub required_documents: Option<Vec<DocumentKind>>,
    #[schema(min_items = 1, max_items = 30)]
    pub stages: Option<Vec<StageBody>>,
    pub active: Option<bool>,
}

#[derive(Debug, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct ServiceListParams {
    /// Page size, 1 to 100 (default 20).
    #[param(minimum = 1, maximum = 100)]
    pub limit: Option<i64>,
    /// The `next_cursor` of the previous page.
    #[param(min_length = 22, max_length = 22, pattern = "^[A-Za-z0-9_-]{22}$")]
    pub cursor: Option<String>,
    /// `false` lists inactive types (admins only); active types by default.
    pub active: Option<bool>,
}

impl From<CreateServiceType> for NewServiceType {
    fn from(input: CreateServiceType) -> Self {
        NewServiceType {
            code: input.code,
            name: input.name,
            description: input.description,
            fee: input.fee.into(),
            sla_days: input.sla_days,
            retention_days: input.retention_days,
            required_documents: input.required_documents.into_iter().map(|k| k.0).collect(),
            stages: input.stages.into_iter().map(Stage::from).collect(),
            active: input.active,
        }
    }
}

impl From<UpdateServiceType> for ServiceTypeChanges {
    fn from(input: UpdateServiceType) -> Self {
        ServiceTypeChanges {
            name: input.name,
            description: input.description,
            fee: input.fee.map(Money::from),
            sla_days: input.sla_days,
            retention_days: input.retention_days,
            required_documents: input
                .required_documents
                .map(|kinds| kinds.into_iter().map(|k| k.0).collect()),
            stages: input.stages.map(|stages| stages.into_iter().map(Stage::from).collect()),
            active: input.active,
        }
    }
}

problem_response! {
    /// 412 of an update.
    ServiceTypeChanged = 412, "The service type changed since you read it";
}
