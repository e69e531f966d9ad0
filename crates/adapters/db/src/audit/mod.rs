//! The audit trail: the `audit_events` table, its row, [`AuditRepository`] and
//! [`Database::audit_trail`](crate::Database::audit_trail). Entries are written with every
//! write's `WriteMeta` (`write_meta/queries.rs`).

use crate::failure::Failure;
use crate::shared::columns::{actor_from_db, actor_to_db, corrupt};
use crate::shared::repository;
use crate::shared::sql_types::{DbTime, DbUuid};
use consular_domain::{AuditEventId, AuditRecord, Page, PageRequest};
use consular_ports::{AuditFilter, AuditRepository};
use diesel::prelude::*;
use uuid::Uuid;

diesel::table! {
    use diesel::sql_types::*;
    use crate::shared::sql_types::{PortableTimestamp, PortableUuid};

    audit_events (id) {
        id -> PortableUuid,
        at -> PortableTimestamp,
        actor_kind -> Nullable<Text>,
        actor_id -> Nullable<PortableUuid>,
        client_id -> Nullable<PortableUuid>,
        action -> Text,
        resource_type -> Text,
        resource_id -> PortableUuid,
        changed_fields -> Text,
        client_address -> Nullable<Text>,
        on_behalf_of -> Nullable<PortableUuid>,
    }
}

/// The unique constraints of `audit_events` (see `crate::error`).
pub(crate) const UNIQUE_CONSTRAINTS: &[(&str, &str)] = &[("audit_events_pkey", "audit_events.id")];

repository! {
    impl AuditRepository for Database => audit {
        tolerant(consistency) fn list(filter: AuditFilter, page: PageRequest) -> Page<AuditRecord>;
        fn append(records: &[AuditRecord]);
    }
}

repository! {
    impl Database => audit {
        /// The audit entries about one resource, oldest first.
        pub fn audit_trail(resource_type: &str, resource_id: Uuid) -> Vec<AuditRecord>;
    }
}

#[derive(Debug, Clone, Queryable, Selectable, Insertable)]
#[diesel(table_name = audit_events)]
#[diesel(treat_none_as_default_value = false)]
pub(crate) struct AuditRow {
    pub id: DbUuid,
    pub at: DbTime,
    pub actor_kind: Option<String>,
    pub actor_id: Option<DbUuid>,
    pub client_id: Option<DbUuid>,
    pub action: String,
    pub resource_type: String,
    pub resource_id: DbUuid,
    pub changed_fields: String,
    pub client_address: Option<String>,
    pub on_behalf_of: Option<DbUuid>,
}

impl TryFrom<&AuditRecord> for AuditRow {
    type Error = Failure;
    fn try_from(r: &AuditRecord) -> Result<Self, Failure> {
        let (actor_kind, actor_id) = actor_to_db(r.actor);
        Ok(AuditRow {
            id: DbUuid(r.id.0),
            at: DbTime(r.at),
            actor_kind,
            actor_id,
            client_id: r.client_id.map(|c| DbUuid(c.0)),
            action: r.action.clone(),
            resource_type: r.resource_type.clone(),
            resource_id: DbUuid(r.resource_id),
            changed_fields: serde_json::to_string(&r.changed_fields)
                .map_err(|e| corrupt("changed fields", e))?,
            client_address: r.client_address.map(|a| a.to_string()),
            on_behalf_of: r.on_behalf_of.map(|c| DbUuid(c.0)),
        })
    }
}

impl TryFrom<AuditRow> for AuditRecord {
    type Error = Failure;
    fn try_from(row: AuditRow) -> Result<Self, Failure> {
        Ok(AuditRecord {
            id: AuditEventId(row.id.0),
            at: row.at.0,
            actor: actor_from_db("audit_events.actor_kind", row.actor_kind, row.actor_id)?,
            client_id: row.client_id.map(|c| c.0.into()),
            action: row.action,
            resource_type: row.resource_type,
            resource_id: row.resource_id.0,
            changed_fields: serde_json::from_str(&row.changed_fields)
                .map_err(|e| corrupt("audit_events.changed_fields", e))?,
            client_address: row
                .client_address
                .map(|a| a.parse().map_err(|e| corrupt("audit_events.client_address", e)))
                .transpose()?,
            on_behalf_of: row.on_behalf_of.map(|c| c.0.into()),
        })
    }
}
