//! The stage spells' projection kept by every live transition of a request.

use super::*;

/// What the stored requests are now, read back through the request repository.
async fn stored_requests(db: &Database, ids: &[RequestId]) -> Vec<SeededRequest> {
    let mut out = Vec::with_capacity(ids.len());
    for id in ids {
        let request = RequestRepository::get(db, *id).await.unwrap().unwrap();
        let history = db.history(*id).await.unwrap();
        out.push(SeededRequest { request, history });
    }
    out
}

/// A step of a script: who does what, hours after the submission.
type Step = (Role, Action, f64);

/// Applies `action` at `at` and stores it as the use case does.
pub(super) async fn step(
    db: &Database,
    r: &mut ServiceRequest,
    role: Role,
    action: Action,
    at: OffsetDateTime,
) {
    let version = r.version;
    let actor = match role {
        Role::Citizen => Subject { kind: PrincipalKind::Citizen, id: PrincipalId(r.citizen_id.0) },
        Role::Staff => Subject { kind: PrincipalKind::Staff, id: PrincipalId::new() },
    };
    let entry = r.apply(role, action, Some(actor), Some("live".to_owned()), at).unwrap();
    RequestRepository::update(db, r, version, Some(entry), &WriteMeta::default()).await.unwrap();
}

/// The next step towards completion: the next stage, the approval, the completion.
fn forward(r: &ServiceRequest) -> Action {
    let allowed = r.allowed_actions(Role::Staff);
    [
        Action::AdvanceStage,
        Action::To(RequestStatus::Approved),
        Action::To(RequestStatus::Completed),
        Action::To(RequestStatus::InReview),
    ]
    .into_iter()
    .find(|a| allowed.contains(a))
    .unwrap()
}

