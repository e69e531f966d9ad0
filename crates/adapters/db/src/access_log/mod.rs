//! The citizens' access logs: the `access_log` table, its row and
//! [`AccessLogRepository`] (docs/data-protection.md "Access log"). Rows are only inserted.

use crate::failure::Failure;
use crate::shared::columns::{corrupt, subject_from_db};
use crate::shared::repository;
use crate::shared::sql_types::{DbTime, DbUuid};
use consular_domain::{AccessEntry, AccessEntryId, CitizenId, Page, PageRequest};
use consular_ports::AccessLogRepository;
use diesel::prelude::*;

diesel::table! {
    use diesel::sql_types::*;
    use crate::shared::sql_types::{PortableTimestamp, PortableUuid};

    access_log (id) {
        id -> PortableUuid,
        citizen_id -> PortableUuid,
        at -> PortableTimestamp,
        actor_kind -> Text,
        actor_id -> PortableUuid,
        actor_mission_id -> Nullable<PortableUuid>,
        actor_role -> Text,
        client_id -> PortableUuid,
        what -> Text,
        object_id -> PortableUuid,
    }
}

/// The unique constraints of `access_log` (see `crate::error`).
pub(crate) const UNIQUE_CONSTRAINTS: &[(&str, &str)] = &[("access_log_pkey", "access_log.id")];

repository! {
    impl AccessLogRepository for Database => access_log {
        fn append(entries: &[AccessEntry]);
        fn list(citizen: CitizenId, page: PageRequest) -> Page<AccessEntry>;
    }
}

#[derive(Debug, Clone, Queryable, Selectable, Insertable)]
#[diesel(table_name = access_log)]
#[diesel(treat_none_as_default_value = false)]
pub(crate) struct AccessRow {
    pub id: DbUuid,
    pub citizen_id: DbUuid,
    pub at: DbTime,
    pub actor_kind: String,
    pub actor_id: DbUuid,
    pub actor_mission_id: Option<DbUuid>,
    pub actor_role: String,
    pub client_id: DbUuid,
    pub what: String,
    pub object_id: DbUuid,
}

impl From<&AccessEntry> for AccessRow {
    fn from(e: &AccessEntry) -> Self {
        AccessRow {
            id: DbUuid(e.id.0),
            citizen_id: DbUuid(e.citizen_id.0),
            at: DbTime(e.at),
            actor_kind: e.actor.kind.as_str().to_owned(),
            actor_id: DbUuid(e.actor.id.0),
            actor_mission_id: e.actor_mission.map(|m| DbUuid(m.0)),
            actor_role: e.actor_role.as_str().to_owned(),
            client_id: DbUuid(e.client_id.0),
            what: e.what.as_str().to_owned(),
            object_id: DbUuid(e.object_id),
        }
    }
}

impl TryFrom<AccessRow> for AccessEntry {
    type Error = Failure;
    fn try_from(row: AccessRow) -> Result<Self, Failure> {
        Ok(AccessEntry {
            id: AccessEntryId(row.id.0),
            citizen_id: CitizenId(row.citizen_id.0),
            at: row.at.0,
            actor: subject_from_db("access_log.actor_kind", &row.actor_kind, row.actor_id)?,
            actor_mission: row.actor_mission_id.map(|m| m.0.into()),
            actor_role: row.actor_role.parse().map_err(|e| corrupt("access_log.actor_role", e))?,
            client_id: row.client_id.0.into(),
            what: row.what.parse().map_err(|e| corrupt("access_log.what", e))?,
            object_id: row.object_id.0,
        })
    }
}
