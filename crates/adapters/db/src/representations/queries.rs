//! The queries of representations: the insert guarded by the one-open index, a
//! dependant's keyset-paged list, the open ones a representative holds, and the ending
//! (one guarded statement).

use super::{Conn, write_meta};
use crate::citizens::citizens;
use crate::failure::Failure;
use crate::missions::missions;
use crate::representations::{RepresentationRow, representations};
use crate::shared::sql_types::{DbDate, DbTime, DbUuid};
use consular_domain::{CitizenId, Page, PageRequest, Representation, RepresentationId, Subject};
use consular_ports::{ActingFacts, RepoError, WriteMeta};
use diesel::prelude::*;
use diesel_async::RunQueryDsl;
use time::OffsetDateTime;

/// The representation, in one transaction with `meta`; a second one not ended with the
/// same dependant, representative and kind fails on `representations_one_open` (on
/// PostgreSQL the later of two concurrent inserts waits for the first's commit, then
/// fails; on SQLite `BEGIN IMMEDIATE` runs them one after the other).
pub(crate) async fn insert(
    conn: &mut Conn,
    representation: &Representation,
    meta: &WriteMeta,
) -> Result<(), Failure> {
    let row = RepresentationRow::try_from(representation)?;
    write_tx!(conn, async |conn: &mut Conn| -> Result<(), Failure> {
        write_meta::store(conn, meta).await?;
        diesel::insert_into(representations::table).values(&row).execute(conn).await?;
        Ok(())
    })
    .await
}

pub(crate) async fn get(conn: &mut Conn, id: RepresentationId) -> Result<Option<Representation>, Failure> {
    let row: Option<RepresentationRow> = representations::table
        .find(DbUuid(id.0))
        .select(RepresentationRow::as_select())
        .first(conn)
        .await
        .optional()?;
    row.map(Representation::try_from).transpose()
}

/// Newest first (id descending), through `representations_dependant_idx`: the page
/// continues with the ids below `page.after`.
pub(crate) async fn for_dependant(
    conn: &mut Conn,
    dependant: CitizenId,
    page: PageRequest,
) -> Result<Page<Representation>, Failure> {
    let mut query = representations::table
        .filter(representations::dependant_id.eq(DbUuid(dependant.0)))
        .select(RepresentationRow::as_select())
        .order(representations::id.desc())
        .limit(page.fetch_limit())
        .into_boxed();
    if let Some(after) = page.after {
        query = query.filter(representations::id.lt(DbUuid(after)));
    }
    let rows: Vec<RepresentationRow> = query.load(conn).await?;
    let items = rows.into_iter().map(Representation::try_from).collect::<Result<Vec<_>, _>>()?;
    Ok(Page::from_rows(items, &page, |r| r.id.0))
}

/// Not ended, oldest first, through `representations_representative_idx` (a handful).
pub(crate) async fn held_by(
    conn: &mut Conn,
    representative: CitizenId,
) -> Result<Vec<Representation>, Failure> {
    open_of(conn, representative, None).await
}

/// Not ended, oldest first: at most one per kind (`representations_one_open`).
pub(crate) async fn between(
    conn: &mut Conn,
    representative: CitizenId,
    dependant: CitizenId,
) -> Result<Vec<Representation>, Failure> {
    open_of(conn, representative, Some(dependant)).await
}

/// The representations not ended between the two, each joined to the dependant (in the
/// representation's mission, not erased) and to the mission: one round trip at each call
/// acting for someone, where reading them, the dependant and the mission apart took three
/// (docs/benchmarks.md "Acting").
pub(crate) async fn acting(
    conn: &mut Conn,
    representative: CitizenId,
    dependant: CitizenId,
) -> Result<Option<ActingFacts>, Failure> {
    let dependant_row = citizens::id.eq(representations::dependant_id);
    let rows: Vec<(RepresentationRow, DbDate, String)> = representations::table
        .inner_join(
            citizens::table.on(dependant_row.and(citizens::mission_id.eq(representations::mission_id))),
        )
        .inner_join(missions::table.on(missions::id.eq(representations::mission_id)))
        .filter(representations::representative_id.eq(DbUuid(representative.0)))
        .filter(representations::dependant_id.eq(DbUuid(dependant.0)))
        .filter(representations::ended_at.is_null())
        .filter(citizens::erased_at.is_null())
        .order(representations::id.asc())
        .select((RepresentationRow::as_select(), citizens::date_of_birth, missions::timezone))
        .load(conn)
        .await?;
    let Some((_, born, timezone)) = rows.as_slice().first() else { return Ok(None) };
    let (dependant_born, timezone) = (born.0, timezone.clone());
    let representations =
        rows.into_iter().map(|(row, _, _)| Representation::try_from(row)).collect::<Result<Vec<_>, _>>()?;
    Ok(Some(ActingFacts { representations, dependant_born, timezone }))
}

/// The representations not ended that `representative` holds (for `dependant` only, when
/// given), oldest first.
async fn open_of(
    conn: &mut Conn,
    representative: CitizenId,
    dependant: Option<CitizenId>,
) -> Result<Vec<Representation>, Failure> {
    let mut query = representations::table
        .filter(representations::representative_id.eq(DbUuid(representative.0)))
        .filter(representations::ended_at.is_null())
        .order(representations::id.asc())
        .select(RepresentationRow::as_select())
        .into_boxed();
    if let Some(dependant) = dependant {
        query = query.filter(representations::dependant_id.eq(DbUuid(dependant.0)));
    }
    let rows: Vec<RepresentationRow> = query.load(conn).await?;
    rows.into_iter().map(Representation::try_from).collect()
}

/// One guarded statement in one transaction with `meta`: only a representation not ended
/// yet is ended. When it ends nothing (unknown, or ended already, perhaps by a concurrent
/// ending: on PostgreSQL the later update waits for the first's commit, then finds the
/// row ended), the transaction is rolled back, `meta` with it, and the answer is `None`.
pub(crate) async fn end(
    conn: &mut Conn,
    id: RepresentationId,
    at: OffsetDateTime,
    by: Subject,
    reason: &str,
    meta: &WriteMeta,
) -> Result<Option<Representation>, Failure> {
    let reason = reason.to_owned();
    let ended = write_tx!(conn, async |conn: &mut Conn| -> Result<Representation, Failure> {
        write_meta::store(conn, meta).await?;
        let open = representations::table.find(DbUuid(id.0)).filter(representations::ended_at.is_null());
        let updated = diesel::update(open)
            .set((
                representations::ended_at.eq(Some(DbTime(at))),
                representations::ended_by_kind.eq(Some(by.kind.as_str())),
                representations::ended_by_id.eq(Some(DbUuid(by.id.0))),
                representations::end_reason.eq(Some(reason.clone())),
            ))
            .execute(conn)
            .await?;
        if updated == 0 {
            return Err(Failure::Outcome(RepoError::NotFound));
        }
        let row: RepresentationRow = representations::table
            .find(DbUuid(id.0))
            .select(RepresentationRow::as_select())
            .first(conn)
            .await?;
        Representation::try_from(row)
    })
    .await;
    match ended {
        Ok(ended) => Ok(Some(ended)),
        Err(Failure::Outcome(RepoError::NotFound)) => Ok(None),
        Err(other) => Err(other),
    }
}
