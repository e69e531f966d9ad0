//! Rows as stored, and their conversion to and from the domain and port types. Reading
//! a row back can fail when a stored value is one the domain no longer accepts: that is
//! reported as [`Failure::Corrupt`], never hidden.

use crate::error::Failure;
use crate::schema::{
    api_clients, audit_events, idempotency_keys, missions, refresh_tokens, revocations, signing_keys,
};
use crate::sql_types::{DbTime, DbUuid};
use consular_domain::{ApiClient, AuditEventId, AuditRecord, Mission, PrincipalKind, ScopeSet, Subject};
use consular_ports::{
    IdempotencyRecord, RefreshReplacement, RefreshTokenRecord, Revocation, RevocationKind, SigningKeyRecord,
    StoredResponse,
};
use diesel::prelude::*;
use time::OffsetDateTime;
use uuid::Uuid;

fn corrupt(what: &str, error: impl std::fmt::Display) -> Failure {
    Failure::Corrupt(format!("{what}: {error}"))
}

#[derive(Debug, Clone, Queryable, Selectable, Insertable, AsChangeset)]
#[diesel(table_name = missions)]
pub(crate) struct MissionRow {
    pub id: DbUuid,
    pub code: String,
    pub name: String,
    pub country: String,
    pub city: String,
    pub timezone: String,
    pub version: i64,
    pub created_at: DbTime,
    pub updated_at: DbTime,
}

impl From<&Mission> for MissionRow {
    fn from(m: &Mission) -> Self {
        MissionRow {
            id: DbUuid(m.id.0),
            code: m.code.clone(),
            name: m.name.clone(),
            country: m.country.clone(),
            city: m.city.clone(),
            timezone: m.timezone.clone(),
            version: m.version,
            created_at: DbTime(m.created_at),
            updated_at: DbTime(m.updated_at),
        }
    }
}

impl From<MissionRow> for Mission {
    fn from(row: MissionRow) -> Self {
        Mission {
            id: row.id.0.into(),
            code: row.code,
            name: row.name,
            country: row.country,
            city: row.city,
            timezone: row.timezone,
            version: row.version,
            created_at: row.created_at.0,
            updated_at: row.updated_at.0,
        }
    }
}

#[derive(Debug, Clone, Queryable, Selectable, Insertable, AsChangeset)]
#[diesel(table_name = api_clients)]
// Without this, a client moved out of its mission (`None`) would keep the old mission_id.
#[diesel(treat_none_as_null = true)]
pub(crate) struct ClientRow {
    pub id: DbUuid,
    pub name: String,
    pub principal_kind: String,
    pub principal_id: DbUuid,
    pub mission_id: Option<DbUuid>,
    pub scopes: String,
    pub secret_hash: Vec<u8>,
    pub status: String,
    pub version: i64,
    pub created_at: DbTime,
    pub updated_at: DbTime,
}

impl From<&ApiClient> for ClientRow {
    fn from(c: &ApiClient) -> Self {
        ClientRow {
            id: DbUuid(c.id.0),
            name: c.name.clone(),
            principal_kind: c.subject.kind.as_str().to_owned(),
            principal_id: DbUuid(c.subject.id.0),
            mission_id: c.mission.map(|m| DbUuid(m.0)),
            scopes: c.scopes.to_string(),
            secret_hash: c.secret_hash.clone(),
            status: c.status.as_str().to_owned(),
            version: c.version,
            created_at: DbTime(c.created_at),
            updated_at: DbTime(c.updated_at),
        }
    }
}

impl TryFrom<ClientRow> for ApiClient {
    type Error = Failure;
    fn try_from(row: ClientRow) -> Result<Self, Failure> {
        Ok(ApiClient {
            id: row.id.0.into(),
            name: row.name,
            subject: Subject {
                kind: row.principal_kind.parse().map_err(|e| corrupt("api_clients.principal_kind", e))?,
                id: row.principal_id.0.into(),
            },
            mission: row.mission_id.map(|m| m.0.into()),
            scopes: ScopeSet::parse(&row.scopes).map_err(|e| corrupt("api_clients.scopes", e))?,
            secret_hash: row.secret_hash,
            status: row.status.parse().map_err(|e| corrupt("api_clients.status", e))?,
            version: row.version,
            created_at: row.created_at.0,
            updated_at: row.updated_at.0,
        })
    }
}

#[derive(Debug, Clone, Queryable, Selectable, Insertable)]
#[diesel(table_name = refresh_tokens)]
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

