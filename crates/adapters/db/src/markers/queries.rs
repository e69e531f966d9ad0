//! The queries of one-time bootstrap steps (`bootstrap_markers`), safe when several nodes
//! start at once.

use super::Conn;
use crate::failure::Failure;
use crate::markers::bootstrap_markers;
use crate::shared::sql_types::DbTime;
use diesel::prelude::*;
use diesel_async::RunQueryDsl;
use time::OffsetDateTime;

/// Marks the creation of the first admin client.
pub(crate) const FIRST_ADMIN_CLIENT: &str = "first_admin_client";
/// Serialises the creation of the first signing key.
pub(crate) const FIRST_SIGNING_KEY: &str = "first_signing_key";
/// Serialises signing-key rotations, so that nodes rotating at once create one key.
pub(crate) const SIGNING_KEY_ROTATION: &str = "signing_key_rotation";

/// Inserts marker `name` unless it exists; `true` when this transaction inserted it.
/// On PostgreSQL a concurrent transaction inserting the same marker waits for this one
/// to finish, then sees the marker: exactly one of them gets `true`.
pub(crate) async fn claim(conn: &mut Conn, name: &str, now: OffsetDateTime) -> Result<bool, Failure> {
    let inserted = diesel::insert_into(bootstrap_markers::table)
        .values((bootstrap_markers::name.eq(name), bootstrap_markers::created_at.eq(DbTime(now))))
        .on_conflict_do_nothing()
        .execute(conn)
        .await?;
    Ok(inserted == 1)
}

/// Holds marker `name` (creating it if needed) until the transaction ends, so that
/// check-then-insert sequences of concurrent transactions run one after the other.
pub(crate) async fn lock(conn: &mut Conn, name: &str, now: OffsetDateTime) -> Result<(), Failure> {
    claim(conn, name, now).await?;
    diesel::update(bootstrap_markers::table.find(name))
        .set(bootstrap_markers::created_at.eq(bootstrap_markers::created_at))
        .execute(conn)
        .await?;
    Ok(())
}
