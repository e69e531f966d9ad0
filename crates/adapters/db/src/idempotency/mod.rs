//! Stored outcomes of requests that carried an `Idempotency-Key`: the `idempotency_keys`
//! table, its row, and [`IdempotencyRepository`]. Records are written with every write's
//! `WriteMeta` (`write_meta/queries.rs`).

use crate::failure::Failure;
use crate::shared::columns::corrupt;
use crate::shared::repository;
use crate::shared::sql_types::{DbTime, DbUuid};
use consular_domain::ClientId;
use consular_ports::{IdempotencyRecord, IdempotencyRepository, StoredOutcome};
use diesel::prelude::*;
use time::OffsetDateTime;

diesel::table! {
    use diesel::sql_types::*;
    use crate::shared::sql_types::{PortableTimestamp, PortableUuid};

    idempotency_keys (owner, key) {
        owner -> PortableUuid,
        key -> Text,
        fingerprint -> Text,
        resource_id -> PortableUuid,
        outcome -> Text,
        created_at -> PortableTimestamp,
        expires_at -> PortableTimestamp,
    }
}

/// The primary key of `idempotency_keys`: violating it means another request with the same
/// key is being (or was) handled, `RepoError::IdempotencyKeyInUse` (see `crate::error`).
pub(crate) const KEY_CONSTRAINT: &str = "idempotency_keys_pkey";

/// The unique constraints of `idempotency_keys` (see `crate::error`).
pub(crate) const UNIQUE_CONSTRAINTS: &[(&str, &str)] =
    &[(KEY_CONSTRAINT, "idempotency_keys.owner, idempotency_keys.key")];

repository! {
    impl IdempotencyRepository for Database => idempotency {
        fn find(owner: ClientId, key: &str, now: OffsetDateTime) -> Option<IdempotencyRecord>;
    }
}

#[derive(Debug, Clone, Queryable, Selectable, Insertable)]
#[diesel(table_name = idempotency_keys)]
#[diesel(treat_none_as_default_value = false)]
pub(crate) struct IdempotencyRow {
    pub owner: DbUuid,
    pub key: String,
    pub fingerprint: String,
    pub resource_id: DbUuid,
    pub outcome: String,
    pub created_at: DbTime,
    pub expires_at: DbTime,
}

impl TryFrom<&IdempotencyRecord> for IdempotencyRow {
    type Error = Failure;
    fn try_from(r: &IdempotencyRecord) -> Result<Self, Failure> {
        Ok(IdempotencyRow {
            owner: DbUuid(r.owner.0),
            key: r.key.clone(),
            fingerprint: r.fingerprint.clone(),
            resource_id: DbUuid(r.outcome.resource_id),
            outcome: serde_json::to_string(&r.outcome.snapshot)
                .map_err(|e| corrupt("idempotency outcome", e))?,
            created_at: DbTime(r.created_at),
            expires_at: DbTime(r.expires_at),
        })
    }
}

impl TryFrom<IdempotencyRow> for IdempotencyRecord {
    type Error = Failure;
    fn try_from(row: IdempotencyRow) -> Result<Self, Failure> {
        Ok(IdempotencyRecord {
            owner: row.owner.0.into(),
            key: row.key,
            fingerprint: row.fingerprint,
            outcome: StoredOutcome {
                resource_id: row.resource_id.0,
                snapshot: serde_json::from_str(&row.outcome)
                    .map_err(|e| corrupt("idempotency_keys.outcome", e))?,
            },
            created_at: row.created_at.0,
            expires_at: row.expires_at.0,
        })
    }
}
