//! The projection's helpers, and the backfill's text against the migrations.

use super::*;
use consular_domain::{MissionId, RequestStatus, ServiceTypeId};
use time::OffsetDateTime;
use time::macros::datetime;

const T0: OffsetDateTime = datetime!(2026-03-01 09:00 UTC);

/// Both trees' migration runs the statement `recompute_stage_spells` runs, word for word.
#[test]
fn the_backfill_is_the_migrations_statement() {
    let postgres = include_str!("../../../../../migrations/postgres/2026-11-24-000010_analytics/up.sql");
    let sqlite = include_str!("../../../../../migrations/sqlite/2026-11-24-000010_analytics/up.sql");
    assert!(postgres.contains(pg::BACKFILL_STAGE_SPELLS));
    assert!(sqlite.contains(sqlite::BACKFILL_STAGE_SPELLS));
}

fn entry(minutes: i64, to_status: RequestStatus, from_stage: Option<usize>, to_stage: usize) -> HistoryEntry {
    HistoryEntry {
        at: T0 + time::Duration::minutes(minutes),
        actor: None,
        from_status: None,
        to_status,
        from_stage,
        to_stage,
        reason: None,
    }
}

fn request(closed_at: Option<OffsetDateTime>) -> ServiceRequest {
    ServiceRequest {
        id: RequestId::new(),
        mission_id: MissionId::new(),
        citizen_id: consular_domain::CitizenId::new(),
        service_type_id: ServiceTypeId::new(),
        status: if closed_at.is_some() { RequestStatus::Completed } else { RequestStatus::InReview },
        stages: Vec::new(),
        current_stage: 0,
        assignee_id: None,
        submitted_at: T0,
        sla_due_at: T0 + time::Duration::days(20),
        closed_at,
        version: 1,
        updated_at: T0,
    }
}

#[test]
fn stage_changes_and_closings_may_end_a_spell_other_entries_do_not() {
    use RequestStatus::*;
    assert!(may_end_a_spell(&entry(0, Submitted, None, 0)));
    assert!(may_end_a_spell(&entry(1, InReview, Some(0), 1)));
    assert!(may_end_a_spell(&entry(1, Cancelled, Some(1), 1)));
    assert!(!may_end_a_spell(&entry(1, ActionRequired, Some(1), 1)));
}

/// The rows each write would store, as `record_spells` applies them.
fn apply(stored: &mut Vec<SpellRow>, request: &ServiceRequest, history: &[HistoryEntry]) -> SpellChange {
    let change = SpellChange::of(request, history, stored).unwrap();
    match &change {
        SpellChange::Append(rows) => stored.extend(rows.iter().cloned()),
        SpellChange::Replace(rows) => *stored = rows.clone(),
    }
    change
}

fn spells(rows: &[SpellRow]) -> Vec<(i32, i32, i64)> {
    rows.iter().map(|r| (r.ordinal, r.stage, r.seconds)).collect()
}

#[test]
fn a_new_request_has_no_spell_and_each_stage_change_appends_one() {
    use RequestStatus::*;
    let open = request(None);
    assert_eq!(SpellRow::of_history(&open, &[entry(0, Submitted, None, 0)]).unwrap(), vec![]);

    let mut stored = Vec::new();
    let mut history = vec![entry(0, Submitted, None, 0), entry(5, InReview, Some(0), 0)];
    assert_eq!(apply(&mut stored, &open, &history), SpellChange::Append(vec![]));

    history.push(entry(65, InReview, Some(0), 1));
    let SpellChange::Append(rows) = apply(&mut stored, &open, &history) else { panic!() };
    assert_eq!(spells(&rows), vec![(0, 0, 3900)]);
    assert_eq!(rows[0].mission_id, DbUuid(open.mission_id.0));

    // Completing in the stage it moves to ends the old spell and a zero-length one.
    let closed = ServiceRequest {
        status: Completed,
        closed_at: Some(T0 + time::Duration::minutes(70)),
        ..open.clone()
    };
    history.push(entry(70, Completed, Some(1), 2));
    let SpellChange::Append(rows) = apply(&mut stored, &closed, &history) else { panic!() };
    assert_eq!(spells(&rows), vec![(1, 1, 300), (2, 2, 0)]);
    assert_eq!(spells(&stored), vec![(0, 0, 3900), (1, 1, 300), (2, 2, 0)]);
}

