//! Service requests: writes, history, every listing filter and its index, workloads and queues.

use super::*;

async fn stored_staff(db: &Database, member: StaffMember) -> StaffMember {
    StaffRepository::insert(db, &member, None, &WriteMeta::default()).await.unwrap();
    member
}

fn staff_subject(member: &StaffMember) -> Subject {
    Subject { kind: PrincipalKind::Staff, id: PrincipalId(member.id.0) }
}

async fn requests_round_trip_and_updates_check_the_version(db: Database) {
    let paris = stored_mission(&db, "fr-paris").await;
    let passport = stored_service_type(&db, "passport").await;
    let alice = stored_citizen(&db, paris.id, "AA1").await;
    let bob = stored_staff(&db, staff_member(paris.id, &[passport.id])).await;
    let eve = stored_staff(&db, staff_member(paris.id, &[passport.id])).await;

    let mut r = ServiceRequest { assignee_id: Some(bob.id), ..request(paris.id, alice.id, &passport) };
    let first = first_entry(&r);
    RequestRepository::insert(&db, &r, &first, &audited("service_request", r.id.0)).await.unwrap();
    assert_eq!(RequestRepository::get(&db, r.id).await.unwrap(), Some(r.clone()));
    assert_eq!(RequestRepository::get(&db, RequestId::new()).await.unwrap(), None);
    let again = RequestRepository::insert(&db, &r, &first_entry(&r), &WriteMeta::default()).await;
    assert!(is_duplicate(&again, "service_requests_pkey"), "{again:?}");

    // A transition with its history entry.
    let review =
        r.apply(Role::Staff, Action::To(RequestStatus::InReview), Some(staff_subject(&bob)), None, now());
    let review = review.unwrap();
    RequestRepository::update(&db, &r, 1, Some(review.clone()), &audited("service_request", r.id.0))
        .await
        .unwrap();
    assert_eq!(RequestRepository::get(&db, r.id).await.unwrap(), Some(r.clone()));

    // A pure reassignment appends no entry; unassigning stores NULL.
    r.assignee_id = Some(eve.id);
    r.version = 3;
    RequestRepository::update(&db, &r, 2, None, &WriteMeta::default()).await.unwrap();
    assert_eq!(RequestRepository::get(&db, r.id).await.unwrap().unwrap().assignee_id, Some(eve.id));
    r.assignee_id = None;
    r.version = 4;
    RequestRepository::update(&db, &r, 3, None, &WriteMeta::default()).await.unwrap();
    assert_eq!(RequestRepository::get(&db, r.id).await.unwrap(), Some(r.clone()));
    assert_eq!(db.history(r.id).await.unwrap(), [first, review.clone()]);

    // Stages and closing round-trip.
    let advanced =
        r.apply(Role::Staff, Action::AdvanceStage, None, Some("documents ok".into()), now()).unwrap();
    RequestRepository::update(&db, &r, 4, Some(advanced), &WriteMeta::default()).await.unwrap();
    let approved = r.apply(Role::Staff, Action::To(RequestStatus::Approved), None, None, now()).unwrap();
    RequestRepository::update(&db, &r, 5, Some(approved), &WriteMeta::default()).await.unwrap();
    let completed = r.apply(Role::Staff, Action::To(RequestStatus::Completed), None, None, now()).unwrap();
    RequestRepository::update(&db, &r, 6, Some(completed), &WriteMeta::default()).await.unwrap();
    let stored = RequestRepository::get(&db, r.id).await.unwrap().unwrap();
    assert_eq!((stored.status, stored.current_stage, stored.version), (RequestStatus::Completed, 1, 7));
    assert!(stored.closed_at.is_some());
    assert_eq!(stored, r);

    // A stale or vanished request changes nothing and stores no entry or audit.
    let stale = ServiceRequest { assignee_id: Some(bob.id), version: 8, ..r.clone() };
    let entry = HistoryEntry { reason: Some("stale".into()), ..review.clone() };
    let conflict =
        RequestRepository::update(&db, &stale, 6, Some(entry.clone()), &audited("service_request", r.id.0))
            .await;
    assert!(matches!(conflict, Err(RepoError::VersionConflict)), "{conflict:?}");
    let unknown = request(paris.id, alice.id, &passport);
    let meta = audited("service_request", unknown.id.0);
    let gone = RequestRepository::update(&db, &unknown, 1, Some(entry), &meta).await;
    assert!(matches!(gone, Err(RepoError::NotFound)), "{gone:?}");
    assert_eq!(RequestRepository::get(&db, r.id).await.unwrap(), Some(r.clone()));
    assert_eq!(db.history(r.id).await.unwrap().len(), 5);
    assert_eq!(db.count_rows("request_history").await.unwrap(), 5);
    assert_eq!(db.count_rows("audit_events").await.unwrap(), 2);
}

