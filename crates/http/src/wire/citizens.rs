//! The wire of `/api/v1/citizens`: a citizen's profile and registration, the bodies that
//! register and update one, the list parameters, and the problems these operations
//! document.

use crate::wire::common::{IssuedClientBody, iso_date, problem_response, wire_enum};
use consular_application::clients::IssuedClient;
use consular_domain::{
    Address, Citizen, CitizenChanges, EmergencyContact, MissionId, NewCitizen, RegistrationStatus,
};
use serde::{Deserialize, Serialize};
use time::{Date, OffsetDateTime};
use utoipa::{IntoParams, ToSchema};
use uuid::Uuid;

wire_enum!(RegistrationStatusName mirrors RegistrationStatus { Pending, Active, Deregistered, Erased });

#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct AddressBody {
    #[schema(
        min_length = 1,
        max_length = 200,
        pattern = r"^[^\s\x00-\x1f\x7f-\x9f](?:[^\x00-\x1f\x7f-\x9f]*[^\s\x00-\x1f\x7f-\x9f])?$"
    )]
    pub line1: String,
    #[schema(
        min_length = 1,
        max_length = 200,
        pattern = r"^[^\s\x00-\x1f\x7f-\x9f](?:[^\x00-\x1f\x7f-\x9f]*[^\s\x00-\x1f\x7f-\x9f])?$"
    )]
    pub line2: Option<String>,
    #[schema(
        min_length = 1,
        max_length = 100,
        pattern = r"^[^\s\x00-\x1f\x7f-\x9f](?:[^\x00-\x1f\x7f-\x9f]*[^\s\x00-\x1f\x7f-\x9f])?$"
    )]
    pub city: String,
    #[schema(
        min_length = 1,
        max_length = 100,
        pattern = r"^[^\s\x00-\x1f\x7f-\x9f](?:[^\x00-\x1f\x7f-\x9f]*[^\s\x00-\x1f\x7f-\x9f])?$"
    )]
    pub region: Option<String>,
    #[schema(
        min_length = 1,
        max_length = 20,
        pattern = r"^[^\s\x00-\x1f\x7f-\x9f](?:[^\x00-\x1f\x7f-\x9f]*[^\s\x00-\x1f\x7f-\x9f])?$"
    )]
    pub postal_code: Option<String>,
    /// ISO 3166-1 alpha-2.
    #[schema(pattern = "^[A-Z]{2}$")]
    pub country: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct EmergencyContactBody {
    #[schema(
        min_length = 1,
        max_length = 200,
        pattern = r"^[^\s\x00-\x1f\x7f-\x9f](?:[^\x00-\x1f\x7f-\x9f]*[^\s\x00-\x1f\x7f-\x9f])?$"
    )]
    pub name: String,
    /// E.164.
    #[schema(pattern = r"^\+[1-9][0-9]{7,14}$", example = "+33612345678")]
    pub phone: String,
    #[schema(
        min_length = 1,
        max_length = 100,
        pattern = r"^[^\s\x00-\x1f\x7f-\x9f](?:[^\x00-\x1f\x7f-\x9f]*[^\s\x00-\x1f\x7f-\x9f])?$"
    )]
    pub relationship: String,
}

impl From<AddressBody> for Address {
    fn from(a: AddressBody) -> Self {
        Address {
            line1: a.line1,
            line2: a.line2,
            city: a.city,
            region: a.region,
            postal_code: a.postal_code,
            country: a.country,
        }
    }
}

impl From<&Address> for AddressBody {
    fn from(a: &Address) -> Self {
        AddressBody {
            line1: a.line1.clone(),
            line2: a.line2.clone(),
            city: a.city.clone(),
            region: a.region.clone(),
            postal_code: a.postal_code.clone(),
            country: a.country.clone(),
        }
    }
}

impl From<EmergencyContactBody> for EmergencyContact {
    fn from(c: EmergencyContactBody) -> Self {
        EmergencyContact { name: c.name, phone: c.phone, relationship: c.relationship }
    }
}

impl From<&EmergencyContact> for EmergencyContactBody {
    fn from(c: &EmergencyContact) -> Self {
        EmergencyContactBody {
            name: c.name.clone(),
            phone: c.phone.clone(),
            relationship: c.relationship.clone(),
        }
    }
}

/// The registration of a citizen with their mission.
#[derive(Debug, Serialize, ToSchema)]
pub struct RegistrationBody {
    pub status: RegistrationStatusName,
    #[serde(with = "time::serde::rfc3339")]
    #[schema(value_type = String, format = DateTime)]
    pub registered_at: OffsetDateTime,
    #[serde(with = "time::serde::rfc3339::option")]
    #[schema(value_type = Option<String>, format = DateTime)]
    pub activated_at: Option<OffsetDateTime>,
    #[serde(with = "time::serde::rfc3339::option")]
    #[schema(value_type = Option<String>, format = DateTime)]
    pub deregistered_at: Option<OffsetDateTime>,
}

