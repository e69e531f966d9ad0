//! Citizens: the `citizens` table, its row (with its JSON documents), and
//! [`CitizenRepository`].

use crate::failure::Failure;
use crate::shared::columns::{corrupt, from_json, to_json};
use crate::shared::repository;
use crate::shared::sql_types::{DbDate, DbJson, DbTime, DbUuid};
use consular_domain::{
    Address, ApiClient, Citizen, CitizenId, EmergencyContact, Page, PageRequest, RegistrationStatus,
};
use consular_ports::{CitizenFilter, CitizenRepository, WriteMeta};
use diesel::prelude::*;
use serde::{Deserialize, Serialize};

diesel::table! {
    use diesel::sql_types::*;
    use crate::shared::sql_types::{PortableDate, PortableJson, PortableTimestamp, PortableUuid};

    citizens (id) {
        id -> PortableUuid,
        mission_id -> PortableUuid,
        given_name -> Text,
        family_name -> Text,
        date_of_birth -> PortableDate,
        place_of_birth -> Text,
        nationality -> Text,
        passport_number -> Text,
        passport_expiry -> PortableDate,
        email -> Text,
        phone -> Text,
        address -> PortableJson,
        emergency_contact -> Nullable<PortableJson>,
        preferred_language -> Text,
        registration_status -> Text,
        registered_at -> PortableTimestamp,
        activated_at -> Nullable<PortableTimestamp>,
        deregistered_at -> Nullable<PortableTimestamp>,
        version -> BigInt,
        erased_at -> Nullable<PortableTimestamp>,
        created_at -> PortableTimestamp,
        updated_at -> PortableTimestamp,
    }
}

/// The unique constraints of `citizens` (see `crate::error`).
pub(crate) const UNIQUE_CONSTRAINTS: &[(&str, &str)] = &[
    ("citizens_pkey", "citizens.id"),
    ("citizens_passport", "citizens.mission_id, citizens.passport_number"),
];

repository! {
    impl CitizenRepository for Database => citizens {
        fn insert(citizen: &Citizen, client: Option<ApiClient>, meta: &WriteMeta);
        fn update(citizen: &Citizen, expected_version: i64, meta: &WriteMeta);
        fn get(id: CitizenId) -> Option<Citizen>;
        tolerant(consistency) fn list(filter: CitizenFilter, page: PageRequest) -> Page<Citizen>;
    }
}

#[derive(Debug, Clone, Queryable, Selectable, Insertable, AsChangeset)]
#[diesel(table_name = citizens)]
#[diesel(treat_none_as_default_value = false)]
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
    /// Set on an erased citizen, whose `registration_status` is stored `deregistered`
    /// (migration 000025 says why).
    pub erased_at: Option<DbTime>,
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
            registration_status: stored_status(c.registration_status).as_str().to_owned(),
            registered_at: DbTime(c.registered_at),
            activated_at: c.activated_at.map(DbTime),
            deregistered_at: c.deregistered_at.map(DbTime),
            version: c.version,
            erased_at: (c.registration_status == RegistrationStatus::Erased).then_some(DbTime(c.updated_at)),
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
            registration_status: match row.erased_at {
                Some(_) => RegistrationStatus::Erased,
                None => {
                    row.registration_status.parse().map_err(|e| corrupt("citizens.registration_status", e))?
                }
            },
            registered_at: row.registered_at.0,
            activated_at: row.activated_at.map(|t| t.0),
            deregistered_at: row.deregistered_at.map(|t| t.0),
            version: row.version,
            created_at: row.created_at.0,
            updated_at: row.updated_at.0,
        })
    }
}

/// The status stored in `registration_status`: an erased citizen's is `deregistered`,
/// with `erased_at` set.
pub(crate) fn stored_status(status: RegistrationStatus) -> RegistrationStatus {
    match status {
        RegistrationStatus::Erased => RegistrationStatus::Deregistered,
        other => other,
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
