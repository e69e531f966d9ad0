//! What several areas use: the portable column types (`sql_types`), the conversions of
//! shared column shapes (`columns`), and the macros that dispatch a port method to the
//! right backend (`repository!`, `run!`) and run an optimistic update
//! (`update_versioned!`). Nothing here belongs to one area, and nothing here uses an
//! area: a change to one table's columns never touches this module.

pub(crate) mod columns;
pub(crate) mod sql_types;

use crate::failure::Failure;
use consular_ports::RepoError;

/// `run!(db, area::function(args…))` checks out a connection from whichever pool `db`
/// holds and calls `area::function(conn, args…)` of that backend's compilation of the area's
/// `queries.rs` (`crate::pg::queries::area` or `crate::sqlite::queries::area`); a
/// [`Failure`] becomes a [`RepoError`]. On PostgreSQL the pool is the primary's: it is
/// [`run_tolerant!`] asked for `Consistency::Latest`.
macro_rules! run {
    ($db:expr, $area:ident :: $function:ident ( $($arg:expr),* $(,)? )) => {
        $crate::shared::run_tolerant!($db, consular_ports::Consistency::Latest, $area::$function($($arg),*))
    };
}
pub(crate) use run;

/// `run_tolerant!(db, consistency, area::function(args…))`: as [`run!`], for a read a port
/// marks tolerant: on PostgreSQL with a read replica, the connection is the replica's when
/// the [`Consistency`](consular_ports::Consistency) allows it, else the primary's (`crate::replica::route`,
/// docs/operations.md "Read replicas"). On SQLite, or without a replica, the connection is
/// the only pool's.
macro_rules! run_tolerant {
    ($db:expr, $consistency:expr, $area:ident :: $function:ident ( $($arg:expr),* $(,)? )) => {{
        let result: Result<_, $crate::failure::Failure> = match $db.pools() {
            $crate::database::Pools::Postgres { pool, replica, .. } => {
                async {
                    let mut conn = $crate::replica::route(pool, replica.as_ref(), $consistency).await?.conn;
                    $crate::pg::queries::$area::$function(&mut conn, $($arg),*).await
                }
                .await
            }
            $crate::database::Pools::Sqlite { pool, .. } => {
                async {
                    let mut conn = pool.get().await?;
                    $crate::sqlite::queries::$area::$function(&mut conn, $($arg),*).await
                }
                .await
            }
        };
        result.map_err(consular_ports::RepoError::from)
    }};
}
pub(crate) use run_tolerant;

