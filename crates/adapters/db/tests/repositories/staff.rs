//! Staff members and their service-type assignments.

use super::*;

async fn listed_staff(db: &Database, filter: StaffFilter) -> Vec<StaffId> {
    let page = StaffRepository::list(db, filter, PageRequest::default()).await.unwrap();
    page.items.iter().map(|m| m.id).collect()
}

async fn staff_members_round_trip_with_their_client(db: Database) {
    let paris = stored_mission(&db, "fr-paris").await;
    let a = stored_service_type(&db, "a").await;
    let b = stored_service_type(&db, "b").await;
    // Not id order: the given order is kept.
    let bob = staff_member(paris.id, &[b.id, a.id]);
    let portal = client_of("staff", paris.id, bob.id.0);
    StaffRepository::insert(&db, &bob, Some(portal.clone()), &audited("staff", bob.id.0)).await.unwrap();
    assert_eq!(StaffRepository::get(&db, bob.id).await.unwrap(), Some(bob.clone()));
    assert_eq!(ClientRepository::get(&db, portal.id).await.unwrap(), Some(portal));
    assert_eq!(StaffRepository::get(&db, StaffId::new()).await.unwrap(), None);

    let idle = staff_member(paris.id, &[]);
    StaffRepository::insert(&db, &idle, None, &WriteMeta::default()).await.unwrap();
    assert_eq!(StaffRepository::get(&db, idle.id).await.unwrap(), Some(idle));
    assert_eq!(db.count_rows("staff_assignments").await.unwrap(), 2);
}

async fn a_staff_member_with_an_unknown_service_type_is_not_stored(db: Database) {
    let paris = stored_mission(&db, "fr-paris").await;
    let a = stored_service_type(&db, "a").await;
    let bob = staff_member(paris.id, &[a.id, ServiceTypeId::new()]);
    let portal = client_of("staff", paris.id, bob.id.0);
    let refused = StaffRepository::insert(&db, &bob, Some(portal.clone()), &audited("staff", bob.id.0)).await;
    assert!(matches!(refused, Err(RepoError::Other(_))), "{refused:?}");
    assert_eq!(StaffRepository::get(&db, bob.id).await.unwrap(), None);
    assert_eq!(ClientRepository::get(&db, portal.id).await.unwrap(), None);
    for table in ["staff_members", "staff_assignments", "audit_events"] {
        assert_eq!(db.count_rows(table).await.unwrap(), 0, "{table}");
    }
}

async fn a_staff_update_replaces_the_assignments_in_order(db: Database) {
    let paris = stored_mission(&db, "fr-paris").await;
    let [a, b, c] = [
        stored_service_type(&db, "a").await,
        stored_service_type(&db, "b").await,
        stored_service_type(&db, "c").await,
    ];
    let mut bob = staff_member(paris.id, &[a.id, b.id]);
    StaffRepository::insert(&db, &bob, None, &WriteMeta::default()).await.unwrap();
    let other = staff_member(paris.id, &[a.id]);
    StaffRepository::insert(&db, &other, None, &WriteMeta::default()).await.unwrap();

    bob.service_type_ids = vec![c.id, a.id, b.id];
    bob.job_title = "Vice-consul".to_owned();
    bob.active = false;
    bob.version = 2;
    bob.updated_at = now();
    StaffRepository::update(&db, &bob, 1, &audited("staff", bob.id.0)).await.unwrap();
    assert_eq!(StaffRepository::get(&db, bob.id).await.unwrap(), Some(bob.clone()));

    bob.service_type_ids = vec![b.id];
    bob.version = 3;
    StaffRepository::update(&db, &bob, 2, &WriteMeta::default()).await.unwrap();
    assert_eq!(StaffRepository::get(&db, bob.id).await.unwrap().unwrap().service_type_ids, [b.id]);
    // Only this member's rows were replaced.
    assert_eq!(StaffRepository::get(&db, other.id).await.unwrap(), Some(other));
    assert_eq!(db.count_rows("staff_assignments").await.unwrap(), 2);

    // A failed update changes nothing, assignments included.
    let stale = StaffMember { service_type_ids: vec![], version: 4, ..bob.clone() };
    let conflict = StaffRepository::update(&db, &stale, 2, &audited("staff", bob.id.0)).await;
    assert!(matches!(conflict, Err(RepoError::VersionConflict)), "{conflict:?}");
    let unknown = StaffMember { service_type_ids: vec![ServiceTypeId::new()], version: 4, ..bob.clone() };
    let refused = StaffRepository::update(&db, &unknown, 3, &WriteMeta::default()).await;
    assert!(matches!(refused, Err(RepoError::Other(_))), "{refused:?}");
    assert_eq!(StaffRepository::get(&db, bob.id).await.unwrap(), Some(bob));
    let gone = StaffRepository::update(&db, &staff_member(paris.id, &[]), 1, &WriteMeta::default()).await;
    assert!(matches!(gone, Err(RepoError::NotFound)), "{gone:?}");
    assert_eq!(db.count_rows("audit_events").await.unwrap(), 1);
}

