//! The queries of refresh tokens and revocations.

use super::Conn;
use crate::failure::Failure;
use crate::idempotency::idempotency_keys;
use crate::shared::sql_types::{DbTime, DbUuid};
use crate::tokens::{ACCESS_TOKEN, CLIENT, RefreshRow, RevocationRow, refresh_tokens, revocations};
use consular_domain::ClientId;
use consular_ports::{RefreshOutcome, RefreshReplacement, RefreshTokenRecord, Revocation, RevocationKind};
use diesel::prelude::*;
use diesel_async::RunQueryDsl;
use time::OffsetDateTime;
use uuid::Uuid;

pub(crate) async fn insert_refresh(conn: &mut Conn, record: &RefreshTokenRecord) -> Result<(), Failure> {
    diesel::insert_into(refresh_tokens::table).values(RefreshRow::from(record)).execute(conn).await?;
    Ok(())
}

/// Spends the token with a single conditional UPDATE, so two concurrent rotations of the
/// same token cannot both succeed: the second finds it spent and revokes the family.
pub(crate) async fn rotate_refresh(
    conn: &mut Conn,
    client_id: ClientId,
    hash: &[u8],
    replacement: &RefreshReplacement,
    now: OffsetDateTime,
) -> Result<RefreshOutcome, Failure> {
    write_tx!(conn, async |conn: &mut Conn| -> Result<RefreshOutcome, Failure> {
        let spent: Option<RefreshRow> = diesel::update(
            refresh_tokens::table
                .find(hash)
                .filter(refresh_tokens::client_id.eq(DbUuid(client_id.0)))
                .filter(refresh_tokens::spent_at.is_null())
                .filter(refresh_tokens::revoked_at.is_null())
                .filter(refresh_tokens::expires_at.gt(DbTime(now))),
        )
        .set(refresh_tokens::spent_at.eq(DbTime(now)))
        .returning(RefreshRow::as_returning())
        .get_result(conn)
        .await
        .optional()?;
        if let Some(spent) = spent {
            let spent = RefreshTokenRecord::try_from(spent)?;
            diesel::insert_into(refresh_tokens::table)
                .values(RefreshRow::replacing(&spent, replacement))
                .execute(conn)
                .await?;
            return Ok(RefreshOutcome::Rotated(spent));
        }
        let reused_family: Option<DbUuid> = refresh_tokens::table
            .find(hash)
            .filter(refresh_tokens::client_id.eq(DbUuid(client_id.0)))
            .filter(refresh_tokens::spent_at.is_not_null())
            .select(refresh_tokens::family_id)
            .first(conn)
            .await
            .optional()?;
        match reused_family {
            Some(DbUuid(family)) => {
                revoke_family(conn, family, now).await?;
                Ok(RefreshOutcome::Reused)
            }
            None => Ok(RefreshOutcome::Invalid),
        }
    })
    .await
}

pub(crate) async fn revoke_refresh(
    conn: &mut Conn,
    client_id: ClientId,
    hash: &[u8],
    now: OffsetDateTime,
) -> Result<bool, Failure> {
    write_tx!(conn, async |conn: &mut Conn| -> Result<bool, Failure> {
        let family: Option<DbUuid> = refresh_tokens::table
            .find(hash)
            .filter(refresh_tokens::client_id.eq(DbUuid(client_id.0)))
            .select(refresh_tokens::family_id)
            .first(conn)
            .await
            .optional()?;
        match family {
            Some(DbUuid(family)) => Ok(revoke_family(conn, family, now).await? > 0),
            None => Ok(false),
        }
    })
    .await
}

