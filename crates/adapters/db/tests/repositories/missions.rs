//! Missions: round trip, versions, codes, keyset pages, timestamp precision.

use super::*;

async fn missions_round_trip(db: Database) {
    let paris = mission("fr-paris");
    MissionRepository::insert(&db, &paris, &WriteMeta::default()).await.unwrap();
    assert_eq!(MissionRepository::get(&db, paris.id).await.unwrap(), Some(paris));
    assert_eq!(MissionRepository::get(&db, MissionId::new()).await.unwrap(), None);
}

async fn mission_updates_check_the_version(db: Database) {
    let mut paris = mission("fr-paris");
    MissionRepository::insert(&db, &paris, &WriteMeta::default()).await.unwrap();

    paris.name = "Embassy of the Republic".to_owned();
    paris.version = 2;
    paris.updated_at = now();
    MissionRepository::update(&db, &paris, 1, &WriteMeta::default()).await.unwrap();
    assert_eq!(MissionRepository::get(&db, paris.id).await.unwrap(), Some(paris.clone()));

    let stale = MissionRepository::update(&db, &paris, 1, &WriteMeta::default()).await;
    assert!(matches!(stale, Err(RepoError::VersionConflict)), "{stale:?}");
    let gone = MissionRepository::update(&db, &mission("fr-lyon"), 1, &WriteMeta::default()).await;
    assert!(matches!(gone, Err(RepoError::NotFound)), "{gone:?}");
}

async fn a_taken_mission_code_is_a_duplicate_and_stores_nothing(db: Database) {
    let owner = ClientId::new();
    let first = mission("fr-paris");
    MissionRepository::insert(&db, &first, &audited("mission", first.id.0)).await.unwrap();

    let second = mission("fr-paris");
    let meta = WriteMeta {
        idempotency: Some(idempotency(owner, "retry-1", Duration::hours(24))),
        ..audited("mission", second.id.0)
    };
    let duplicate = MissionRepository::insert(&db, &second, &meta).await;
    assert!(
        matches!(&duplicate, Err(RepoError::Duplicate { constraint }) if constraint == "missions_code"),
        "{duplicate:?}"
    );

    assert_eq!(db.count_rows("missions").await.unwrap(), 1);
    assert_eq!(db.count_rows("audit_events").await.unwrap(), 1);
    assert!(db.audit_trail("mission", second.id.0).await.unwrap().is_empty());
    assert_eq!(IdempotencyRepository::find(&db, owner, "retry-1", now()).await.unwrap(), None);
}

async fn a_failed_update_stores_no_audit_entry(db: Database) {
    let paris = mission("fr-paris");
    MissionRepository::insert(&db, &paris, &WriteMeta::default()).await.unwrap();
    let conflict = MissionRepository::update(&db, &paris, 7, &audited("mission", paris.id.0)).await;
    assert!(matches!(conflict, Err(RepoError::VersionConflict)));
    assert_eq!(db.count_rows("audit_events").await.unwrap(), 0);
}

async fn missions_are_listed_in_keyset_pages(db: Database) {
    let mut ids = Vec::new();
    for city in ["a", "b", "c", "d", "e"] {
        let m = mission(&format!("fr-{city}"));
        ids.push(m.id.0);
        MissionRepository::insert(&db, &m, &WriteMeta::default()).await.unwrap();
    }
    ids.sort();

    let first = MissionRepository::list(&db, PageRequest { limit: 2, after: None }).await.unwrap();
    assert_eq!(first.items.iter().map(|m| m.id.0).collect::<Vec<_>>(), ids[..2]);
    assert_eq!(first.next_after, Some(ids[1]));
    let second =
        MissionRepository::list(&db, PageRequest { limit: 2, after: first.next_after }).await.unwrap();
    assert_eq!(second.items.iter().map(|m| m.id.0).collect::<Vec<_>>(), ids[2..4]);
    let last =
        MissionRepository::list(&db, PageRequest { limit: 2, after: second.next_after }).await.unwrap();
    assert_eq!(last.items.iter().map(|m| m.id.0).collect::<Vec<_>>(), ids[4..]);
    assert_eq!(last.next_after, None);
}

async fn timestamps_round_trip_to_the_microsecond(db: Database) {
    let mut m = mission("fr-paris");
    m.created_at = datetime!(2026-11-22 10:00:00.123456 UTC);
    // Another offset: stored as the same instant.
    m.updated_at = datetime!(2026-11-22 23:59:59.999999 -05:00);
    MissionRepository::insert(&db, &m, &WriteMeta::default()).await.unwrap();
    let stored = MissionRepository::get(&db, m.id).await.unwrap().unwrap();
    assert_eq!(stored.created_at, m.created_at);
    assert_eq!(stored.updated_at, m.updated_at);
    assert_eq!(stored.updated_at.nanosecond(), 999_999_000);

    // The clock's own values survive too.
    let mut live = mission("fr-lyon");
    live.created_at = now();
    MissionRepository::insert(&db, &live, &WriteMeta::default()).await.unwrap();
    assert_eq!(MissionRepository::get(&db, live.id).await.unwrap().unwrap().created_at, live.created_at);
}

on_both_databases!(
    missions_round_trip,
    mission_updates_check_the_version,
    a_taken_mission_code_is_a_duplicate_and_stores_nothing,
    a_failed_update_stores_no_audit_entry,
    missions_are_listed_in_keyset_pages,
    timestamps_round_trip_to_the_microsecond,
);
