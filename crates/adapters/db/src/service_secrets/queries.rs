//! The queries of the shared service secrets.

use super::Conn;
use crate::failure::Failure;
use crate::service_secrets::{service_secrets, stored};
use crate::shared::sql_types::DbTime;
use consular_ports::{KeyProtection, StoredSecret};
use diesel::prelude::*;
use diesel_async::RunQueryDsl;
use time::OffsetDateTime;

/// Inserts `candidate` unless `name` exists (`ON CONFLICT DO NOTHING` on both databases,
/// so concurrent first starts do not fail), then reads what is stored.
pub(crate) async fn get_or_insert(
    conn: &mut Conn,
    name: &str,
    candidate: &StoredSecret,
    now: OffsetDateTime,
) -> Result<StoredSecret, Failure> {
    write_tx!(conn, async |conn: &mut Conn| -> Result<StoredSecret, Failure> {
        diesel::insert_into(service_secrets::table)
            .values((
                service_secrets::name.eq(name),
                service_secrets::value.eq(&candidate.value),
                service_secrets::created_at.eq(DbTime(now)),
                service_secrets::protection.eq(candidate.protection.as_str()),
            ))
            .on_conflict_do_nothing()
            .execute(conn)
            .await?;
        let (value, protection) = service_secrets::table
            .filter(service_secrets::name.eq(name))
            .select((service_secrets::value, service_secrets::protection))
            .get_result::<(Vec<u8>, String)>(conn)
            .await?;
        stored(name, value, &protection)
    })
    .await
}

/// Seals the value of `name` if it is still in clear (a conditional update: of two nodes
/// sealing at once, one does).
pub(crate) async fn protect(conn: &mut Conn, name: &str, sealed: &[u8]) -> Result<bool, Failure> {
    let updated = diesel::update(
        service_secrets::table
            .filter(service_secrets::name.eq(name))
            .filter(service_secrets::protection.eq(KeyProtection::Clear.as_str())),
    )
    .set((
        service_secrets::value.eq(sealed),
        service_secrets::protection.eq(KeyProtection::Aes256Gcm.as_str()),
    ))
    .execute(conn)
    .await?;
    Ok(updated == 1)
}
