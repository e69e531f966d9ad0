//! Rows as stored, and their conversion to and from the domain and port types. Reading
//! a row back can fail when a stored value is one the domain no longer accepts: that is
//! reported as [`Failure::Corrupt`], never hidden.

use crate::error::Failure;
use crate::schema::{
    api_clients, audit_events, citizens, idempotency_keys, missions, outbox_events, refresh_tokens,
    request_history, request_messages, request_notes, revocations, service_requests, service_types,
    signing_keys, staff_assignments, staff_members,
};
use crate::sql_types::{DbDate, DbJson, DbTime, DbUuid};
use consular_domain::{
    Address, ApiClient, AuditEventId, AuditRecord, Citizen, EmergencyContact, HistoryEntry, Mission, Money,
    PrincipalKind, RequestId, RequestStatus, ScopeSet, ServiceRequest, ServiceType, ServiceTypeId,
    StaffMember, Stage, Subject,
};
use consular_ports::{
    IdempotencyRecord, Message, Note, OutboxEvent, RefreshReplacement, RefreshTokenRecord, Revocation,
    RevocationKind, SigningKeyRecord, StoredResponse,
};
use diesel::prelude::*;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
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

// ---------------------------------------------------------------- JSON columns
//
// JSON columns hold the private `*Doc` mirrors below, never a domain type's own serde
// form: the stored shape changes only when this file says so.

fn to_json(what: &str, value: &impl Serialize) -> Result<DbJson, Failure> {
    serde_json::to_value(value).map(DbJson).map_err(|e| corrupt(what, e))
}

fn from_json<T: DeserializeOwned>(what: &str, json: DbJson) -> Result<T, Failure> {
    serde_json::from_value(json.0).map_err(|e| corrupt(what, e))
}

/// One element of `service_types.stages`.
#[derive(Serialize, Deserialize)]
struct StageDoc {
    name: String,
    description: String,
}

impl From<&Stage> for StageDoc {
    fn from(s: &Stage) -> Self {
        StageDoc { name: s.name.clone(), description: s.description.clone() }
    }
}

impl From<StageDoc> for Stage {
    fn from(doc: StageDoc) -> Self {
        Stage { name: doc.name, description: doc.description }
    }
}

/// `citizens.address`.
#[derive(Serialize, Deserialize)]
struct AddressDoc {
    line1: String,
    line2: Option<String>,
    city: String,
    region: Option<String>,
    postal_code: Option<String>,
    country: String,
}

impl From<&Address> for AddressDoc {
    fn from(a: &Address) -> Self {
        AddressDoc {
            line1: a.line1.clone(),
            line2: a.line2.clone(),
            city: a.city.clone(),
            region: a.region.clone(),
            postal_code: a.postal_code.clone(),
            country: a.country.clone(),
        }
    }
}

impl From<AddressDoc> for Address {
    fn from(doc: AddressDoc) -> Self {
        Address {
            line1: doc.line1,
            line2: doc.line2,
            city: doc.city,
            region: doc.region,
            postal_code: doc.postal_code,
            country: doc.country,
        }
    }
}

/// `citizens.emergency_contact` (SQL NULL when there is none).
#[derive(Serialize, Deserialize)]
struct EmergencyContactDoc {
    name: String,
    phone: String,
    relationship: String,
}

impl From<&EmergencyContact> for EmergencyContactDoc {
    fn from(c: &EmergencyContact) -> Self {
        EmergencyContactDoc {
            name: c.name.clone(),
            phone: c.phone.clone(),
            relationship: c.relationship.clone(),
        }
    }
}

impl From<EmergencyContactDoc> for EmergencyContact {
    fn from(doc: EmergencyContactDoc) -> Self {
        EmergencyContact { name: doc.name, phone: doc.phone, relationship: doc.relationship }
    }
}

// ---------------------------------------------------------------- reference data

