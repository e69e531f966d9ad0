//! The service catalog: the kinds of service a citizen can request, each with its fee,
//! SLA, required documents and ordered workflow stages.

use crate::rules;
use crate::validation::set;
use crate::{ServiceTypeId, ValidationErrors};
use time::OffsetDateTime;
use validator::Validate;

/// An amount in the currency's minor unit (cents), so no float ever holds money.
#[derive(Debug, Clone, PartialEq, Eq, Validate, serde::Serialize, serde::Deserialize)]
pub struct Money {
    #[validate(range(min = 0, max = 100_000_000_000i64))]
    pub amount_minor: i64,
    #[validate(custom(function = "rules::currency"))]
    pub currency: String,
}

/// One step of a service's workflow.
#[derive(Debug, Clone, PartialEq, Eq, Validate, serde::Serialize, serde::Deserialize)]
pub struct Stage {
    #[validate(length(min = 1, max = 100), custom(function = "rules::clean_text"))]
    pub name: String,
    #[validate(length(max = 1000), custom(function = "rules::multi_line_text"))]
    pub description: String,
}

#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ServiceType {
    pub id: ServiceTypeId,
    /// Stable public code, e.g. `passport_renewal`; unique and never changed.
    pub code: String,
    pub name: String,
    pub description: String,
    pub fee: Money,
    /// Days from submission within which a request should be completed.
    pub sla_days: i32,
    /// Days a request of this type is kept after it ended, before erasure may take it
    /// (docs/data-protection.md "Retention and erasure").
    pub retention_days: i32,
    /// Document kinds a request of this type needs (e.g. `passport_photo`).
    pub required_documents: Vec<String>,
    /// The ordered stages; requests keep the list they were submitted under.
    pub stages: Vec<Stage>,
    /// Inactive types take no new requests.
    pub active: bool,
    pub version: i64,
    pub created_at: OffsetDateTime,
    pub updated_at: OffsetDateTime,
}

fn unique_stage_names(stages: &[Stage]) -> Result<(), validator::ValidationError> {
    for (i, stage) in stages.iter().enumerate() {
        if stages[..i].iter().any(|s| s.name == stage.name) {
            return Err(validator::ValidationError::new("duplicate")
                .with_message(std::borrow::Cow::Borrowed("stage names must be unique")));
        }
    }
    Ok(())
}

/// The retention of a type created without one: ten years after a request ended.
pub const DEFAULT_RETENTION_DAYS: i32 = 3650;

/// The longest retention a type may have: a hundred years.
pub const MAX_RETENTION_DAYS: i32 = 36_500;

#[derive(Debug, Clone, PartialEq, Eq, Validate)]
pub struct NewServiceType {
    #[validate(custom(function = "rules::identifier"))]
    pub code: String,
    #[validate(length(min = 1, max = 200), custom(function = "rules::clean_text"))]
    pub name: String,
    #[validate(length(max = 4000), custom(function = "rules::multi_line_text"))]
    pub description: String,
    #[validate(nested)]
    pub fee: Money,
    #[validate(range(min = 1, max = 365))]
    pub sla_days: i32,
    #[validate(range(min = 0, max = MAX_RETENTION_DAYS))]
    pub retention_days: i32,
    #[validate(length(max = 30), custom(function = "rules::identifiers"))]
    pub required_documents: Vec<String>,
    #[validate(length(min = 1, max = 30), nested, custom(function = "unique_stage_names"))]
    pub stages: Vec<Stage>,
    pub active: bool,
}

/// A partial update; `None` leaves the field as it is. Toggling `active` is a change of
/// that field alone.
#[derive(Debug, Clone, Default, PartialEq, Eq, Validate)]
pub struct ServiceTypeChanges {
    #[validate(length(min = 1, max = 200), custom(function = "rules::clean_text"))]
    pub name: Option<String>,
    #[validate(length(max = 4000), custom(function = "rules::multi_line_text"))]
    pub description: Option<String>,
    #[validate(nested)]
    pub fee: Option<Money>,
    #[validate(range(min = 1, max = 365))]
    pub sla_days: Option<i32>,
    #[validate(range(min = 0, max = MAX_RETENTION_DAYS))]
    pub retention_days: Option<i32>,
    #[validate(length(max = 30), custom(function = "rules::identifiers"))]
    pub required_documents: Option<Vec<String>>,
    #[validate(length(min = 1, max = 30), nested, custom(function = "unique_stage_names"))]
    pub stages: Option<Vec<Stage>>,
    pub active: Option<bool>,
}

impl NewServiceType {
    /// Every failing field at once, as JSON pointers.
    pub fn validate(&self) -> Result<(), ValidationErrors> {
        rules::flatten(Validate::validate(self))
    }

    pub fn into_service_type(self, id: ServiceTypeId, now: OffsetDateTime) -> ServiceType {
        ServiceType {
            id,
            code: self.code,
            name: self.name,
            description: self.description,
            fee: self.fee,
            sla_days: self.sla_days,
            retention_days: self.retention_days,
            required_documents: self.required_documents,
            stages: self.stages,
            active: self.active,
            version: 1,
            created_at: now,
            updated_at: now,
        }
    }
}