#[derive(Debug, Clone, Queryable, Selectable, Insertable)]
#[diesel(table_name = idempotency_keys)]
pub(crate) struct IdempotencyRow {
    pub owner: DbUuid,
    pub key: String,
    pub fingerprint: String,
    pub status: i32,
    pub headers: String,
    pub body: String,
    pub created_at: DbTime,
    pub expires_at: DbTime,
}

impl TryFrom<&IdempotencyRecord> for IdempotencyRow {
    type Error = Failure;
    fn try_from(r: &IdempotencyRecord) -> Result<Self, Failure> {
        Ok(IdempotencyRow {
            owner: DbUuid(r.owner.0),
            key: r.key.clone(),
            fingerprint: r.fingerprint.clone(),
            status: i32::from(r.response.status),
            headers: serde_json::to_string(&r.response.headers)
                .map_err(|e| corrupt("idempotency headers", e))?,
            body: r.response.body.clone(),
            created_at: DbTime(r.created_at),
            expires_at: DbTime(r.expires_at),
        })
    }
}

impl TryFrom<IdempotencyRow> for IdempotencyRecord {
    type Error = Failure;
    fn try_from(row: IdempotencyRow) -> Result<Self, Failure> {
        Ok(IdempotencyRecord {
            owner: row.owner.0.into(),
            key: row.key,
            fingerprint: row.fingerprint,
            response: StoredResponse {
                status: u16::try_from(row.status).map_err(|e| corrupt("idempotency_keys.status", e))?,
                headers: serde_json::from_str(&row.headers)
                    .map_err(|e| corrupt("idempotency_keys.headers", e))?,
                body: row.body,
            },
            created_at: row.created_at.0,
            expires_at: row.expires_at.0,
        })
    }
}

#[derive(Debug, Clone, Queryable, Selectable, Insertable)]
#[diesel(table_name = audit_events)]
pub(crate) struct AuditRow {
    pub id: DbUuid,
    pub at: DbTime,
    pub actor_kind: Option<String>,
    pub actor_id: Option<DbUuid>,
    pub client_id: Option<DbUuid>,
    pub action: String,
    pub resource_type: String,
    pub resource_id: DbUuid,
    pub changed_fields: String,
}

impl TryFrom<&AuditRecord> for AuditRow {
    type Error = Failure;
    fn try_from(r: &AuditRecord) -> Result<Self, Failure> {
        Ok(AuditRow {
            id: DbUuid(r.id.0),
            at: DbTime(r.at),
            actor_kind: r.actor.map(|s| s.kind.as_str().to_owned()),
            actor_id: r.actor.map(|s| DbUuid(s.id.0)),
            client_id: r.client_id.map(|c| DbUuid(c.0)),
            action: r.action.clone(),
            resource_type: r.resource_type.clone(),
            resource_id: DbUuid(r.resource_id),
            changed_fields: serde_json::to_string(&r.changed_fields)
                .map_err(|e| corrupt("changed fields", e))?,
        })
    }
}

impl TryFrom<AuditRow> for AuditRecord {
    type Error = Failure;
    fn try_from(row: AuditRow) -> Result<Self, Failure> {
        let actor = match (row.actor_kind, row.actor_id) {
            (Some(kind), Some(id)) => Some(Subject {
                kind: kind.parse::<PrincipalKind>().map_err(|e| corrupt("audit_events.actor_kind", e))?,
                id: id.0.into(),
            }),
            _ => None,
        };
        Ok(AuditRecord {
            id: AuditEventId(row.id.0),
            at: row.at.0,
            actor,
            client_id: row.client_id.map(|c| c.0.into()),
            action: row.action,
            resource_type: row.resource_type,
            resource_id: row.resource_id.0,
            changed_fields: serde_json::from_str(&row.changed_fields)
                .map_err(|e| corrupt("audit_events.changed_fields", e))?,
        })
    }
}

#[derive(Debug, Clone, Queryable, Selectable, Insertable)]
#[diesel(table_name = signing_keys)]
pub(crate) struct SigningKeyRow {
    pub kid: String,
    pub private_pkcs8: Vec<u8>,
    pub public_key: Vec<u8>,
    pub created_at: DbTime,
}

impl From<&SigningKeyRecord> for SigningKeyRow {
    fn from(k: &SigningKeyRecord) -> Self {
        SigningKeyRow {
            kid: k.kid.clone(),
            private_pkcs8: k.private_pkcs8.clone(),
            public_key: k.public_key.clone(),
            created_at: DbTime(k.created_at),
        }
    }
}

impl From<SigningKeyRow> for SigningKeyRecord {
    fn from(row: SigningKeyRow) -> Self {
        SigningKeyRecord {
            kid: row.kid,
            private_pkcs8: row.private_pkcs8,
            public_key: row.public_key,
            created_at: row.created_at.0,
        }
    }
}
