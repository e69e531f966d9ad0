//! The "who hears what" table, written out, and the retry schedule of emails.

use super::*;
use crate::PrincipalKind;
use time::macros::datetime;
use time::{Duration, OffsetDateTime};

const CREATED: OffsetDateTime = datetime!(2026-06-01 10:00 UTC);

/// An event, its author, and who hears it as what.
type Row = (EventKind, Option<PrincipalKind>, Option<(NotificationKind, Audience)>);

#[test]
fn who_hears_what() {
    use Audience::{Assignee, Citizen};
    use EventKind as E;
    use NotificationKind as K;
    use PrincipalKind::{Admin, Citizen as ByCitizen, Staff};
    let table: &[Row] = &[
        (E::RequestSubmitted, None, Some((K::RequestSubmitted, Citizen))),
        (E::RequestStatusChanged, None, Some((K::RequestStatusChanged, Citizen))),
        (E::RequestStageAdvanced, None, Some((K::RequestStageAdvanced, Citizen))),
        (E::RequestAssigned, None, Some((K::RequestAssigned, Assignee))),
        (E::MessagePosted, Some(Staff), Some((K::MessageFromStaff, Citizen))),
        (E::MessagePosted, Some(Admin), Some((K::MessageFromStaff, Citizen))),
        (E::MessagePosted, Some(ByCitizen), Some((K::MessageFromCitizen, Assignee))),
        (E::MessagePosted, None, None),
        (E::DocumentUploaded, None, None),
        (E::DocumentVerified, None, Some((K::DocumentVerified, Citizen))),
        (E::DocumentRejected, None, Some((K::DocumentRejected, Citizen))),
        (E::DocumentDeleted, None, None),
        (E::AppointmentBooked, None, Some((K::AppointmentBooked, Citizen))),
        (E::AppointmentRescheduled, None, Some((K::AppointmentRescheduled, Citizen))),
        (E::AppointmentCancelled, None, Some((K::AppointmentCancelled, Citizen))),
        (E::AppointmentCancelledByMission, None, Some((K::AppointmentCancelledByMission, Citizen))),
        (E::AppointmentAttended, None, None),
        (E::AppointmentNoShow, None, None),
        (E::AppointmentReminder, None, Some((K::AppointmentReminder, Citizen))),
    ];
    for (event, author, expected) in table {
        assert_eq!(audience(*event, *author), *expected, "{event} by {author:?}");
    }
    // Every event kind is in the table, and the author matters only for messages.
    for event in EventKind::ALL.iter() {
        assert!(table.iter().any(|(e, _, _)| e == event), "{event} is not in the table");
        if *event != E::MessagePosted {
            for author in [Some(Admin), Some(Staff), Some(ByCitizen)] {
                assert_eq!(audience(*event, author), audience(*event, None), "{event}");
            }
        }
    }
    // Every notification kind is produced by some event.
    for kind in NotificationKind::ALL.iter() {
        assert!(table.iter().any(|(_, _, heard)| heard.map(|h| h.0) == Some(*kind)), "{kind}");
    }
}

#[test]
fn only_staff_hear_of_assignments_and_citizens_messages() {
    for kind in NotificationKind::ALL.iter() {
        let staff_only =
            matches!(kind, NotificationKind::RequestAssigned | NotificationKind::MessageFromCitizen);
        let to_staff = EventKind::ALL.iter().any(|e| {
            [None, Some(PrincipalKind::Citizen), Some(PrincipalKind::Staff)]
                .into_iter()
                .any(|author| audience(*e, author) == Some((*kind, Audience::Assignee)))
        });
        assert_eq!(to_staff, staff_only, "{kind}");
        assert_eq!(kind.category() == Category::Assignments, *kind == NotificationKind::RequestAssigned);
    }
}

