//! A statement of SQL text whose filters depend on the window: the instants it compares
//! with are bound first (parameters 1, 2, …), then the ids of the filters that are set,
//! numbered after them as they are added, in the backend's parameter syntax (`$n` on
//! PostgreSQL, `?n` on SQLite; both let a parameter appear several times).

use super::fold::Window;
use crate::requests::OPEN;
use crate::shared::sql_types::{DbTime, DbUuid, PortableTimestamp, PortableUuid};
use diesel::backend::{Backend, DieselReserveSpecialization};
use diesel::pg::Pg;
use diesel::query_builder::{BoxedSqlQuery, SqlQuery};
use diesel::serialize::ToSql;
use diesel::sql_types::HasSqlType;
use diesel::sqlite::Sqlite;
use std::marker::PhantomData;
use time::OffsetDateTime;
use uuid::Uuid;

/// How a backend writes the `n`th parameter.
pub(super) trait Parameters {
    fn parameter(n: usize) -> String;
}

impl Parameters for Pg {
    fn parameter(n: usize) -> String {
        format!("${n}")
    }
}

impl Parameters for Sqlite {
    fn parameter(n: usize) -> String {
        format!("?{n}")
    }
}

pub(super) struct Statement<DB> {
    instants: Vec<OffsetDateTime>,
    ids: Vec<DbUuid>,
    backend: PhantomData<DB>,
}

impl<DB> Statement<DB>
where
    DB: Backend
        + DieselReserveSpecialization
        + Parameters
        + HasSqlType<PortableTimestamp>
        + HasSqlType<PortableUuid>,
    DbTime: ToSql<PortableTimestamp, DB>,
    DbUuid: ToSql<PortableUuid, DB>,
{
    /// A statement comparing with `instants`, parameters 1 to `instants.len()`.
    pub(super) fn new(instants: &[OffsetDateTime]) -> Statement<DB> {
        Statement { instants: instants.to_vec(), ids: Vec::new(), backend: PhantomData }
    }

    /// ` AND <table>.<column> = <parameter>` when `id` is set, nothing otherwise.
    fn filter(&mut self, table: &str, column: &str, id: Option<Uuid>) -> String {
        let Some(id) = id else { return String::new() };
        self.ids.push(DbUuid(id));
        format!(" AND {table}.{column} = {}", DB::parameter(self.instants.len() + self.ids.len()))
    }

    /// The window's mission filter on `table`, and its service type filter when `typed`
    /// (requests and spells; appointments ignore the service type).
    pub(super) fn scope(&mut self, window: &Window, table: &str, typed: bool) -> String {
        let mission = self.filter(table, "mission_id", window.mission.map(|m| m.0));
        let service_type = if typed {
            self.filter(table, "service_type_id", window.service_type.map(|t| t.0))
        } else {
            String::new()
        };
        mission + &service_type
    }

    /// `sql` with the binds.
    pub(super) fn query(self, sql: &str) -> BoxedSqlQuery<'static, DB, SqlQuery> {
        let mut query = diesel::sql_query(sql).into_boxed::<DB>();
        for instant in self.instants {
            query = query.bind::<PortableTimestamp, _>(DbTime(instant));
        }
        for id in self.ids {
            query = query.bind::<PortableUuid, _>(id);
        }
        query
    }
}

/// The status of each request of `service_requests` at the end of the window, `E` (the
/// statement's parameter 2), `status_at(E)` (docs/analytics.md "Overview", `by_status`):
///
/// - for a range ending now (the last boundary is `now`, the instant read inside the
///   snapshot), the current status: nothing the snapshot holds was stamped after `now`
///   ([`super::queries::snapshot_instant`]), so every request's last entry is before `E`.
///   (A probe of the history for the requests closed at or after `E`, which only a server
///   whose clock is behind another's could show, cost 8 to 11 ms of the views over all
///   missions on 200,000 requests, for a case a single clock never has: docs/analytics.md
///   "How the figures are computed".)
/// - otherwise, the current status of a request closed before `E` (nothing changes a
///   final request), and for one still open at `E`, the `to_status` of its last history
///   entry before `E` (entries at the same instant in their order, by id): one backward
///   probe of `request_history_request_at_idx` per such request, which is why the probe
///   is reserved to them.
pub(super) fn status_at_end<DB: Parameters>(window: &Window) -> String {
    if window.end >= window.now {
        return "service_requests.status".to_owned();
    }
    let end = DB::parameter(2);
    format!(
        "CASE WHEN service_requests.closed_at < {end} THEN service_requests.status ELSE (\
             SELECT request_history.to_status FROM request_history \
             WHERE request_history.request_id = service_requests.id AND request_history.at < {end} \
             ORDER BY request_history.at DESC, request_history.id DESC LIMIT 1\
         ) END"
    )
}

/// The rows whose sums are the open counts of the window (parameters: 1 its start, 2
/// `now`, 3 its end `E`; `keys` the group columns, `scope` the window's filters, which bind
/// after them), one per request that may count, each `open_at_start`, `open_now` and
/// `overdue_now` as 0 or 1:
///
/// - `open_at_start`: open at the start (`open_at(start)`), save those closed in the range,
///   which the fold counts from the closed requests' rows: the open requests submitted
///   before the start, and those submitted before it and closed at or after `E`;
/// - `open_now`: **open at `now`** (`open_at(now)`: submitted before it, and open or
///   closed at or after it), the instant the backlog at the end of a range ending today is
///   taken at too; not "in an open status", so that the two agree whatever the snapshot
///   holds (docs/analytics.md "How the figures are computed");
/// - `overdue_now`: of those, `sla_due_at < now`.
///
/// Read from the open requests (the partial index) and those closed at or after `E`
/// (`closed_at` index; `now ≥ E`), so never the whole table.
pub(super) fn open_counts<DB: Parameters>(keys: &str, scope: &str) -> String {
    let (start, now, end) = (DB::parameter(1), DB::parameter(2), DB::parameter(3));
    format!(
        "SELECT {keys}, \
         CASE WHEN service_requests.submitted_at < {start} THEN 1 ELSE 0 END AS open_at_start, \
         CASE WHEN service_requests.submitted_at < {now} THEN 1 ELSE 0 END AS open_now, \
         CASE WHEN service_requests.submitted_at < {now} AND service_requests.sla_due_at < {now} \
         THEN 1 ELSE 0 END AS overdue_now \
         FROM service_requests WHERE {OPEN}{scope} \
         UNION ALL \
         SELECT {keys}, \
         CASE WHEN service_requests.submitted_at < {start} THEN 1 ELSE 0 END, \
         CASE WHEN service_requests.closed_at >= {now} AND service_requests.submitted_at < {now} \
         THEN 1 ELSE 0 END, \
         CASE WHEN service_requests.closed_at >= {now} AND service_requests.submitted_at < {now} \
         AND service_requests.sla_due_at < {now} THEN 1 ELSE 0 END \
         FROM service_requests \
         WHERE service_requests.closed_at >= {end} \
         AND (service_requests.submitted_at < {start} OR service_requests.closed_at >= {now}){scope}"
    )
}