#[test]
fn an_entry_dated_before_earlier_ones_rewrites_the_requests_spells() {
    use RequestStatus::*;
    let open = request(None);
    let mut stored = Vec::new();
    let mut history = vec![entry(0, Submitted, None, 0), entry(60, InReview, Some(0), 1)];
    apply(&mut stored, &open, &history);
    assert_eq!(spells(&stored), vec![(0, 0, 3600)]);
    history.push(entry(30, InReview, Some(0), 2));
    let SpellChange::Replace(rows) = apply(&mut stored, &open, &history) else { panic!() };
    assert_eq!(spells(&rows), vec![(0, 0, 1800), (1, 2, 1800)]);
}

#[test]
fn rows_the_definition_does_not_give_are_replaced() {
    use RequestStatus::*;
    let open = request(None);
    let history = vec![entry(0, Submitted, None, 0), entry(60, InReview, Some(0), 1)];
    let mut stored = SpellRow::of_history(&open, &history).unwrap();
    stored[0].seconds += 1;
    let SpellChange::Replace(rows) = apply(&mut stored, &open, &history) else { panic!() };
    assert_eq!(spells(&rows), vec![(0, 0, 3600)]);
}

/// The migration's statement against `stage_spells`, on both databases: histories with
/// every case of the definition are stored (by the demo's bulk insert and by the
/// requests' own writes, both of which store `stage_spells`' output), then the projection
/// is recomputed by the statement and must come out the same, row for row.
mod backfill_matches_the_domain {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

    use crate::{Database, DbConfig};
    use RequestStatus::*;
    use consular_domain::analytics::stage_spells;
    use consular_domain::{
        Address, Citizen, CitizenId, HistoryEntry, Mission, MissionId, Money, RegistrationStatus, RequestId,
        RequestStatus, ServiceRequest, ServiceType, ServiceTypeId, Stage,
    };
    use consular_ports::{DemoRepository, RequestRepository, SeededRequest, WriteMeta};
    use std::path::Path;
    use time::macros::{date, datetime};
    use time::{Duration, OffsetDateTime};

    const T: OffsetDateTime = datetime!(2026-02-01 08:00:00.250 UTC);

    fn at(minutes: i64) -> OffsetDateTime {
        T + Duration::minutes(minutes)
    }

    fn entry(minutes: i64, to_status: RequestStatus, to_stage: usize) -> HistoryEntry {
        HistoryEntry {
            at: at(minutes),
            actor: None,
            from_status: None,
            to_status,
            from_stage: None,
            to_stage,
            reason: None,
        }
    }

    struct Fixture {
        mission: Mission,
        service_type: ServiceType,
        citizen: Citizen,
    }

    fn fixture() -> Fixture {
        let mission = Mission {
            id: MissionId::new(),
            code: format!("m-{}", uuid::Uuid::now_v7().simple()),
            name: "Mission".to_owned(),
            country: "FR".to_owned(),
            city: "Paris".to_owned(),
            timezone: "Europe/Paris".to_owned(),
            version: 1,
            created_at: T,
            updated_at: T,
        };
        let stage = |name: &str| Stage { name: name.to_owned(), description: String::new() };
        let service_type = ServiceType {
            id: ServiceTypeId::new(),
            code: format!("s_{}", uuid::Uuid::now_v7().simple()),
            name: "Service".to_owned(),
            description: String::new(),
            fee: Money { amount_minor: 100, currency: "EUR".to_owned() },
            sla_days: 10,
            required_documents: Vec::new(),
            stages: vec![stage("one"), stage("two"), stage("three")],
            active: true,
            version: 1,
            created_at: T,
            updated_at: T,
        };
        let citizen = Citizen {
            id: CitizenId::new(),
            mission_id: mission.id,
            given_name: "Alice".to_owned(),
            family_name: "Martin".to_owned(),
            date_of_birth: date!(1990 - 04 - 12),
            place_of_birth: "Lyon".to_owned(),
            nationality: "FR".to_owned(),
            passport_number: "12AB34567".to_owned(),
            passport_expiry: date!(2031 - 04 - 11),
            email: "alice@example.org".to_owned(),
            phone: "+33612345678".to_owned(),
            address: Address {
                line1: "1 Main Street".to_owned(),
                line2: None,
                city: "Ottawa".to_owned(),
                region: None,
                postal_code: None,
                country: "CA".to_owned(),
            },
            emergency_contact: None,
            preferred_language: "fr".to_owned(),
            registration_status: RegistrationStatus::Active,
            registered_at: T,
            activated_at: Some(T),
            deregistered_at: None,
            version: 1,
            created_at: T,
            updated_at: T,
        };
        Fixture { mission, service_type, citizen }
    }