#[test]
fn names_read_back() {
    for e in EventKind::ALL.iter() {
        assert_eq!(e.as_str().parse::<EventKind>(), Ok(*e));
    }
    for k in NotificationKind::ALL.iter() {
        assert_eq!(k.as_str().parse::<NotificationKind>(), Ok(*k));
        let json = format!("\"{k}\"");
        assert_eq!(serde_json::to_string(k).ok(), Some(json));
    }
    for c in Category::ALL.iter() {
        assert_eq!(c.as_str().parse::<Category>(), Ok(*c));
    }
    for s in EmailStatus::ALL.iter() {
        assert_eq!(s.as_str().parse::<EmailStatus>(), Ok(*s));
    }
    assert!("request.note_added".parse::<EventKind>().is_err(), "internal notes are no event");
    assert_eq!(
        EmailStatus::ALL.iter().filter(|s| s.is_final()).copied().collect::<Vec<_>>(),
        [EmailStatus::Delivered, EmailStatus::PermanentFailure]
    );
}

#[test]
fn temporary_failures_back_off_exponentially_up_to_a_cap() {
    let policy = RetryPolicy { jitter: 0.0, ..RetryPolicy::default() };
    let delays: Vec<i64> = (1..=9).map(|n| policy.delay(n, 0.5).whole_seconds()).collect();
    assert_eq!(delays, [30, 60, 120, 240, 480, 960, 1920, 3600, 3600]);
    assert_eq!(policy.delay(u32::MAX, 0.0), policy.max_delay, "no overflow");
    // Jitter only shortens a delay, by at most its share.
    let jittered = RetryPolicy::default();
    for random in [0.0, 0.25, 0.999] {
        let d = jittered.delay(3, random);
        assert!(d <= Duration::seconds(120) && d >= Duration::seconds(96), "{d}");
    }
    assert!(jittered.delay(3, 0.0) > jittered.delay(3, 0.9));
}

#[test]
fn each_outcome_decides_the_status() {
    let policy = RetryPolicy { jitter: 0.0, ..RetryPolicy::default() };
    let now = CREATED + Duration::minutes(1);
    assert_eq!(
        policy.after(AttemptOutcome::Delivered, 3, CREATED, now, 0.0),
        AfterAttempt { status: EmailStatus::Delivered, next_attempt_at: None }
    );
    assert_eq!(
        policy.after(AttemptOutcome::Permanent, 1, CREATED, now, 0.0),
        AfterAttempt { status: EmailStatus::PermanentFailure, next_attempt_at: None },
        "a 5xx is final at once"
    );
    assert_eq!(
        policy.after(AttemptOutcome::Temporary, 2, CREATED, now, 0.0),
        AfterAttempt {
            status: EmailStatus::TemporaryFailure,
            next_attempt_at: Some(now + Duration::seconds(60))
        }
    );
    // Past the horizon a temporary failure becomes permanent.
    let late = CREATED + policy.horizon - Duration::minutes(30);
    assert_eq!(
        policy.after(AttemptOutcome::Temporary, 20, CREATED, late, 0.0),
        AfterAttempt { status: EmailStatus::PermanentFailure, next_attempt_at: None }
    );
    let just_in = CREATED + policy.horizon - Duration::hours(1);
    assert_eq!(
        policy.after(AttemptOutcome::Temporary, 20, CREATED, just_in, 0.0).next_attempt_at,
        Some(CREATED + policy.horizon)
    );
}

#[test]
fn every_appointment_change_is_an_event_kind() {
    for change in crate::AppointmentChange::ALL {
        let kind = format!("appointment.{change}");
        assert!(kind.parse::<EventKind>().is_ok(), "{kind}");
    }
}

// ------------------------------------------------------------------------------ produce

fn person(kind: PrincipalKind, email: Option<&str>, off: &[Category]) -> Person {
    Person {
        id: crate::PrincipalId::new(),
        kind,
        email: email.map(str::to_owned),
        language: Language::Fr,
        preferences: EmailPreferences { off: off.iter().copied().collect() },
    }
}

fn facts(
    kind: EventKind,
    author: Option<PrincipalKind>,
    citizen: Person,
    assignee: Option<Person>,
) -> EventFacts {
    EventFacts {
        event_id: uuid::Uuid::now_v7(),
        kind,
        author,
        citizen: Some(citizen),
        citizen_name: Some("Ana".into()),
        citizen_minor: false,
        representatives: Vec::new(),
        assignee,
        mission_id: Some(crate::MissionId::new()),
        request_id: Some(crate::RequestId::new()),
        details: Details { status: Some("in_review".into()), ..Details::default() },
    }
}

