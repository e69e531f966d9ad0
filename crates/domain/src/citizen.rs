//! Citizens: the people a mission serves, with their profile and their registration with
//! the mission.

use crate::rules;
use crate::validation::set;
use crate::{CitizenId, MissionId, ValidationErrors};
use std::fmt;
use std::str::FromStr;
use time::{Date, OffsetDateTime};
use validator::Validate;

/// Where a citizen's registration with their mission stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum RegistrationStatus {
    Pending,
    Active,
    Deregistered,
}

impl RegistrationStatus {
    pub const ALL: [RegistrationStatus; 3] =
        [RegistrationStatus::Pending, RegistrationStatus::Active, RegistrationStatus::Deregistered];

    pub fn as_str(self) -> &'static str {
        match self {
            RegistrationStatus::Pending => "pending",
            RegistrationStatus::Active => "active",
            RegistrationStatus::Deregistered => "deregistered",
        }
    }

    /// `pending → active | deregistered`, `active → deregistered`, `deregistered → active`
    /// (registering again).
    pub fn can_become(self, next: RegistrationStatus) -> bool {
        use RegistrationStatus::*;
        matches!(
            (self, next),
            (Pending, Active) | (Pending, Deregistered) | (Active, Deregistered) | (Deregistered, Active)
        )
    }

    pub fn allowed_next(self) -> Vec<RegistrationStatus> {
        Self::ALL.into_iter().filter(|next| self.can_become(*next)).collect()
    }
}

impl fmt::Display for RegistrationStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for RegistrationStatus {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::ALL
            .into_iter()
            .find(|v| v.as_str() == s)
            .ok_or_else(|| format!("unknown registration status `{s}`"))
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Validate, serde::Serialize, serde::Deserialize)]
pub struct Address {
    #[validate(length(min = 1, max = 200), custom(function = "rules::clean_text"))]
    pub line1: String,
    #[validate(length(min = 1, max = 200), custom(function = "rules::clean_text"))]
    pub line2: Option<String>,
    #[validate(length(min = 1, max = 100), custom(function = "rules::clean_text"))]
    pub city: String,
    #[validate(length(min = 1, max = 100), custom(function = "rules::clean_text"))]
    pub region: Option<String>,
    #[validate(length(min = 1, max = 20), custom(function = "rules::clean_text"))]
    pub postal_code: Option<String>,
    #[validate(custom(function = "rules::country"))]
    pub country: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Validate, serde::Serialize, serde::Deserialize)]
pub struct EmergencyContact {
    #[validate(length(min = 1, max = 200), custom(function = "rules::clean_text"))]
    pub name: String,
    #[validate(custom(function = "rules::e164"))]
    pub phone: String,
    #[validate(length(min = 1, max = 100), custom(function = "rules::clean_text"))]
    pub relationship: String,
}

#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Citizen {
    pub id: CitizenId,
    pub mission_id: MissionId,
    pub given_name: String,
    pub family_name: String,
    pub date_of_birth: Date,
    pub place_of_birth: String,
    /// ISO 3166-1 alpha-2.
    pub nationality: String,
    /// Unique within the mission.
    pub passport_number: String,
    pub passport_expiry: Date,
    pub email: String,
    /// E.164.
    pub phone: String,
    pub address: Address,
    pub emergency_contact: Option<EmergencyContact>,
    /// BCP 47, e.g. `fr` or `en-GB`.
    pub preferred_language: String,
    pub registration_status: RegistrationStatus,
    pub registered_at: OffsetDateTime,
    pub activated_at: Option<OffsetDateTime>,
    pub deregistered_at: Option<OffsetDateTime>,
    pub version: i64,
    pub created_at: OffsetDateTime,
    pub updated_at: OffsetDateTime,
}

