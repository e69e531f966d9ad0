//! The queries of stored responses (written by [`super::write_meta::store`]).

use super::Conn;
use crate::failure::Failure;
use crate::idempotency::{IdempotencyRow, idempotency_keys};
use crate::shared::sql_types::{DbTime, DbUuid};
use consular_domain::ClientId;
use consular_ports::IdempotencyRecord;
use diesel::prelude::*;
use diesel_async::RunQueryDsl;
use time::OffsetDateTime;

pub(crate) async fn find(
    conn: &mut Conn,
    owner: ClientId,
    key: &str,
    now: OffsetDateTime,
) -> Result<Option<IdempotencyRecord>, Failure> {
    let row: Option<IdempotencyRow> = idempotency_keys::table
        .find((DbUuid(owner.0), key))
        .filter(idempotency_keys::expires_at.gt(DbTime(now)))
        .select(IdempotencyRow::as_select())
        .first(conn)
        .await
        .optional()?;
    row.map(IdempotencyRecord::try_from).transpose()
}