/// The one notification (and email) an event produced.
fn only(mut produced: Vec<Produced>) -> Produced {
    assert_eq!(produced.len(), 1, "{produced:?}");
    produced.remove(0)
}

#[test]
fn an_event_produces_the_recipients_notification_and_email_in_their_language() {
    let citizen = person(PrincipalKind::Citizen, Some("ana@example.org"), &[]);
    let event = facts(EventKind::RequestStatusChanged, None, citizen.clone(), None);
    let produced = only(produce(&event, CREATED));
    let n = &produced.notification;
    assert_eq!(
        (n.recipient_id, n.recipient_kind, n.event_id),
        (citizen.id, PrincipalKind::Citizen, event.event_id)
    );
    assert_eq!(n.kind, NotificationKind::RequestStatusChanged);
    assert_eq!((n.mission_id, n.request_id), (event.mission_id, event.request_id));
    assert_eq!(n.details.status.as_deref(), Some("in_review"));
    assert_eq!((n.read_at, n.on_behalf_of), (None, None));
    let email = produced.email.expect("an email");
    assert_eq!(
        (email.to.as_str(), email.language, email.status),
        ("ana@example.org", Language::Fr, EmailStatus::Pending)
    );
    assert_eq!((email.notification_id, email.attempts, email.next_attempt_at), (n.id, 0, Some(CREATED)));
}

#[test]
fn preferences_and_missing_addresses_keep_email_off_but_never_in_app() {
    let quiet = person(PrincipalKind::Citizen, Some("ana@example.org"), &[Category::Requests]);
    let produced = only(produce(&facts(EventKind::RequestSubmitted, None, quiet.clone(), None), CREATED));
    assert_eq!(produced.email, None, "requests turned off");
    let produced = only(produce(&facts(EventKind::DocumentVerified, None, quiet, None), CREATED));
    assert!(produced.email.is_some(), "documents still on");
    let no_address = person(PrincipalKind::Citizen, None, &[]);
    let produced = only(produce(&facts(EventKind::RequestSubmitted, None, no_address, None), CREATED));
    assert_eq!(produced.email, None);
}

#[test]
fn the_assignee_hears_citizen_messages_and_nobody_hears_unassigned_ones() {
    let citizen = person(PrincipalKind::Citizen, Some("ana@example.org"), &[]);
    let staff = person(PrincipalKind::Staff, Some("clerk@mission.example"), &[]);
    let event =
        facts(EventKind::MessagePosted, Some(PrincipalKind::Citizen), citizen.clone(), Some(staff.clone()));
    let produced = only(produce(&event, CREATED));
    assert_eq!(produced.notification.recipient_id, staff.id);
    assert_eq!(produced.notification.kind, NotificationKind::MessageFromCitizen);
    let unassigned = facts(EventKind::MessagePosted, Some(PrincipalKind::Citizen), citizen.clone(), None);
    assert_eq!(produce(&unassigned, CREATED), []);
    assert_eq!(produce(&facts(EventKind::DocumentUploaded, None, citizen, Some(staff)), CREATED), []);
}

#[test]
fn reading_twice_keeps_the_first_time() {
    let citizen = person(PrincipalKind::Citizen, None, &[]);
    let mut n = only(produce(&facts(EventKind::RequestSubmitted, None, citizen, None), CREATED)).notification;
    assert!(n.mark_read(CREATED + Duration::minutes(1)));
    assert!(!n.mark_read(CREATED + Duration::minutes(2)));
    assert_eq!(n.read_at, Some(CREATED + Duration::minutes(1)));
}

#[test]
fn languages_fall_back_to_english() {
    for (preferred, language) in [
        ("fr", Language::Fr),
        ("fr-BE", Language::Fr),
        ("FR_ca", Language::Fr),
        ("en-GB", Language::En),
        ("de", Language::En),
        ("", Language::En),
    ] {
        assert_eq!(Language::for_preference(preferred), language, "{preferred}");
    }
}

