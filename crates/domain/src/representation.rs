//! Acting for someone else (docs/representation.md): a citizen (the *dependant*) may have
//! *representatives*, other citizens of the same mission who act for them: a parent for
//! a minor, a guardian, or an authorised representative (a power of attorney) for an
//! adult. A mission's staff create and end a representation after checking its evidence
//! (a document of the dependant's); nothing else does.
//!
//! A representation is *in force* at an instant when it has not been ended, the
//! instant's date in the mission's time zone is within `valid_from..=valid_until`, and
//! its kind fits the dependant's age on that date: `parent` while the dependant is a
//! minor, `authorised_representative` once they are an adult, `guardian` at any age. So
//! a parent's mandate ends by itself on the child's 18th birthday.

use crate::text_enum::text_enum;
use crate::{
    CitizenId, DocumentId, MissionId, RepresentationId, ServiceTypeId, Subject, ValidationErrors, rules,
};
use time::{Date, Month, OffsetDateTime};
use validator::{Validate, ValidationError};

pub use crate::mandate::{Mandate, ServiceScope};

/// The age from which a citizen acts for themself.
pub const AGE_OF_MAJORITY: i32 = 18;

/// How many service types a representation may name (more: `all`).
pub const MAX_SERVICE_TYPES: usize = 50;

/// The longest reason an ending records, in characters.
pub const MAX_END_REASON: usize = 500;

text_enum!(
    /// What the representative is to the dependant.
    RepresentationKind ("representation kind") {
        /// A parent of a minor: in force until the dependant's 18th birthday.
        Parent = "parent",
        /// A court-appointed guardian: at any age.
        Guardian = "guardian",
        /// A power of attorney: for an adult only.
        AuthorisedRepresentative = "authorised_representative",
    }
);

impl RepresentationKind {
    /// Whether this kind acts for a dependant who is (or is not) a minor.
    pub fn fits(self, minor: bool) -> bool {
        match self {
            RepresentationKind::Parent => minor,
            RepresentationKind::Guardian => true,
            RepresentationKind::AuthorisedRepresentative => !minor,
        }
    }
}

/// Whether a citizen born on `date_of_birth` is a minor on `today` (a date in their
/// mission's time zone). Born on 29 February: of age on 1 March of a common year.
pub fn is_minor(date_of_birth: Date, today: Date) -> bool {
    let year = date_of_birth.year() + AGE_OF_MAJORITY;
    let of_age = Date::from_calendar_date(year, date_of_birth.month(), date_of_birth.day())
        .or_else(|_| Date::from_calendar_date(year, Month::March, 1));
    match of_age {
        Ok(of_age) => today < of_age,
        // Beyond the calendar's range: certainly not a minor today.
        Err(_) => false,
    }
}

/// A representation as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Representation {
    pub id: RepresentationId,
    /// Who is represented.
    pub dependant_id: CitizenId,
    /// Who acts for them: another citizen of the same mission.
    pub representative_id: CitizenId,
    /// The mission both belong to (the policy's reach).
    pub mission_id: MissionId,
    pub kind: RepresentationKind,
    pub services: ServiceScope,
    /// First and last day in force, dates in the mission's time zone (inclusive).
    pub valid_from: Date,
    pub valid_until: Option<Date>,
    /// The document of the dependant's that the staff checked (a birth certificate, a
    /// court order, a power of attorney).
    pub evidence_document_id: DocumentId,
    pub created_by: Subject,
    pub created_at: OffsetDateTime,
    /// When and by whom it was ended, and why; an ended representation is kept.
    pub ended_at: Option<OffsetDateTime>,
    pub ended_by: Option<Subject>,
    pub end_reason: Option<String>,
}

impl Representation {
    /// Whether it is in force on `today` (a date in the mission's time zone) for a
    /// dependant born on `dependant_born`, and not ended at `now` (see the module's
    /// documentation).
    pub fn in_force(&self, now: OffsetDateTime, today: Date, dependant_born: Date) -> bool {
        self.ended_at.is_none_or(|ended| ended > now)
            && self.valid_from <= today
            && self.valid_until.is_none_or(|until| today <= until)
            && self.kind.fits(is_minor(dependant_born, today))
    }
}

