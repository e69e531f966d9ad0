//! The read replica's pool and where a tolerant read runs ([`route`]; docs/operations.md
//! "Read replicas"): on the replica once it has replayed the reader's last write mark
//! (`crate::reads` stores the marks), else on the primary.
//!
//! Read-your-writes by position in the WAL, not by time: once a request of a principal
//! that may have written is answered, its mark holds the primary's WAL insert position
//! (every transaction of the request has committed by then, so its commit record ends at
//! or before it). A tolerant read of that principal goes to the replica only if the
//! replica has replayed that far (`pg_last_wal_replay_lsn()`), else to the primary: no
//! waiting, so a lagging replica costs the primary reads, never latency. The marks live on
//! the primary, so every node sees every node's marks; a read costs one indexed lookup
//! there and one function call on the replica, besides itself.

use crate::failure::Failure;
use crate::shards::PgPools;
use consular_domain::Subject;
use consular_ports::Consistency;
use deadpool::managed::Object;
use diesel::dsl::max;
use diesel::prelude::*;
use diesel::sql_types::BigInt;
use diesel_async::pooled_connection::AsyncDieselConnectionManager;
use diesel_async::pooled_connection::deadpool::Pool;
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

diesel::table! {
    use diesel::sql_types::*;
    use crate::shared::sql_types::PortableTimestamp;

    write_marks (writer) {
        writer -> Text,
        lsn -> BigInt,
        marked_at -> PortableTimestamp,
    }
}

diesel::define_sql_function! {
    /// The primary's WAL insert position, in bytes from 0/0 (a function of migration
    /// 000022, prepared once per connection like every statement of diesel's DSL).
    fn consular_wal_insert_position() -> BigInt;
}

diesel::define_sql_function! {
    /// Whether this server has every commit up to the position (migration 000022).
    fn consular_wal_replayed(position: BigInt) -> Bool;
}

diesel::define_sql_function! {
    /// The larger of two positions.
    fn greatest(a: BigInt, b: BigInt) -> BigInt;
}

/// The writer whose mark is the floor: the furthest of the marks a sweep forgot.
pub(crate) const FLOOR: &str = "*";

/// A pooled PostgreSQL connection, from the primary's pool or the replica's.
pub(crate) type PgConn = Object<AsyncDieselConnectionManager<AsyncPgConnection>>;

/// The read replica: its pool (`database_read_url`; several hosts, as for the primary,
/// and tokio-postgres connects to the first that answers), and how many tolerant reads
/// each side served.
pub(crate) struct Replica {
    pool: Pool<AsyncPgConnection>,
    served: Served,
    rest: Rest,
}

/// How long tolerant reads leave a replica alone after it could not be reached or asked:
/// without a rest, each would wait again for a connection that does not come (up to
/// `db_acquire_timeout_ms` when the replica's host does not answer at all).
const REST: Duration = Duration::from_secs(5);

/// Until when the replica rests: nanoseconds from `base`, 0 when it does not.
struct Rest {
    base: Instant,
    until: AtomicU64,
}

impl Rest {
    fn since_base(&self, at: Instant) -> u64 {
        u64::try_from(at.saturating_duration_since(self.base).as_nanos()).unwrap_or(u64::MAX)
    }

    fn resting(&self) -> bool {
        self.since_base(Instant::now()) < AtomicU64::load(&self.until, Ordering::Acquire)
    }

    /// Starts a rest; `false` when one had already started (so that a failure is logged
    /// once per rest, not once per read).
    fn start(&self) -> bool {
        let now = Instant::now();
        let was_resting = self.since_base(now) < AtomicU64::load(&self.until, Ordering::Acquire);
        self.until.fetch_max(self.since_base(now + REST), Ordering::AcqRel);
        !was_resting
    }
}

#[derive(Default)]
struct Served {
    replica: AtomicU64,
    primary: AtomicU64,
}

/// How many tolerant reads the replica served and how many went to the primary instead
/// (the replica behind the reader's last write, or unreachable), since the start.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct TolerantReads {
    pub replica: u64,
    pub primary: u64,
}

impl Replica {
    /// The replica reached through `pool` (built by `database.rs` like the primary's).
    pub(crate) fn new(pool: Pool<AsyncPgConnection>) -> Self {
        Replica {
            pool,
            served: Served::default(),
            rest: Rest { base: Instant::now(), until: AtomicU64::new(0) },
        }
    }