async fn a_request_with_unknown_references_is_not_stored(db: Database) {
    let paris = stored_mission(&db, "fr-paris").await;
    let passport = stored_service_type(&db, "passport").await;
    let alice = stored_citizen(&db, paris.id, "AA1").await;
    let valid = request(paris.id, alice.id, &passport);
    let broken = [
        ServiceRequest { mission_id: MissionId::new(), ..valid.clone() },
        ServiceRequest { citizen_id: CitizenId::new(), ..valid.clone() },
        ServiceRequest { service_type_id: ServiceTypeId::new(), ..valid.clone() },
        ServiceRequest { assignee_id: Some(StaffId::new()), ..valid.clone() },
    ];
    for r in &broken {
        let meta = WriteMeta {
            events: vec![outbox_event("request.submitted", r.id.0)],
            ..audited("service_request", r.id.0)
        };
        let refused = RequestRepository::insert(&db, r, &first_entry(r), &meta).await;
        assert!(matches!(refused, Err(RepoError::Other(_))), "{refused:?}");
    }
    for table in ["service_requests", "request_history", "audit_events", "outbox_events"] {
        assert_eq!(db.count_rows(table).await.unwrap(), 0, "{table}");
    }
    // An update to an unknown assignee is refused the same way.
    let r = stored_request(&db, valid).await;
    let reassigned = ServiceRequest { assignee_id: Some(StaffId::new()), version: 2, ..r.clone() };
    let refused = RequestRepository::update(&db, &reassigned, 1, None, &WriteMeta::default()).await;
    assert!(matches!(refused, Err(RepoError::Other(_))), "{refused:?}");
    assert_eq!(RequestRepository::get(&db, r.id).await.unwrap(), Some(r));
}

async fn history_is_kept_in_insertion_order(db: Database) {
    let paris = stored_mission(&db, "fr-paris").await;
    let passport = stored_service_type(&db, "passport").await;
    let alice = stored_citizen(&db, paris.id, "AA1").await;
    let bob = stored_staff(&db, staff_member(paris.id, &[passport.id])).await;
    let mut r = stored_request(&db, request(paris.id, alice.id, &passport)).await;
    let other = stored_request(&db, request(paris.id, alice.id, &passport)).await;

    // The same instant, then earlier ones: the order is the insertion order, not `at`.
    let at = datetime!(2026-11-22 10:00:00 UTC);
    let steps = [
        (Action::To(RequestStatus::InReview), at, Some(staff_subject(&bob)), None),
        (Action::To(RequestStatus::ActionRequired), at, None, Some("missing photo".to_owned())),
        (Action::To(RequestStatus::InReview), at - Duration::hours(1), Some(staff_subject(&bob)), None),
        (Action::AdvanceStage, at - Duration::days(1), None, Some("ünïcode ✓".to_owned())),
    ];
    let mut expected = vec![first_entry(&r)];
    for (action, when, actor, reason) in steps {
        let expected_version = r.version;
        let entry = r.apply(Role::Staff, action, actor, reason, when).unwrap();
        RequestRepository::update(&db, &r, expected_version, Some(entry.clone()), &WriteMeta::default())
            .await
            .unwrap();
        expected.push(entry);
        // Interleaved with another request's history.
        let note = HistoryEntry { reason: Some("other".into()), ..first_entry(&other) };
        let mut o = RequestRepository::get(&db, other.id).await.unwrap().unwrap();
        o.version += 1;
        RequestRepository::update(&db, &o, o.version - 1, Some(note), &WriteMeta::default()).await.unwrap();
    }
    assert_eq!(db.history(r.id).await.unwrap(), expected);
    assert_eq!(expected[4].from_stage, Some(0));
    assert_eq!(expected[4].to_stage, 1);
    assert_eq!(db.history(other.id).await.unwrap().len(), 5);
    assert_eq!(db.history(RequestId::new()).await.unwrap(), []);
}