#[derive(Debug, Clone, Queryable, Selectable, Insertable, AsChangeset)]
#[diesel(table_name = service_types)]
pub(crate) struct ServiceTypeRow {
    pub id: DbUuid,
    pub code: String,
    pub name: String,
    pub description: String,
    pub fee_amount_minor: i64,
    pub fee_currency: String,
    pub sla_days: i32,
    pub required_documents: DbJson,
    pub stages: DbJson,
    pub active: bool,
    pub version: i64,
    pub created_at: DbTime,
    pub updated_at: DbTime,
}

impl TryFrom<&ServiceType> for ServiceTypeRow {
    type Error = Failure;
    fn try_from(t: &ServiceType) -> Result<Self, Failure> {
        let stages: Vec<StageDoc> = t.stages.iter().map(StageDoc::from).collect();
        Ok(ServiceTypeRow {
            id: DbUuid(t.id.0),
            code: t.code.clone(),
            name: t.name.clone(),
            description: t.description.clone(),
            fee_amount_minor: t.fee.amount_minor,
            fee_currency: t.fee.currency.clone(),
            sla_days: t.sla_days,
            required_documents: to_json("required documents", &t.required_documents)?,
            stages: to_json("stages", &stages)?,
            active: t.active,
            version: t.version,
            created_at: DbTime(t.created_at),
            updated_at: DbTime(t.updated_at),
        })
    }
}

impl TryFrom<ServiceTypeRow> for ServiceType {
    type Error = Failure;
    fn try_from(row: ServiceTypeRow) -> Result<Self, Failure> {
        let stages: Vec<StageDoc> = from_json("service_types.stages", row.stages)?;
        Ok(ServiceType {
            id: row.id.0.into(),
            code: row.code,
            name: row.name,
            description: row.description,
            fee: Money { amount_minor: row.fee_amount_minor, currency: row.fee_currency },
            sla_days: row.sla_days,
            required_documents: from_json("service_types.required_documents", row.required_documents)?,
            stages: stages.into_iter().map(Stage::from).collect(),
            active: row.active,
            version: row.version,
            created_at: row.created_at.0,
            updated_at: row.updated_at.0,
        })
    }
}

#[derive(Debug, Clone, Queryable, Selectable, Insertable, AsChangeset)]
#[diesel(table_name = citizens)]
// Without this, removing the emergency contact (`None`) would keep the old one.
#[diesel(treat_none_as_null = true)]
pub(crate) struct CitizenRow {
    pub id: DbUuid,
    pub mission_id: DbUuid,
    pub given_name: String,
    pub family_name: String,
    pub date_of_birth: DbDate,
    pub place_of_birth: String,
    pub nationality: String,
    pub passport_number: String,
    pub passport_expiry: DbDate,
    pub email: String,
    pub phone: String,
    pub address: DbJson,
    pub emergency_contact: Option<DbJson>,
    pub preferred_language: String,
    pub registration_status: String,
    pub registered_at: DbTime,
    pub activated_at: Option<DbTime>,
    pub deregistered_at: Option<DbTime>,
    pub version: i64,
    pub created_at: DbTime,
    pub updated_at: DbTime,
}

impl TryFrom<&Citizen> for CitizenRow {
    type Error = Failure;
    fn try_from(c: &Citizen) -> Result<Self, Failure> {
        Ok(CitizenRow {
            id: DbUuid(c.id.0),
            mission_id: DbUuid(c.mission_id.0),
            given_name: c.given_name.clone(),
            family_name: c.family_name.clone(),
            date_of_birth: DbDate(c.date_of_birth),
            place_of_birth: c.place_of_birth.clone(),
            nationality: c.nationality.clone(),
            passport_number: c.passport_number.clone(),
            passport_expiry: DbDate(c.passport_expiry),
            email: c.email.clone(),
            phone: c.phone.clone(),
            address: to_json("address", &AddressDoc::from(&c.address))?,
            emergency_contact: c
                .emergency_contact
                .as_ref()
                .map(|e| to_json("emergency contact", &EmergencyContactDoc::from(e)))
                .transpose()?,
            preferred_language: c.preferred_language.clone(),
            registration_status: c.registration_status.as_str().to_owned(),
            registered_at: DbTime(c.registered_at),
            activated_at: c.activated_at.map(DbTime),
            deregistered_at: c.deregistered_at.map(DbTime),
            version: c.version,
            created_at: DbTime(c.created_at),
            updated_at: DbTime(c.updated_at),
        })
    }
}

