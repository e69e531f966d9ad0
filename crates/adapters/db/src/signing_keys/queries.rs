//! The queries of the token signing keys.

use super::{Conn, markers};
use crate::error::Failure;
use crate::signing_keys::{SigningKeyRow, signing_keys};
use consular_ports::SigningKeyRecord;
use diesel::prelude::*;
use diesel_async::RunQueryDsl;

/// Newest first.
pub(crate) async fn all(conn: &mut Conn) -> Result<Vec<SigningKeyRecord>, Failure> {
    let rows: Vec<SigningKeyRow> = signing_keys::table
        .select(SigningKeyRow::as_select())
        .order((signing_keys::created_at.desc(), signing_keys::kid.desc()))
        .load(conn)
        .await?;
    Ok(rows.into_iter().map(SigningKeyRecord::from).collect())
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