/// What `RequestRepository::list` must return for `filter`, decided in Rust from the
/// port's contract: every given filter matches, newest (largest id) first.
fn expected_list(all: &[ServiceRequest], f: &RequestFilter) -> Vec<RequestId> {
    let mut ids: Vec<RequestId> = all
        .iter()
        .filter(|r| f.mission_id.is_none_or(|m| r.mission_id == m))
        .filter(|r| f.citizen_id.is_none_or(|c| r.citizen_id == c))
        .filter(|r| f.statuses.is_empty() || f.statuses.contains(&r.status))
        .filter(|r| f.service_type_id.is_none_or(|t| r.service_type_id == t))
        .filter(|r| f.within_services.as_ref().is_none_or(|within| within.contains(&r.service_type_id)))
        .filter(|r| f.submitted_from.is_none_or(|from| r.submitted_at >= from))
        .filter(|r| f.submitted_to.is_none_or(|to| r.submitted_at < to))
        .filter(|r| f.assignee_id.is_none_or(|a| r.assignee_id == Some(a)))
        .filter(|r| f.overdue.is_none_or(|o| o == r.is_overdue(f.overdue_at.unwrap())))
        .map(|r| r.id)
        .collect();
    ids.sort_by(|a, b| b.cmp(a));
    ids
}

/// Every page of a listing, two at a time: the concatenation must be the whole listing,
/// with no gap and no repeat.
async fn listed_requests(db: &Database, filter: &RequestFilter) -> Vec<RequestId> {
    let whole = RequestRepository::list(
        db,
        filter.clone(),
        PageRequest { limit: 100, after: None },
        Consistency::Latest,
    )
    .await;
    let whole: Vec<RequestId> = whole.unwrap().items.iter().map(|r| r.id).collect();
    let mut paged = Vec::new();
    let mut after = None;
    loop {
        let page =
            RequestRepository::list(db, filter.clone(), PageRequest { limit: 2, after }, Consistency::Latest)
                .await
                .unwrap();
        assert!(page.items.len() <= 2);
        paged.extend(page.items.iter().map(|r| r.id));
        match page.next_after {
            Some(next) => {
                assert_eq!(Some(next), page.items.last().map(|r| r.id.0));
                after = Some(next);
            }
            None => break,
        }
    }
    assert_eq!(paged, whole, "pages of {filter:?}");
    whole
}

