//! Citizens: the people a mission serves, with their profile and their registration with
//! the mission.

use crate::rules;
use crate::text_enum::text_enum;
use crate::validation::set;
use crate::{CitizenId, MissionId, ValidationErrors};
use std::borrow::Cow;
use time::{Date, OffsetDateTime};
use validator::{Validate, ValidateArgs, ValidationError};

text_enum!(
    /// Where a citizen's registration with their mission stands. Its serde form was the
    /// variant's name before it was a `text_enum!`: the aliases read the citizens stored
    /// that way in idempotency records (kept `idempotency::KEY_LIFETIME`, a day).
    RegistrationStatus ("registration status") {
        #[serde(alias = "Pending")]
        Pending = "pending",
        #[serde(alias = "Active")]
        Active = "active",
        #[serde(alias = "Deregistered")]
        Deregistered = "deregistered",
        /// Erased (docs/data-protection.md "Retention and erasure"): the personal fields
        /// are blanked and the row stays as a tombstone. No change leads here or away.
        #[serde(alias = "Erased")]
        Erased = "erased",
    }
);

impl RegistrationStatus {
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

/// `Address::default()` is the empty address: an erased citizen's, a demo row's placeholder.
#[derive(Debug, Clone, Default, PartialEq, Eq, Validate, serde::Serialize, serde::Deserialize)]
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

fn passport_number_format(value: &str) -> Result<(), ValidationError> {
    let valid = (5..=20).contains(&value.len())
        && value.bytes().all(|b| b.is_ascii_uppercase() || b.is_ascii_digit());
    if valid {
        Ok(())
    } else {
        Err(ValidationError::new("invalid_passport_number")
            .with_message(Cow::Borrowed("must be 5 to 20 upper-case letters and digits")))
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Validate)]
#[validate(context = Date)]
#[validate(schema(function = "expiry_after_birth", skip_on_field_errors = false))]
pub struct NewCitizen {
    pub mission_id: MissionId,
    #[validate(length(min = 1, max = 100), custom(function = "rules::clean_text"))]
    pub given_name: String,
    #[validate(length(min = 1, max = 100), custom(function = "rules::clean_text"))]
    pub family_name: String,
    #[validate(custom(function = "born", use_context))]
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
    #[validate(custom(function = "registrable"))]
    pub registration_status: RegistrationStatus,
}

/// A citizen is registered pending, active or deregistered; only an erasure makes one
/// `erased`.
fn registrable(status: &RegistrationStatus) -> Result<(), ValidationError> {
    if *status == RegistrationStatus::Erased {
        Err(ValidationError::new("not_registrable")
            .with_message(Cow::Borrowed("a citizen is erased by DELETE, never registered erased")))
    } else {
        Ok(())
    }
}

/// The fields a citizen may change on their own profile.
pub const CONTACT_FIELDS: [&str; 5] =
    ["email", "phone", "address", "emergency_contact", "preferred_language"];

/// A partial update; `None` leaves a field as it is. `emergency_contact: Some(None)`
/// removes the contact.
#[derive(Debug, Clone, Default, PartialEq, Eq, Validate)]
// Each `schema` repeats its options (`skip_on_field_errors`), which clippy takes for
// a duplicated attribute.
#[allow(clippy::duplicated_attributes)]
#[validate(context = "Current<'v_a>")]
#[validate(schema(function = "changed_birth", use_context, skip_on_field_errors = false))]
#[validate(schema(function = "changed_expiry", use_context, skip_on_field_errors = false))]
#[validate(schema(function = "registration_step", use_context, skip_on_field_errors = false))]
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

/// What a change is judged against: the citizen it applies to, and today.
#[derive(Debug, Clone, Copy)]
pub struct Current<'a> {
    pub citizen: &'a Citizen,
    pub today: Date,
}

const BORN: &str = "must be in the past and after 1900-01-01";

/// Born in the past, and after 1900.
fn born(birth: &Date, today: &Date) -> Result<(), ValidationError> {
    if *birth > *today || birth.year() < 1900 {
        Err(ValidationError::new("out_of_range").with_message(Cow::Borrowed(BORN)))
    } else {
        Ok(())
    }
}

/// A passport expiring after its holder's birth.
fn expiring_after(birth: Date, expiry: Date) -> Result<(), ValidationError> {
    if expiry <= birth {
        Err(rules::at("passport_expiry", "before_birth", "must be after the date of birth"))
    } else {
        Ok(())
    }
}

fn expiry_after_birth(citizen: &NewCitizen) -> Result<(), ValidationError> {
    expiring_after(citizen.date_of_birth, citizen.passport_expiry)
}

/// The dates are checked on the result of a change that touches one of them, so that
/// changing one date alone is checked against the other.
fn changed_dates(changes: &CitizenChanges, current: &Current) -> Option<(Date, Date)> {
    let touches_dates = changes.date_of_birth.is_some() || changes.passport_expiry.is_some();
    touches_dates.then(|| {
        (
            changes.date_of_birth.unwrap_or(current.citizen.date_of_birth),
            changes.passport_expiry.unwrap_or(current.citizen.passport_expiry),
        )
    })
}

fn changed_birth(changes: &CitizenChanges, current: &Current) -> Result<(), ValidationError> {
    match changed_dates(changes, current) {
        Some((birth, _)) => {
            born(&birth, &current.today).map_err(|_| rules::at("date_of_birth", "out_of_range", BORN))
        }
        None => Ok(()),
    }
}