/// Revokes every refresh token of `family` not revoked yet, and records a revocation for
/// every access token issued with one of them that has not expired. Returns the number
/// of refresh tokens revoked now.
async fn revoke_family(conn: &mut Conn, family: Uuid, now: OffsetDateTime) -> Result<usize, Failure> {
    let revoked = diesel::update(
        refresh_tokens::table
            .filter(refresh_tokens::family_id.eq(DbUuid(family)))
            .filter(refresh_tokens::revoked_at.is_null()),
    )
    .set(refresh_tokens::revoked_at.eq(DbTime(now)))
    .execute(conn)
    .await?;
    let live_access: Vec<(DbUuid, DbTime)> = refresh_tokens::table
        .filter(refresh_tokens::family_id.eq(DbUuid(family)))
        .filter(refresh_tokens::access_expires_at.gt(DbTime(now)))
        .select((refresh_tokens::access_jti, refresh_tokens::access_expires_at))
        .load(conn)
        .await?;
    for (DbUuid(jti), DbTime(expires_at)) in live_access {
        record_revocation(conn, &RevocationRow::new(RevocationKind::AccessToken { jti, expires_at }, now))
            .await?;
    }
    Ok(revoked)
}

/// Records a revocation unless the same token or client is already revoked.
pub(crate) async fn insert_revocation(conn: &mut Conn, revocation: &Revocation) -> Result<(), Failure> {
    record_revocation(conn, &RevocationRow::from(revocation)).await
}

/// [`insert_revocation`] of a row, inside the caller's transaction when there is one.
pub(crate) async fn record_revocation(conn: &mut Conn, row: &RevocationRow) -> Result<(), Failure> {
    diesel::insert_into(revocations::table).values(row).on_conflict_do_nothing().execute(conn).await?;
    Ok(())
}

pub(crate) async fn revocations_since(
    conn: &mut Conn,
    since: OffsetDateTime,
) -> Result<Vec<Revocation>, Failure> {
    let rows: Vec<RevocationRow> = revocations::table
        .filter(revocations::created_at.ge(DbTime(since)))
        .order((revocations::created_at.asc(), revocations::id.asc()))
        .select(RevocationRow::as_select())
        .load(conn)
        .await?;
    rows.into_iter().map(Revocation::try_from).collect()
}

pub(crate) async fn active_revocations(
    conn: &mut Conn,
    now: OffsetDateTime,
) -> Result<Vec<Revocation>, Failure> {
    let rows: Vec<RevocationRow> = revocations::table
        .filter(revocations::kind.eq(CLIENT).or(revocations::expires_at.assume_not_null().gt(DbTime(now))))
        .order((revocations::created_at.asc(), revocations::id.asc()))
        .select(RevocationRow::as_select())
        .load(conn)
        .await?;
    rows.into_iter().map(Revocation::try_from).collect()
}

pub(crate) async fn is_revoked(conn: &mut Conn, jti: Uuid, client_id: ClientId) -> Result<bool, Failure> {
    let matching = revocations::table
        .filter(
            revocations::kind
                .eq(ACCESS_TOKEN)
                .and(revocations::subject.eq(DbUuid(jti)))
                .or(revocations::kind.eq(CLIENT).and(revocations::subject.eq(DbUuid(client_id.0)))),
        )
        .select(revocations::id);
    Ok(diesel::select(diesel::dsl::exists(matching)).get_result::<bool>(conn).await?)
}

/// Also deletes expired idempotency records: the application's hourly housekeeping
/// relies on this one call to keep every expiring table small.
pub(crate) async fn purge_expired(conn: &mut Conn, now: OffsetDateTime) -> Result<u64, Failure> {
    write_tx!(conn, async |conn: &mut Conn| -> Result<u64, Failure> {
        let tokens = diesel::delete(refresh_tokens::table.filter(refresh_tokens::expires_at.lt(DbTime(now))))
            .execute(conn)
            .await?;
        // Client revocations have no expiry (NULL never compares lower) and stay.
        let revoked = diesel::delete(revocations::table.filter(revocations::expires_at.lt(DbTime(now))))
            .execute(conn)
            .await?;
        let responses =
            diesel::delete(idempotency_keys::table.filter(idempotency_keys::expires_at.le(DbTime(now))))
                .execute(conn)
                .await?;
        Ok(u64::try_from(tokens + revoked + responses).unwrap_or(u64::MAX))
    })
    .await
}
