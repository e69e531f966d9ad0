//! The audit trail, idempotency keys and the outbox, each stored in the same transaction as the change.

use super::*;

async fn audit_and_idempotency_are_stored_with_the_change(db: Database) {
    let owner = ClientId::new();
    let paris = mission("fr-paris");
    let record = idempotency(owner, "create-paris", Duration::hours(24));
    let meta = WriteMeta { idempotency: Some(record.clone()), ..audited("mission", paris.id.0) };
    MissionRepository::insert(&db, &paris, &meta).await.unwrap();

    assert_eq!(db.audit_trail("mission", paris.id.0).await.unwrap(), meta.audit);
    assert_eq!(
        IdempotencyRepository::find(&db, owner, "create-paris", now()).await.unwrap(),
        Some(record.clone())
    );
    // Scoped per client, and only until it expires.
    assert_eq!(IdempotencyRepository::find(&db, ClientId::new(), "create-paris", now()).await.unwrap(), None);
    assert_eq!(
        IdempotencyRepository::find(&db, owner, "create-paris", record.expires_at).await.unwrap(),
        None
    );
}

async fn a_system_audit_entry_has_no_actor(db: Database) {
    let paris = mission("fr-paris");
    let entry = AuditRecord::new(None, now(), AuditAction::Created, "mission", paris.id.0, vec![]);
    let meta = WriteMeta { events: Vec::new(), audit: vec![entry.clone()], idempotency: None };
    MissionRepository::insert(&db, &paris, &meta).await.unwrap();
    assert_eq!(db.audit_trail("mission", paris.id.0).await.unwrap(), vec![entry]);
}

async fn a_used_idempotency_key_is_refused(db: Database) {
    let owner = ClientId::new();
    let first = WriteMeta {
        events: Vec::new(),
        idempotency: Some(idempotency(owner, "k", Duration::hours(24))),
        audit: vec![],
    };
    MissionRepository::insert(&db, &mission("fr-paris"), &first).await.unwrap();

    let lyon = mission("fr-lyon");
    let reuse = MissionRepository::insert(&db, &lyon, &first).await;
    assert!(matches!(reuse, Err(RepoError::IdempotencyKeyInUse)), "{reuse:?}");
    assert_eq!(MissionRepository::get(&db, lyon.id).await.unwrap(), None);
}

async fn an_expired_idempotency_key_may_be_used_again(db: Database) {
    let owner = ClientId::new();
    let mut old = idempotency(owner, "k", Duration::hours(24));
    old.created_at -= Duration::days(2);
    old.expires_at -= Duration::days(2);
    let meta = WriteMeta { events: Vec::new(), idempotency: Some(old), audit: vec![] };
    MissionRepository::insert(&db, &mission("fr-paris"), &meta).await.unwrap();

    let fresh = idempotency(owner, "k", Duration::hours(24));
    let meta = WriteMeta { events: Vec::new(), idempotency: Some(fresh.clone()), audit: vec![] };
    MissionRepository::insert(&db, &mission("fr-lyon"), &meta).await.unwrap();
    assert_eq!(IdempotencyRepository::find(&db, owner, "k", now()).await.unwrap(), Some(fresh));
}

async fn the_audit_log_is_listed_newest_first_with_each_filter(db: Database) {
    let (alice, bob) = (admin(), admin());
    let (mission_id, client_id) = (Uuid::now_v7(), Uuid::now_v7());
    let entry = |actor: Option<&Principal>, resource_type: &str, resource_id: Uuid| {
        AuditRecord::new(
            actor,
            now(),
            AuditAction::Updated,
            resource_type,
            resource_id,
            vec!["name".to_owned()],
        )
    };
    let entries = vec![
        entry(Some(&alice), "mission", mission_id),
        entry(Some(&bob), "client", client_id),
        entry(None, "mission", mission_id),
        entry(Some(&alice), "client", client_id),
        entry(Some(&alice), "mission", Uuid::now_v7()),
    ];
    MissionRepository::insert(
        &db,
        &mission("fr-paris"),
        &WriteMeta { events: Vec::new(), audit: entries.clone(), idempotency: None },
    )
    .await
    .unwrap();
    let newest_first = |picked: &[usize]| {
        let mut ids: Vec<Uuid> = picked.iter().map(|&i| entries[i].id.0).collect();
        ids.sort_by(|x, y| y.cmp(x));
        ids
    };
    let listed = async |filter: AuditFilter| {
        let page =
            AuditRepository::list(&db, filter, PageRequest::default(), Consistency::Latest).await.unwrap();
        page.items.iter().map(|r| r.id.0).collect::<Vec<_>>()
    };

    let all = AuditRepository::list(&db, AuditFilter::default(), PageRequest::default(), Consistency::Latest)
        .await
        .unwrap();
    let mut expected = entries.clone();
    expected.reverse();
    assert_eq!(all.items, expected, "newest first, as stored");
    let missions = AuditFilter { resource_type: Some("mission".to_owned()), ..AuditFilter::default() };
    assert_eq!(listed(missions.clone()).await, newest_first(&[0, 2, 4]));
    let one_resource = AuditFilter { resource_id: Some(client_id), ..AuditFilter::default() };
    assert_eq!(listed(one_resource).await, newest_first(&[1, 3]));
    let by_alice = AuditFilter { actor_id: Some(alice.subject.id.0), ..AuditFilter::default() };
    assert_eq!(listed(by_alice.clone()).await, newest_first(&[0, 3, 4]));
    let alice_on_missions = AuditFilter { actor_id: Some(alice.subject.id.0), ..missions.clone() };
    assert_eq!(listed(alice_on_missions).await, newest_first(&[0, 4]));
    let exact = AuditFilter { resource_id: Some(mission_id), ..missions.clone() };
    assert_eq!(listed(exact).await, newest_first(&[0, 2]));
    let nobody = AuditFilter { actor_id: Some(Uuid::now_v7()), ..AuditFilter::default() };
    assert!(listed(nobody).await.is_empty());

    // Pages continue with older entries.
    let expected = newest_first(&[0, 2, 4]);
    let first = AuditRepository::list(
        &db,
        missions.clone(),
        PageRequest { limit: 2, after: None },
        Consistency::Latest,
    )
    .await;
    let first = first.unwrap();
    assert_eq!(first.items.iter().map(|r| r.id.0).collect::<Vec<_>>(), expected[..2]);
    assert_eq!(first.next_after, Some(expected[1]));
    let rest = AuditRepository::list(
        &db,
        missions,
        PageRequest { limit: 2, after: first.next_after },
        Consistency::Latest,
    )
    .await;
    let rest = rest.unwrap();
    assert_eq!(rest.items.iter().map(|r| r.id.0).collect::<Vec<_>>(), expected[2..]);
    assert_eq!(rest.next_after, None);
}

