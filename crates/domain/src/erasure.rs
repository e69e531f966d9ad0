//! Retention and erasure (docs/data-protection.md "Retention and erasure"): which of a
//! citizen's requests an erasure may delete and which a retention period still holds
//! (and until when), and what an erased citizen's row keeps.

use crate::{Address, Citizen, CitizenId, RegistrationStatus, RequestId, RequestStatus, ServiceTypeId};
use time::{Date, Duration, Month, OffsetDateTime};

/// A request as retention judges it: its status, when it ended, and its type's period.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetainedRequest {
    pub request_id: RequestId,
    pub service_type_id: ServiceTypeId,
    pub status: RequestStatus,
    /// When it reached its final status (`None` while open).
    pub closed_at: Option<OffsetDateTime>,
    /// The type's `retention_days`.
    pub retention_days: i32,
}

/// Why a request is kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Hold {
    /// Still open: kept until it ends and its retention period after that has run out,
    /// a date nobody knows yet.
    Open,
    /// Ended: kept until `until`, when its type's retention period runs out.
    Retained { until: OffsetDateTime },
}

/// A request an erasure keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KeptRequest {
    pub request: RetainedRequest,
    pub hold: Hold,
}

/// What an erasure does with a citizen's requests.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ErasurePlan {
    /// Deleted, with their history, messages, notes, appointments and notifications;
    /// their documents become tombstones.
    pub delete: Vec<RequestId>,
    /// Kept, in the order given.
    pub keep: Vec<KeptRequest>,
}

impl RetainedRequest {
    /// Whether retention still holds the request at `now`, and why. A request ended
    /// exactly `retention_days` ago is no longer held.
    pub fn hold(&self, now: OffsetDateTime) -> Option<Hold> {
        match (self.status.is_final(), self.closed_at) {
            (true, Some(closed_at)) => {
                let until = closed_at + Duration::days(i64::from(self.retention_days.max(0)));
                (until > now).then_some(Hold::Retained { until })
            }
            // A final status without its end (never stored that way) is kept as open:
            // nothing says its period ran out.
            _ => Some(Hold::Open),
        }
    }
}

/// Sorts a citizen's requests into those an erasure at `now` deletes and those it keeps.
pub fn plan(requests: &[RetainedRequest], now: OffsetDateTime) -> ErasurePlan {
    let mut plan = ErasurePlan::default();
    for request in requests {
        match request.hold(now) {
            Some(hold) => plan.keep.push(KeptRequest { request: *request, hold }),
            None => plan.delete.push(request.request_id),
        }
    }
    plan
}

/// The date an erased citizen's dates of birth and passport expiry become: the columns
/// hold a date, and this one says nothing about anybody.
pub const ERASED_DATE: Date = match Date::from_calendar_date(1900, Month::January, 1) {
    Ok(date) => date,
    Err(_) => panic!("1900-01-01 is a date"),
};

/// `citizen` erased at `now`: every personal field blanked (texts empty, dates
/// [`ERASED_DATE`], no emergency contact), the passport number replaced by one made of
/// the citizen's id (unique in the mission, as the column requires), status `erased`,
/// a new version. The ids, the mission and the registration dates stay, so that what is
/// kept still resolves.
pub fn erased(citizen: &Citizen, now: OffsetDateTime) -> Citizen {
    Citizen {
        id: citizen.id,
        mission_id: citizen.mission_id,
        given_name: String::new(),
        family_name: String::new(),
        date_of_birth: ERASED_DATE,
        place_of_birth: String::new(),
        nationality: String::new(),
        passport_number: erased_passport_number(citizen.id),
        passport_expiry: ERASED_DATE,
        email: String::new(),
        phone: String::new(),
        address: Address::default(),
        emergency_contact: None,
        preferred_language: String::new(),
        registration_status: RegistrationStatus::Erased,
        registered_at: citizen.registered_at,
        activated_at: citizen.activated_at,
        deregistered_at: citizen.deregistered_at.or(Some(now)),
        version: citizen.version + 1,
        created_at: citizen.created_at,
        updated_at: now,
    }
}

/// `ERASED` and the citizen's id in upper-case hex: no passport number has that form
/// (they are at most 20 characters).
pub fn erased_passport_number(id: CitizenId) -> String {
    format!("ERASED{}", id.as_uuid().simple()).to_uppercase()
}

/// When an erased citizen was erased: the time of the change that erased them, which is
/// their last (an erased row is never changed again).
pub fn erased_at(citizen: &Citizen) -> Option<OffsetDateTime> {
    (citizen.registration_status == RegistrationStatus::Erased).then_some(citizen.updated_at)
}

