//! Staff members of a mission and the service types they handle.

use crate::rules;
use crate::{MissionId, ServiceTypeId, StaffId, ValidationErrors};
use time::OffsetDateTime;
use validator::Validate;

#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct StaffMember {
    pub id: StaffId,
    pub mission_id: MissionId,
    pub name: String,
    pub email: String,
    pub job_title: String,
    /// Inactive members get no new assignments.
    pub active: bool,
    /// The service types whose requests this member handles.
    pub service_type_ids: Vec<ServiceTypeId>,
    pub version: i64,
    pub created_at: OffsetDateTime,
    pub updated_at: OffsetDateTime,
}

fn no_repeats(ids: &[ServiceTypeId]) -> Result<(), validator::ValidationError> {
    let repeated = ids.iter().enumerate().any(|(i, id)| ids[..i].contains(id));
    if repeated {
        Err(validator::ValidationError::new("duplicate")
            .with_message(std::borrow::Cow::Borrowed("service types must not repeat")))
    } else {
        Ok(())
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Validate)]
pub struct NewStaffMember {
    pub mission_id: MissionId,
    #[validate(length(min = 1, max = 200), custom(function = "rules::clean_text"))]
    pub name: String,
    #[validate(email, length(max = 254))]
    pub email: String,
    #[validate(length(min = 1, max = 100), custom(function = "rules::clean_text"))]
    pub job_title: String,
    #[validate(length(max = 100), custom(function = "no_repeats"))]
    pub service_type_ids: Vec<ServiceTypeId>,
}

impl NewStaffMember {
    /// Every failing field at once, as JSON pointers.
    pub fn validate(&self) -> Result<(), ValidationErrors> {
        rules::flatten(Validate::validate(self))
    }

    pub fn into_staff_member(self, id: StaffId, now: OffsetDateTime) -> StaffMember {
        StaffMember {
            id,
            mission_id: self.mission_id,
            name: self.name,
            email: self.email,
            job_title: self.job_title,
            active: true,
            service_type_ids: self.service_type_ids,
            version: 1,
            created_at: now,
            updated_at: now,
        }
    }
}

/// The full new list of assignments (replaces the old one).
#[derive(Debug, Clone, PartialEq, Eq, Validate)]
pub struct Assignments {
    #[validate(length(max = 100), custom(function = "no_repeats"))]
    pub service_type_ids: Vec<ServiceTypeId>,
}

impl Assignments {
    /// Every failing field at once, as JSON pointers.
    pub fn validate(&self) -> Result<(), ValidationErrors> {
        rules::flatten(Validate::validate(self))
    }
}

impl StaffMember {
    /// Replaces the assignments; returns whether they changed (order is kept as given).
    pub fn assign(&mut self, assignments: Assignments, now: OffsetDateTime) -> bool {
        if self.service_type_ids == assignments.service_type_ids {
            return false;
        }
        self.service_type_ids = assignments.service_type_ids;
        self.version += 1;
        self.updated_at = now;
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn assignments_must_not_repeat_and_replace_the_list() {
        let a = ServiceTypeId::new();
        let b = ServiceTypeId::new();
        assert!(Assignments { service_type_ids: vec![a, a] }.validate().is_err());
        let mut member = NewStaffMember {
            mission_id: MissionId::new(),
            name: "Bob Lee".into(),
            email: "bob@mission.example".into(),
            job_title: "Consular officer".into(),
            service_type_ids: vec![a],
        }
        .into_staff_member(StaffId::new(), OffsetDateTime::UNIX_EPOCH);
        assert!(member.assign(Assignments { service_type_ids: vec![b] }, OffsetDateTime::UNIX_EPOCH));
        assert_eq!(member.service_type_ids, [b]);
        assert_eq!(member.version, 2);
        assert!(!member.assign(Assignments { service_type_ids: vec![b] }, OffsetDateTime::UNIX_EPOCH));
    }

    #[test]
    fn names_and_emails_are_checked() {
        let bad = NewStaffMember {
            mission_id: MissionId::new(),
            name: " ".into(),
            email: "bob".into(),
            job_title: String::new(),
            service_type_ids: vec![],
        };
        let pointers: Vec<String> = bad.validate().unwrap_err().0.into_iter().map(|e| e.pointer).collect();
        assert!(pointers.contains(&"/name".to_owned()) && pointers.contains(&"/email".to_owned()));
        assert!(pointers.contains(&"/job_title".to_owned()));
    }
}