/// The mandate is the union of the representations in force (docs/representation.md
/// "Acting"); `Mandate` itself is a leaf (`mandate.rs`) so that `Principal` can carry it.
impl Mandate {
    /// The mandate the representations `in_force` (all of one dependant, in force now)
    /// give together; `None` when there are none.
    pub fn of<'a>(in_force: impl IntoIterator<Item = &'a Representation>) -> Option<Mandate> {
        let mut in_force = in_force.into_iter();
        let first = in_force.next()?;
        let mut mandate = Mandate {
            dependant: first.dependant_id,
            mission: first.mission_id,
            services: first.services.clone(),
            representations: vec![first.id],
        };
        for r in in_force {
            mandate.representations.push(r.id);
            mandate.services = match (mandate.services, &r.services) {
                (ServiceScope::All, _) | (_, ServiceScope::All) => ServiceScope::All,
                (ServiceScope::Only(mut services), ServiceScope::Only(more)) => {
                    services.extend(more);
                    services.sort();
                    services.dedup();
                    ServiceScope::Only(services)
                }
            };
        }
        Some(mandate)
    }
}

/// A representation as the mission's staff ask for it; the dependant (and so the
/// mission) is the one the route names. What needs no I/O is checked here; that the
/// representative, the evidence and the service types exist, and that the kind fits the
/// dependant's age, is the use case's.
#[derive(Debug, Clone, PartialEq, Eq, Validate)]
#[validate(schema(function = "until_not_before_from", skip_on_field_errors = false))]
pub struct NewRepresentation {
    pub representative_id: CitizenId,
    pub kind: RepresentationKind,
    /// `None`: every service.
    #[validate(length(min = 1, max = 50), custom(function = "no_repeats"))]
    pub service_type_ids: Option<Vec<ServiceTypeId>>,
    pub valid_from: Date,
    pub valid_until: Option<Date>,
    pub evidence_document_id: DocumentId,
}

fn no_repeats(ids: &[ServiceTypeId]) -> Result<(), ValidationError> {
    if ids.iter().enumerate().any(|(i, id)| ids[..i].contains(id)) {
        Err(ValidationError::new("duplicate").with_message("service types must not repeat".into()))
    } else {
        Ok(())
    }
}

fn until_not_before_from(new: &NewRepresentation) -> Result<(), ValidationError> {
    match new.valid_until {
        Some(until) if until < new.valid_from => {
            Err(rules::at("valid_until", "before_valid_from", "must not be before valid_from"))
        }
        _ => Ok(()),
    }
}

impl NewRepresentation {
    /// Every failing field at once, as JSON pointers.
    pub fn validate(&self) -> Result<(), ValidationErrors> {
        rules::flatten(Validate::validate(self))
    }

    /// The scope it names: `All` without service types, else the types sorted.
    pub fn services(&self) -> ServiceScope {
        match &self.service_type_ids {
            None => ServiceScope::All,
            Some(ids) => {
                let mut ids = ids.clone();
                ids.sort();
                ServiceScope::Only(ids)
            }
        }
    }

    /// The representation of dependant `dependant` of `mission`, created by `by` at `now`.
    pub fn into_representation(
        self,
        dependant: CitizenId,
        mission: MissionId,
        by: Subject,
        now: OffsetDateTime,
    ) -> Representation {
        Representation {
            id: RepresentationId::new(),
            dependant_id: dependant,
            representative_id: self.representative_id,
            mission_id: mission,
            kind: self.kind,
            services: self.services(),
            valid_from: self.valid_from,
            valid_until: self.valid_until,
            evidence_document_id: self.evidence_document_id,
            created_by: by,
            created_at: now,
            ended_at: None,
            ended_by: None,
            end_reason: None,
        }
    }
}

/// Why a representation was ended, checked: 1 to [`MAX_END_REASON`] characters, not
/// blank, no control character but tab and line breaks; reported at `/reason`.
pub fn end_reason(reason: String) -> Result<String, ValidationErrors> {
    let checked = rules::filled(&reason).and_then(|()| rules::text::<MAX_END_REASON>(&reason));
    rules::at_field("reason", checked).map(|()| reason)
}

#[cfg(test)]
mod tests {
    use super::*;
    use time::macros::date;

    #[test]
    fn minors_come_of_age_on_their_eighteenth_birthday() {
        let born = date!(2008 - 05 - 10);
        assert!(is_minor(born, date!(2026 - 05 - 09)));
        assert!(!is_minor(born, date!(2026 - 05 - 10)));
        let leap = date!(2008 - 02 - 29);
        assert!(is_minor(leap, date!(2026 - 02 - 28)));
        assert!(!is_minor(leap, date!(2026 - 03 - 01)));
    }

