//! What every write stores besides its change, in the same transaction: the shared
//! write path of every area. It has no rows of its own (it writes those of `idempotency`,
//! `audit` and `outbox`), hence no `mod.rs`: this file is only compiled per backend.

use super::{Batch, Conn};
use crate::audit::{AuditRow, audit_events};
use crate::failure::Failure;
use crate::idempotency::{IdempotencyRow, idempotency_keys};
use crate::outbox::{OutboxRow, outbox_events};
use consular_ports::WriteMeta;
use diesel::prelude::*;

/// Stores the idempotency record, then the audit rows, then the outbox events, in one
/// round trip (a [`Batch`]). Every write of every repository calls it (or [`queue`]), so
/// a change and its events are committed (or rolled back) together. Call it first in the
/// transaction: a concurrent request with the same key then waits on the key and fails
/// with `IdempotencyKeyInUse` (so the caller can replay the stored response) instead of
/// running into the change's own constraints.
pub(crate) async fn store(conn: &mut Conn, meta: &WriteMeta) -> Result<(), Failure> {
    let mut batch = Batch::new(conn);
    queue(&mut batch, meta).await?;
    batch.run().await.map_err(|failed| failed.error)?;
    Ok(())
}

/// Adds the statements of [`store`] to `batch`, first, for a write that sends its own
/// statements in the same round trip (`appointments::book`).
pub(crate) async fn queue(batch: &mut Batch<'_>, meta: &WriteMeta) -> Result<(), Failure> {
    if let Some(record) = &meta.idempotency {
        let row = IdempotencyRow::try_from(record)?;
        // An expired record no longer answers: the key may be used again.
        batch
            .add(diesel::delete(
                idempotency_keys::table
                    .find((row.owner, row.key.clone()))
                    .filter(idempotency_keys::expires_at.le(row.created_at)),
            ))
            .await;
        batch.add(diesel::insert_into(idempotency_keys::table).values(row)).await;
    }
    // One statement per entry: a write has one or two, and multi-row inserts do not
    // compile for SQLite through diesel-async.
    for record in &meta.audit {
        batch.add(diesel::insert_into(audit_events::table).values(AuditRow::try_from(record)?)).await;
    }
    for event in &meta.events {
        batch.add(diesel::insert_into(outbox_events::table).values(OutboxRow::from(event))).await;
    }
    Ok(())
}