fn passport_number_format(value: &str) -> Result<(), validator::ValidationError> {
    let valid = (5..=20).contains(&value.len())
        && value.bytes().all(|b| b.is_ascii_uppercase() || b.is_ascii_digit());
    if valid {
        Ok(())
    } else {
        Err(validator::ValidationError::new("invalid_passport_number")
            .with_message(std::borrow::Cow::Borrowed("must be 5 to 20 upper-case letters and digits")))
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Validate)]
pub struct NewCitizen {
    pub mission_id: MissionId,
    #[validate(length(min = 1, max = 100), custom(function = "rules::clean_text"))]
    pub given_name: String,
    #[validate(length(min = 1, max = 100), custom(function = "rules::clean_text"))]
    pub family_name: String,
    pub date_of_birth: Date,
    #[validate(length(min = 1, max = 200), custom(function = "rules::clean_text"))]
    pub place_of_birth: String,
    #[validate(custom(function = "rules::country"))]
    pub nationality: String,
    #[validate(custom(function = "passport_number_format"))]
    pub passport_number: String,
    pub passport_expiry: Date,
    #[validate(email, length(max = 254))]
    pub email: String,
    #[validate(custom(function = "rules::e164"))]
    pub phone: String,
    #[validate(nested)]
    pub address: Address,
    #[validate(nested)]
    pub emergency_contact: Option<EmergencyContact>,
    #[validate(custom(function = "rules::language"))]
    pub preferred_language: String,
    pub registration_status: RegistrationStatus,
}

/// The fields a citizen may change on their own profile.
pub const CONTACT_FIELDS: [&str; 5] =
    ["email", "phone", "address", "emergency_contact", "preferred_language"];

/// A partial update; `None` leaves a field as it is. `emergency_contact: Some(None)`
/// removes the contact.
#[derive(Debug, Clone, Default, PartialEq, Eq, Validate)]
pub struct CitizenChanges {
    #[validate(length(min = 1, max = 100), custom(function = "rules::clean_text"))]
    pub given_name: Option<String>,
    #[validate(length(min = 1, max = 100), custom(function = "rules::clean_text"))]
    pub family_name: Option<String>,
    pub date_of_birth: Option<Date>,
    #[validate(length(min = 1, max = 200), custom(function = "rules::clean_text"))]
    pub place_of_birth: Option<String>,
    #[validate(custom(function = "rules::country"))]
    pub nationality: Option<String>,
    #[validate(custom(function = "passport_number_format"))]
    pub passport_number: Option<String>,
    pub passport_expiry: Option<Date>,
    #[validate(email, length(max = 254))]
    pub email: Option<String>,
    #[validate(custom(function = "rules::e164"))]
    pub phone: Option<String>,
    #[validate(nested)]
    pub address: Option<Address>,
    #[validate(nested)]
    pub emergency_contact: Option<Option<EmergencyContact>>,
    #[validate(custom(function = "rules::language"))]
    pub preferred_language: Option<String>,
    pub registration_status: Option<RegistrationStatus>,
}

/// Date rules that need "today": born in the past (after 1900), passport expiring after birth.
fn validate_dates(errors: &mut ValidationErrors, birth: Option<Date>, expiry: Option<Date>, today: Date) {
    if let Some(birth) = birth
        && (birth > today || birth.year() < 1900)
    {
        errors.add("date_of_birth", "out_of_range", "must be in the past and after 1900-01-01");
    }
    if let (Some(birth), Some(expiry)) = (birth, expiry)
        && expiry <= birth
    {
        errors.add("passport_expiry", "before_birth", "must be after the date of birth");
    }
}

fn merge(
    base: Result<(), validator::ValidationErrors>,
    mut extra: ValidationErrors,
) -> Result<(), ValidationErrors> {
    let mut errors = base.err().map(|e| rules::flatten(&e)).unwrap_or_default();
    errors.0.append(&mut extra.0);
    errors.0.sort_by(|a, b| a.pointer.cmp(&b.pointer));
    errors.into_result()
}

impl NewCitizen {
    /// Every failing field at once, as JSON pointers; dates are judged against `today`.
    pub fn validate(&self, today: Date) -> Result<(), ValidationErrors> {
        let mut dates = ValidationErrors::new();
        validate_dates(&mut dates, Some(self.date_of_birth), Some(self.passport_expiry), today);
        merge(Validate::validate(self), dates)
    }