async fn requests_are_listed_newest_first_by_every_filter(db: Database) {
    use RequestStatus::*;
    let paris = stored_mission(&db, "fr-paris").await;
    let lyon = stored_mission(&db, "fr-lyon").await;
    let passport = stored_service_type(&db, "passport").await;
    let visa = stored_service_type(&db, "visa").await;
    let alice = stored_citizen(&db, paris.id, "AA1").await;
    let carol = stored_citizen(&db, paris.id, "CC1").await;
    let dave = stored_citizen(&db, lyon.id, "DD1").await;
    let bob = stored_staff(&db, staff_member(paris.id, &[passport.id, visa.id])).await;
    let eve = stored_staff(&db, staff_member(paris.id, &[visa.id])).await;
    let zed = stored_staff(&db, staff_member(lyon.id, &[passport.id])).await;

    let t0 = datetime!(2026-03-01 09:00:00 UTC);
    let at = t0 + Duration::days(30);
    let day = |n: i64| t0 + Duration::days(n);
    // (mission, citizen, type, status, assignee, submitted, due)
    let specs = [
        (paris.id, alice.id, &passport, Submitted, Some(bob.id), day(0), day(21)), // 0 overdue
        (paris.id, alice.id, &visa, InReview, Some(eve.id), day(1), day(40)),      // 1
        (paris.id, carol.id, &passport, Completed, Some(bob.id), day(2), day(5)),  // 2 closed
        (paris.id, carol.id, &visa, ActionRequired, None, day(3), day(10)),        // 3 overdue
        (lyon.id, dave.id, &passport, Approved, Some(zed.id), day(4), day(25)),    // 4 overdue
        (lyon.id, dave.id, &visa, Cancelled, None, day(5), day(6)),                // 5 closed
        (paris.id, alice.id, &passport, Rejected, Some(bob.id), day(6), day(7)),   // 6 closed
        (paris.id, alice.id, &passport, InReview, Some(bob.id), day(7), day(31)),  // 7
        (paris.id, carol.id, &passport, Submitted, Some(eve.id), day(8), at),      // 8 due at `at`
    ];
    let mut all = Vec::new();
    for (mission, citizen, service_type, status, assignee, submitted_at, sla_due_at) in specs {
        let r = ServiceRequest {
            status,
            assignee_id: assignee,
            submitted_at,
            sla_due_at,
            closed_at: status.is_final().then_some(sla_due_at),
            ..request(mission, citizen, service_type)
        };
        all.push(stored_request(&db, r).await);
    }
    let ids = |picked: &[usize]| {
        let mut ids: Vec<RequestId> = picked.iter().map(|&i| all[i].id).collect();
        ids.sort_by(|a, b| b.cmp(a));
        ids
    };

    // The whole listing returns the stored requests, newest first.
    let everything =
        RequestRepository::list(&db, RequestFilter::default(), PageRequest::default(), Consistency::Latest)
            .await;
    let mut newest_first = all.clone();
    newest_first.reverse();
    assert_eq!(everything.unwrap().items, newest_first);

    let none = RequestFilter::default();
    let overdue_at = Some(at);
    let filters = [
        RequestFilter { mission_id: Some(paris.id), ..none.clone() },
        RequestFilter { mission_id: Some(MissionId::new()), ..none.clone() },
        RequestFilter { citizen_id: Some(carol.id), ..none.clone() },
        RequestFilter { statuses: vec![InReview], ..none.clone() },
        RequestFilter { statuses: vec![Submitted, ActionRequired, Cancelled], ..none.clone() },
        RequestFilter { statuses: RequestStatus::ALL.to_vec(), ..none.clone() },
        RequestFilter { service_type_id: Some(visa.id), ..none.clone() },
        RequestFilter { submitted_from: Some(day(2)), ..none.clone() },
        RequestFilter { submitted_to: Some(day(6)), ..none.clone() },
        RequestFilter { submitted_from: Some(day(2)), submitted_to: Some(day(6)), ..none.clone() },
        RequestFilter { assignee_id: Some(bob.id), ..none.clone() },
        RequestFilter { overdue: Some(true), overdue_at, ..none.clone() },
        RequestFilter { overdue: Some(false), overdue_at, ..none.clone() },
        // Combined.
        RequestFilter { mission_id: Some(paris.id), statuses: vec![Submitted, InReview], ..none.clone() },
        RequestFilter { mission_id: Some(paris.id), assignee_id: Some(bob.id), ..none.clone() },
        RequestFilter { mission_id: Some(paris.id), overdue: Some(true), overdue_at, ..none.clone() },
        RequestFilter { citizen_id: Some(alice.id), service_type_id: Some(passport.id), ..none.clone() },
        RequestFilter { assignee_id: Some(bob.id), overdue: Some(false), overdue_at, ..none.clone() },
        RequestFilter { service_type_id: Some(passport.id), submitted_from: Some(day(4)), ..none.clone() },
        RequestFilter {
            mission_id: Some(paris.id),
            citizen_id: Some(alice.id),
            statuses: vec![Submitted, InReview, Rejected],
            service_type_id: Some(passport.id),
            submitted_from: Some(day(0)),
            submitted_to: Some(day(7)),
            assignee_id: Some(bob.id),
            overdue: Some(false),
            overdue_at,
            within_services: Some(vec![visa.id, passport.id]),
        },
        RequestFilter { mission_id: Some(lyon.id), citizen_id: Some(alice.id), ..none.clone() },
        // `overdue_at` alone filters nothing.
        RequestFilter { overdue_at, ..none.clone() },
        // A mandate's services (docs/representation.md "Acting"): only, none, all.
        RequestFilter { within_services: Some(vec![visa.id]), ..none.clone() },
        RequestFilter { within_services: Some(vec![]), ..none.clone() },
        RequestFilter { within_services: Some(vec![passport.id, visa.id]), ..none.clone() },
        RequestFilter { within_services: Some(vec![ServiceTypeId::new()]), ..none.clone() },
        RequestFilter { citizen_id: Some(alice.id), within_services: Some(vec![visa.id]), ..none.clone() },
        RequestFilter {
            citizen_id: Some(carol.id),
            statuses: vec![Submitted, ActionRequired],
            within_services: Some(vec![passport.id]),
            ..none.clone()
        },
    ];
    for filter in &filters {
        assert_eq!(listed_requests(&db, filter).await, expected_list(&all, filter), "{filter:?}");
    }

    // The same answers, spelled out for the filters whose reference could share a mistake.
    assert_eq!(listed_requests(&db, &filters[0]).await, ids(&[0, 1, 2, 3, 6, 7, 8]));
    assert_eq!(listed_requests(&db, &filters[4]).await, ids(&[0, 3, 5, 8]));
    assert_eq!(listed_requests(&db, &filters[9]).await, ids(&[2, 3, 4, 5]), "from inclusive, to exclusive");
    assert_eq!(listed_requests(&db, &filters[11]).await, ids(&[0, 3, 4]), "open and due before `at`");
    assert_eq!(listed_requests(&db, &filters[12]).await, ids(&[1, 2, 5, 6, 7, 8]));
    assert_eq!(listed_requests(&db, &filters[15]).await, ids(&[0, 3]));
    assert_eq!(listed_requests(&db, &filters[19]).await, ids(&[6]));
    assert_eq!(listed_requests(&db, &filters[20]).await, []);
    assert_eq!(listed_requests(&db, &filters[22]).await, ids(&[1, 3, 5]), "the visas only");
    assert_eq!(listed_requests(&db, &filters[23]).await, [], "an empty mandate reaches nothing");
    assert_eq!(listed_requests(&db, &filters[24]).await, ids(&[0, 1, 2, 3, 4, 5, 6, 7, 8]));
    assert_eq!(listed_requests(&db, &filters[25]).await, []);
    assert_eq!(listed_requests(&db, &filters[26]).await, ids(&[1]));
    assert_eq!(listed_requests(&db, &filters[27]).await, ids(&[8]));
}

