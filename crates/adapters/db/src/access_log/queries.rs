//! The queries of the access log: a batch of entries in one transaction, and a citizen's
//! log read back newest first.

use super::Conn;
use crate::access_log::{AccessRow, AppendRows, access_log};
use crate::failure::Failure;
use crate::shared::sql_types::DbUuid;
use consular_domain::{AccessEntry, CitizenId, Page, PageRequest};
use diesel::prelude::*;
use diesel_async::RunQueryDsl;

/// `entries`, all or none: one statement on PostgreSQL (`AppendRows`), one transaction of
/// one insert per entry on SQLite.
pub(crate) async fn append(conn: &mut Conn, entries: &[AccessEntry]) -> Result<(), Failure> {
    if entries.is_empty() {
        return Ok(());
    }
    conn.append_rows(entries).await
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
