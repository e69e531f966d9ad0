//! The migration's statement against `stage_spells`, on both databases: histories with
//! every case of the definition are stored (by the demo's bulk insert and by the
//! requests' own writes, both of which store `stage_spells`' output), then the projection
//! is recomputed by the statement (`Database::recompute_stage_spells`, the migration's
//! text) and must come out the same, row for row.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use RequestStatus::*;
use common::on_both_databases;
use consular_db::Database;
use consular_domain::analytics::stage_spells;
use consular_domain::{
    Citizen, HistoryEntry, Mission, RequestId, RequestStatus, ServiceRequest, ServiceType, Stage,
};
use consular_ports::{DemoRepository, RequestRepository, SeededRequest, WriteMeta};
use time::macros::datetime;
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

async fn the_backfill_computes_what_the_writes_stored(db: Database) {
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
                s.entered_at = s.entered_at.replace_nanosecond(s.entered_at.microsecond() * 1000).unwrap();
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
    assert_eq!(db.stored_stage_spells().await.unwrap(), expected, "the spells the migration's SQL computes");
}

on_both_databases!(the_backfill_computes_what_the_writes_stored);
