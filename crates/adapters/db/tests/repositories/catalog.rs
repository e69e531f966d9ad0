//! Service types (the service catalog).

use super::*;

async fn service_types_round_trip_with_their_json_fields(db: Database) {
    let renewal = service_type("passport_renewal");
    let meta = audited("service_type", renewal.id.0);
    ServiceTypeRepository::insert(&db, &renewal, &meta).await.unwrap();
    assert_eq!(ServiceTypeRepository::get(&db, renewal.id).await.unwrap(), Some(renewal.clone()));
    assert_eq!(ServiceTypeRepository::get(&db, ServiceTypeId::new()).await.unwrap(), None);
    assert_eq!(db.audit_trail("service_type", renewal.id.0).await.unwrap(), meta.audit);

    // Empty lists are lists too.
    let mut bare = service_type("visa");
    bare.required_documents = vec![];
    bare.fee = Money { amount_minor: 0, currency: "USD".to_owned() };
    ServiceTypeRepository::insert(&db, &bare, &WriteMeta::default()).await.unwrap();
    assert_eq!(ServiceTypeRepository::get(&db, bare.id).await.unwrap(), Some(bare.clone()));

    let mut many =
        ServiceTypeRepository::get_many(&db, &[bare.id, ServiceTypeId::new(), renewal.id]).await.unwrap();
    many.sort_by_key(|t| t.id);
    assert_eq!(many, sorted_by_id(vec![renewal, bare]));
    assert_eq!(ServiceTypeRepository::get_many(&db, &[]).await.unwrap(), vec![]);
    assert_eq!(ServiceTypeRepository::get_many(&db, &[ServiceTypeId::new()]).await.unwrap(), vec![]);
}

fn sorted_by_id(mut types: Vec<ServiceType>) -> Vec<ServiceType> {
    types.sort_by_key(|t| t.id);
    types
}

async fn a_taken_service_type_code_is_a_duplicate(db: Database) {
    stored_service_type(&db, "passport_renewal").await;
    let again = service_type("passport_renewal");
    let duplicate = ServiceTypeRepository::insert(&db, &again, &audited("service_type", again.id.0)).await;
    assert!(is_duplicate(&duplicate, "service_types_code"), "{duplicate:?}");
    assert_eq!(db.count_rows("service_types").await.unwrap(), 1);
    assert_eq!(db.count_rows("audit_events").await.unwrap(), 0);
}

async fn service_type_updates_check_the_version(db: Database) {
    let mut t = stored_service_type(&db, "passport_renewal").await;
    t.fee = Money { amount_minor: 9900, currency: "CAD".to_owned() };
    t.stages.reverse();
    t.stages.push(Stage { name: "Delivery".to_owned(), description: "By post".to_owned() });
    t.required_documents = vec!["birth_certificate".to_owned()];
    t.active = false;
    t.sla_days = 30;
    t.version = 2;
    t.updated_at = now();
    ServiceTypeRepository::update(&db, &t, 1, &audited("service_type", t.id.0)).await.unwrap();
    assert_eq!(ServiceTypeRepository::get(&db, t.id).await.unwrap(), Some(t.clone()));

    let stale = ServiceTypeRepository::update(&db, &t, 1, &audited("service_type", t.id.0)).await;
    assert!(matches!(stale, Err(RepoError::VersionConflict)), "{stale:?}");
    let gone = ServiceTypeRepository::update(&db, &service_type("other"), 1, &WriteMeta::default()).await;
    assert!(matches!(gone, Err(RepoError::NotFound)), "{gone:?}");
    assert_eq!(db.count_rows("audit_events").await.unwrap(), 1);
}

async fn service_types_are_listed_by_activity_in_keyset_pages(db: Database) {
    let a = stored_service_type(&db, "a").await;
    let mut b = service_type("b");
    b.active = false;
    ServiceTypeRepository::insert(&db, &b, &WriteMeta::default()).await.unwrap();
    let c = stored_service_type(&db, "c").await;

    let ids = |page: Page<ServiceType>| page.items.iter().map(|t| t.id).collect::<Vec<_>>();
    let all = ServiceTypeRepository::list(&db, ServiceTypeFilter::default(), PageRequest::default()).await;
    assert_eq!(ids(all.unwrap()), sorted(&[a.id, b.id, c.id]));
    let active = ServiceTypeFilter { active: Some(true) };
    let inactive = ServiceTypeFilter { active: Some(false) };
    let only_inactive = ServiceTypeRepository::list(&db, inactive, PageRequest::default()).await.unwrap();
    assert_eq!(ids(only_inactive), [b.id]);

    let expected = sorted(&[a.id, c.id]);
    let first =
        ServiceTypeRepository::list(&db, active, PageRequest { limit: 1, after: None }).await.unwrap();
    assert_eq!(first.next_after, Some(expected[0].0));
    let second =
        ServiceTypeRepository::list(&db, active, PageRequest { limit: 1, after: first.next_after }).await;
    let second = second.unwrap();
    assert_eq!(second.next_after, None);
    assert_eq!([ids(first), ids(second)].concat(), expected);
}

on_both_databases!(
    service_types_round_trip_with_their_json_fields,
    a_taken_service_type_code_is_a_duplicate,
    service_type_updates_check_the_version,
    service_types_are_listed_by_activity_in_keyset_pages,
);