async fn staff_are_listed_by_mission_service_type_and_activity(db: Database) {
    let paris = stored_mission(&db, "fr-paris").await;
    let lyon = stored_mission(&db, "fr-lyon").await;
    let a = stored_service_type(&db, "a").await;
    let b = stored_service_type(&db, "b").await;
    let x = staff_member(paris.id, &[b.id, a.id]);
    let y = StaffMember { active: false, ..staff_member(paris.id, &[b.id]) };
    let z = staff_member(lyon.id, &[a.id]);
    let idle = staff_member(paris.id, &[]);
    for m in [&x, &y, &z, &idle] {
        StaffRepository::insert(&db, m, None, &WriteMeta::default()).await.unwrap();
    }

    let all = StaffFilter::default();
    let page = StaffRepository::list(&db, all, PageRequest::default()).await.unwrap();
    assert_eq!(page.items, sorted_members(vec![x.clone(), y.clone(), z.clone(), idle.clone()]));
    let in_paris = StaffFilter { mission_id: Some(paris.id), ..all };
    assert_eq!(listed_staff(&db, in_paris).await, sorted(&[x.id, y.id, idle.id]));
    let handles_a = StaffFilter { service_type_id: Some(a.id), ..all };
    assert_eq!(listed_staff(&db, handles_a).await, sorted(&[x.id, z.id]));
    let inactive = StaffFilter { active: Some(false), ..all };
    assert_eq!(listed_staff(&db, inactive).await, [y.id]);
    let combined =
        StaffFilter { mission_id: Some(paris.id), service_type_id: Some(a.id), active: Some(true) };
    assert_eq!(listed_staff(&db, combined).await, [x.id]);
    let active_b = StaffFilter { service_type_id: Some(b.id), active: Some(true), ..all };
    assert_eq!(listed_staff(&db, active_b).await, [x.id]);
    let nobody = StaffFilter { service_type_id: Some(ServiceTypeId::new()), ..all };
    assert_eq!(listed_staff(&db, nobody).await, []);

    // Pages carry each member's assignments.
    let expected = sorted_members(vec![x, y, idle]);
    let first = StaffRepository::list(&db, in_paris, PageRequest { limit: 2, after: None }).await.unwrap();
    assert_eq!(first.items, expected[..2]);
    let rest = StaffRepository::list(&db, in_paris, PageRequest { limit: 2, after: first.next_after }).await;
    let rest = rest.unwrap();
    assert_eq!(rest.items, expected[2..]);
    assert_eq!(rest.next_after, None);
}

fn sorted_members(mut members: Vec<StaffMember>) -> Vec<StaffMember> {
    members.sort_by_key(|m| m.id);
    members
}

on_both_databases!(
    staff_members_round_trip_with_their_client,
    a_staff_member_with_an_unknown_service_type_is_not_stored,
    a_staff_update_replaces_the_assignments_in_order,
    staff_are_listed_by_mission_service_type_and_activity,
);
