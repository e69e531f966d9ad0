//! Refresh tokens and revocations: the `refresh_tokens` and `revocations` tables, their
//! rows, and [`TokenRepository`].

use crate::failure::Failure;
use crate::shared::columns::corrupt;
use crate::shared::repository;
use crate::shared::sql_types::{DbTime, DbUuid};
use consular_domain::{ClientId, ScopeSet};
use consular_ports::{
    RefreshOutcome, RefreshReplacement, RefreshTokenRecord, Revocation, RevocationKind, TokenRepository,
};
use diesel::prelude::*;
use time::OffsetDateTime;
use uuid::Uuid;

diesel::table! {
    use diesel::sql_types::*;
    use crate::shared::sql_types::{PortableTimestamp, PortableUuid};

    refresh_tokens (hash) {
        hash -> Binary,
        client_id -> PortableUuid,
        family_id -> PortableUuid,
        scopes -> Text,
        access_jti -> PortableUuid,
        access_expires_at -> PortableTimestamp,
        issued_at -> PortableTimestamp,
        expires_at -> PortableTimestamp,
        spent_at -> Nullable<PortableTimestamp>,
        revoked_at -> Nullable<PortableTimestamp>,
    }
}

diesel::table! {
    use diesel::sql_types::*;
    use crate::shared::sql_types::{PortableTimestamp, PortableUuid};

    revocations (id) {
        id -> PortableUuid,
        kind -> Text,
        subject -> PortableUuid,
        expires_at -> Nullable<PortableTimestamp>,
        created_at -> PortableTimestamp,
    }
}

/// The unique constraints of the tokens' tables (see `crate::error`).
pub(crate) const UNIQUE_CONSTRAINTS: &[(&str, &str)] = &[
    ("refresh_tokens_pkey", "refresh_tokens.hash"),
    ("revocations_pkey", "revocations.id"),
    ("revocations_kind_subject", "revocations.kind, revocations.subject"),
];

repository! {
    impl TokenRepository for Database => tokens {
        fn insert_refresh(record: &RefreshTokenRecord);
        fn rotate_refresh(
            client_id: ClientId,
            hash: &[u8],
            replacement: &RefreshReplacement,
            now: OffsetDateTime,
        ) -> RefreshOutcome;
        fn revoke_refresh(client_id: ClientId, hash: &[u8], now: OffsetDateTime) -> bool;
        fn insert_revocation(revocation: &Revocation);
        fn revocations_since(since: OffsetDateTime) -> Vec<Revocation>;
        fn active_revocations(now: OffsetDateTime) -> Vec<Revocation>;
        fn is_revoked(jti: Uuid, client_id: ClientId) -> bool;
        fn purge_expired(now: OffsetDateTime) -> u64;
    }
}

#[derive(Debug, Clone, Queryable, Selectable, Insertable)]
#[diesel(table_name = refresh_tokens)]
#[diesel(treat_none_as_default_value = false)]
pub(crate) struct RefreshRow {
    pub hash: Vec<u8>,
    pub client_id: DbUuid,
    pub family_id: DbUuid,
    pub scopes: String,
    pub access_jti: DbUuid,
    pub access_expires_at: DbTime,
    pub issued_at: DbTime,
    pub expires_at: DbTime,
    pub spent_at: Option<DbTime>,
    pub revoked_at: Option<DbTime>,
}

impl From<&RefreshTokenRecord> for RefreshRow {
    fn from(r: &RefreshTokenRecord) -> Self {
        RefreshRow {
            hash: r.hash.clone(),
            client_id: DbUuid(r.client_id.0),
            family_id: DbUuid(r.family_id),
            scopes: r.scopes.to_string(),
            access_jti: DbUuid(r.access_jti),
            access_expires_at: DbTime(r.access_expires_at),
            issued_at: DbTime(r.issued_at),
            expires_at: DbTime(r.expires_at),
            spent_at: None,
            revoked_at: None,
        }
    }
}

impl RefreshRow {
    /// The token that replaces `spent`: same client, family and scopes.
    pub(crate) fn replacing(spent: &RefreshTokenRecord, next: &RefreshReplacement) -> Self {
        RefreshRow::from(&RefreshTokenRecord {
            hash: next.hash.clone(),
            client_id: spent.client_id,
            family_id: spent.family_id,
            scopes: spent.scopes,
            access_jti: next.access_jti,
            access_expires_at: next.access_expires_at,
            issued_at: next.issued_at,
            expires_at: next.expires_at,
        })
    }
}

impl TryFrom<RefreshRow> for RefreshTokenRecord {
    type Error = Failure;
    fn try_from(row: RefreshRow) -> Result<Self, Failure> {
        Ok(RefreshTokenRecord {
            hash: row.hash,
            client_id: row.client_id.0.into(),
            family_id: row.family_id.0,
            scopes: ScopeSet::parse(&row.scopes).map_err(|e| corrupt("refresh_tokens.scopes", e))?,
            access_jti: row.access_jti.0,
            access_expires_at: row.access_expires_at.0,
            issued_at: row.issued_at.0,
            expires_at: row.expires_at.0,
        })
    }
}

/// `revocations.kind` of an access-token revocation.
pub(crate) const ACCESS_TOKEN: &str = "access_token";
/// `revocations.kind` of a client revocation.
pub(crate) const CLIENT: &str = "client";

#[derive(Debug, Clone, Queryable, Selectable, Insertable)]
#[diesel(table_name = revocations)]
#[diesel(treat_none_as_default_value = false)]
pub(crate) struct RevocationRow {
    pub id: DbUuid,
    pub kind: String,
    pub subject: DbUuid,
    pub expires_at: Option<DbTime>,
    pub created_at: DbTime,
}

impl From<&Revocation> for RevocationRow {
    fn from(r: &Revocation) -> Self {
        let (kind, subject, expires_at) = match r.kind {
            RevocationKind::AccessToken { jti, expires_at } => (ACCESS_TOKEN, jti, Some(expires_at)),
            RevocationKind::Client { client_id } => (CLIENT, client_id.0, None),
        };
        RevocationRow {
            id: DbUuid(r.id),
            kind: kind.to_owned(),
            subject: DbUuid(subject),
            expires_at: expires_at.map(DbTime),
            created_at: DbTime(r.created_at),
        }
    }
}

impl RevocationRow {
    /// A revocation recorded by the adapter itself (family reuse, disabled client).
    pub(crate) fn new(kind: RevocationKind, now: OffsetDateTime) -> Self {
        RevocationRow::from(&Revocation { id: Uuid::now_v7(), kind, created_at: now })
    }
}

impl TryFrom<RevocationRow> for Revocation {
    type Error = Failure;
    fn try_from(row: RevocationRow) -> Result<Self, Failure> {
        let kind = match (row.kind.as_str(), row.expires_at) {
            (ACCESS_TOKEN, Some(expires_at)) => {
                RevocationKind::AccessToken { jti: row.subject.0, expires_at: expires_at.0 }
            }
            (CLIENT, None) => RevocationKind::Client { client_id: row.subject.0.into() },
            (kind, _) => return Err(corrupt("revocations.kind", format!("`{kind}` with this expiry"))),
        };
        Ok(Revocation { id: row.id.0, kind, created_at: row.created_at.0 })
    }
}
