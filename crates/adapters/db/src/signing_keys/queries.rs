//! The queries of the token signing keys.

use super::{Conn, markers};
use crate::failure::Failure;
use crate::signing_keys::{SigningKeyRow, signing_keys};
use consular_ports::{KeyProtection, SigningKeyRecord};
use diesel::prelude::*;
use diesel_async::RunQueryDsl;

/// Newest first.
pub(crate) async fn all(conn: &mut Conn) -> Result<Vec<SigningKeyRecord>, Failure> {
    let rows: Vec<SigningKeyRow> = signing_keys::table
        .select(SigningKeyRow::as_select())
        .order((signing_keys::created_at.desc(), signing_keys::kid.desc()))
        .load(conn)
        .await?;
    rows.into_iter().map(SigningKeyRecord::try_from).collect()
}

/// Newest first, in the order of [`all`].
pub(crate) async fn kids(conn: &mut Conn) -> Result<Vec<String>, Failure> {
    Ok(signing_keys::table
        .select(signing_keys::kid)
        .order((signing_keys::created_at.desc(), signing_keys::kid.desc()))
        .load(conn)
        .await?)
}

async fn newest_kid(conn: &mut Conn) -> Result<Option<String>, Failure> {
    Ok(signing_keys::table
        .select(signing_keys::kid)
        .order((signing_keys::created_at.desc(), signing_keys::kid.desc()))
        .first(conn)
        .await
        .optional()?)
}

pub(crate) async fn insert_first(conn: &mut Conn, key: &SigningKeyRecord) -> Result<bool, Failure> {
    let row = SigningKeyRow::from(key);
    write_tx!(conn, async |conn: &mut Conn| -> Result<bool, Failure> {
        markers::lock(conn, markers::FIRST_SIGNING_KEY, row.created_at.0).await?;
        let any_key = diesel::select(diesel::dsl::exists(signing_keys::table.select(signing_keys::kid)))
            .get_result::<bool>(conn)
            .await?;
        if any_key {
            return Ok(false);
        }
        diesel::insert_into(signing_keys::table).values(&row).execute(conn).await?;
        Ok(true)
    })
    .await
}

pub(crate) async fn insert_successor(
    conn: &mut Conn,
    key: &SigningKeyRecord,
    newest: &str,
) -> Result<bool, Failure> {
    let row = SigningKeyRow::from(key);
    let newest = newest.to_owned();
    write_tx!(conn, async |conn: &mut Conn| -> Result<bool, Failure> {
        // Held until the commit: a second rotation waits, then finds this key the newest.
        markers::lock(conn, markers::SIGNING_KEY_ROTATION, row.created_at.0).await?;
        if newest_kid(conn).await?.as_deref() != Some(newest.as_str()) {
            return Ok(false);
        }
        diesel::insert_into(signing_keys::table).values(&row).execute(conn).await?;
        Ok(true)
    })
    .await
}

pub(crate) async fn protect(
    conn: &mut Conn,
    kid: &str,
    private_key: &[u8],
    protection: KeyProtection,
) -> Result<bool, Failure> {
    let updated = diesel::update(
        signing_keys::table
            .filter(signing_keys::kid.eq(kid))
            .filter(signing_keys::private_key_protection.eq(KeyProtection::Clear.as_str())),
    )
    .set((
        signing_keys::private_key.eq(private_key),
        signing_keys::private_key_protection.eq(protection.as_str()),
    ))
    .execute(conn)
    .await?;
    Ok(updated == 1)
}

pub(crate) async fn retire(conn: &mut Conn, kids: &[String]) -> Result<u64, Failure> {
    let kids = kids.to_vec();
    write_tx!(conn, async |conn: &mut Conn| -> Result<u64, Failure> {
        let Some(newest) = newest_kid(conn).await? else { return Ok(0) };
        let doomed: Vec<&String> = kids.iter().filter(|kid| **kid != newest).collect();
        let deleted = diesel::delete(signing_keys::table.filter(signing_keys::kid.eq_any(doomed)))
            .execute(conn)
            .await?;
        Ok(deleted as u64)
    })
    .await
}