impl ServiceTypeChanges {
    /// Every failing field at once, as JSON pointers.
    pub fn validate(&self) -> Result<(), ValidationErrors> {
        rules::flatten(Validate::validate(self))
    }
}

impl ServiceType {
    /// Applies validated changes; returns the names of the fields that really changed.
    pub fn apply(&mut self, changes: ServiceTypeChanges, now: OffsetDateTime) -> Vec<String> {
        let mut changed = Vec::new();
        set(&mut self.name, changes.name, "name", &mut changed);
        set(&mut self.description, changes.description, "description", &mut changed);
        set(&mut self.fee, changes.fee, "fee", &mut changed);
        set(&mut self.sla_days, changes.sla_days, "sla_days", &mut changed);
        set(&mut self.retention_days, changes.retention_days, "retention_days", &mut changed);
        set(&mut self.required_documents, changes.required_documents, "required_documents", &mut changed);
        set(&mut self.stages, changes.stages, "stages", &mut changed);
        set(&mut self.active, changes.active, "active", &mut changed);
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

    pub(crate) fn renewal() -> NewServiceType {
        NewServiceType {
            code: "passport_renewal".into(),
            name: "Passport renewal".into(),
            description: "Renew an expiring passport".into(),
            fee: Money { amount_minor: 8600, currency: "EUR".into() },
            sla_days: 21,
            required_documents: vec!["passport_photo".into(), "old_passport".into()],
            stages: vec![
                Stage { name: "Document check".into(), description: String::new() },
                Stage { name: "Printing".into(), description: String::new() },
            ],
            ..crate::fixtures::new_service_type()
        }
    }

    #[test]
    fn a_well_formed_service_type_is_valid() {
        assert_eq!(renewal().validate(), Ok(()));
    }

    #[test]
    fn every_failing_field_is_listed_with_nested_pointers() {
        let mut bad = renewal();
        bad.code = "Passport Renewal".into();
        bad.fee = Money { amount_minor: -1, currency: "EURO".into() };
        bad.sla_days = 0;
        bad.retention_days = -1;
        bad.stages[1].name = String::new();
        let pointers: Vec<String> = bad.validate().unwrap_err().0.into_iter().map(|e| e.pointer).collect();
        for expected in
            ["/code", "/fee/amount_minor", "/fee/currency", "/sla_days", "/retention_days", "/stages/1/name"]
        {
            assert!(pointers.iter().any(|p| p == expected), "{expected} missing from {pointers:?}");
        }
    }

    #[test]
    fn descriptions_are_multi_line_without_other_control_characters() {
        let mut multi_line = renewal();
        multi_line.description = "Bring:\n\t- the old passport\r\n\t- a photo".into();
        multi_line.stages[0].description = "First line\nsecond line".into();
        assert_eq!(multi_line.validate(), Ok(()));
        let mut bad = renewal();
        bad.description = "nul\u{0}".into();
        bad.stages[1].description = "c1\u{9b}".into();
        let errors: Vec<(String, String)> =
            bad.validate().unwrap_err().0.into_iter().map(|e| (e.pointer, e.code)).collect();
        for pointer in ["/description", "/stages/1/description"] {
            assert!(errors.contains(&(pointer.to_owned(), "control_character".to_owned())), "{errors:?}");
        }
        let changes = ServiceTypeChanges { description: Some("del\u{7f}".into()), ..Default::default() };
        assert_eq!(changes.validate().unwrap_err().0[0].code, "control_character");
    }

    #[test]
    fn stages_need_unique_names_and_at_least_one_entry() {
        let mut dup = renewal();
        dup.stages[1].name = "Document check".into();
        assert!(
            dup.validate().unwrap_err().0.iter().any(|e| e.pointer == "/stages" && e.code == "duplicate")
        );
        let mut none = renewal();
        none.stages.clear();
        assert!(none.validate().is_err());
    }

    #[test]
    fn retention_runs_from_none_to_a_hundred_years() {
        for (days, valid) in [
            (-1, false),
            (0, true),
            (DEFAULT_RETENTION_DAYS, true),
            (MAX_RETENTION_DAYS, true),
            (MAX_RETENTION_DAYS + 1, false),
        ] {
            let service = NewServiceType { retention_days: days, ..renewal() };
            assert_eq!(service.validate().is_ok(), valid, "{days}");
            let changes = ServiceTypeChanges { retention_days: Some(days), ..Default::default() };
            assert_eq!(changes.validate().is_ok(), valid, "{days}");
        }
        let mut service = renewal().into_service_type(ServiceTypeId::new(), OffsetDateTime::UNIX_EPOCH);
        let changed = service.apply(
            ServiceTypeChanges { retention_days: Some(30), ..Default::default() },
            OffsetDateTime::UNIX_EPOCH,
        );
        assert_eq!((changed, service.retention_days), (vec!["retention_days".to_owned()], 30));
    }

    #[test]
    fn toggling_active_is_a_change_of_that_field_only() {
        let mut service = renewal().into_service_type(ServiceTypeId::new(), OffsetDateTime::UNIX_EPOCH);
        let changed = service.apply(
            ServiceTypeChanges { active: Some(false), ..Default::default() },
            OffsetDateTime::UNIX_EPOCH,
        );
        assert_eq!(changed, ["active"]);
        assert_eq!(service.version, 2);
        assert!(!service.active);
    }
}
