//! `ErasureRepository` (docs/data-protection.md "Retention and erasure"): what an erasure
//! deletes, scrubs and keeps, that an erased citizen's data is never written again, and
//! the retention sweep's reads and deletions. Documents and blobs: the end-to-end suite
//! (tests/tests/erasure.rs).

use super::*;
use consular_domain::erasure;
use consular_ports::{AuditFilter, AuditRepository, Consistency, Erasure, ErasureRepository};

on_both_databases!(
    an_erasure_deletes_what_no_retention_holds_and_nothing_of_the_citizen_is_written_again,
    expired_requests_are_found_by_type_and_end_and_deleted,
    two_sweeps_deleting_the_same_requests_audit_each_once,
);

/// A request of `citizen` that ended (`completed`) at `closed_at`.
fn ended(
    mission: MissionId,
    citizen: CitizenId,
    service_type: &ServiceType,
    closed_at: OffsetDateTime,
) -> ServiceRequest {
    let mut r = request(mission, citizen, service_type);
    r.status = RequestStatus::Completed;
    r.closed_at = Some(closed_at);
    r
}

fn message(request: RequestId, citizen: CitizenId, body: &str) -> Message {
    Message {
        id: Uuid::now_v7(),
        request_id: request,
        author: Subject { kind: PrincipalKind::Citizen, id: PrincipalId(citizen.0) },
        on_behalf_of: None,
        body: body.to_owned(),
        created_at: now(),
    }
}

async fn an_erasure_deletes_what_no_retention_holds_and_nothing_of_the_citizen_is_written_again(
    db: Database,
) {
    let mission = stored_mission(&db, "ERA").await;
    let mut service = service_type("erased_visa");
    service.retention_days = 30;
    ServiceTypeRepository::insert(&db, &service, &WriteMeta::default()).await.unwrap();
    let alice = stored_citizen(&db, mission.id, "ERASE123").await;
    let gone = stored_request(&db, ended(mission.id, alice.id, &service, now() - Duration::days(31))).await;
    let held = stored_request(&db, ended(mission.id, alice.id, &service, now() - Duration::days(1))).await;
    let open = stored_request(&db, request(mission.id, alice.id, &service)).await;
    let meta =
        WriteMeta { events: vec![outbox_event("message.posted", gone.id.as_uuid())], ..WriteMeta::default() };
    RequestRepository::add_message(&db, &message(gone.id, alice.id, "MARKER-MESSAGE"), &meta).await.unwrap();

    let requests = db.requests_of(alice.id).await.unwrap();
    assert_eq!(requests.iter().map(|r| r.request_id).collect::<Vec<_>>(), [gone.id, held.id, open.id]);
    assert!(requests.iter().all(|r| r.retention_days == 30));
    let plan = erasure::plan(&requests, now());
    assert_eq!(plan.delete, [gone.id]);

    let erasure = Erasure {
        citizen: Some((erasure::erased(&alice, now()), alice.version)),
        citizen_id: alice.id,
        requests: plan.delete.clone(),
        at: now(),
    };
    let stale =
        Erasure { citizen: Some((erasure::erased(&alice, now()), alice.version + 5)), ..erasure.clone() };
    assert!(matches!(
        db.erase(&stale, &audited("citizen", alice.id.as_uuid())).await,
        Err(RepoError::VersionConflict)
    ));
    assert!(
        RequestRepository::get(&db, gone.id).await.unwrap().is_some(),
        "a refused erasure erases nothing"
    );

    db.erase(&erasure, &audited("citizen", alice.id.as_uuid())).await.unwrap();
    let stored = CitizenRepository::get(&db, alice.id).await.unwrap().unwrap();
    assert_eq!(stored.registration_status, RegistrationStatus::Erased);
    assert_eq!((stored.given_name.as_str(), stored.email.as_str()), ("", ""));
    assert_eq!(stored.passport_number, erasure::erased_passport_number(alice.id));
    assert!(RequestRepository::get(&db, gone.id).await.unwrap().is_none());
    assert!(RequestRepository::get(&db, held.id).await.unwrap().is_some());
    assert!(RequestRepository::get(&db, open.id).await.unwrap().is_some());
    let erased = |status| CitizenFilter { registration_status: Some(status), ..CitizenFilter::default() };
    let listed = |page: Page<Citizen>| page.items.iter().any(|c| c.id == alice.id);
    let page = PageRequest::default();
    assert!(listed(
        CitizenRepository::list(&db, erased(RegistrationStatus::Erased), page, Consistency::Latest)
            .await
            .unwrap()
    ));
    assert!(!listed(
        CitizenRepository::list(&db, erased(RegistrationStatus::Deregistered), page, Consistency::Latest)
            .await
            .unwrap()
    ));

    // Nothing of an erased citizen is written again: neither a new request nor a change.
    let late = request(mission.id, alice.id, &service);
    let refused = RequestRepository::insert(&db, &late, &first_entry(&late), &WriteMeta::default()).await;
    assert!(matches!(refused, Err(RepoError::NotFound)), "{refused:?}");
    let mut renamed = stored.clone();
    renamed.given_name = "Alice".to_owned();
    renamed.version += 1;
    let refused = CitizenRepository::update(&db, &renamed, stored.version, &WriteMeta::default()).await;
    assert!(matches!(refused, Err(RepoError::NotFound)), "{refused:?}");

    // Erasing again (the row is not written again) deletes what retention lets go since.
    let again = Erasure { citizen: None, requests: Vec::new(), ..erasure };
    db.erase(&again, &WriteMeta::default()).await.unwrap();
    assert!(RequestRepository::get(&db, held.id).await.unwrap().is_some());
    assert_eq!(CitizenRepository::get(&db, alice.id).await.unwrap().unwrap(), stored);
}