// ---------------------------------------------------------------- outbox

async fn outbox_events_are_stored_with_the_change(db: Database) {
    let paris = mission("fr-paris");
    let first = vec![outbox_event("mission.created", paris.id.0), outbox_event("mission.opened", paris.id.0)];
    let meta = WriteMeta { events: first.clone(), ..audited("mission", paris.id.0) };
    MissionRepository::insert(&db, &paris, &meta).await.unwrap();
    assert_eq!(all_outbox_events(&db).await, first, "stored as given, JSON payload included");

    // Every repository stores the events of its writes: a service type update, a request.
    let mut passport = stored_service_type(&db, "passport").await;
    passport.version = 2;
    let renamed = outbox_event("service_type.renamed", passport.id.0);
    ServiceTypeRepository::update(&db, &passport, 1, &with_events(vec![renamed.clone()])).await.unwrap();
    let alice = stored_citizen(&db, paris.id, "AA1").await;
    let r = request(paris.id, alice.id, &passport);
    let submitted = outbox_event("request.submitted", r.id.0);
    RequestRepository::insert(&db, &r, &first_entry(&r), &with_events(vec![submitted.clone()]))
        .await
        .unwrap();

    let all = [first.clone(), vec![renamed.clone(), submitted.clone()]].concat();
    assert_eq!(all_outbox_events(&db).await, all, "oldest first");
    assert_eq!(db.count_rows("outbox_events").await.unwrap(), 4);
    // Keyset pages, after an event.
    assert_eq!(db.outbox_events(None, 2).await.unwrap(), all[..2]);
    assert_eq!(db.outbox_events(Some(all[1].id), 2).await.unwrap(), all[2..]);
    assert_eq!(db.outbox_events(Some(all[3].id), 2).await.unwrap(), []);
    assert_eq!(db.outbox_events(None, 0).await.unwrap(), []);
}

async fn a_failed_write_stores_no_outbox_event(db: Database) {
    let paris = stored_mission(&db, "fr-paris").await;
    let twin = mission("fr-paris");
    let meta = WriteMeta {
        events: vec![outbox_event("mission.created", twin.id.0)],
        ..audited("mission", twin.id.0)
    };
    let duplicate = MissionRepository::insert(&db, &twin, &meta).await;
    assert!(is_duplicate(&duplicate, "missions_code"), "{duplicate:?}");
    assert_eq!(all_outbox_events(&db).await, []);

    // A version conflict and an unknown request: no event either.
    let passport = stored_service_type(&db, "passport").await;
    let alice = stored_citizen(&db, paris.id, "AA1").await;
    let r = stored_request(&db, request(paris.id, alice.id, &passport)).await;
    let stale = RequestRepository::update(
        &db,
        &ServiceRequest { version: 2, ..r.clone() },
        7,
        None,
        &with_events(vec![outbox_event("request.assigned", r.id.0)]),
    )
    .await;
    assert!(matches!(stale, Err(RepoError::VersionConflict)), "{stale:?}");
    let stray = note(RequestId::new(), "lost");
    let refused = RequestRepository::add_note(
        &db,
        &stray,
        &with_events(vec![outbox_event("note.added", stray.request_id.0)]),
    )
    .await;
    assert!(matches!(refused, Err(RepoError::Other(_))), "{refused:?}");
    assert_eq!(db.count_rows("outbox_events").await.unwrap(), 0);
    assert_eq!(db.count_rows("audit_events").await.unwrap(), 0);
}

on_both_databases!(
    audit_and_idempotency_are_stored_with_the_change,
    a_system_audit_entry_has_no_actor,
    a_used_idempotency_key_is_refused,
    an_expired_idempotency_key_may_be_used_again,
    the_audit_log_is_listed_newest_first_with_each_filter,
    outbox_events_are_stored_with_the_change,
    a_failed_write_stores_no_outbox_event,
);
