//! What every write stores besides its change, in the same transaction: the shared
//! write path of every area. It has no rows of its own (it writes those of `idempotency`,
//! `audit` and `outbox`), hence no `mod.rs`: this file is only compiled per backend.

use super::Conn;
use crate::audit::{AuditRow, audit_events};
use crate::failure::Failure;
use crate::idempotency::{IdempotencyRow, idempotency_keys};
use crate::outbox::{OutboxRow, outbox_events};
use consular_ports::WriteMeta;
use diesel::prelude::*;
use diesel_async::RunQueryDsl;

/// Stores the idempotency record, then the audit rows, then the outbox events. Every
/// write of every repository calls it, so a change and its events are committed (or
/// rolled back) together. Call it first in the transaction:
/// a concurrent request with the same key then waits on the key and fails with
/// `IdempotencyKeyInUse` (so the caller can replay the stored response) instead of
/// running into the change's own constraints.
pub(crate) async fn store(conn: &mut Conn, meta: &WriteMeta) -> Result<(), Failure> {
    if let Some(record) = &meta.idempotency {
        let row = IdempotencyRow::try_from(record)?;
        // An expired record no longer answers: the key may be used again.
        diesel::delete(
            idempotency_keys::table
                .find((row.owner, &row.key))
                .filter(idempotency_keys::expires_at.le(row.created_at)),
        )
        .execute(conn)
        .await?;
        diesel::insert_into(idempotency_keys::table).values(&row).execute(conn).await?;
    }
    // One statement per entry: a write has one or two, and multi-row inserts do not
    // compile for SQLite through diesel-async.
    for record in &meta.audit {
        diesel::insert_into(audit_events::table).values(AuditRow::try_from(record)?).execute(conn).await?;
    }
    for event in &meta.events {
        diesel::insert_into(outbox_events::table).values(OutboxRow::from(event)).execute(conn).await?;
    }
    Ok(())
}