async fn expired_requests_are_found_by_type_and_end_and_deleted(db: Database) {
    let mission = stored_mission(&db, "RET").await;
    let service = stored_service_type(&db, "retained_visa").await;
    let other = stored_service_type(&db, "other_visa").await;
    let bob = stored_citizen(&db, mission.id, "RETAIN123").await;
    let old = stored_request(&db, ended(mission.id, bob.id, &service, now() - Duration::days(10))).await;
    let older = stored_request(&db, ended(mission.id, bob.id, &service, now() - Duration::days(20))).await;
    stored_request(&db, ended(mission.id, bob.id, &other, now() - Duration::days(20))).await;
    stored_request(&db, request(mission.id, bob.id, &service)).await;

    let found = |before, limit| db.expired_requests(service.id, before, limit);
    assert_eq!(found(now() - Duration::days(5), 10).await.unwrap(), [older.id, old.id]);
    assert_eq!(found(now() - Duration::days(5), 1).await.unwrap(), [older.id]);
    assert_eq!(found(now() - Duration::days(15), 10).await.unwrap(), [older.id]);
    assert!(found(now() - Duration::days(25), 10).await.unwrap().is_empty());

    let erased = db
        .delete_requests(&[older.id], now(), &audited("service_request", older.id.as_uuid()))
        .await
        .unwrap();
    assert!(erased.blob_keys.is_empty());
    assert!(RequestRepository::get(&db, older.id).await.unwrap().is_none());
    assert!(RequestRepository::get(&db, old.id).await.unwrap().is_some());
    assert_eq!(found(now() - Duration::days(5), 10).await.unwrap(), [old.id]);
    // One of them already gone: nothing is written, not even the audit entry, and the
    // answer names it; without it, the other goes.
    let partly = db
        .delete_requests(&[older.id, old.id], now(), &audited("service_request", old.id.as_uuid()))
        .await
        .unwrap();
    assert_eq!(partly.gone, [older.id]);
    assert!(RequestRepository::get(&db, old.id).await.unwrap().is_some());
    assert_eq!(audit_entries(&db, old.id).await, 0);
    let rest = db.delete_requests(&[old.id], now(), &audited("service_request", old.id.as_uuid())).await;
    assert!(rest.unwrap().gone.is_empty());
    assert!(RequestRepository::get(&db, old.id).await.unwrap().is_none());
    assert_eq!(audit_entries(&db, old.id).await, 1);
}

/// How many audit entries name `request`.
async fn audit_entries(db: &Database, request: RequestId) -> usize {
    let filter = AuditFilter { resource_id: Some(request.as_uuid()), ..AuditFilter::default() };
    AuditRepository::list(db, filter, PageRequest::default(), Consistency::Latest).await.unwrap().items.len()
}

/// Two nodes' retention sweeps listing the same requests at once: one deletes them, the
/// other finds them gone and writes nothing; one audit entry per request in all.
async fn two_sweeps_deleting_the_same_requests_audit_each_once(db: Database) {
    let mission = stored_mission(&db, "RET").await;
    let service = stored_service_type(&db, "retained_visa").await;
    let bob = stored_citizen(&db, mission.id, "RETAIN123").await;
    let mut ids = Vec::new();
    for days in [10, 20, 30] {
        ids.push(
            stored_request(&db, ended(mission.id, bob.id, &service, now() - Duration::days(days))).await.id,
        );
    }
    let meta = WriteMeta {
        audit: ids.iter().flat_map(|id| audited("service_request", id.as_uuid()).audit).collect(),
        ..WriteMeta::default()
    };
    let sweeps: Vec<_> = (0..2)
        .map(|_| {
            let (db, ids, meta) = (db.clone(), ids.clone(), meta.clone());
            tokio::spawn(async move { db.delete_requests(&ids, now(), &meta).await.unwrap() })
        })
        .collect();
    let mut gone = Vec::new();
    for sweep in sweeps {
        gone.push(sweep.await.unwrap().gone.len());
    }
    gone.sort_unstable();
    assert_eq!(gone, [0, 3], "one sweep deletes them, the other finds them gone");
    for id in ids {
        assert!(RequestRepository::get(&db, id).await.unwrap().is_none());
        assert_eq!(audit_entries(&db, id).await, 1, "one audit entry for {id}");
    }
}
