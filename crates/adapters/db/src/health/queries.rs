//! Probes.

use super::Conn;
use crate::error::Failure;
use consular_ports::RepoError;
use diesel::sql_types::{BigInt, Integer};
use diesel::{IntoSql, QueryableByName};
use diesel_async::RunQueryDsl;

pub(crate) async fn ping(conn: &mut Conn) -> Result<(), Failure> {
    diesel::select(1_i32.into_sql::<Integer>()).get_result::<i32>(conn).await?;
    Ok(())
}

#[derive(QueryableByName)]
struct Count {
    #[diesel(sql_type = BigInt)]
    count: i64,
}

/// The number of rows of `table`, one of the schema's tables (for tests).
pub(crate) async fn count_rows(conn: &mut Conn, table: &str) -> Result<i64, Failure> {
    const TABLES: &[&str] = &[
        "missions",
        "api_clients",
        "bootstrap_markers",
        "refresh_tokens",
        "revocations",
        "idempotency_keys",
        "audit_events",
        "signing_keys",
        "service_types",
        "citizens",
        "staff_members",
        "staff_assignments",
        "outbox_events",
        "service_requests",
        "request_history",
        "request_notes",
        "request_messages",
        "documents",
        "service_secrets",
        "slots",
        "slot_service_types",
        "appointments",
        "notifications",
        "emails",
        "notification_preferences",
        "appointment_reminders",
        "request_stage_spells",
    ];
    if !TABLES.contains(&table) {
        return Err(Failure::Outcome(RepoError::Other(format!("unknown table `{table}`"))));
    }
    // `table` is one of the names above, never caller text.
    let counted: Count =
        diesel::sql_query(format!("SELECT COUNT(*) AS count FROM {table}")).get_result(conn).await?;
    Ok(counted.count)
}