    pub fn into_citizen(self, id: CitizenId, now: OffsetDateTime) -> Citizen {
        let active = self.registration_status == RegistrationStatus::Active;
        let deregistered = self.registration_status == RegistrationStatus::Deregistered;
        Citizen {
            id,
            mission_id: self.mission_id,
            given_name: self.given_name,
            family_name: self.family_name,
            date_of_birth: self.date_of_birth,
            place_of_birth: self.place_of_birth,
            nationality: self.nationality,
            passport_number: self.passport_number,
            passport_expiry: self.passport_expiry,
            email: self.email,
            phone: self.phone,
            address: self.address,
            emergency_contact: self.emergency_contact,
            preferred_language: self.preferred_language,
            registration_status: self.registration_status,
            registered_at: now,
            activated_at: active.then_some(now),
            deregistered_at: deregistered.then_some(now),
            version: 1,
            created_at: now,
            updated_at: now,
        }
    }
}

impl CitizenChanges {
    /// The names of the fields this change touches.
    pub fn fields(&self) -> Vec<&'static str> {
        let present = [
            ("given_name", self.given_name.is_some()),
            ("family_name", self.family_name.is_some()),
            ("date_of_birth", self.date_of_birth.is_some()),
            ("place_of_birth", self.place_of_birth.is_some()),
            ("nationality", self.nationality.is_some()),
            ("passport_number", self.passport_number.is_some()),
            ("passport_expiry", self.passport_expiry.is_some()),
            ("email", self.email.is_some()),
            ("phone", self.phone.is_some()),
            ("address", self.address.is_some()),
            ("emergency_contact", self.emergency_contact.is_some()),
            ("preferred_language", self.preferred_language.is_some()),
            ("registration_status", self.registration_status.is_some()),
        ];
        present.into_iter().filter(|(_, p)| *p).map(|(name, _)| name).collect()
    }

    /// For a change made by the citizen themself: every field that is not a contact field
    /// is an error.
    pub fn validate_contact_only(&self) -> Result<(), ValidationErrors> {
        let mut errors = ValidationErrors::new();
        for field in self.fields().into_iter().filter(|f| !CONTACT_FIELDS.contains(f)) {
            errors.add(field, "not_editable", "a citizen may change only their contact details");
        }
        errors.into_result()
    }

    /// Validates the change against the citizen it applies to (dates are checked on the
    /// result, so changing one date alone is checked against the other).
    pub fn validate(&self, current: &Citizen, today: Date) -> Result<(), ValidationErrors> {
        let mut extra = ValidationErrors::new();
        let birth = self.date_of_birth.unwrap_or(current.date_of_birth);
        let expiry = self.passport_expiry.unwrap_or(current.passport_expiry);
        let touches_dates = self.date_of_birth.is_some() || self.passport_expiry.is_some();
        if touches_dates {
            validate_dates(&mut extra, Some(birth), Some(expiry), today);
        }
        if let Some(next) = self.registration_status
            && next != current.registration_status
            && !current.registration_status.can_become(next)
        {
            let allowed: Vec<&str> =
                current.registration_status.allowed_next().iter().map(|s| s.as_str()).collect();
            extra.add(
                "registration_status",
                "invalid_transition",
                format!(
                    "cannot go from {} to {next}; allowed: {}",
                    current.registration_status,
                    allowed.join(", ")
                ),
            );
        }
        merge(Validate::validate(self), extra)
    }
}