fn changed_expiry(changes: &CitizenChanges, current: &Current) -> Result<(), ValidationError> {
    match changed_dates(changes, current) {
        Some((birth, expiry)) => expiring_after(birth, expiry),
        None => Ok(()),
    }
}

/// A registration status moves only along `RegistrationStatus::can_become`.
fn registration_step(changes: &CitizenChanges, current: &Current) -> Result<(), ValidationError> {
    let now = current.citizen.registration_status;
    match changes.registration_status {
        Some(next) if next != now && !now.can_become(next) => {
            let allowed: Vec<&str> = now.allowed_next().iter().map(|s| s.as_str()).collect();
            Err(rules::at(
                "registration_status",
                "invalid_transition",
                format!("cannot go from {now} to {next}; allowed: {}", allowed.join(", ")),
            ))
        }
        _ => Ok(()),
    }
}

impl NewCitizen {
    /// Every failing field at once, as JSON pointers; dates are judged against `today`.
    pub fn validate(&self, today: Date) -> Result<(), ValidationErrors> {
        rules::flatten(self.validate_with_args(&today))
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
        rules::flatten(self.validate_with_args(&Current { citizen: current, today }))
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
                // No change leads to `erased` (`can_become`); `erasure::erased` does.
                RegistrationStatus::Pending | RegistrationStatus::Erased => {}
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

    /// The base citizen, with a region and a postal code.
    pub(crate) fn alice(mission: MissionId) -> NewCitizen {
        let base = crate::fixtures::new_citizen(mission);
        let address =
            Address { region: Some("Ontario".into()), postal_code: Some("K1A 0A1".into()), ..base.address };
        NewCitizen { address, ..base }
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
            (Active, Erased, false),
            (Deregistered, Erased, false),
            (Erased, Active, false),
            (Erased, Deregistered, false),
        ];
        for (from, to, ok) in table {
            assert_eq!(from.can_become(to), ok, "{from} -> {to}");
        }
    }

    #[test]
    fn a_registration_status_is_written_as_its_text_and_read_in_its_former_form_too() {
        for status in RegistrationStatus::ALL {
            let text = serde_json::to_value(status).unwrap();
            assert_eq!(text, status.as_str());
            assert_eq!(serde_json::from_value::<RegistrationStatus>(text).unwrap(), status);
            // A citizen stored in an idempotency record before: the variant's name.
            let former = serde_json::to_value(format!("{status:?}")).unwrap();
            assert_eq!(serde_json::from_value::<RegistrationStatus>(former).unwrap(), status);
        }
        assert_eq!("active".parse(), Ok(RegistrationStatus::Active));
        assert_eq!(
            "Active".parse::<RegistrationStatus>(),
            Err("unknown registration status `Active`".to_owned()),
            "the database holds the text only"
        );
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

    #[test]
    fn a_change_is_judged_against_the_citizen_and_today() {
        let mut citizen = alice(MissionId::new()).into_citizen(CitizenId::new(), OffsetDateTime::UNIX_EPOCH);
        citizen.registration_status = RegistrationStatus::Active;
        let told = |changes: CitizenChanges, citizen: &Citizen| -> Vec<(String, String, String)> {
            changes
                .validate(citizen, TODAY)
                .unwrap_err()
                .0
                .into_iter()
                .map(|e| (e.pointer, e.code, e.message))
                .collect()
        };
        let owned = |expected: &[(&str, &str, &str)]| -> Vec<(String, String, String)> {
            expected.iter().map(|(p, c, m)| ((*p).to_owned(), (*c).to_owned(), (*m).to_owned())).collect()
        };
        let changes = CitizenChanges {
            given_name: Some(String::new()),
            passport_expiry: Some(citizen.date_of_birth),
            registration_status: Some(RegistrationStatus::Pending),
            ..Default::default()
        };
        assert_eq!(
            told(changes, &citizen),
            owned(&[
                ("/given_name", "length", "length must be between 1 and 100"),
                ("/given_name", "required", "must not be empty"),
                ("/passport_expiry", "before_birth", "must be after the date of birth"),
                (
                    "/registration_status",
                    "invalid_transition",
                    "cannot go from active to pending; allowed: deregistered"
                ),
            ])
        );
        // Changing one date rechecks the other as stored.
        citizen.date_of_birth = date!(1850 - 01 - 01);
        let changes = CitizenChanges { passport_expiry: Some(date!(2030 - 01 - 01)), ..Default::default() };
        assert_eq!(
            told(changes, &citizen),
            owned(&[("/date_of_birth", "out_of_range", "must be in the past and after 1900-01-01")])
        );
        assert_eq!(
            CitizenChanges { email: Some("a@b.org".into()), ..Default::default() }.validate(&citizen, TODAY),
            Ok(())
        );
        let mut born_later = alice(MissionId::new());
        born_later.date_of_birth = date!(2026 - 11 - 23);
        born_later.passport_expiry = date!(2026 - 11 - 23);
        let found: Vec<(String, String)> =
            born_later.validate(TODAY).unwrap_err().0.into_iter().map(|e| (e.pointer, e.code)).collect();
        assert_eq!(
            found,
            [
                ("/date_of_birth".to_owned(), "out_of_range".to_owned()),
                ("/passport_expiry".to_owned(), "before_birth".to_owned())
            ]
        );
    }
}