    #[test]
    fn each_kind_fits_an_age() {
        let table = [
            (RepresentationKind::Parent, [true, false]),
            (RepresentationKind::Guardian, [true, true]),
            (RepresentationKind::AuthorisedRepresentative, [false, true]),
        ];
        for (kind, [minor, adult]) in table {
            assert_eq!([kind.fits(true), kind.fits(false)], [minor, adult], "{kind}");
        }
    }

    #[test]
    fn a_mandate_unites_the_services_of_the_representations_in_force() {
        let (a, b, c) = (ServiceTypeId::new(), ServiceTypeId::new(), ServiceTypeId::new());
        let held = |services| Representation { services, ..crate::fixtures::representation() };
        let (first, second) = (held(ServiceScope::Only(vec![a, b])), held(ServiceScope::Only(vec![c, a])));
        let mandate = Mandate::of([&first, &second]);
        let mut united = vec![a, b, c];
        united.sort();
        assert_eq!(mandate.as_ref().map(|m| &m.services), Some(&ServiceScope::Only(united)));
        assert_eq!(mandate.map(|m| m.representations), Some(vec![first.id, second.id]));
        let all = held(ServiceScope::All);
        assert_eq!(Mandate::of([&first, &all]).map(|m| m.services), Some(ServiceScope::All));
        assert_eq!(Mandate::of([]), None);
    }

    fn asked(services: Option<Vec<ServiceTypeId>>, from: Date, until: Option<Date>) -> NewRepresentation {
        NewRepresentation {
            representative_id: CitizenId::new(),
            kind: RepresentationKind::Guardian,
            service_type_ids: services,
            valid_from: from,
            valid_until: until,
            evidence_document_id: DocumentId::new(),
        }
    }

    fn pointers(checked: Result<(), ValidationErrors>) -> Vec<(String, String)> {
        checked.err().map(|e| e.0).unwrap_or_default().into_iter().map(|e| (e.pointer, e.code)).collect()
    }

    #[test]
    fn a_new_representation_is_checked_field_by_field() {
        let (from, before) = (date!(2026 - 05 - 10), date!(2026 - 05 - 09));
        assert!(asked(None, from, Some(from)).validate().is_ok());
        let one = ServiceTypeId::new();
        let cases = [
            (asked(Some(vec![]), from, None), vec![("/service_type_ids", "length")]),
            (asked(Some(vec![one, one]), from, None), vec![("/service_type_ids", "duplicate")]),
            (
                asked(Some((0..=MAX_SERVICE_TYPES).map(|_| ServiceTypeId::new()).collect()), from, None),
                vec![("/service_type_ids", "length")],
            ),
            (asked(None, from, Some(before)), vec![("/valid_until", "before_valid_from")]),
        ];
        for (new, expected) in cases {
            let expected: Vec<_> = expected.into_iter().map(|(p, c)| (p.to_owned(), c.to_owned())).collect();
            assert_eq!(pointers(new.validate()), expected, "{new:?}");
        }
    }

    #[test]
    fn services_are_stored_sorted_and_none_is_all() {
        let (a, b) = (ServiceTypeId::new(), ServiceTypeId::new());
        let from = date!(2026 - 01 - 01);
        assert_eq!(asked(None, from, None).services(), ServiceScope::All);
        let mut sorted = vec![a, b];
        sorted.sort();
        let reversed: Vec<_> = sorted.iter().rev().copied().collect();
        assert_eq!(asked(Some(reversed), from, None).services(), ServiceScope::Only(sorted));
    }

    #[test]
    fn an_end_reason_is_one_to_five_hundred_characters_of_text() {
        assert_eq!(end_reason("moved away\nfor good".to_owned()).unwrap(), "moved away\nfor good");
        for (bad, code) in [("  ", "required"), ("a\u{0}", "control_character")] {
            assert_eq!(
                pointers(end_reason(bad.to_owned()).map(drop)),
                [("/reason".to_owned(), code.to_owned())]
            );
        }
        let long = "x".repeat(MAX_END_REASON + 1);
        assert_eq!(pointers(end_reason(long).map(drop)), [("/reason".to_owned(), "too_long".to_owned())]);
    }

    #[test]
    fn a_scope_covers_its_services_and_all_covers_what_has_none() {
        let (passport, visa) = (ServiceTypeId::new(), ServiceTypeId::new());
        let only = ServiceScope::Only(vec![passport]);
        assert!(only.covers(Some(passport)));
        assert!(!only.covers(Some(visa)));
        assert!(!only.covers(None));
        assert!(ServiceScope::All.covers(Some(visa)) && ServiceScope::All.covers(None));
    }
}
