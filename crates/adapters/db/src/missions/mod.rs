//! Missions: the `missions` table, its row, and [`MissionRepository`].

use crate::shared::repository;
use crate::shared::sql_types::{DbTime, DbUuid};
use consular_domain::{Mission, MissionId, Page, PageRequest};
use consular_ports::{MissionRepository, WriteMeta};
use diesel::prelude::*;

diesel::table! {
    use diesel::sql_types::*;
    use crate::shared::sql_types::{PortableTimestamp, PortableUuid};

    missions (id) {
        id -> PortableUuid,
        code -> Text,
        name -> Text,
        country -> Text,
        city -> Text,
        timezone -> Text,
        version -> BigInt,
        created_at -> PortableTimestamp,
        updated_at -> PortableTimestamp,
    }
}

/// The unique constraints of `missions` (see `crate::error`).
pub(crate) const UNIQUE_CONSTRAINTS: &[(&str, &str)] =
    &[("missions_pkey", "missions.id"), ("missions_code", "missions.code")];

repository! {
    impl MissionRepository for Database => missions {
        fn insert(mission: &Mission, meta: &WriteMeta);
        fn update(mission: &Mission, expected_version: i64, meta: &WriteMeta);
        fn get(id: MissionId) -> Option<Mission>;
        fn list(page: PageRequest) -> Page<Mission>;
    }
}

#[derive(Debug, Clone, Queryable, Selectable, Insertable, AsChangeset)]
#[diesel(table_name = missions)]
#[diesel(treat_none_as_default_value = false)]
pub(crate) struct MissionRow {
    pub id: DbUuid,
    pub code: String,
    pub name: String,
    pub country: String,
    pub city: String,
    pub timezone: String,
    pub version: i64,
    pub created_at: DbTime,
    pub updated_at: DbTime,
}

impl From<&Mission> for MissionRow {
    fn from(m: &Mission) -> Self {
        MissionRow {
            id: DbUuid(m.id.0),
            code: m.code.clone(),
            name: m.name.clone(),
            country: m.country.clone(),
            city: m.city.clone(),
            timezone: m.timezone.clone(),
            version: m.version,
            created_at: DbTime(m.created_at),
            updated_at: DbTime(m.updated_at),
        }
    }
}

impl From<MissionRow> for Mission {
    fn from(row: MissionRow) -> Self {
        Mission {
            id: row.id.0.into(),
            code: row.code,
            name: row.name,
            country: row.country,
            city: row.city,
            timezone: row.timezone,
            version: row.version,
            created_at: row.created_at.0,
            updated_at: row.updated_at.0,
        }
    }
}
