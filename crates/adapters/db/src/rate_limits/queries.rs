//! The counting statement of attempt caps (docs/appointments.md "Attempt caps").

use super::Conn;
use crate::failure::Failure;
use crate::shared::columns::corrupt;
use crate::shared::sql_types::DbTime;
use crate::shared::sql_types::PortableTimestamp;
use consular_domain::rate::RateKey;
use diesel::dsl::sql;
use diesel::sql_types::{Integer, Text};
use diesel_async::RunQueryDsl;
use time::OffsetDateTime;

/// Counts one attempt under each of `keys` in `window`, in one statement outside any
/// transaction (it commits at once, so an attempt refused later still counts):
///
/// ```sql
/// INSERT INTO rate_limits (key, window_start, count) VALUES (k1, w, 1), (k2, w, 1)
/// ON CONFLICT (key) DO UPDATE SET
///   count = CASE WHEN excluded.window_start > rate_limits.window_start THEN 1
///                ELSE rate_limits.count + 1 END,
///   window_start = CASE WHEN excluded.window_start > rate_limits.window_start
///                       THEN excluded.window_start ELSE rate_limits.window_start END
/// RETURNING key, count
/// ```
///
/// A newer window restarts at 1; the same or an older one (a node whose clock is behind)
/// adds one to the stored window, which it never moves back. The `CASE` is the greater of
/// the two windows written once for both databases (PostgreSQL's `GREATEST`, SQLite's
/// two-argument `max`); both evaluate `SET` on the row as it was. On PostgreSQL
/// concurrent attempts on one key queue on its row lock and each adds to the committed
/// count; the rows are inserted in key order, so two attempts sharing keys take their
/// locks in the same order and never deadlock. SQLite serialises writers.
const INSERT: &str = "INSERT INTO rate_limits (key, window_start, count) VALUES (";

const UPSERT: &str = " ON CONFLICT (key) DO UPDATE SET \
    count = CASE WHEN excluded.window_start > rate_limits.window_start THEN 1 \
        ELSE rate_limits.count + 1 END, \
    window_start = CASE WHEN excluded.window_start > rate_limits.window_start \
        THEN excluded.window_start ELSE rate_limits.window_start END \
    RETURNING key, count";

pub(crate) async fn count_attempt(
    conn: &mut Conn,
    keys: &[RateKey],
    window: OffsetDateTime,
) -> Result<Vec<u32>, Failure> {
    if keys.is_empty() {
        return Ok(Vec::new());
    }
    let mut ordered: Vec<&str> = keys.iter().map(RateKey::as_str).collect();
    ordered.sort_unstable();
    let window = DbTime(window);
    // At most two keys (a citizen's and a client's): the statement for each number of
    // rows is written out, so diesel writes each backend's parameters and keeps each text
    // prepared per connection.
    let counted: Vec<(String, i32)> = match ordered.as_slice() {
        [one] => {
            sql::<(Text, Integer)>(INSERT)
                .bind::<Text, _>(*one)
                .sql(", ")
                .bind::<PortableTimestamp, _>(window)
                .sql(", 1)")
                .sql(UPSERT)
                .get_results(conn)
                .await?
        }
        [one, two] => {
            sql::<(Text, Integer)>(INSERT)
                .bind::<Text, _>(*one)
                .sql(", ")
                .bind::<PortableTimestamp, _>(window)
                .sql(", 1), (")
                .bind::<Text, _>(*two)
                .sql(", ")
                .bind::<PortableTimestamp, _>(window)
                .sql(", 1)")
                .sql(UPSERT)
                .get_results(conn)
                .await?
        }
        _ => return Err(corrupt("rate_limits", format!("{} keys counted at once; at most 2", keys.len()))),
    };
    keys.iter()
        .map(|key| match counted.iter().find(|(k, _)| k == key.as_str()) {
            Some((_, count)) => u32::try_from(*count).map_err(|e| corrupt("rate_limits.count", e)),
            None => Err(corrupt("rate_limits", format!("no count returned for {key}"))),
        })
        .collect()
}
