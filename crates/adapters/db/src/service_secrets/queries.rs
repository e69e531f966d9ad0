//! The queries of the shared service secrets.

use super::Conn;
use crate::error::Failure;
use crate::service_secrets::service_secrets;
use crate::shared::sql_types::DbTime;
use diesel::prelude::*;
use diesel_async::RunQueryDsl;
use time::OffsetDateTime;

/// Inserts `candidate` unless `name` exists (`ON CONFLICT DO NOTHING` on both databases,
/// so concurrent first starts do not fail), then reads what is stored.
pub(crate) async fn get_or_insert(
    conn: &mut Conn,
    name: &str,
    candidate: &[u8],
    now: OffsetDateTime,
) -> Result<Vec<u8>, Failure> {
    write_tx!(conn, async |conn: &mut Conn| -> Result<Vec<u8>, Failure> {
        diesel::insert_into(service_secrets::table)
            .values((
                service_secrets::name.eq(name),
                service_secrets::value.eq(candidate),
                service_secrets::created_at.eq(DbTime(now)),
            ))
            .on_conflict_do_nothing()
            .execute(conn)
            .await?;
        Ok(service_secrets::table
            .filter(service_secrets::name.eq(name))
            .select(service_secrets::value)
            .get_result::<Vec<u8>>(conn)
            .await?)
    })
    .await
}
