//! The `write_marks` (PostgreSQL; docs/operations.md "Read replicas"): after a request of
//! a principal that may have written, the primary's WAL position, which a tolerant read of
//! theirs needs a replica to have replayed (`crate::replica::route`). All the SQL here is
//! PostgreSQL's, run only when a read URL is configured: without one, a mark is a no-op.

use crate::Database;
use crate::database::Pools;
use crate::failure::Failure;
use crate::replica::{FLOOR, TolerantReads, consular_wal_insert_position, greatest};
use crate::shards::PgPools;
use crate::shared::sql_types::{DbTime, PortableTimestamp};
use async_trait::async_trait;
use consular_domain::Subject;
use consular_ports::{RepoError, WriteMarks};
use diesel::prelude::*;
use diesel::sql_query;
use diesel::sql_types::{BigInt, Text};
use diesel::upsert::excluded;
use diesel_async::RunQueryDsl;
use time::OffsetDateTime;

pub(crate) use crate::replica::write_marks;

/// The unique constraints of `write_marks` (see `crate::error`): the writer, which every
/// statement's `ON CONFLICT` resolves, so it never reaches a caller.
pub(crate) const UNIQUE_CONSTRAINTS: &[(&str, &str)] = &[("write_marks_pkey", "write_marks.writer")];

/// Marks only where a replica may serve reads: PostgreSQL with `database_read_url`.
fn marked_pool(db: &Database) -> Option<&PgPools> {
    match db.pools() {
        Pools::Postgres { pool, replica: Some(_), .. } => Some(pool),
        _ => None,
    }
}

#[async_trait]
impl WriteMarks for Database {
    async fn mark(&self, writer: Subject) -> Result<(), RepoError> {
        let Some(pool) = marked_pool(self) else {
            return Ok(());
        };
        // `marked_at` is the column's default, the primary's `now()`, which the sweep's
        // horizon is compared with.
        let marked: Result<usize, Failure> = async {
            let mut conn = pool.get().await?;
            Ok(diesel::insert_into(write_marks::table)
                .values((
                    write_marks::writer.eq(writer.to_string()),
                    write_marks::lsn.eq(consular_wal_insert_position()),
                ))
                .on_conflict(write_marks::writer)
                .do_update()
                .set((
                    write_marks::lsn.eq(greatest(write_marks::lsn, excluded(write_marks::lsn))),
                    write_marks::marked_at.eq(excluded(write_marks::marked_at)),
                ))
                .execute(&mut conn)
                .await?)
        }
        .await;
        marked.map(drop).map_err(RepoError::from)
    }

    async fn sweep_marks(&self, older_than: OffsetDateTime) -> Result<u64, RepoError> {
        #[derive(diesel::QueryableByName)]
        struct Forgotten {
            #[diesel(sql_type = BigInt)]
            forgotten: i64,
        }
        let Some(pool) = marked_pool(self) else {
            return Ok(0);
        };
        // One statement: the marks forgotten and the floor raised to the furthest of them
        // commit together, so no reader's position is ever lost in between.
        let swept: Result<Forgotten, Failure> = async {
            let mut conn = pool.get().await?;
            Ok(sql_query(
                "WITH gone AS (\
                     DELETE FROM write_marks WHERE marked_at < $1 AND writer <> $2 RETURNING lsn\
                 ), floor AS (\
                     INSERT INTO write_marks (writer, lsn, marked_at) \
                     SELECT $2, max(lsn), now() FROM gone HAVING count(*) > 0 \
                     ON CONFLICT (writer) DO UPDATE \
                     SET lsn = GREATEST(write_marks.lsn, EXCLUDED.lsn), marked_at = EXCLUDED.marked_at\
                 ) \
                 SELECT count(*) AS forgotten FROM gone",
            )
            .bind::<PortableTimestamp, _>(DbTime(older_than))
            .bind::<Text, _>(FLOOR)
            .get_result::<Forgotten>(&mut conn)
            .await?)
        }
        .await;
        Ok(u64::try_from(swept?.forgotten).unwrap_or(0))
    }
}

impl Database {
    /// How many tolerant reads the replica and the primary served; `None` without a read
    /// replica. For tests and measurements (docs/operations.md "Read replicas").
    #[doc(hidden)]
    pub fn tolerant_reads(&self) -> Option<TolerantReads> {
        match self.pools() {
            Pools::Postgres { replica: Some(replica), .. } => Some(replica.counts()),
            _ => None,
        }
    }
}