    fn request(
        f: &Fixture,
        history: &[HistoryEntry],
        status: RequestStatus,
        closed_at: Option<i64>,
    ) -> ServiceRequest {
        ServiceRequest {
            id: RequestId::new(),
            mission_id: f.mission.id,
            citizen_id: f.citizen.id,
            service_type_id: f.service_type.id,
            status,
            stages: f.service_type.stages.clone(),
            current_stage: history.last().map_or(0, |e| e.to_stage),
            assignee_id: None,
            submitted_at: history.first().map_or(T, |e| e.at),
            sla_due_at: at(60 * 24 * 10),
            closed_at: closed_at.map(at),
            version: 1,
            updated_at: T,
        }
    }

    /// Every case of `stage_spells`: (history in insertion order, status, closed_at).
    fn cases() -> Vec<(Vec<HistoryEntry>, RequestStatus, Option<i64>)> {
        vec![
            // Submitted, reviewed, moved on, completed.
            (
                vec![
                    entry(0, Submitted, 0),
                    entry(5, InReview, 0),
                    entry(65, InReview, 1),
                    entry(90, Completed, 1),
                ],
                Completed,
                Some(90),
            ),
            // The final entry changes the stage: the old spell ends, a zero-length one of the new stage.
            (
                vec![entry(0, Submitted, 0), entry(30, InReview, 1), entry(45, Completed, 2)],
                Completed,
                Some(45),
            ),
            // The history stops before a final entry: the last spell ends at closed_at.
            (vec![entry(0, Submitted, 0), entry(30, InReview, 1)], Completed, Some(50)),
            // ... unless closed_at is before the spell started.
            (vec![entry(0, Submitted, 0), entry(30, InReview, 1)], Rejected, Some(10)),
            // Ties at one instant keep their insertion order; back to an earlier stage.
            (
                vec![
                    entry(0, Submitted, 0),
                    entry(60, InReview, 1),
                    entry(60, InReview, 2),
                    entry(120, InReview, 1),
                    entry(180, Rejected, 1),
                ],
                Rejected,
                Some(180),
            ),
            // Entries after the first final one are not read.
            (
                vec![
                    entry(0, Submitted, 0),
                    entry(60, Cancelled, 0),
                    entry(120, InReview, 1),
                    entry(180, Completed, 2),
                ],
                Cancelled,
                Some(60),
            ),
            // Inserted out of time order: read in time order.
            (vec![entry(0, Submitted, 0), entry(120, InReview, 2), entry(60, InReview, 1)], InReview, None),
            // Open: the current stage is no spell.
            (
                vec![entry(0, Submitted, 0), entry(60, ActionRequired, 1), entry(70, InReview, 1)],
                InReview,
                None,
            ),
            // Final from the first entry: one zero-length spell.
            (vec![entry(0, Cancelled, 0)], Cancelled, Some(0)),
            // A stage change and a closing at the same instant.
            (
                vec![entry(0, Submitted, 0), entry(60, InReview, 1), entry(60, Completed, 1)],
                Completed,
                Some(60),
            ),
            // The first entry at a later stage, and no change at all.
            (vec![entry(0, Submitted, 2), entry(10, InReview, 2)], InReview, None),
        ]
    }