    pub(crate) fn close(&self) {
        self.pool.close();
    }

    pub(crate) fn counts(&self) -> TolerantReads {
        TolerantReads {
            replica: AtomicU64::load(&self.served.replica, Ordering::Relaxed),
            primary: AtomicU64::load(&self.served.primary, Ordering::Relaxed),
        }
    }
}

/// Where a tolerant read runs: its connection and the pool it came from (for a second
/// connection from the same server, as the analytics views take).
pub(crate) struct Routed<'a> {
    pub(crate) conn: PgConn,
    pub(crate) pool: &'a Pool<AsyncPgConnection>,
}

/// The connection a tolerant read runs on: for [`Consistency::OwnWrites`], a replica's
/// when there is one that has replayed the reader's last mark (and the floor); else the
/// primary's. A replica that cannot be reached or asked sends the read to the primary,
/// with a warning: reads keep working when a replica does not.
pub(crate) async fn route<'a>(
    primary: &'a PgPools,
    replica: Option<&'a Replica>,
    consistency: Consistency,
) -> Result<Routed<'a>, Failure> {
    let (Some(replica), Consistency::OwnWrites(reader)) = (replica, consistency) else {
        return Ok(Routed { conn: primary.get().await?, pool: primary.pool() });
    };
    if replica.rest.resting() {
        replica.served.primary.fetch_add(1, Ordering::Relaxed);
        return Ok(Routed { conn: primary.get().await?, pool: primary.pool() });
    }
    let mark = {
        let mut conn = primary.get().await?;
        mark_of(&mut conn, reader).await?
    };
    match replica_for(replica, mark).await {
        Some(conn) => {
            replica.served.replica.fetch_add(1, Ordering::Relaxed);
            Ok(Routed { conn, pool: &replica.pool })
        }
        None => {
            replica.served.primary.fetch_add(1, Ordering::Relaxed);
            Ok(Routed { conn: primary.get().await?, pool: primary.pool() })
        }
    }
}

/// A replica connection whose server has replayed `mark`; `None` when it has not, or
/// cannot say, in which case the replica rests for [`REST`].
async fn replica_for(replica: &Replica, mark: Option<i64>) -> Option<PgConn> {
    let mut conn = match replica.pool.get().await {
        Ok(conn) => conn,
        Err(error) => {
            if replica.rest.start() {
                tracing::warn!(%error, rest = ?REST, "the read replica is unreachable; tolerant reads go to the primary");
            }
            return None;
        }
    };
    let Some(mark) = mark else {
        return Some(conn);
    };
    match replayed(&mut conn, mark).await {
        Ok(true) => Some(conn),
        Ok(false) => None,
        Err(error) => {
            if replica.rest.start() {
                tracing::warn!(
                    ?error,
                    rest = ?REST,
                    "the read replica cannot say how far it replayed; tolerant reads go to the primary"
                );
            }
            None
        }
    }
}

/// The furthest of `writer`'s mark and the floor, in bytes of WAL; `None` without either.
async fn mark_of(conn: &mut AsyncPgConnection, writer: Subject) -> Result<Option<i64>, Failure> {
    Ok(write_marks::table
        .filter(write_marks::writer.eq(writer.to_string()).or(write_marks::writer.eq(FLOOR)))
        .select(max(write_marks::lsn))
        .get_result::<Option<i64>>(conn)
        .await?)
}

/// Whether the server of `conn` has replayed the WAL up to `mark`: a standby that has, or a
/// server that is not in recovery (a primary has every commit it acknowledged).
async fn replayed(conn: &mut AsyncPgConnection, mark: i64) -> Result<bool, Failure> {
    Ok(diesel::select(consular_wal_replayed(mark)).get_result::<bool>(conn).await?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rest_starts_once_and_lasts() {
        let rest = Rest { base: Instant::now(), until: AtomicU64::new(0) };
        assert!(!rest.resting(), "a replica that never failed does not rest");
        assert!(rest.start(), "the first failure starts a rest (and is logged)");
        assert!(rest.resting());
        assert!(!rest.start(), "a failure during the rest is not logged again");
        // A rest that ended: a new failure starts (and logs) a new one.
        let ended = Rest { base: Instant::now() - 2 * REST, until: AtomicU64::new(1) };
        assert!(!ended.resting());
        assert!(ended.start());
    }
}
