//! Missions: the embassies and consulates everything else belongs to.

use crate::validation::set;
use crate::{MissionId, ValidationErrors};
use time::OffsetDateTime;

#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Mission {
    pub id: MissionId,
    /// Stable public code such as `fr-paris`; unique and never changed.
    pub code: String,
    pub name: String,
    /// ISO 3166-1 alpha-2, upper case.
    pub country: String,
    pub city: String,
    /// IANA time zone name, e.g. `Europe/Paris`.
    pub timezone: String,
    /// Incremented by every change; the strong ETag is derived from it.
    pub version: i64,
    pub created_at: OffsetDateTime,
    pub updated_at: OffsetDateTime,
}

/// The fields a new mission is created with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewMission {
    pub code: String,
    pub name: String,
    pub country: String,
    pub city: String,
    pub timezone: String,
}

/// A partial update; `None` leaves the field as it is.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MissionChanges {
    pub name: Option<String>,
    pub country: Option<String>,
    pub city: Option<String>,
    pub timezone: Option<String>,
}

pub(crate) fn validate_code(errors: &mut ValidationErrors, code: &str) {
    let mut parts = code.split('-');
    let country_ok = parts.next().is_some_and(|p| p.len() == 2 && p.bytes().all(|b| b.is_ascii_lowercase()));
    let rest: Vec<&str> = parts.collect();
    let rest_ok = !rest.is_empty()
        && rest
            .iter()
            .all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit()));
    if !(country_ok && rest_ok) || code.len() > 64 {
        errors.add(
            "code",
            "invalid_format",
            "must be a lower-case country code, a dash and a lower-case place name (e.g. fr-paris), at most 64 characters",
        );
    }
}

pub(crate) fn validate_country(errors: &mut ValidationErrors, field: &str, country: &str) {
    if crate::rules::country(country).is_err() {
        errors.add(field, "invalid_country", "must be an ISO 3166-1 alpha-2 country code in upper case");
    }
}

pub(crate) fn validate_timezone(errors: &mut ValidationErrors, field: &str, timezone: &str) {
    if timezone.parse::<chrono_tz::Tz>().is_err() {
        errors.add(field, "invalid_timezone", "must be an IANA time zone name such as Europe/Paris");
    }
}

/// Every accepted country code (ISO 3166-1 alpha-2), for documentation and clients.
pub fn country_codes() -> impl Iterator<Item = &'static str> {
    isocountry::CountryCode::iter().map(|c| c.alpha2())
}

/// Every accepted time zone name (IANA), for documentation and clients.
pub fn timezone_names() -> impl Iterator<Item = &'static str> {
    chrono_tz::TZ_VARIANTS.iter().map(|tz| tz.name())
}

impl NewMission {
    pub fn validate(&self) -> Result<(), ValidationErrors> {
        let mut errors = ValidationErrors::new();
        validate_code(&mut errors, &self.code);
        errors.validate_text("name", &self.name, 200);
        validate_country(&mut errors, "country", &self.country);
        errors.validate_text("city", &self.city, 100);
        validate_timezone(&mut errors, "timezone", &self.timezone);
        errors.into_result()
    }

    pub fn into_mission(self, id: MissionId, now: OffsetDateTime) -> Mission {
        Mission {
            id,
            code: self.code,
            name: self.name,
            country: self.country,
            city: self.city,
            timezone: self.timezone,
            version: 1,
            created_at: now,
            updated_at: now,
        }
    }
}

impl MissionChanges {
    pub fn validate(&self) -> Result<(), ValidationErrors> {
        let mut errors = ValidationErrors::new();
        if let Some(name) = &self.name {
            errors.validate_text("name", name, 200);
        }
        if let Some(country) = &self.country {
            validate_country(&mut errors, "country", country);
        }
        if let Some(city) = &self.city {
            errors.validate_text("city", city, 100);
        }
        if let Some(timezone) = &self.timezone {
            validate_timezone(&mut errors, "timezone", timezone);
        }
        errors.into_result()
    }
}

impl Mission {
    /// Applies validated changes and returns the names of the fields that really changed.
    /// The version moves only when something changed.
    pub fn apply(&mut self, changes: MissionChanges, now: OffsetDateTime) -> Vec<String> {
        let mut changed = Vec::new();
        set(&mut self.name, changes.name, "name", &mut changed);
        set(&mut self.country, changes.country, "country", &mut changed);
        set(&mut self.city, changes.city, "city", &mut changed);
        set(&mut self.timezone, changes.timezone, "timezone", &mut changed);
        if !changed.is_empty() {
            self.version += 1;
            self.updated_at = now;
        }
        changed
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn paris() -> NewMission {
        NewMission {
            code: "fr-paris".into(),
            name: "Embassy in Paris".into(),
            country: "FR".into(),
            city: "Paris".into(),
            timezone: "Europe/Paris".into(),
        }
    }

    #[test]
    fn a_well_formed_mission_is_valid() {
        assert_eq!(paris().validate(), Ok(()));
    }

    #[test]
    fn every_invalid_field_is_reported() {
        let bad = NewMission {
            code: "Paris".into(),
            name: " ".into(),
            country: "XX".into(),
            city: "x".repeat(101),
            timezone: "Europe/Parris".into(),
        };
        let errors = bad.validate().unwrap_err();
        let pointers: Vec<&str> = errors.0.iter().map(|e| e.pointer.as_str()).collect();
        assert_eq!(pointers, ["/code", "/name", "/country", "/city", "/timezone"]);
    }

    #[test]
    fn codes_follow_the_country_dash_place_pattern() {
        for (code, ok) in [
            ("fr-paris", true),
            ("us-new-york", true),
            ("de-berlin2", true),
            ("fr", false),
            ("fr-", false),
            ("FR-paris", false),
            ("fra-paris", false),
            ("fr--paris", false),
        ] {
            let mut errors = ValidationErrors::new();
            validate_code(&mut errors, code);
            assert_eq!(errors.is_empty(), ok, "{code}");
        }
    }

    #[test]
    fn apply_reports_only_real_changes_and_bumps_the_version_once() {
        let now = OffsetDateTime::UNIX_EPOCH;
        let mut mission = paris().into_mission(MissionId::new(), now);
        let changes = MissionChanges {
            name: Some("Embassy of X".into()),
            city: Some("Paris".into()),
            ..Default::default()
        };
        assert_eq!(mission.apply(changes, now), ["name"]);
        assert_eq!(mission.version, 2);
        assert!(mission.apply(MissionChanges::default(), now).is_empty());
        assert_eq!(mission.version, 2);
    }
}