/// A citizen's full profile with registration details.
#[derive(Debug, Serialize, ToSchema)]
pub struct CitizenBody {
    pub id: Uuid,
    pub mission_id: Uuid,
    pub given_name: String,
    pub family_name: String,
    #[serde(with = "iso_date")]
    #[schema(value_type = String, format = Date)]
    pub date_of_birth: Date,
    pub place_of_birth: String,
    pub nationality: String,
    pub passport_number: String,
    #[serde(with = "iso_date")]
    #[schema(value_type = String, format = Date)]
    pub passport_expiry: Date,
    pub email: String,
    pub phone: String,
    pub address: AddressBody,
    pub emergency_contact: Option<EmergencyContactBody>,
    pub preferred_language: String,
    pub registration: RegistrationBody,
    #[serde(with = "time::serde::rfc3339")]
    #[schema(value_type = String, format = DateTime)]
    pub created_at: OffsetDateTime,
    #[serde(with = "time::serde::rfc3339")]
    #[schema(value_type = String, format = DateTime)]
    pub updated_at: OffsetDateTime,
    /// Only in the registration response, when `issue_client` was set.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub client: Option<IssuedClientBody>,
}

impl CitizenBody {
    /// `issued`: the client created with the citizen, in the registration response only.
    pub fn new(c: &Citizen, issued: Option<&IssuedClient>) -> Self {
        CitizenBody {
            id: c.id.as_uuid(),
            mission_id: c.mission_id.as_uuid(),
            given_name: c.given_name.clone(),
            family_name: c.family_name.clone(),
            date_of_birth: c.date_of_birth,
            place_of_birth: c.place_of_birth.clone(),
            nationality: c.nationality.clone(),
            passport_number: c.passport_number.clone(),
            passport_expiry: c.passport_expiry,
            email: c.email.clone(),
            phone: c.phone.clone(),
            address: AddressBody::from(&c.address),
            emergency_contact: c.emergency_contact.as_ref().map(EmergencyContactBody::from),
            preferred_language: c.preferred_language.clone(),
            registration: RegistrationBody {
                status: c.registration_status.into(),
                registered_at: c.registered_at,
                activated_at: c.activated_at,
                deregistered_at: c.deregistered_at,
            },
            created_at: c.created_at,
            updated_at: c.updated_at,
            client: issued.map(IssuedClientBody::from),
        }
    }
}

#[derive(Debug, Serialize, ToSchema)]
pub struct CitizenList {
    pub items: Vec<CitizenBody>,
    pub next_cursor: Option<String>,
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct RegisterCitizen {
    pub mission_id: Uuid,
    #[schema(
        min_length = 1,
        max_length = 100,
        pattern = r"^[^\s\x00-\x1f\x7f-\x9f](?:[^\x00-\x1f\x7f-\x9f]*[^\s\x00-\x1f\x7f-\x9f])?$"
    )]
    pub given_name: String,
    #[schema(
        min_length = 1,
        max_length = 100,
        pattern = r"^[^\s\x00-\x1f\x7f-\x9f](?:[^\x00-\x1f\x7f-\x9f]*[^\s\x00-\x1f\x7f-\x9f])?$"
    )]
    pub family_name: String,
    #[serde(with = "iso_date")]
    #[schema(value_type = String, format = Date)]
    pub date_of_birth: Date,
    #[schema(
        min_length = 1,
        max_length = 200,
        pattern = r"^[^\s\x00-\x1f\x7f-\x9f](?:[^\x00-\x1f\x7f-\x9f]*[^\s\x00-\x1f\x7f-\x9f])?$"
    )]
    pub place_of_birth: String,
    /// ISO 3166-1 alpha-2.
    #[schema(pattern = "^[A-Z]{2}$")]
    pub nationality: String,
    /// Unique within the mission.
    #[schema(pattern = "^[A-Z0-9]{5,20}$", example = "19AB12345")]
    pub passport_number: String,
    #[serde(with = "iso_date")]
    #[schema(value_type = String, format = Date)]
    pub passport_expiry: Date,
    #[schema(format = Email, max_length = 254)]
    pub email: String,
    /// E.164.
    #[schema(pattern = r"^\+[1-9][0-9]{7,14}$", example = "+33612345678")]
    pub phone: String,
    pub address: AddressBody,
    pub emergency_contact: Option<EmergencyContactBody>,
    /// BCP 47, e.g. `fr` or `en-GB`.
    #[schema(pattern = "^[a-z]{2,3}(-[A-Z]{2})?$", example = "fr")]
    pub preferred_language: String,
    /// `pending` by default.
    pub registration_status: Option<RegistrationStatusName>,
    /// Also create the citizen's API client (scope `citizen`) and return its
    /// credentials once.
    #[serde(default)]
    pub issue_client: bool,
}