impl TryFrom<CitizenRow> for Citizen {
    type Error = Failure;
    fn try_from(row: CitizenRow) -> Result<Self, Failure> {
        let address: AddressDoc = from_json("citizens.address", row.address)?;
        let emergency_contact: Option<EmergencyContactDoc> =
            row.emergency_contact.map(|e| from_json("citizens.emergency_contact", e)).transpose()?;
        Ok(Citizen {
            id: row.id.0.into(),
            mission_id: row.mission_id.0.into(),
            given_name: row.given_name,
            family_name: row.family_name,
            date_of_birth: row.date_of_birth.0,
            place_of_birth: row.place_of_birth,
            nationality: row.nationality,
            passport_number: row.passport_number,
            passport_expiry: row.passport_expiry.0,
            email: row.email,
            phone: row.phone,
            address: address.into(),
            emergency_contact: emergency_contact.map(EmergencyContact::from),
            preferred_language: row.preferred_language,
            registration_status: row
                .registration_status
                .parse()
                .map_err(|e| corrupt("citizens.registration_status", e))?,
            registered_at: row.registered_at.0,
            activated_at: row.activated_at.map(|t| t.0),
            deregistered_at: row.deregistered_at.map(|t| t.0),
            version: row.version,
            created_at: row.created_at.0,
            updated_at: row.updated_at.0,
        })
    }
}

/// A staff member without their assignments (`staff_assignments`, see [`AssignmentRow`]).
#[derive(Debug, Clone, Queryable, Selectable, Insertable, AsChangeset)]
#[diesel(table_name = staff_members)]
pub(crate) struct StaffRow {
    pub id: DbUuid,
    pub mission_id: DbUuid,
    pub name: String,
    pub email: String,
    pub job_title: String,
    pub active: bool,
    pub version: i64,
    pub created_at: DbTime,
    pub updated_at: DbTime,
}

impl From<&StaffMember> for StaffRow {
    fn from(m: &StaffMember) -> Self {
        StaffRow {
            id: DbUuid(m.id.0),
            mission_id: DbUuid(m.mission_id.0),
            name: m.name.clone(),
            email: m.email.clone(),
            job_title: m.job_title.clone(),
            active: m.active,
            version: m.version,
            created_at: DbTime(m.created_at),
            updated_at: DbTime(m.updated_at),
        }
    }
}

impl StaffRow {
    /// The member, with their service types in assignment order.
    pub(crate) fn into_member(self, service_type_ids: Vec<ServiceTypeId>) -> StaffMember {
        StaffMember {
            id: self.id.0.into(),
            mission_id: self.mission_id.0.into(),
            name: self.name,
            email: self.email,
            job_title: self.job_title,
            active: self.active,
            service_type_ids,
            version: self.version,
            created_at: self.created_at.0,
            updated_at: self.updated_at.0,
        }
    }
}

#[derive(Debug, Clone, Queryable, Selectable, Insertable)]
#[diesel(table_name = staff_assignments)]
pub(crate) struct AssignmentRow {
    pub staff_id: DbUuid,
    pub service_type_id: DbUuid,
    /// The index in `StaffMember::service_type_ids`.
    pub position: i32,
}

impl AssignmentRow {
    /// One row per service type of `member`, numbered in order.
    pub(crate) fn all_of(member: &StaffMember) -> Vec<AssignmentRow> {
        (0..)
            .zip(&member.service_type_ids)
            .map(|(position, service_type)| AssignmentRow {
                staff_id: DbUuid(member.id.0),
                service_type_id: DbUuid(service_type.0),
                position,
            })
            .collect()
    }
}

// ---------------------------------------------------------------- outbox

#[derive(Debug, Clone, Queryable, Selectable, Insertable)]
#[diesel(table_name = outbox_events)]
pub(crate) struct OutboxRow {
    pub id: DbUuid,
    pub kind: String,
    pub aggregate_id: DbUuid,
    pub payload: DbJson,
    pub created_at: DbTime,
}

