//! The queries of the transactional outbox: reading it (it is written by
//! `write_meta::store`).

use super::Conn;
use crate::failure::Failure;
use crate::outbox::{OutboxRow, outbox_events};
use crate::shared::sql_types::DbUuid;
use consular_ports::OutboxEvent;
use diesel::prelude::*;
use diesel_async::RunQueryDsl;
use uuid::Uuid;

/// Up to `limit` stored events, delivered or not, oldest first (id ascending), after
/// `after`.
pub(crate) async fn outbox_events(
    conn: &mut Conn,
    after: Option<Uuid>,
    limit: i64,
) -> Result<Vec<OutboxEvent>, Failure> {
    let mut query = outbox_events::table
        .select(OutboxRow::as_select())
        .order(outbox_events::id.asc())
        // A negative LIMIT is an error on PostgreSQL and "no limit" on SQLite.
        .limit(limit.max(0))
        .into_boxed();
    if let Some(after) = after {
        query = query.filter(outbox_events::id.gt(DbUuid(after)));
    }
    let rows: Vec<OutboxRow> = query.load(conn).await?;
    rows.into_iter().map(OutboxEvent::try_from).collect()
}

/// The number of events per `delivered_by` (`None`: not delivered yet), by node name.
pub(crate) async fn outbox_handlers(conn: &mut Conn) -> Result<Vec<(Option<String>, i64)>, Failure> {
    Ok(outbox_events::table
        .group_by(outbox_events::delivered_by)
        .select((outbox_events::delivered_by, diesel::dsl::count_star()))
        .order(outbox_events::delivered_by.asc())
        .load(conn)
        .await?)
}
