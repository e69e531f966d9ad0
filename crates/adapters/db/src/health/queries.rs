//! Probes.

use super::Conn;
use crate::failure::Failure;
use crate::health::{Catalog, MigratedColumn};
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
    if !crate::schema::TABLES.contains(&table) {
        return Err(Failure::Outcome(RepoError::Other(format!("unknown table `{table}`"))));
    }
    // `table` is one of the schema's names, never caller text.
    let counted: Count =
        diesel::sql_query(format!("SELECT COUNT(*) AS count FROM {table}")).get_result(conn).await?;
    Ok(counted.count)
}

pub(crate) async fn migrated_columns(conn: &mut Conn) -> Result<Vec<MigratedColumn>, Failure> {
    conn.migrated_columns().await
}