/// Implements a port (or inherent methods) on [`crate::Database`] by forwarding every
/// method, arguments verbatim, to the same-named query function of one area, through
/// [`run!`]:
///
/// ```ignore
/// repository! {
///     impl MissionRepository for Database => missions {
///         fn get(id: MissionId) -> Option<Mission>;
///         fn insert(mission: &Mission, meta: &WriteMeta);
///     }
/// }
/// ```
///
/// makes `async fn get(&self, id: MissionId) -> Result<Option<Mission>, RepoError>` call
/// `missions::get(conn, id)`. A method without `->` returns `Result<(), RepoError>`. A
/// method the port marks tolerant is written `tolerant(consistency) fn list(…) -> …;`: it takes
/// `consistency: Consistency` last, which chooses its connection ([`run_tolerant!`]) and is not
/// passed to the query function. The second form, `impl Database => area { pub fn …; }`, writes inherent methods the same way.
macro_rules! repository {
    (impl $port:ident for Database => $area:ident {
        $(
            $(#[$attr:meta])* $(tolerant($consistency:ident))?
            fn $name:ident ( $($arg:ident : $ty:ty),* $(,)? ) $(-> $ret:ty)? ;
        )*
    }) => {
        #[async_trait::async_trait]
        impl $port for $crate::Database {
            $(
                $(#[$attr])*
                async fn $name(&self, $($arg: $ty,)* $($consistency: consular_ports::Consistency)?)
                    -> Result<$crate::shared::repository!(@ret $($ret)?), consular_ports::RepoError>
                {
                    $crate::shared::repository!(@run self, [$($consistency)?], $area::$name($($arg),*))
                }
            )*
        }
    };
    (@run $db:expr, [], $area:ident :: $name:ident ( $($arg:ident),* )) => {
        $crate::shared::run!($db, $area::$name($($arg),*))
    };
    (@run $db:expr, [$consistency:ident], $area:ident :: $name:ident ( $($arg:ident),* )) => {
        $crate::shared::run_tolerant!($db, $consistency, $area::$name($($arg),*))
    };
    (impl Database => $area:ident {
        $( $(#[$attr:meta])* $vis:vis fn $name:ident ( $($arg:ident : $ty:ty),* $(,)? ) $(-> $ret:ty)? ; )*
    }) => {
        impl $crate::Database {
            $(
                $(#[$attr])*
                $vis async fn $name(&self, $($arg: $ty),*)
                    -> Result<$crate::shared::repository!(@ret $($ret)?), consular_ports::RepoError>
                {
                    $crate::shared::run!(self, $area::$name($($arg),*))
                }
            )*
        }
    };
    (@ret) => { () };
    (@ret $ret:ty) => { $ret };
}
pub(crate) use repository;

/// Optimistic update: replaces the row of `$table` (a table module in scope) whose id is
/// `$row.id` with `$row` if its `version` is still `$expected`. Evaluates to a future of
/// `Result<(), Failure>`: `NotFound` when the row is gone, `VersionConflict` when its
/// version moved on. Run it inside the write's transaction, from an area's `queries.rs`
/// (it needs `diesel::prelude::*` and `RunQueryDsl` in scope).
macro_rules! update_versioned {
    ($conn:expr, $table:ident, $row:expr, $expected:expr) => {
        async {
            let row = $row;
            let updated = diesel::update($table::table.find(row.id).filter($table::version.eq($expected)))
                .set(row)
                .execute(&mut *$conn)
                .await?;
            if updated > 0 {
                return Ok(());
            }
            let exists = diesel::select(diesel::dsl::exists($table::table.find(row.id).select($table::id)))
                .get_result::<bool>(&mut *$conn)
                .await?;
            Err::<(), $crate::failure::Failure>($crate::shared::not_updated(exists))
        }
    };
}
pub(crate) use update_versioned;

/// An optimistic update changed no row: the row is gone, or its version moved on.
pub(crate) fn not_updated(still_exists: bool) -> Failure {
    Failure::Outcome(if still_exists { RepoError::VersionConflict } else { RepoError::NotFound })
}

/// Every row written with `Insertable` says `#[diesel(treat_none_as_default_value =
/// false)]`: a `None` is written as `NULL` (no column has a default but the history's
/// identity, which its row leaves out), and the statement's text no longer depends on
/// which fields are `None`, so diesel prepares it once per connection and keeps it. With
/// diesel's default (`None` as `DEFAULT`), every insert is parsed, planned and prepared
/// again, one round trip more each time (docs/benchmarks.md "Inserts prepared once").
#[cfg(test)]
mod tests {
    use crate::requests::{HistoryRow, request_history};
    use crate::shared::sql_types::{DbTime, DbUuid};
    use diesel::pg::Pg;
    use diesel::query_builder::QueryFragment;
    use std::path::Path;

    #[test]
    fn every_insertable_row_writes_none_as_null() {
        fn visit(dir: &Path, missing: &mut Vec<String>) {
            for entry in std::fs::read_dir(dir).unwrap() {
                let path = entry.unwrap().path();
                if path.is_dir() {
                    visit(&path, missing);
                    continue;
                }
                let text = std::fs::read_to_string(&path).unwrap();
                let lines: Vec<&str> = text.lines().collect();
                for (n, line) in lines.iter().enumerate() {
                    let derives = line.trim_start().starts_with("#[derive(") && line.contains("Insertable");
                    let said = lines[n + 1..]
                        .iter()
                        .take_while(|l| l.trim_start().starts_with("#["))
                        .any(|l| l.contains("treat_none_as_default_value = false"));
                    if derives && !said {
                        missing.push(format!("{}:{}", path.display(), n + 1));
                    }
                }
            }
        }
        let mut missing = Vec::new();
        visit(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src"), &mut missing);
        assert!(missing.is_empty(), "rows whose inserts diesel would not prepare once: {missing:?}");
    }

    /// With `None` fields, the case diesel would otherwise write as `DEFAULT`.
    #[test]
    fn an_insert_with_none_fields_is_prepared_once() {
        let row = HistoryRow {
            request_id: DbUuid(uuid::Uuid::nil()),
            at: DbTime(time::OffsetDateTime::UNIX_EPOCH),
            actor_kind: None,
            actor_id: None,
            from_status: None,
            to_status: "submitted".to_owned(),
            from_stage: None,
            to_stage: 0,
            reason: None,
            on_behalf_of: None,
        };
        let insert = diesel::insert_into(request_history::table).values(&row);
        assert!(insert.is_safe_to_cache_prepared(&Pg).unwrap());
        assert!(!diesel::debug_query::<Pg, _>(&insert).to_string().contains("DEFAULT"));
    }
}