#[test]
fn a_reminder_is_due_the_day_before_for_bookings_made_earlier() {
    let starts = datetime!(2026-06-10 09:00 UTC);
    let booked_long_ago = datetime!(2026-06-01 12:00 UTC);
    // (now, changed_at, due)
    let table = [
        (datetime!(2026-06-09 08:59 UTC), booked_long_ago, false), // more than a day before
        (datetime!(2026-06-09 09:00 UTC), booked_long_ago, true),  // the window opens
        (datetime!(2026-06-10 08:59 UTC), booked_long_ago, true),
        (datetime!(2026-06-10 09:00 UTC), booked_long_ago, false), // started
        (datetime!(2026-06-09 20:00 UTC), datetime!(2026-06-09 18:00 UTC), false), // booked the day before
    ];
    for (now, changed, due) in table {
        assert_eq!(reminder_due(starts, changed, now), due, "{now} {changed}");
    }
}

// ---------------------------------------------------------------------- representatives

mod representatives {
    use super::*;
    use crate::representation::{RepresentationKind, ServiceScope};
    use crate::{CitizenId, Representation, ServiceTypeId};
    use time::Date;
    use time::macros::date;

    const TODAY: Date = date!(2026 - 06 - 01);
    const MINOR: Date = date!(2015 - 03 - 04);
    const ADULT: Date = date!(1990 - 03 - 04);

    fn held(
        representative: CitizenId,
        kind: RepresentationKind,
        services: ServiceScope,
        valid_from: Date,
    ) -> Representation {
        Representation {
            representative_id: representative,
            kind,
            services,
            valid_from,
            ..crate::fixtures::representation()
        }
    }

    /// Who hears of an event about a service, with the dependant a minor or an adult, and
    /// representations in force or not, in scope or not.
    #[test]
    fn representatives_in_force_whose_services_cover_the_events_hear_it() {
        use RepresentationKind::{AuthorisedRepresentative, Guardian, Parent};
        let (passport, visa) = (ServiceTypeId::new(), ServiceTypeId::new());
        let [parent, guardian, attorney, ended, future] = [(); 5].map(|()| CitizenId::new());
        let since = date!(2026 - 01 - 01);
        let representations = vec![
            held(parent, Parent, ServiceScope::All, since),
            held(guardian, Guardian, ServiceScope::Only(vec![passport]), since),
            // The guardian's second representation: its services join the first's.
            held(guardian, Guardian, ServiceScope::Only(vec![visa]), since),
            held(attorney, AuthorisedRepresentative, ServiceScope::Only(vec![passport]), since),
            Representation {
                ended_at: Some(CREATED - Duration::days(1)),
                ..held(ended, Guardian, ServiceScope::All, since)
            },
            held(future, Guardian, ServiceScope::All, TODAY + Duration::days(1)),
        ];
        let table: &[(Option<ServiceTypeId>, Date, &[CitizenId], &str)] = &[
            (Some(passport), MINOR, &[parent, guardian], "a parent of a minor, a guardian in scope"),
            (Some(visa), MINOR, &[parent, guardian], "the guardian's second representation"),
            (Some(ServiceTypeId::new()), MINOR, &[parent], "another service: the parent's mandate is all"),
            (None, MINOR, &[parent], "no service: only a mandate over every service"),
            (Some(passport), ADULT, &[guardian, attorney], "an adult: no parent, the attorney"),
            (None, ADULT, &[], "an adult, no service: nobody holds all in force"),
        ];
        for (service, born, expected, why) in table {
            let hearing = representatives_hearing(&representations, *service, CREATED, TODAY, *born);
            assert_eq!(hearing, *expected, "{why}");
        }
        assert_eq!(representatives_hearing(&[], Some(passport), CREATED, TODAY, MINOR), [], "none at all");
    }