    async fn check(db: Database) {
        let f = fixture();
        db.insert_reference(std::slice::from_ref(&f.mission), std::slice::from_ref(&f.service_type), &[])
            .await
            .unwrap();
        db.insert_citizens(std::slice::from_ref(&f.citizen)).await.unwrap();

        // The demo's bulk insert.
        let seeded: Vec<SeededRequest> = cases()
            .into_iter()
            .map(|(history, status, closed_at)| SeededRequest {
                request: request(&f, &history, status, closed_at),
                history,
            })
            .collect();
        db.insert_requests(&seeded).await.unwrap();

        // The requests' writes: the first entry, then one update per entry.
        let mut live = Vec::new();
        for (history, status, closed_at) in cases() {
            let Some((first, rest)) = history.split_first() else { continue };
            let mut r = request(&f, std::slice::from_ref(first), Submitted, None);
            r.status = first.to_status;
            r.closed_at = first.to_status.is_final().then_some(first.at);
            RequestRepository::insert(&db, &r, first, &WriteMeta::default()).await.unwrap();
            for (i, e) in rest.iter().enumerate() {
                let mut next = r.clone();
                next.version = r.version + 1;
                next.current_stage = e.to_stage;
                next.status = e.to_status;
                if i + 1 == rest.len() {
                    next.status = status;
                    next.closed_at = closed_at.map(at);
                }
                RequestRepository::update(&db, &next, r.version, Some(e.clone()), &WriteMeta::default())
                    .await
                    .unwrap();
                r = next;
            }
            live.push(SeededRequest { request: r, history });
        }

        let mut expected = Vec::new();
        for s in seeded.iter().chain(&live) {
            for (ordinal, spell) in (0..).zip(stage_spells(&s.history, s.request.closed_at)) {
                expected.push((s.request.id, ordinal, spell));
            }
        }
        expected.sort_by_key(|(id, ordinal, _)| (id.0, *ordinal));
        let truncate = |spells: Vec<(RequestId, u32, consular_domain::analytics::StageSpell)>| {
            spells
                .into_iter()
                .map(|(id, ordinal, mut s)| {
                    // Stored to the microsecond.
                    s.entered_at =
                        s.entered_at.replace_nanosecond(s.entered_at.microsecond() * 1000).unwrap();
                    s.left_at = s.left_at.replace_nanosecond(s.left_at.microsecond() * 1000).unwrap();
                    (id, ordinal, s)
                })
                .collect::<Vec<_>>()
        };
        let expected = truncate(expected);
        assert!(expected.iter().any(|(_, _, s)| s.entered_at == s.left_at), "a zero-length spell");

        let maintained = db.stored_stage_spells().await.unwrap();
        assert_eq!(maintained, expected, "the spells the writes stored");
        let recomputed = db.recompute_stage_spells().await.unwrap();
        assert_eq!(recomputed, expected.len() as u64);
        assert_eq!(
            db.stored_stage_spells().await.unwrap(),
            expected,
            "the spells the migration's SQL computes"
        );
    }

    #[tokio::test(flavor = "multi_thread")]
    async fn sqlite() {
        let dir = tempfile::tempdir().unwrap();
        let db = Database::connect(&DbConfig::new(consular_testkit::sqlite_url(dir.path()))).unwrap();
        db.migrate().await.unwrap();
        check(db).await;
    }

    #[tokio::test(flavor = "multi_thread")]
    async fn postgres() {
        let url = tokio::task::spawn_blocking(|| {
            let migrations = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../migrations/postgres");
            let key = consular_testkit::fingerprint(&migrations)?;
            consular_testkit::postgres::fresh_database(&key, |url| {
                crate::migrate_blocking(url).map_err(|e| e.to_string())
            })
        })
        .await
        .unwrap()
        .unwrap();
        let db = Database::connect(&DbConfig { max_connections: 2, ..DbConfig::new(url) }).unwrap();
        check(db).await;
    }
}