async fn request_pages_have_no_gaps_or_duplicates(db: Database) {
    let paris = stored_mission(&db, "fr-paris").await;
    let passport = stored_service_type(&db, "passport").await;
    let alice = stored_citizen(&db, paris.id, "AA1").await;
    let mut ids = Vec::new();
    for _ in 0..7 {
        ids.push(stored_request(&db, request(paris.id, alice.id, &passport)).await.id);
    }
    ids.sort_by(|a, b| b.cmp(a));
    let filter = RequestFilter { mission_id: Some(paris.id), ..RequestFilter::default() };
    let page = |after: Option<Uuid>| {
        RequestRepository::list(&db, filter.clone(), PageRequest { limit: 3, after }, Consistency::Latest)
    };

    let first = page(None).await.unwrap();
    assert_eq!(first.items.iter().map(|r| r.id).collect::<Vec<_>>(), ids[..3]);
    assert_eq!(first.next_after, Some(ids[2].0));
    // A request submitted meanwhile is newer: it does not shift the later pages.
    stored_request(&db, request(paris.id, alice.id, &passport)).await;
    let second = page(first.next_after).await.unwrap();
    assert_eq!(second.items.iter().map(|r| r.id).collect::<Vec<_>>(), ids[3..6]);
    let last = page(second.next_after).await.unwrap();
    assert_eq!(last.items.iter().map(|r| r.id).collect::<Vec<_>>(), ids[6..]);
    assert_eq!(last.next_after, None);
    assert_eq!(page(Some(ids[6].0)).await.unwrap(), Page { items: vec![], next_after: None });
}

async fn the_overdue_filter_needs_its_instant(db: Database) {
    let filter = RequestFilter { overdue: Some(true), ..RequestFilter::default() };
    let refused = RequestRepository::list(&db, filter, PageRequest::default(), Consistency::Latest).await;
    assert!(matches!(refused, Err(RepoError::Other(_))), "{refused:?}");
}

/// Stores a request of `service_type` assigned to `assignee`, in `status`.
async fn assigned(
    db: &Database,
    citizen: &Citizen,
    service_type: &ServiceType,
    assignee: &StaffMember,
    status: RequestStatus,
) -> ServiceRequest {
    let r = ServiceRequest {
        status,
        assignee_id: Some(assignee.id),
        ..request(citizen.mission_id, citizen.id, service_type)
    };
    stored_request(db, r).await
}

