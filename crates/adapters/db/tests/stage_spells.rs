//! The migrations' statements against `stage_spells`, on both databases: histories with
//! every case of the definition are stored (by the requests' own writes, then by the
//! demo's bulk insert, both of which store `stage_spells`' output), then the projection is
//! recomputed by the statement (`Database::recompute_stage_spells`, the migration's text)
//! and must come out the same, row for row. The rollup by day (`stage_spell_days`) holds
//! the same spells, appended by the writes (a rewritten history included), rebuilt after
//! the bulk insert, and the services view counts them all whether it reads the rollup or,
//! while the rollup is out of date, the projection.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use RequestStatus::*;
use common::on_both_databases;
use consular_db::Database;
use consular_domain::analytics::{StageSpell, stage_spells};
use consular_domain::{
    Citizen, HistoryEntry, Mission, RequestId, RequestStatus, ServiceRequest, ServiceType, Stage, fixtures,
};
use consular_ports::Consistency;
use consular_ports::{
    AnalyticsQuery, AnalyticsRepository, Clock, DemoRepository, MissionScope, RequestRepository,
    SeededRequest, WriteMeta,
};
use std::sync::Arc;
use time::macros::datetime;
use time::{Duration, OffsetDateTime};

const T: OffsetDateTime = datetime!(2026-02-01 08:00:00.250 UTC);

fn at(minutes: i64) -> OffsetDateTime {
    T + Duration::minutes(minutes)
}

fn entry(minutes: i64, to_status: RequestStatus, to_stage: usize) -> HistoryEntry {
    fixtures::history_entry(at(minutes), to_status, to_stage)
}

struct Fixture {
    mission: Mission,
    service_type: ServiceType,
    citizen: Citizen,
}

fn fixture() -> Fixture {
    let mission = common::mission(&format!("m-{}", uuid::Uuid::now_v7().simple()));
    let stage = |name: &str| Stage { name: name.to_owned(), description: String::new() };
    let service_type = ServiceType {
        stages: vec![stage("one"), stage("two"), stage("three")],
        ..common::service_type(&format!("s_{}", uuid::Uuid::now_v7().simple()))
    };
    let citizen = common::citizen(mission.id, "12AB34567");
    Fixture { mission, service_type, citizen }
}

fn request(
    f: &Fixture,
    history: &[HistoryEntry],
    status: RequestStatus,
    closed_at: Option<i64>,
) -> ServiceRequest {
    ServiceRequest {
        status,
        current_stage: history.last().map_or(0, |e| e.to_stage),
        submitted_at: history.first().map_or(T, |e| e.at),
        sla_due_at: at(60 * 24 * 10),
        closed_at: closed_at.map(at),
        ..fixtures::service_request(f.mission.id, f.citizen.id, &f.service_type, T)
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
        (vec![entry(0, Submitted, 0), entry(30, InReview, 1), entry(45, Completed, 2)], Completed, Some(45)),
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
        (vec![entry(0, Submitted, 0), entry(60, ActionRequired, 1), entry(70, InReview, 1)], InReview, None),
        // Final from the first entry: one zero-length spell.
        (vec![entry(0, Cancelled, 0)], Cancelled, Some(0)),
        // A stage change and a closing at the same instant.
        (vec![entry(0, Submitted, 0), entry(60, InReview, 1), entry(60, Completed, 1)], Completed, Some(60)),
        // The first entry at a later stage, and no change at all.
        (vec![entry(0, Submitted, 2), entry(10, InReview, 2)], InReview, None),
    ]
}

/// The rows of the rollup by day `spells` make for the service type `service_type`: (UTC
/// day, service type, stage) and the items `<left_at in Unix µs>:<seconds>`, sorted.
fn spell_days(
    service_type: uuid::Uuid,
    spells: &[(RequestId, u32, StageSpell)],
) -> Vec<((time::Date, uuid::Uuid, i32), Vec<String>)> {
    let mut days = std::collections::BTreeMap::<_, Vec<String>>::new();
    for (_, _, spell) in spells {
        let micros = spell.left_at.unix_timestamp_nanos() / 1000;
        days.entry((spell.left_at.date(), service_type, spell.stage as i32))
            .or_default()
            .push(format!("{micros}:{}", spell.seconds()));
    }
    days.into_iter()
        .map(|(key, mut items)| {
            items.sort();
            (key, items)
        })
        .collect()
}

/// The rollup rows of `service_type` (other tests may share the database).
async fn stored_days(
    db: &Database,
    service_type: uuid::Uuid,
) -> Vec<((time::Date, uuid::Uuid, i32), Vec<String>)> {
    db.stored_spell_days().await.unwrap().into_iter().filter(|((_, t, _), _)| *t == service_type).collect()
}