impl From<&OutboxEvent> for OutboxRow {
    fn from(e: &OutboxEvent) -> Self {
        OutboxRow {
            id: DbUuid(e.id),
            kind: e.kind.clone(),
            aggregate_id: DbUuid(e.aggregate_id),
            payload: DbJson(e.payload.clone()),
            created_at: DbTime(e.created_at),
        }
    }
}

impl From<OutboxRow> for OutboxEvent {
    fn from(row: OutboxRow) -> Self {
        OutboxEvent {
            id: row.id.0,
            kind: row.kind,
            aggregate_id: row.aggregate_id.0,
            payload: row.payload.0,
            created_at: row.created_at.0,
        }
    }
}

// ---------------------------------------------------------------- service requests

/// A stage index (`usize` in the domain) as an `integer` column.
fn stage_to_db(what: &str, stage: usize) -> Result<i32, Failure> {
    i32::try_from(stage).map_err(|e| corrupt(what, e))
}

fn stage_from_db(what: &str, stage: i32) -> Result<usize, Failure> {
    usize::try_from(stage).map_err(|e| corrupt(what, e))
}

fn status_from_db(what: &str, status: &str) -> Result<RequestStatus, Failure> {
    status.parse().map_err(|e| corrupt(what, e))
}

/// An actor or author stored as two columns, both NULL or neither (a CHECK says so).
fn subject_from_db(what: &str, kind: &str, id: DbUuid) -> Result<Subject, Failure> {
    Ok(Subject { kind: kind.parse::<PrincipalKind>().map_err(|e| corrupt(what, e))?, id: id.0.into() })
}

#[derive(Debug, Clone, Queryable, Selectable, Insertable, AsChangeset)]
#[diesel(table_name = service_requests)]
// Without this, an unassigned request (`None`) would keep its old assignee.
#[diesel(treat_none_as_null = true)]
pub(crate) struct RequestRow {
    pub id: DbUuid,
    pub mission_id: DbUuid,
    pub citizen_id: DbUuid,
    pub service_type_id: DbUuid,
    pub status: String,
    pub stages: DbJson,
    pub current_stage: i32,
    pub assignee_id: Option<DbUuid>,
    pub submitted_at: DbTime,
    pub sla_due_at: DbTime,
    pub closed_at: Option<DbTime>,
    pub version: i64,
    pub updated_at: DbTime,
}

impl TryFrom<&ServiceRequest> for RequestRow {
    type Error = Failure;
    fn try_from(r: &ServiceRequest) -> Result<Self, Failure> {
        let stages: Vec<StageDoc> = r.stages.iter().map(StageDoc::from).collect();
        Ok(RequestRow {
            id: DbUuid(r.id.0),
            mission_id: DbUuid(r.mission_id.0),
            citizen_id: DbUuid(r.citizen_id.0),
            service_type_id: DbUuid(r.service_type_id.0),
            status: r.status.as_str().to_owned(),
            stages: to_json("stages", &stages)?,
            current_stage: stage_to_db("current stage", r.current_stage)?,
            assignee_id: r.assignee_id.map(|s| DbUuid(s.0)),
            submitted_at: DbTime(r.submitted_at),
            sla_due_at: DbTime(r.sla_due_at),
            closed_at: r.closed_at.map(DbTime),
            version: r.version,
            updated_at: DbTime(r.updated_at),
        })
    }
}

impl TryFrom<RequestRow> for ServiceRequest {
    type Error = Failure;
    fn try_from(row: RequestRow) -> Result<Self, Failure> {
        let stages: Vec<StageDoc> = from_json("service_requests.stages", row.stages)?;
        Ok(ServiceRequest {
            id: row.id.0.into(),
            mission_id: row.mission_id.0.into(),
            citizen_id: row.citizen_id.0.into(),
            service_type_id: row.service_type_id.0.into(),
            status: status_from_db("service_requests.status", &row.status)?,
            stages: stages.into_iter().map(Stage::from).collect(),
            current_stage: stage_from_db("service_requests.current_stage", row.current_stage)?,
            assignee_id: row.assignee_id.map(|s| s.0.into()),
            submitted_at: row.submitted_at.0,
            sla_due_at: row.sla_due_at.0,
            closed_at: row.closed_at.map(|t| t.0),
            version: row.version,
            updated_at: row.updated_at.0,
        })
    }
}