async fn least_loaded_staff_picks_the_member_with_the_fewest_open_requests(db: Database) {
    use RequestStatus::*;
    let paris = stored_mission(&db, "fr-paris").await;
    let passport = stored_service_type(&db, "passport").await;
    let visa = stored_service_type(&db, "visa").await;
    let alice = stored_citizen(&db, paris.id, "AA1").await;
    let x = stored_staff(&db, staff_member(paris.id, &[passport.id, visa.id])).await;
    let y = stored_staff(&db, staff_member(paris.id, &[visa.id, passport.id])).await;
    let [low, high] = if x.id < y.id { [x, y] } else { [y, x] };
    let least = async || RequestRepository::least_loaded_staff(&db, paris.id, passport.id).await.unwrap();

    assert_eq!(least().await, Some(low.id), "a tie goes to the smallest id");
    // Open requests of any type count; closed ones do not.
    assigned(&db, &alice, &passport, &low, Submitted).await;
    assigned(&db, &alice, &visa, &low, ActionRequired).await;
    assigned(&db, &alice, &passport, &high, InReview).await;
    for status in [Completed, Rejected, Cancelled] {
        assigned(&db, &alice, &passport, &high, status).await;
    }
    assert_eq!(least().await, Some(high.id), "1 open request against 2");
    assigned(&db, &alice, &visa, &high, Approved).await;
    assert_eq!(least().await, Some(low.id), "2 against 2: the smallest id");
    assigned(&db, &alice, &passport, &high, Submitted).await;
    assert_eq!(least().await, Some(low.id), "2 against 3");
    // Unassigned requests count for nobody.
    stored_request(&db, request(paris.id, alice.id, &passport)).await;
    assert_eq!(least().await, Some(low.id));
}

async fn least_loaded_staff_ignores_members_who_cannot_take_the_request(db: Database) {
    let paris = stored_mission(&db, "fr-paris").await;
    let lyon = stored_mission(&db, "fr-lyon").await;
    let passport = stored_service_type(&db, "passport").await;
    let visa = stored_service_type(&db, "visa").await;
    let alice = stored_citizen(&db, paris.id, "AA1").await;
    let least = async |mission: MissionId, service_type: ServiceTypeId| {
        RequestRepository::least_loaded_staff(&db, mission, service_type).await.unwrap()
    };
    assert_eq!(least(paris.id, passport.id).await, None, "no staff at all");

    // Idle members who may not take a Paris passport request: another type only, inactive,
    // another mission's, assigned to nothing.
    let visa_only = stored_staff(&db, staff_member(paris.id, &[visa.id])).await;
    let inactive =
        stored_staff(&db, StaffMember { active: false, ..staff_member(paris.id, &[passport.id]) }).await;
    let in_lyon = stored_staff(&db, staff_member(lyon.id, &[passport.id])).await;
    stored_staff(&db, staff_member(paris.id, &[])).await;
    assert_eq!(least(paris.id, passport.id).await, None, "nobody is assigned");
    assert_eq!(least(paris.id, visa.id).await, Some(visa_only.id));
    assert_eq!(least(lyon.id, passport.id).await, Some(in_lyon.id));
    assert_eq!(least(lyon.id, visa.id).await, None);

    // A busy member who may take it wins over all of them.
    let busy = stored_staff(&db, staff_member(paris.id, &[passport.id])).await;
    for _ in 0..3 {
        assigned(&db, &alice, &passport, &busy, RequestStatus::InReview).await;
    }
    assert_eq!(least(paris.id, passport.id).await, Some(busy.id));
    // Once inactive, they are ignored too.
    let mut on_leave = inactive.clone();
    on_leave.active = true;
    on_leave.version = 2;
    StaffRepository::update(&db, &on_leave, 1, &WriteMeta::default()).await.unwrap();
    assert_eq!(least(paris.id, passport.id).await, Some(inactive.id), "back from leave, with no load");
}

