//! The service catalog: the `service_types` table, its row, and [`ServiceTypeRepository`].

use crate::failure::Failure;
use crate::shared::columns::{StageDoc, from_json, to_json};
use crate::shared::repository;
use crate::shared::sql_types::{DbJson, DbTime, DbUuid};
use consular_domain::{Money, Page, PageRequest, ServiceType, ServiceTypeId, Stage};
use consular_ports::{ServiceTypeFilter, ServiceTypeRepository, WriteMeta};
use diesel::prelude::*;

diesel::table! {
    use diesel::sql_types::*;
    use crate::shared::sql_types::{PortableJson, PortableTimestamp, PortableUuid};

    service_types (id) {
        id -> PortableUuid,
        code -> Text,
        name -> Text,
        description -> Text,
        fee_amount_minor -> BigInt,
        fee_currency -> Text,
        sla_days -> Integer,
        retention_days -> Integer,
        required_documents -> PortableJson,
        stages -> PortableJson,
        active -> Bool,
        version -> BigInt,
        created_at -> PortableTimestamp,
        updated_at -> PortableTimestamp,
    }
}

/// The unique constraints of `service_types` (see `crate::error`).
pub(crate) const UNIQUE_CONSTRAINTS: &[(&str, &str)] =
    &[("service_types_pkey", "service_types.id"), ("service_types_code", "service_types.code")];

repository! {
    impl ServiceTypeRepository for Database => catalog {
        fn insert(service_type: &ServiceType, meta: &WriteMeta);
        fn update(service_type: &ServiceType, expected_version: i64, meta: &WriteMeta);
        fn get(id: ServiceTypeId) -> Option<ServiceType>;
        fn get_many(ids: &[ServiceTypeId]) -> Vec<ServiceType>;
        fn list(filter: ServiceTypeFilter, page: PageRequest) -> Page<ServiceType>;
    }
}

#[derive(Debug, Clone, Queryable, Selectable, Insertable, AsChangeset)]
#[diesel(table_name = service_types)]
#[diesel(treat_none_as_default_value = false)]
pub(crate) struct ServiceTypeRow {
    pub id: DbUuid,
    pub code: String,
    pub name: String,
    pub description: String,
    pub fee_amount_minor: i64,
    pub fee_currency: String,
    pub sla_days: i32,
    pub retention_days: i32,
    pub required_documents: DbJson,
    pub stages: DbJson,
    pub active: bool,
    pub version: i64,
    pub created_at: DbTime,
    pub updated_at: DbTime,
}

impl TryFrom<&ServiceType> for ServiceTypeRow {
    type Error = Failure;
    fn try_from(t: &ServiceType) -> Result<Self, Failure> {
        let stages: Vec<StageDoc> = t.stages.iter().map(StageDoc::from).collect();
        Ok(ServiceTypeRow {
            id: DbUuid(t.id.0),
            code: t.code.clone(),
            name: t.name.clone(),
            description: t.description.clone(),
            fee_amount_minor: t.fee.amount_minor,
            fee_currency: t.fee.currency.clone(),
            sla_days: t.sla_days,
            retention_days: t.retention_days,
            required_documents: to_json("required documents", &t.required_documents)?,
            stages: to_json("stages", &stages)?,
            active: t.active,
            version: t.version,
            created_at: DbTime(t.created_at),
            updated_at: DbTime(t.updated_at),
        })
    }
}

impl TryFrom<ServiceTypeRow> for ServiceType {
    type Error = Failure;
    fn try_from(row: ServiceTypeRow) -> Result<Self, Failure> {
        let stages: Vec<StageDoc> = from_json("service_types.stages", row.stages)?;
        Ok(ServiceType {
            id: row.id.0.into(),
            code: row.code,
            name: row.name,
            description: row.description,
            fee: Money { amount_minor: row.fee_amount_minor, currency: row.fee_currency },
            sla_days: row.sla_days,
            retention_days: row.retention_days,
            required_documents: from_json("service_types.required_documents", row.required_documents)?,
            stages: stages.into_iter().map(Stage::from).collect(),
            active: row.active,
            version: row.version,
            created_at: row.created_at.0,
            updated_at: row.updated_at.0,
        })
    }
}
