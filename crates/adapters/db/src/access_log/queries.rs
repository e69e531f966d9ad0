//! The queries of the access log: a batch of entries in one transaction, and a citizen's
//! log read back newest first.

use super::{Batch, Conn};
use crate::access_log::{AccessRow, access_log};
use crate::failure::Failure;
use crate::shared::sql_types::DbUuid;
use consular_domain::{AccessEntry, CitizenId, Page, PageRequest};
use diesel::prelude::*;
use diesel_async::RunQueryDsl;

/// `entries` in one transaction, one statement each sent in one round trip (a [`Batch`]:
/// multi-row inserts do not compile for SQLite through diesel-async). One entry (an idle
/// node's flush) is one statement, atomic by itself: no `BEGIN` and `COMMIT` round trips.
pub(crate) async fn append(conn: &mut Conn, entries: &[AccessEntry]) -> Result<(), Failure> {
    let mut rows: Vec<AccessRow> = entries.iter().map(AccessRow::from).collect();
    if rows.len() <= 1 {
        if let Some(row) = rows.pop() {
            diesel::insert_into(access_log::table).values(row).execute(conn).await?;
        }
        return Ok(());
    }
    write_tx!(conn, async |conn: &mut Conn| -> Result<(), Failure> {
        let mut batch = Batch::new(conn);
        for row in rows {
            batch.add(diesel::insert_into(access_log::table).values(row)).await;
        }
        batch.run().await.map_err(|failed| failed.error)?;
        Ok(())
    })
    .await
}

/// Newest first (id descending): the page continues with the ids below `page.after`.
pub(crate) async fn list(
    conn: &mut Conn,
    citizen: CitizenId,
    page: PageRequest,
) -> Result<Page<AccessEntry>, Failure> {
    let mut query = access_log::table
        .filter(access_log::citizen_id.eq(DbUuid(citizen.0)))
        .select(AccessRow::as_select())
        .order(access_log::id.desc())
        .limit(page.fetch_limit())
        .into_boxed();
    if let Some(after) = page.after {
        query = query.filter(access_log::id.lt(DbUuid(after)));
    }
    let rows: Vec<AccessRow> = query.load(conn).await?;
    let entries = rows.into_iter().map(AccessEntry::try_from).collect::<Result<Vec<_>, _>>()?;
    Ok(Page::from_rows(entries, &page, |e| e.id.0))
}