/// A history entry without its id, which the database draws on insert (in insertion
/// order, the order entries are read back in).
#[derive(Debug, Clone, Queryable, Selectable, Insertable)]
#[diesel(table_name = request_history)]
pub(crate) struct HistoryRow {
    pub request_id: DbUuid,
    pub at: DbTime,
    pub actor_kind: Option<String>,
    pub actor_id: Option<DbUuid>,
    pub from_status: Option<String>,
    pub to_status: String,
    pub from_stage: Option<i32>,
    pub to_stage: i32,
    pub reason: Option<String>,
}

impl HistoryRow {
    pub(crate) fn new(request: RequestId, e: &HistoryEntry) -> Result<Self, Failure> {
        Ok(HistoryRow {
            request_id: DbUuid(request.0),
            at: DbTime(e.at),
            actor_kind: e.actor.map(|s| s.kind.as_str().to_owned()),
            actor_id: e.actor.map(|s| DbUuid(s.id.0)),
            from_status: e.from_status.map(|s| s.as_str().to_owned()),
            to_status: e.to_status.as_str().to_owned(),
            from_stage: e.from_stage.map(|s| stage_to_db("history stage", s)).transpose()?,
            to_stage: stage_to_db("history stage", e.to_stage)?,
            reason: e.reason.clone(),
        })
    }
}

impl TryFrom<HistoryRow> for HistoryEntry {
    type Error = Failure;
    fn try_from(row: HistoryRow) -> Result<Self, Failure> {
        let actor = match (row.actor_kind, row.actor_id) {
            (Some(kind), Some(id)) => Some(subject_from_db("request_history.actor_kind", &kind, id)?),
            _ => None,
        };
        Ok(HistoryEntry {
            at: row.at.0,
            actor,
            from_status: row
                .from_status
                .map(|s| status_from_db("request_history.from_status", &s))
                .transpose()?,
            to_status: status_from_db("request_history.to_status", &row.to_status)?,
            from_stage: row.from_stage.map(|s| stage_from_db("request_history.from_stage", s)).transpose()?,
            to_stage: stage_from_db("request_history.to_stage", row.to_stage)?,
            reason: row.reason,
        })
    }
}

/// `request_notes` and `request_messages` have the same shape; so do `Note` and `Message`.
macro_rules! thread_row {
    ($row:ident, $table:ident, $item:ident) => {
        #[derive(Debug, Clone, Queryable, Selectable, Insertable)]
        #[diesel(table_name = $table)]
        pub(crate) struct $row {
            pub id: DbUuid,
            pub request_id: DbUuid,
            pub author_kind: String,
            pub author_id: DbUuid,
            pub body: String,
            pub created_at: DbTime,
        }

        impl From<&$item> for $row {
            fn from(x: &$item) -> Self {
                $row {
                    id: DbUuid(x.id),
                    request_id: DbUuid(x.request_id.0),
                    author_kind: x.author.kind.as_str().to_owned(),
                    author_id: DbUuid(x.author.id.0),
                    body: x.body.clone(),
                    created_at: DbTime(x.created_at),
                }
            }
        }

        impl TryFrom<$row> for $item {
            type Error = Failure;
            fn try_from(row: $row) -> Result<Self, Failure> {
                Ok($item {
                    id: row.id.0,
                    request_id: row.request_id.0.into(),
                    author: subject_from_db(
                        concat!(stringify!($table), ".author_kind"),
                        &row.author_kind,
                        row.author_id,
                    )?,
                    body: row.body,
                    created_at: row.created_at.0,
                })
            }
        }
    };
}

thread_row!(NoteRow, request_notes, Note);
thread_row!(MessageRow, request_messages, Message);