/// The stage spells are kept as requests move (`RequestRepository::update`): spells of
/// the seeded data set, of seeded requests moved on live, and of new requests walked
/// through their stages (sub-second instants, two entries at one instant, an
/// `action_required` round trip, a spell ending exactly at a boundary, reassignments),
/// all equal to the brute force over what the request repository reads back, row for row
/// in `request_stage_spells`; rebuilding the projection from the history changes nothing.
async fn stage_spells_follow_live_transitions(db: Database) {
    let s = seeded(&db).await;
    let now = s.now() + Duration::hours(1);
    let mut ids: Vec<RequestId> = s.requests.iter().map(|r| r.request.id).collect();

    // Seeded open requests moved on after the data set's `now`: most to completion.
    let open: Vec<&SeededRequest> =
        s.requests.iter().filter(|r| r.request.status.is_open()).take(24).collect();
    assert_eq!(open.len(), 24);
    for (i, seeded) in open.iter().enumerate() {
        let mut r = seeded.request.clone();
        let mut at = s.now() + Duration::seconds(i as i64 * 60);
        let steps = if i % 3 == 0 { 1 } else { 12 };
        for _ in 0..steps {
            if r.status.is_final() {
                break;
            }
            at += Duration::seconds(2);
            let action = forward(&r);
            step(&db, &mut r, Role::Staff, action, at).await;
        }
    }
    // Reassignments (no history entry): an open request and a closed one change hands, a
    // closed one is left to nobody.
    let open_one =
        s.requests.iter().find(|r| r.request.status.is_open() && r.request.assignee_id.is_some()).unwrap();
    let mut closed =
        s.requests.iter().filter(|r| r.request.status.is_final() && r.request.assignee_id.is_some());
    for (r, to_nobody) in [(open_one, false), (closed.next().unwrap(), false), (closed.next().unwrap(), true)]
    {
        let mut r = RequestRepository::get(&db, r.request.id).await.unwrap().unwrap();
        let other = s
            .generator
            .staff()
            .iter()
            .find(|m| m.mission_id == r.mission_id && Some(m.id) != r.assignee_id)
            .unwrap()
            .id;
        let version = r.version;
        r.reassign((!to_nobody).then_some(other), now - Duration::minutes(1)).unwrap();
        RequestRepository::update(&db, &r, version, None, &WriteMeta::default()).await.unwrap();
    }

    // New requests of a three-stage type, walked through at sub-second instants.
    let mission = stored_mission(&db, "fr-live").await;
    let mut live_type = service_type("live_passport");
    live_type.stages.push(Stage { name: "Dispatch".to_owned(), description: String::new() });
    ServiceTypeRepository::insert(&db, &live_type, &WriteMeta::default()).await.unwrap();
    let citizen = stored_citizen(&db, mission.id, "LV0001").await;
    let midnight = (today("UTC", now) - Duration::days(6)).midnight().assume_utc();
    let hours = |h: f64| Duration::seconds_f64(h * 3_600.0);
    use RequestStatus::*;
    let (staff, citizen_role) = (Role::Staff, Role::Citizen);
    let scripts: Vec<(OffsetDateTime, Vec<Step>)> = vec![
        // Three stages, the approval and the last advance at one instant.
        (
            midnight - hours(50.3) + Duration::milliseconds(700),
            vec![
                (staff, Action::To(InReview), 1.1),
                (staff, Action::AdvanceStage, 5.25),
                (staff, Action::To(Approved), 6.0),
                (staff, Action::AdvanceStage, 6.0),
                (staff, Action::To(Completed), 30.9),
            ],
        ),
        // An `action_required` round trip in stage 0, then rejected there.
        (
            midnight - hours(80.0) + Duration::milliseconds(700),
            vec![
                (staff, Action::To(InReview), 2.0),
                (staff, Action::To(ActionRequired), 3.0),
                (staff, Action::To(InReview), 50.5),
                (staff, Action::To(Rejected), 51.0),
            ],
        ),
        // Cancelled by the citizen before any review.
        (
            midnight - hours(4.7) + Duration::milliseconds(700),
            vec![(citizen_role, Action::To(Cancelled), 0.4)],
        ),
        // Open in stage 1: only stage 0 ended.
        (
            midnight - hours(30.0) + Duration::milliseconds(700),
            vec![(staff, Action::To(InReview), 1.0), (staff, Action::AdvanceStage, 26.0)],
        ),
        // Never touched: no spell.
        (midnight - hours(3.0) + Duration::milliseconds(700), vec![]),
        // Stage 0 left exactly at a UTC midnight (the later bucket), then to the end.
        (
            midnight - hours(3.0) + Duration::milliseconds(250),
            vec![
                (staff, Action::To(InReview), 1.0),
                (staff, Action::AdvanceStage, 3.0 - 0.25 / 3_600.0),
                (staff, Action::AdvanceStage, 20.0),
                (staff, Action::To(Approved), 21.0),
                (staff, Action::To(Completed), 22.0),
            ],
        ),
        // Two advances at one instant (a spell of 0 seconds in stage 1), then cancelled by
        // staff once approved, in stage 2.
        (
            midnight + hours(1.0) + Duration::milliseconds(700),
            vec![
                (staff, Action::To(InReview), 0.5),
                (staff, Action::AdvanceStage, 1.5),
                (staff, Action::AdvanceStage, 1.5),
                (staff, Action::To(Approved), 3.5),
                (staff, Action::To(Cancelled), 4.5),
            ],
        ),
    ];
    for (submitted_at, steps) in scripts {
        let r = ServiceRequest {
            submitted_at,
            sla_due_at: submitted_at + Duration::days(2),
            updated_at: submitted_at,
            ..request(mission.id, citizen.id, &live_type)
        };
        let mut r = stored_request(&db, r).await;
        for (role, action, after) in steps {
            step(&db, &mut r, role, action, submitted_at + hours(after)).await;
        }
        ids.push(r.id);
    }

    let stored = stored_requests(&db, &ids).await;
    let live = &stored[stored.len() - 7..];
    assert_eq!(live.iter().map(|r| r.history.len()).sum::<usize>(), 6 + 5 + 2 + 3 + 1 + 6 + 6);
    let queries = [
        (
            query(MissionScope::All, None, "UTC", last_days("UTC", now, 30), Granularity::Day, now),
            "all, UTC days",
        ),
        (
            query(
                MissionScope::One(mission.id),
                None,
                "Europe/Paris",
                last_days("Europe/Paris", now, 14),
                Granularity::Day,
                now,
            ),
            "the live mission, Paris days",
        ),
        (
            query(
                MissionScope::All,
                Some(live_type.id),
                "UTC",
                last_days("UTC", now, 10),
                Granularity::Week,
                now,
            ),
            "the live type, UTC weeks",
        ),
    ];
    let mut before = Vec::new();
    for (q, what) in &queries {
        let figures = check(&db, &stored, q, now, what).await;
        assert!(!figures.services.stages.is_empty(), "{what}");
        before.push(figures);
    }

    // The projection as stored: the brute force's spells, request by request, in order.
    let mut spells: Vec<(RequestId, u32, StageSpell)> = stored
        .iter()
        .flat_map(|r| {
            let spells = stage_spells(&r.history, r.request.closed_at);
            spells.into_iter().enumerate().map(|(i, spell)| (r.request.id, i as u32, spell))
        })
        .collect();
    spells.sort_by_key(|(id, ordinal, _)| (*id, *ordinal));
    assert_eq!(db.stored_stage_spells().await.unwrap(), spells, "the rows the writes maintained");
    // The rollup by day the writes appended to (the views over all missions read it) is
    // what a rebuild from the projection gives.
    let appended = db.stored_spell_days().await.unwrap();
    assert!(db.rebuild_spell_days().await.unwrap() > 0);
    assert_eq!(db.stored_spell_days().await.unwrap(), appended, "the rollup the writes maintained");
    // Rebuilt from the history: the same rows, the same figures.
    assert_eq!(db.recompute_stage_spells().await.unwrap(), spells.len() as u64);
    assert_eq!(db.stored_stage_spells().await.unwrap(), spells, "the rows rebuilt");
    for ((q, what), before) in queries.iter().zip(&before) {
        let after = check(&db, &stored, q, now, &format!("{what}, rebuilt")).await;
        assert_eq!(after.overview, before.overview, "{what}");
        assert_eq!(after.services.requests, before.services.requests, "{what}");
        assert_eq!(after.services.stages, before.services.stages, "{what}");
        assert_eq!(after.staff, before.staff, "{what}");
    }
    let live_stages = expected::stages(
        live,
        &query(MissionScope::All, None, "UTC", last_days("UTC", now, 10), Granularity::Day, now),
    );
    assert_eq!(
        live_stages.iter().map(|g| (g.stage, g.range.count)).collect::<Vec<_>>(),
        [(0, 6), (1, 3), (2, 3)],
        "the fixture's spells: stage 0 of all but the untouched one, stages 1 and 2 of three"
    );
    let spells: Vec<_> = live.iter().flat_map(|r| stage_spells(&r.history, r.request.closed_at)).collect();
    assert!(spells.iter().any(|spell| spell.seconds() == 0), "a spell of 0 seconds");
    assert!(spells.iter().any(|spell| spell.left_at == midnight), "a spell ending at a boundary");
}

on_both_databases!(stage_spells_follow_live_transitions,);
