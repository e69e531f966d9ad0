//! The queries of citizens.

use super::{Conn, clients, write_meta};
use crate::citizens::{CitizenRow, citizens};
use crate::clients::ClientRow;
use crate::failure::Failure;
use crate::shared::sql_types::{DbTime, DbUuid};
use crate::shared::update_versioned;
use consular_domain::{ApiClient, Citizen, CitizenId, Page, PageRequest, RegistrationStatus};
use consular_ports::{CitizenFilter, WriteMeta};
use diesel::prelude::*;
use diesel::sql_types::Text;
use diesel_async::RunQueryDsl;

diesel::define_sql_function! {
    /// `lower(text)`, the same function on both databases. (SQLite folds ASCII letters
    /// only; PostgreSQL folds every letter its collation knows.)
    fn lower(text: Text) -> Text;
}

/// The escape character of [`contains_pattern`]'s LIKE patterns.
const LIKE_ESCAPE: char = '\\';

/// A LIKE pattern matching any text that contains `text` literally: `%`, `_` and the
/// escape character in `text` are escaped, so they match only themselves.
fn contains_pattern(text: &str) -> String {
    let mut pattern = String::with_capacity(text.len() + 2);
    pattern.push('%');
    for c in text.chars() {
        if matches!(c, '%' | '_' | LIKE_ESCAPE) {
            pattern.push(LIKE_ESCAPE);
        }
        pattern.push(c);
    }
    pattern.push('%');
    pattern
}

/// The citizen and, in the same transaction, the client issued to them: if either
/// insert fails, neither is stored.
pub(crate) async fn insert(
    conn: &mut Conn,
    citizen: &Citizen,
    client: Option<ApiClient>,
    meta: &WriteMeta,
) -> Result<(), Failure> {
    let row = CitizenRow::try_from(citizen)?;
    let client = client.as_ref().map(ClientRow::from);
    write_tx!(conn, async |conn: &mut Conn| -> Result<(), Failure> {
        write_meta::store(conn, meta).await?;
        diesel::insert_into(citizens::table).values(&row).execute(conn).await?;
        if let Some(client) = &client {
            clients::insert_row(conn, client).await?;
        }
        Ok(())
    })
    .await
}

pub(crate) async fn update(
    conn: &mut Conn,
    citizen: &Citizen,
    expected_version: i64,
    meta: &WriteMeta,
) -> Result<(), Failure> {
    let row = CitizenRow::try_from(citizen)?;
    write_tx!(conn, async |conn: &mut Conn| -> Result<(), Failure> {
        write_meta::store(conn, meta).await?;
        update_versioned!(conn, citizens, &row, expected_version).await
    })
    .await
}

pub(crate) async fn get(conn: &mut Conn, id: CitizenId) -> Result<Option<Citizen>, Failure> {
    let row: Option<CitizenRow> =
        citizens::table.find(DbUuid(id.0)).select(CitizenRow::as_select()).first(conn).await.optional()?;
    row.map(Citizen::try_from).transpose()
}

pub(crate) async fn list(
    conn: &mut Conn,
    filter: CitizenFilter,
    page: PageRequest,
) -> Result<Page<Citizen>, Failure> {
    let mut query = citizens::table
        .select(CitizenRow::as_select())
        .order(citizens::id.asc())
        .limit(page.fetch_limit())
        .into_boxed();
    if let Some(mission) = filter.mission_id {
        query = query.filter(citizens::mission_id.eq(DbUuid(mission.0)));
    }
    if let Some(status) = filter.registration_status {
        query = match status {
            RegistrationStatus::Erased => query.filter(citizens::erased_at.is_not_null()),
            other => query
                .filter(citizens::registration_status.eq(other.as_str()).and(citizens::erased_at.is_null())),
        };
    }
    if let Some(nationality) = filter.nationality {
        query = query.filter(citizens::nationality.eq(nationality));
    }
    if let Some(q) = filter.q {
        // The user's text is a bound parameter, escaped for LIKE; both sides are folded
        // with the same `lower`, so the match ignores case.
        let pattern = contains_pattern(&q);
        query = query.filter(
            lower(citizens::given_name)
                .like(lower(pattern.clone()))
                .escape(LIKE_ESCAPE)
                .or(lower(citizens::family_name).like(lower(pattern.clone())).escape(LIKE_ESCAPE))
                .or(lower(citizens::email).like(lower(pattern)).escape(LIKE_ESCAPE)),
        );
    }
    if let Some(from) = filter.registered_from {
        query = query.filter(citizens::registered_at.ge(DbTime(from)));
    }
    if let Some(to) = filter.registered_to {
        query = query.filter(citizens::registered_at.lt(DbTime(to)));
    }
    if let Some(after) = page.after {
        query = query.filter(citizens::id.gt(DbUuid(after)));
    }
    let rows: Vec<CitizenRow> = query.load(conn).await?;
    let found = rows.into_iter().map(Citizen::try_from).collect::<Result<Vec<_>, _>>()?;
    Ok(Page::from_rows(found, &page, |c| c.id.0))
}
