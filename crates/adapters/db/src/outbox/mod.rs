//! The transactional outbox: the `outbox_events` table, its row, and
//! [`Database::outbox_events`](crate::Database::outbox_events). Events are written with
//! every write's `WriteMeta` (`write_meta/queries.rs`).

use crate::failure::Failure;
use crate::shared::columns::from_json;
use crate::shared::repository;
use crate::shared::sql_types::{DbJson, DbTime, DbUuid};
use consular_ports::OutboxEvent;
use diesel::prelude::*;
use uuid::Uuid;

diesel::table! {
    use diesel::sql_types::*;
    use crate::shared::sql_types::{PortableJson, PortableTimestamp, PortableUuid};

    outbox_events (id) {
        id -> PortableUuid,
        kind -> Text,
        aggregate_id -> PortableUuid,
        payload -> PortableJson,
        created_at -> PortableTimestamp,
        delivered_at -> Nullable<PortableTimestamp>,
        /// The lease of the worker that claimed the event (docs/notifications.md).
        locked_until -> Nullable<PortableTimestamp>,
        /// The node holding the lease, or the last one that did.
        claimed_by -> Nullable<Text>,
        /// The node that marked the event delivered.
        delivered_by -> Nullable<Text>,
    }
}

/// The unique constraints of `outbox_events` (see `crate::error`).
pub(crate) const UNIQUE_CONSTRAINTS: &[(&str, &str)] = &[("outbox_events_pkey", "outbox_events.id")];

repository! {
    impl Database => outbox {
        /// Up to `limit` events of the transactional outbox, delivered or not, oldest first
        /// (id ascending), after the event `after`; for tests and the notification worker.
        #[doc(hidden)]
        pub fn outbox_events(after: Option<Uuid>, limit: i64) -> Vec<OutboxEvent>;
        /// How many events each node marked delivered (`None`: undelivered); for tests
        /// and benchmarks of the notification worker.
        #[doc(hidden)]
        pub fn outbox_handlers() -> Vec<(Option<String>, i64)>;
    }
}

#[derive(Debug, Clone, Queryable, Selectable, Insertable)]
#[diesel(table_name = outbox_events)]
#[diesel(treat_none_as_default_value = false)]
pub(crate) struct OutboxRow {
    pub id: DbUuid,
    pub kind: String,
    pub aggregate_id: DbUuid,
    pub payload: DbJson,
    pub created_at: DbTime,
}

impl From<&OutboxEvent> for OutboxRow {
    fn from(e: &OutboxEvent) -> Self {
        OutboxRow {
            id: DbUuid(e.id),
            kind: e.kind.clone(),
            aggregate_id: DbUuid(e.aggregate_id),
            // A `Value` always prints as JSON.
            payload: DbJson(e.payload.to_string()),
            created_at: DbTime(e.created_at),
        }
    }
}

impl TryFrom<OutboxRow> for OutboxEvent {
    type Error = Failure;

    fn try_from(row: OutboxRow) -> Result<Self, Failure> {
        Ok(OutboxEvent {
            id: row.id.0,
            kind: row.kind,
            aggregate_id: row.aggregate_id.0,
            payload: from_json("outbox_events.payload", row.payload)?,
            created_at: row.created_at.0,
        })
    }
}