    fn with(citizen: Person, minor: bool, representatives: Vec<Person>, kind: EventKind) -> EventFacts {
        EventFacts { citizen_minor: minor, representatives, ..facts(kind, None, citizen, None) }
    }

    #[test]
    fn each_representative_gets_their_own_notification_about_the_dependant() {
        let child = person(PrincipalKind::Citizen, Some("child@example.org"), &[]);
        let mother = Person {
            language: Language::En,
            ..person(PrincipalKind::Citizen, Some("mother@example.org"), &[Category::Appointments])
        };
        let father = person(PrincipalKind::Citizen, Some("father@example.org"), &[]);
        let event =
            with(child.clone(), true, vec![mother.clone(), father.clone()], EventKind::AppointmentBooked);
        let produced = produce(&event, CREATED);
        let about = Some(CitizenId(child.id.as_uuid()));
        let told: Vec<_> = produced
            .iter()
            .map(|p| (p.notification.recipient_id, p.notification.on_behalf_of, p.notification.event_id))
            .collect();
        assert_eq!(told, [(mother.id, about, event.event_id), (father.id, about, event.event_id)], "a minor");
        assert!(produced.iter().all(|p| p.notification.kind == NotificationKind::AppointmentBooked));
        assert_eq!(produced[0].email, None, "the mother turned appointments' emails off");
        let email = produced[1].email.as_ref().map(|e| (e.to.as_str(), e.language, e.about.as_deref()));
        assert_eq!(
            email,
            Some(("father@example.org", Language::Fr, Some("Ana"))),
            "in the father's language, naming the child"
        );
        let ids: std::collections::BTreeSet<_> = produced.iter().map(|p| p.notification.id).collect();
        assert_eq!(ids.len(), 2, "a notification each");
    }

    #[test]
    fn an_adult_hears_too_and_a_minor_whom_no_representative_hears() {
        let dependant = person(PrincipalKind::Citizen, Some("ana@example.org"), &[]);
        let guardian = person(PrincipalKind::Citizen, None, &[]);
        let recipients = |minor: bool, representatives: Vec<Person>| -> Vec<_> {
            let event = with(dependant.clone(), minor, representatives, EventKind::RequestStatusChanged);
            produce(&event, CREATED)
                .iter()
                .map(|p| (p.notification.recipient_id, p.notification.on_behalf_of))
                .collect()
        };
        let about = Some(CitizenId(dependant.id.as_uuid()));
        assert_eq!(recipients(false, vec![guardian.clone()]), [(dependant.id, None), (guardian.id, about)]);
        let adult = with(dependant.clone(), false, vec![guardian.clone()], EventKind::RequestStatusChanged);
        let own = produce(&adult, CREATED).remove(0).email.map(|e| e.about);
        assert_eq!(own, Some(None), "the dependant's own email names nobody");
        assert_eq!(recipients(true, vec![guardian.clone()]), [(guardian.id, about)]);
        assert_eq!(recipients(true, vec![]), [(dependant.id, None)], "a minor with none in force");
        assert_eq!(recipients(false, vec![]), [(dependant.id, None)]);
    }

    #[test]
    fn nobody_hears_of_an_unknown_or_erased_dependant_and_staff_events_stay_staffs() {
        let guardian = person(PrincipalKind::Citizen, None, &[]);
        let dependant = person(PrincipalKind::Citizen, None, &[]);
        let erased = EventFacts {
            citizen: None,
            ..with(dependant.clone(), true, vec![guardian.clone()], EventKind::RequestSubmitted)
        };
        assert_eq!(produce(&erased, CREATED), []);
        let staff = person(PrincipalKind::Staff, None, &[]);
        let message = EventFacts {
            author: Some(PrincipalKind::Citizen),
            assignee: Some(staff.clone()),
            ..with(dependant, false, vec![guardian], EventKind::MessagePosted)
        };
        let told: Vec<_> = produce(&message, CREATED)
            .iter()
            .map(|p| (p.notification.recipient_id, p.notification.on_behalf_of))
            .collect();
        assert_eq!(told, [(staff.id, None)], "the assignee alone hears a citizen's message");
    }
}