/// `staff_workloads` is kept by triggers: after every kind of write of a request (insert
/// open or closed, assigned or not; reassign, unassign, close, reopen, an update that
/// changes neither; a refused update) each member's count equals a recount.
async fn staff_workloads_follow_every_write_of_a_request(db: Database) {
    use RequestStatus::*;
    let paris = stored_mission(&db, "fr-paris").await;
    let passport = stored_service_type(&db, "passport").await;
    let alice = stored_citizen(&db, paris.id, "AA1").await;
    let x = stored_staff(&db, staff_member(paris.id, &[passport.id])).await;
    let y = stored_staff(&db, staff_member(paris.id, &[passport.id])).await;
    let no_drift = async |step: &str| {
        assert_eq!(db.staff_workload_drift().await.unwrap(), [], "{step}");
    };
    no_drift("new members count nothing").await;

    let open = assigned(&db, &alice, &passport, &x, Submitted).await;
    assigned(&db, &alice, &passport, &x, Completed).await;
    stored_request(&db, request(paris.id, alice.id, &passport)).await;
    no_drift("inserts").await;

    let mut r = open;
    let update = async |r: &mut ServiceRequest, change: &dyn Fn(&mut ServiceRequest), step: &str| {
        change(r);
        r.version += 1;
        RequestRepository::update(&db, r, r.version - 1, None, &WriteMeta::default()).await.unwrap();
        no_drift(step).await;
    };
    update(&mut r, &|r| r.assignee_id = Some(y.id), "reassigned").await;
    update(&mut r, &|r| r.status = InReview, "still open").await;
    update(&mut r, &|r| r.assignee_id = None, "unassigned").await;
    update(&mut r, &|r| r.assignee_id = Some(x.id), "assigned again").await;
    update(&mut r, &|r| r.status = Rejected, "closed").await;
    update(&mut r, &|r| r.status = Submitted, "open again (the adapter does not judge the transition)").await;
    update(&mut r, &|r| (r.status, r.assignee_id) = (Cancelled, Some(y.id)), "closed and reassigned").await;
    update(&mut r, &|r| (r.status, r.assignee_id) = (ActionRequired, Some(x.id)), "both again").await;
    assert_eq!(RequestRepository::least_loaded_staff(&db, paris.id, passport.id).await.unwrap(), Some(y.id));

    // A refused write (an unknown assignee) moves no count.
    let stray = ServiceRequest { assignee_id: Some(StaffId::new()), version: r.version + 1, ..r.clone() };
    let refused = RequestRepository::update(&db, &stray, r.version, None, &WriteMeta::default()).await;
    assert!(matches!(refused, Err(RepoError::Other(_))), "{refused:?}");
    no_drift("refused").await;
    assert_eq!(RequestRepository::least_loaded_staff(&db, paris.id, passport.id).await.unwrap(), Some(y.id));
}

async fn the_queue_groups_open_requests_by_service_type(db: Database) {
    use RequestStatus::*;
    let paris = stored_mission(&db, "fr-paris").await;
    let passport = stored_service_type(&db, "passport").await;
    let visa = stored_service_type(&db, "visa").await;
    let notary = stored_service_type(&db, "notary").await;
    let alice = stored_citizen(&db, paris.id, "AA1").await;
    let bob = stored_staff(&db, staff_member(paris.id, &[passport.id, visa.id, notary.id])).await;
    let eve = stored_staff(&db, staff_member(paris.id, &[passport.id])).await;

    let now = datetime!(2026-06-01 12:00:00 UTC);
    let at = |days: i64| now + Duration::days(days);
    let store = async |service_type: &ServiceType, assignee: Option<&StaffMember>, status, submitted, due| {
        let r = ServiceRequest {
            status,
            assignee_id: assignee.map(|m| m.id),
            submitted_at: submitted,
            sla_due_at: due,
            ..request(paris.id, alice.id, service_type)
        };
        stored_request(&db, r).await;
    };
    // Bob's open passports: 3, the oldest at -20 days, 2 past due (the one due exactly
    // now is not).
    store(&passport, Some(&bob), Submitted, at(-10), at(-1)).await;
    store(&passport, Some(&bob), InReview, at(-20), at(1)).await;
    store(&passport, Some(&bob), ActionRequired, at(-5), at(-2)).await;
    store(&passport, Some(&bob), Approved, at(-4), now).await;
    // Closed ones, older and overdue-looking, are not in the queue.
    for status in [Completed, Rejected, Cancelled] {
        store(&passport, Some(&bob), status, at(-90), at(-60)).await;
    }
    // One open visa, not overdue; notary: closed only.
    store(&visa, Some(&bob), InReview, at(-3), at(10)).await;
    store(&notary, Some(&bob), Completed, at(-3), at(-1)).await;
    // Someone else's and unassigned requests.
    store(&passport, Some(&eve), Submitted, at(-50), at(-40)).await;
    store(&visa, None, Submitted, at(-50), at(-40)).await;

    let mut expected = vec![
        QueueGroup { service_type_id: passport.id, count: 4, oldest_submitted_at: at(-20), overdue: 2 },
        QueueGroup { service_type_id: visa.id, count: 1, oldest_submitted_at: at(-3), overdue: 0 },
    ];
    expected.sort_by_key(|g| g.service_type_id);
    assert_eq!(RequestRepository::queue(&db, bob.id, now).await.unwrap(), expected);
    let eves =
        vec![QueueGroup { service_type_id: passport.id, count: 1, oldest_submitted_at: at(-50), overdue: 1 }];
    assert_eq!(RequestRepository::queue(&db, eve.id, now).await.unwrap(), eves);
    // Judged at another instant.
    let later = RequestRepository::queue(&db, bob.id, at(100)).await.unwrap();
    assert_eq!(later.iter().map(|g| (g.count, g.overdue)).collect::<Vec<_>>(), [(4, 4), (1, 1)]);
    assert_eq!(RequestRepository::queue(&db, StaffId::new(), now).await.unwrap(), []);
}