#[cfg(test)]
mod tests {
    use super::*;
    use time::macros::datetime;

    const NOW: OffsetDateTime = datetime!(2030-06-15 12:00 UTC);

    fn request(
        status: RequestStatus,
        closed_at: Option<OffsetDateTime>,
        retention_days: i32,
    ) -> RetainedRequest {
        RetainedRequest {
            request_id: RequestId::new(),
            service_type_id: ServiceTypeId::new(),
            status,
            closed_at,
            retention_days,
        }
    }

    #[test]
    fn what_retention_holds_and_until_when() {
        use RequestStatus::*;
        let ended = |days_ago: i64| Some(NOW - Duration::days(days_ago));
        let retained = |days_ahead: i64| Some(Hold::Retained { until: NOW + Duration::days(days_ahead) });
        let cases = [
            ("submitted", request(Submitted, None, 0), Some(Hold::Open)),
            ("in review", request(InReview, None, 30), Some(Hold::Open)),
            ("action required", request(ActionRequired, None, 30), Some(Hold::Open)),
            ("approved, not completed", request(Approved, None, 0), Some(Hold::Open)),
            ("completed today, no retention", request(Completed, ended(0), 0), None),
            ("completed 10 days ago, 30 days", request(Completed, ended(10), 30), retained(20)),
            ("rejected 30 days ago, 30 days", request(Rejected, ended(30), 30), None),
            ("rejected 29 days ago, 30 days", request(Rejected, ended(29), 30), retained(1)),
            ("cancelled 11 years ago, default", request(Cancelled, ended(4017), 3650), None),
            ("cancelled a year ago, default", request(Cancelled, ended(365), 3650), retained(3285)),
            ("final without its end", request(Completed, None, 0), Some(Hold::Open)),
        ];
        for (name, request, expected) in cases {
            assert_eq!(request.hold(NOW), expected, "{name}");
        }
    }

    #[test]
    fn a_plan_deletes_what_nothing_holds_and_lists_what_it_keeps() {
        use RequestStatus::*;
        let open = request(InReview, None, 30);
        let gone = request(Completed, Some(NOW - Duration::days(31)), 30);
        let held = request(Rejected, Some(NOW - Duration::days(1)), 30);
        let plan = plan(&[open, gone, held], NOW);
        assert_eq!(plan.delete, [gone.request_id]);
        assert_eq!(
            plan.keep,
            [
                KeptRequest { request: open, hold: Hold::Open },
                KeptRequest { request: held, hold: Hold::Retained { until: NOW + Duration::days(29) } },
            ]
        );
        assert_eq!(super::plan(&[], NOW), ErasurePlan::default());
    }

    #[test]
    fn nobody_is_registered_erased() {
        let mut new = crate::fixtures::new_citizen(crate::MissionId::new());
        new.registration_status = RegistrationStatus::Erased;
        let errors = new.validate(NOW.date()).unwrap_err();
        assert_eq!(errors.0.len(), 1);
        assert_eq!(
            (errors.0[0].pointer.as_str(), errors.0[0].code.as_str()),
            ("/registration_status", "not_registrable")
        );
    }

    #[test]
    fn an_erased_citizen_keeps_ids_and_dates_of_registration_only() {
        let alice = crate::fixtures::new_citizen(crate::MissionId::new())
            .into_citizen(CitizenId::new(), NOW - Duration::days(100));
        let erased = erased(&alice, NOW);
        assert_eq!((erased.id, erased.mission_id), (alice.id, alice.mission_id));
        assert_eq!((erased.registered_at, erased.created_at), (alice.registered_at, alice.created_at));
        assert_eq!((erased.version, erased.updated_at), (alice.version + 1, NOW));
        assert_eq!(erased.registration_status, RegistrationStatus::Erased);
        assert_eq!(erased.deregistered_at, Some(NOW));
        assert_eq!(erased_at(&erased), Some(NOW));
        assert_eq!(erased_at(&alice), None);
        let text = format!("{erased:?}");
        for value in [
            &alice.given_name,
            &alice.family_name,
            &alice.place_of_birth,
            &alice.passport_number,
            &alice.email,
            &alice.phone,
            &alice.address.line1,
            &alice.address.city,
        ] {
            assert!(!text.contains(value.as_str()), "{value} survived the erasure");
        }
        assert_eq!((erased.date_of_birth, erased.passport_expiry), (ERASED_DATE, ERASED_DATE));
        assert!(erased.emergency_contact.is_none());
        assert_eq!(erased.passport_number.len(), 38);
        assert!(erased.passport_number.starts_with("ERASED"));
    }
}