/// Fields to change; absent fields stay. A citizen may send only `email`, `phone`,
/// `address`, `emergency_contact` (null removes it) and `preferred_language`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct UpdateCitizen {
    #[schema(
        min_length = 1,
        max_length = 100,
        pattern = r"^[^\s\x00-\x1f\x7f-\x9f](?:[^\x00-\x1f\x7f-\x9f]*[^\s\x00-\x1f\x7f-\x9f])?$"
    )]
    pub given_name: Option<String>,
    #[schema(
        min_length = 1,
        max_length = 100,
        pattern = r"^[^\s\x00-\x1f\x7f-\x9f](?:[^\x00-\x1f\x7f-\x9f]*[^\s\x00-\x1f\x7f-\x9f])?$"
    )]
    pub family_name: Option<String>,
    #[serde(default, with = "iso_date::option")]
    #[schema(value_type = Option<String>, format = Date)]
    pub date_of_birth: Option<Date>,
    #[schema(
        min_length = 1,
        max_length = 200,
        pattern = r"^[^\s\x00-\x1f\x7f-\x9f](?:[^\x00-\x1f\x7f-\x9f]*[^\s\x00-\x1f\x7f-\x9f])?$"
    )]
    pub place_of_birth: Option<String>,
    #[schema(pattern = "^[A-Z]{2}$")]
    pub nationality: Option<String>,
    #[schema(pattern = "^[A-Z0-9]{5,20}$")]
    pub passport_number: Option<String>,
    #[serde(default, with = "iso_date::option")]
    #[schema(value_type = Option<String>, format = Date)]
    pub passport_expiry: Option<Date>,
    #[schema(format = Email, max_length = 254)]
    pub email: Option<String>,
    #[schema(pattern = r"^\+[1-9][0-9]{7,14}$")]
    pub phone: Option<String>,
    pub address: Option<AddressBody>,
    #[serde(default, deserialize_with = "crate::wire::common::present")]
    #[schema(value_type = Option<EmergencyContactBody>)]
    pub emergency_contact: Option<Option<EmergencyContactBody>>,
    #[schema(pattern = "^[a-z]{2,3}(-[A-Z]{2})?$")]
    pub preferred_language: Option<String>,
    pub registration_status: Option<RegistrationStatusName>,
}

#[derive(Debug, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct CitizenListParams {
    /// Page size, 1 to 100 (default 20).
    #[param(minimum = 1, maximum = 100)]
    pub limit: Option<i64>,
    /// The `next_cursor` of the previous page.
    #[param(min_length = 22, max_length = 22, pattern = "^[A-Za-z0-9_-]{22}$")]
    pub cursor: Option<String>,
    pub mission_id: Option<Uuid>,
    #[param(inline)]
    pub registration_status: Option<RegistrationStatusName>,
    /// ISO 3166-1 alpha-2.
    #[param(pattern = "^[A-Z]{2}$")]
    pub nationality: Option<String>,
    /// Part of the given name, family name or email (case-insensitive).
    #[param(min_length = 1, max_length = 100)]
    pub q: Option<String>,
    /// Registered at or after this instant (RFC 3339).
    #[serde(default, with = "time::serde::rfc3339::option")]
    #[param(value_type = Option<String>, format = DateTime)]
    pub registered_from: Option<OffsetDateTime>,
    /// Registered before this instant (RFC 3339).
    #[serde(default, with = "time::serde::rfc3339::option")]
    #[param(value_type = Option<String>, format = DateTime)]
    pub registered_to: Option<OffsetDateTime>,
}

/// The citizen to register; `issue_client` is read apart.
impl From<RegisterCitizen> for NewCitizen {
    fn from(input: RegisterCitizen) -> Self {
        NewCitizen {
            mission_id: MissionId(input.mission_id),
            given_name: input.given_name,
            family_name: input.family_name,
            date_of_birth: input.date_of_birth,
            place_of_birth: input.place_of_birth,
            nationality: input.nationality,
            passport_number: input.passport_number,
            passport_expiry: input.passport_expiry,
            email: input.email,
            phone: input.phone,
            address: input.address.into(),
            emergency_contact: input.emergency_contact.map(Into::into),
            preferred_language: input.preferred_language,
            registration_status: input.registration_status.map_or(RegistrationStatus::Pending, Into::into),
        }
    }
}

impl From<UpdateCitizen> for CitizenChanges {
    fn from(input: UpdateCitizen) -> Self {
        CitizenChanges {
            given_name: input.given_name,
            family_name: input.family_name,
            date_of_birth: input.date_of_birth,
            place_of_birth: input.place_of_birth,
            nationality: input.nationality,
            passport_number: input.passport_number,
            passport_expiry: input.passport_expiry,
            email: input.email,
            phone: input.phone,
            address: input.address.map(Into::into),
            emergency_contact: input.emergency_contact.map(|c| c.map(Into::into)),
            preferred_language: input.preferred_language,
            registration_status: input.registration_status.map(Into::into),
        }
    }
}

problem_response! {
    /// 409 of a registration.
    RegisterConflict = 409, "The passport number is already registered with the mission, or the Idempotency-Key is in use";
    /// 409 of an update.
    PassportTaken = 409, "The passport number is already registered with the mission";
    /// 412 of an update.
    ProfileChanged = 412, "The profile changed since you read it";
}