impl Citizen {
    /// Applies checked changes; returns the names of the fields that really changed.
    pub fn apply(&mut self, changes: CitizenChanges, now: OffsetDateTime) -> Vec<String> {
        let mut changed = Vec::new();
        set(&mut self.given_name, changes.given_name, "given_name", &mut changed);
        set(&mut self.family_name, changes.family_name, "family_name", &mut changed);
        set(&mut self.date_of_birth, changes.date_of_birth, "date_of_birth", &mut changed);
        set(&mut self.place_of_birth, changes.place_of_birth, "place_of_birth", &mut changed);
        set(&mut self.nationality, changes.nationality, "nationality", &mut changed);
        set(&mut self.passport_number, changes.passport_number, "passport_number", &mut changed);
        set(&mut self.passport_expiry, changes.passport_expiry, "passport_expiry", &mut changed);
        set(&mut self.email, changes.email, "email", &mut changed);
        set(&mut self.phone, changes.phone, "phone", &mut changed);
        set(&mut self.address, changes.address, "address", &mut changed);
        set(&mut self.emergency_contact, changes.emergency_contact, "emergency_contact", &mut changed);
        set(&mut self.preferred_language, changes.preferred_language, "preferred_language", &mut changed);
        let before = self.registration_status;
        set(&mut self.registration_status, changes.registration_status, "registration_status", &mut changed);
        if self.registration_status != before {
            match self.registration_status {
                RegistrationStatus::Active => self.activated_at = Some(now),
                RegistrationStatus::Deregistered => self.deregistered_at = Some(now),
                RegistrationStatus::Pending => {}
            }
        }
        if !changed.is_empty() {
            self.version += 1;
            self.updated_at = now;
        }
        changed
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use time::macros::date;

    pub(crate) fn alice(mission: MissionId) -> NewCitizen {
        NewCitizen {
            mission_id: mission,
            given_name: "Alice".into(),
            family_name: "Martin".into(),
            date_of_birth: date!(1990 - 04 - 12),
            place_of_birth: "Lyon".into(),
            nationality: "FR".into(),
            passport_number: "19AB12345".into(),
            passport_expiry: date!(2031 - 04 - 11),
            email: "alice@example.org".into(),
            phone: "+33612345678".into(),
            address: Address {
                line1: "1 Main Street".into(),
                line2: None,
                city: "Ottawa".into(),
                region: Some("Ontario".into()),
                postal_code: Some("K1A 0A1".into()),
                country: "CA".into(),
            },
            emergency_contact: None,
            preferred_language: "fr".into(),
            registration_status: RegistrationStatus::Pending,
        }
    }

    const TODAY: Date = date!(2026 - 11 - 22);

    #[test]
    fn a_well_formed_citizen_is_valid() {
        assert_eq!(alice(MissionId::new()).validate(TODAY), Ok(()));
    }

    #[test]
    fn every_failing_field_is_listed() {
        let mut bad = alice(MissionId::new());
        bad.email = "not-an-email".into();
        bad.phone = "0612345678".into();
        bad.address.country = "XX".into();
        bad.date_of_birth = date!(2030 - 01 - 01);
        bad.passport_number = "ab".into();
        let pointers: Vec<String> =
            bad.validate(TODAY).unwrap_err().0.into_iter().map(|e| e.pointer).collect();
        assert_eq!(pointers, ["/address/country", "/date_of_birth", "/email", "/passport_number", "/phone"]);
    }

    #[test]
    fn registration_moves_only_along_its_transitions() {
        use RegistrationStatus::*;
        let table = [
            (Pending, Active, true),
            (Pending, Deregistered, true),
            (Active, Deregistered, true),
            (Deregistered, Active, true),
            (Active, Pending, false),
            (Deregistered, Pending, false),
        ];
        for (from, to, ok) in table {
            assert_eq!(from.can_become(to), ok, "{from} -> {to}");
        }
    }

    #[test]
    fn citizens_may_change_only_contact_fields() {
        let contact = CitizenChanges {
            email: Some("a@b.org".into()),
            phone: Some("+33600000000".into()),
            ..Default::default()
        };
        assert_eq!(contact.validate_contact_only(), Ok(()));
        let identity = CitizenChanges {
            given_name: Some("Eve".into()),
            email: Some("a@b.org".into()),
            ..Default::default()
        };
        let errors = identity.validate_contact_only().unwrap_err();
        assert_eq!(errors.0.len(), 1);
        assert_eq!(errors.0[0].pointer, "/given_name");
    }

    #[test]
    fn activation_and_deregistration_are_dated() {
        let now = OffsetDateTime::UNIX_EPOCH;
        let mut citizen = alice(MissionId::new()).into_citizen(CitizenId::new(), now);
        let changes =
            CitizenChanges { registration_status: Some(RegistrationStatus::Active), ..Default::default() };
        assert_eq!(changes.validate(&citizen, TODAY), Ok(()));
        assert_eq!(citizen.apply(changes, now), ["registration_status"]);
        assert_eq!(citizen.activated_at, Some(now));
        let back =
            CitizenChanges { registration_status: Some(RegistrationStatus::Pending), ..Default::default() };
        assert!(back.validate(&citizen, TODAY).is_err());
    }
}