/// A clock stopped at the end of T's day: the views' instant "now".
struct DayAfter;

impl Clock for DayAfter {
    fn now(&self) -> OffsetDateTime {
        T.replace_time(time::Time::MIDNIGHT) + Duration::days(1)
    }
}

/// How many spells of each stage of `f`'s service type the services view over all
/// missions counts on T's day.
async fn counted(db: &Database, f: &Fixture) -> Vec<(u32, u64)> {
    let day = T.replace_time(time::Time::MIDNIGHT);
    let query = AnalyticsQuery {
        missions: MissionScope::All,
        service_type: Some(f.service_type.id),
        boundaries: vec![day, day + Duration::days(1)],
    };
    let clock: Arc<dyn Clock> = Arc::new(DayAfter);
    let figures = AnalyticsRepository::services(db, &query, &clock, Consistency::Latest).await.unwrap();
    figures.stages.iter().map(|g| (g.stage, g.range.count)).collect()
}

async fn the_backfill_computes_what_the_writes_stored(db: Database) {
    let f = fixture();
    db.insert_reference(std::slice::from_ref(&f.mission), std::slice::from_ref(&f.service_type), &[])
        .await
        .unwrap();
    db.insert_citizens(std::slice::from_ref(&f.citizen)).await.unwrap();

    // The requests' writes: the first entry, then one update per entry (the entry dated
    // before earlier ones rewrites its request's spells).
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
    let live_spells = expected_spells(&live);
    assert_eq!(
        stored_days(&db, f.service_type.id.0).await,
        spell_days(f.service_type.id.0, &live_spells),
        "the rollup by day the writes maintained"
    );
    let by_stage = |spells: &[(RequestId, u32, StageSpell)]| {
        let mut counts = std::collections::BTreeMap::<u32, u64>::new();
        for (_, _, spell) in spells {
            *counts.entry(spell.stage as u32).or_default() += 1;
        }
        counts.into_iter().collect::<Vec<_>>()
    };
    assert_eq!(counted(&db, &f).await, by_stage(&live_spells), "counted from the rollup");

    // The demo's bulk insert: the rollup is out of date until `finish_requests`, and the
    // view reads the projection meanwhile.
    let seeded: Vec<SeededRequest> = cases()
        .into_iter()
        .map(|(history, status, closed_at)| SeededRequest {
            request: request(&f, &history, status, closed_at),
            history,
        })
        .collect();
    db.insert_requests(&seeded).await.unwrap();
    let all: Vec<SeededRequest> = seeded.iter().chain(&live).cloned().collect();
    let expected = expected_spells(&all);
    assert!(expected.iter().any(|(_, _, s)| s.entered_at == s.left_at), "a zero-length spell");
    assert_eq!(counted(&db, &f).await, by_stage(&expected), "counted from the projection");
    db.finish_requests().await.unwrap();
    assert_eq!(
        stored_days(&db, f.service_type.id.0).await,
        spell_days(f.service_type.id.0, &expected),
        "the rollup rebuilt"
    );
    assert_eq!(counted(&db, &f).await, by_stage(&expected), "counted from the rebuilt rollup");

    let maintained = db.stored_stage_spells().await.unwrap();
    let maintained: Vec<_> =
        maintained.into_iter().filter(|(id, _, _)| expected.iter().any(|(e, _, _)| e == id)).collect();
    assert_eq!(maintained, expected, "the spells the writes stored");
    db.recompute_stage_spells().await.unwrap();
    let recomputed = db.stored_stage_spells().await.unwrap();
    let recomputed: Vec<_> =
        recomputed.into_iter().filter(|(id, _, _)| expected.iter().any(|(e, _, _)| e == id)).collect();
    assert_eq!(recomputed, expected, "the spells the migration's SQL computes");
}

/// The spells of `requests` as stored (to the microsecond), by request and ordinal.
fn expected_spells(requests: &[SeededRequest]) -> Vec<(RequestId, u32, StageSpell)> {
    let mut expected = Vec::new();
    for s in requests {
        for (ordinal, mut spell) in (0..).zip(stage_spells(&s.history, s.request.closed_at)) {
            spell.entered_at =
                spell.entered_at.replace_nanosecond(spell.entered_at.microsecond() * 1000).unwrap();
            spell.left_at = spell.left_at.replace_nanosecond(spell.left_at.microsecond() * 1000).unwrap();
            expected.push((s.request.id, ordinal, spell));
        }
    }
    expected.sort_by_key(|(id, ordinal, _)| (id.0, *ordinal));
    expected
}

on_both_databases!(the_backfill_computes_what_the_writes_stored);
