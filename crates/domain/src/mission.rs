//! Missions: the embassies and consulates everything else belongs to.

use crate::rules;
use crate::validation::set;
use crate::{MissionId, ValidationErrors};
use std::borrow::Cow;
use time::OffsetDateTime;
use validator::{Validate, ValidationError};

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
#[derive(Debug, Clone, PartialEq, Eq, Validate)]
pub struct NewMission {
    #[validate(custom(function = "mission_code"))]
    pub code: String,
    #[validate(custom(function = "rules::line::<200>"))]
    pub name: String,
    #[validate(custom(function = "upper_case_country"))]
    pub country: String,
    #[validate(custom(function = "rules::line::<100>"))]
    pub city: String,
    #[validate(custom(function = "rules::timezone"))]
    pub timezone: String,
}

/// A partial update; `None` leaves the field as it is.
#[derive(Debug, Clone, Default, PartialEq, Eq, Validate)]
pub struct MissionChanges {
    #[validate(custom(function = "rules::line::<200>"))]
    pub name: Option<String>,
    #[validate(custom(function = "upper_case_country"))]
    pub country: Option<String>,
    #[validate(custom(function = "rules::line::<100>"))]
    pub city: Option<String>,
    #[validate(custom(function = "rules::timezone"))]
    pub timezone: Option<String>,
}

/// The order a mission's failing fields are listed in.
const FIELDS: [&str; 5] = ["code", "name", "country", "city", "timezone"];

/// A lower-case country code, a dash and a lower-case place name: `fr-paris`.
fn mission_code(code: &str) -> Result<(), ValidationError> {
    let mut parts = code.split('-');
    let country_ok = parts.next().is_some_and(|p| p.len() == 2 && p.bytes().all(|b| b.is_ascii_lowercase()));
    let rest: Vec<&str> = parts.collect();
    let rest_ok = !rest.is_empty()
        && rest
            .iter()
            .all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit()));
    if country_ok && rest_ok && code.len() <= 64 {
        Ok(())
    } else {
        Err(ValidationError::new("invalid_format").with_message(Cow::Borrowed(
            "must be a lower-case country code, a dash and a lower-case place name (e.g. fr-paris), at most 64 characters",
        )))
    }
}

fn upper_case_country(country: &str) -> Result<(), ValidationError> {
    rules::country(country).map_err(|e| {
        e.with_message(Cow::Borrowed("must be an ISO 3166-1 alpha-2 country code in upper case"))
    })
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
    /// Every failing field at once, in the order of the fields.
    pub fn validate(&self) -> Result<(), ValidationErrors> {
        rules::flatten_in_order(Validate::validate(self), &FIELDS)
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
    /// Every failing field given at once, in the order of the fields.
    pub fn validate(&self) -> Result<(), ValidationErrors> {
        rules::flatten_in_order(Validate::validate(self), &FIELDS)
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
        crate::fixtures::new_mission()
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
        let told: Vec<(&str, &str)> =
            errors.0.iter().map(|e| (e.code.as_str(), e.message.as_str())).collect();
        assert_eq!(
            told,
            [
                (
                    "invalid_format",
                    "must be a lower-case country code, a dash and a lower-case place name (e.g. fr-paris), at most 64 characters"
                ),
                ("required", "must not be empty"),
                ("invalid_country", "must be an ISO 3166-1 alpha-2 country code in upper case"),
                ("too_long", "must be at most 100 characters"),
                ("invalid_timezone", "must be an IANA time zone name such as Europe/Paris"),
            ]
        );
        let changes = MissionChanges {
            name: Some(" Embassy ".into()),
            city: Some("Par\tis".into()),
            timezone: Some("Mars/Olympus".into()),
            ..Default::default()
        };
        let told: Vec<(String, String)> =
            changes.validate().unwrap_err().0.into_iter().map(|e| (e.pointer, e.code)).collect();
        let expected =
            [("/name", "untrimmed"), ("/city", "control_character"), ("/timezone", "invalid_timezone")];
        assert_eq!(told, expected.map(|(p, c)| (p.to_owned(), c.to_owned())));
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
            assert_eq!(mission_code(code).is_ok(), ok, "{code}");
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