/// Each filter of the listing, alone and combined, can be served by an index (no full
/// scan). On PostgreSQL sequential scans and sorts are disabled for the EXPLAIN, so a
/// `Seq Scan` left in the plan means that no index fits, whatever the statistics.
async fn the_request_list_can_use_an_index_for_every_filter(db: Database) {
    use RequestStatus::*;
    let some = |n: u128| Some(Uuid::from_u128(n));
    let at = Some(now());
    let none = RequestFilter::default();
    let filters = [
        none.clone(),
        RequestFilter { mission_id: Some(MissionId::new()), ..none.clone() },
        RequestFilter { citizen_id: Some(CitizenId::new()), ..none.clone() },
        RequestFilter { statuses: vec![InReview], ..none.clone() },
        RequestFilter { statuses: vec![Submitted, InReview], ..none.clone() },
        RequestFilter { service_type_id: Some(ServiceTypeId::new()), ..none.clone() },
        RequestFilter { submitted_from: at, ..none.clone() },
        RequestFilter { submitted_from: at, submitted_to: at, ..none.clone() },
        RequestFilter { assignee_id: Some(StaffId::new()), ..none.clone() },
        RequestFilter { overdue: Some(true), overdue_at: at, ..none.clone() },
        RequestFilter { overdue: Some(false), overdue_at: at, ..none.clone() },
        RequestFilter {
            mission_id: Some(MissionId::new()),
            statuses: vec![Submitted, Approved],
            ..none.clone()
        },
        RequestFilter {
            mission_id: Some(MissionId::new()),
            overdue: Some(true),
            overdue_at: at,
            ..none.clone()
        },
        RequestFilter {
            mission_id: Some(MissionId::new()),
            citizen_id: Some(CitizenId::new()),
            statuses: vec![Submitted],
            service_type_id: Some(ServiceTypeId::new()),
            submitted_from: at,
            submitted_to: at,
            assignee_id: Some(StaffId::new()),
            overdue: Some(false),
            overdue_at: at,
            within_services: Some(vec![ServiceTypeId::new(), ServiceTypeId::new()]),
        },
        RequestFilter { within_services: Some(vec![ServiceTypeId::new()]), ..none.clone() },
        RequestFilter {
            citizen_id: Some(CitizenId::new()),
            within_services: Some(vec![ServiceTypeId::new(), ServiceTypeId::new()]),
            ..none.clone()
        },
    ];
    for filter in &filters {
        for after in [None, some(1)] {
            let plan =
                db.explain_request_list(filter.clone(), PageRequest { limit: 20, after }).await.unwrap();
            assert_no_full_scan(db.backend(), "service_requests", &plan, &format!("{filter:?}"));
        }
    }

    // The mission filter (every staff listing has it) is read backwards from its own
    // index, already in order: no sort, whatever the page.
    let in_mission = RequestFilter { mission_id: Some(MissionId::new()), ..none };
    for after in [None, some(1)] {
        let plan =
            db.explain_request_list(in_mission.clone(), PageRequest { limit: 20, after }).await.unwrap();
        assert_ordered_by_index(&plan, "service_requests_mission_id_idx");
    }
}

on_both_databases!(
    requests_round_trip_and_updates_check_the_version,
    a_request_with_unknown_references_is_not_stored,
    history_is_kept_in_insertion_order,
    requests_are_listed_newest_first_by_every_filter,
    request_pages_have_no_gaps_or_duplicates,
    the_overdue_filter_needs_its_instant,
    least_loaded_staff_picks_the_member_with_the_fewest_open_requests,
    least_loaded_staff_ignores_members_who_cannot_take_the_request,
    staff_workloads_follow_every_write_of_a_request,
    the_queue_groups_open_requests_by_service_type,
    the_request_list_can_use_an_index_for_every_filter,
);
