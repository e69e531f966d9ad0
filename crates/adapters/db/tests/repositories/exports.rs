//! Exports (docs/data-protection.md "Export"): one running export per citizen, decided by
//! the database under real concurrency; the build lease (claim, renew, settle) and its
//! takeover after a node died; the expiry sweep's reads.

use super::*;
use consular_domain::{Export, ExportState};
use consular_ports::{ExportRepository, ONE_RUNNING_EXPORT};

const LEASE: Duration = Duration::seconds(60);

fn export_of(citizen: &Citizen) -> Export {
    let by = Subject { kind: PrincipalKind::Citizen, id: PrincipalId(citizen.id.as_uuid()) };
    Export::request(citizen.id, citizen.mission_id, by, now())
}

async fn citizens(db: &Database, n: usize) -> Vec<Citizen> {
    let paris = stored_mission(db, "fr-paris").await;
    let mut out = Vec::new();
    for i in 0..n {
        out.push(stored_citizen(db, paris.id, &format!("EX{i:06}")).await);
    }
    out
}

async fn one_running_export_per_citizen_even_when_asked_at_once(db: Database) {
    let alice = citizens(&db, 1).await.remove(0);
    let attempts: Vec<Export> = (0..8).map(|_| export_of(&alice)).collect();
    let tasks: Vec<_> = attempts
        .iter()
        .cloned()
        .map(|e| {
            let db = db.clone();
            tokio::spawn(async move {
                let meta = audited("export", e.id.as_uuid());
                ExportRepository::insert(&db, &e, &meta).await.map(|()| e.id)
            })
        })
        .collect();
    let mut won = Vec::new();
    for task in tasks {
        let result = task.await.unwrap();
        match result {
            Ok(id) => won.push(id),
            other => assert!(is_duplicate(&other, ONE_RUNNING_EXPORT), "{other:?}"),
        }
    }
    assert_eq!(won.len(), 1, "exactly one of eight concurrent exports is stored");
    let running = db.running_for(alice.id).await.unwrap().unwrap();
    assert_eq!((running.id, running.state), (won[0], ExportState::Pending));
    // The losers left nothing behind, not even their audit entries.
    for e in attempts.iter().filter(|e| e.id != won[0]) {
        assert_eq!(ExportRepository::get(&db, e.id).await.unwrap(), None);
        assert_eq!(db.audit_trail("export", e.id.as_uuid()).await.unwrap(), vec![]);
    }

    // Once it is no longer running, the citizen may export again.
    let mut taken = db.claim("node-a", now(), now() + LEASE).await.unwrap().unwrap();
    taken.fail("blob storage unavailable".to_owned(), now()).unwrap();
    assert!(db.settle(&taken, "node-a").await.unwrap());
    assert_eq!(db.running_for(alice.id).await.unwrap(), None);
    ExportRepository::insert(&db, &export_of(&alice), &WriteMeta::default()).await.unwrap();
}

async fn a_node_takes_the_oldest_export_and_holds_it_until_its_lease_runs_out(db: Database) {
    let people = citizens(&db, 2).await;
    let (first, second) = (export_of(&people[0]), export_of(&people[1]));
    for e in [&first, &second] {
        ExportRepository::insert(&db, e, &WriteMeta::default()).await.unwrap();
    }
    let t0 = now();
    let a = db.claim("node-a", t0, t0 + LEASE).await.unwrap().unwrap();
    assert_eq!((a.id, a.state, a.started_at), (first.id, ExportState::Running, Some(t0)));
    let b = db.claim("node-b", t0, t0 + LEASE).await.unwrap().unwrap();
    assert_eq!(b.id, second.id);
    assert_eq!(db.claim("node-c", t0, t0 + LEASE).await.unwrap(), None, "both are leased");

    // Only the holder renews, and only while its lease holds.
    assert!(db.renew(a.id, "node-a", t0 + Duration::seconds(30), t0 + Duration::seconds(90)).await.unwrap());
    assert!(!db.renew(a.id, "node-b", t0, t0 + LEASE).await.unwrap());
    assert!(!db.renew(b.id, "node-b", t0 + LEASE, t0 + LEASE * 2).await.unwrap(), "expired");

    // node-b's lease ran out (it died): node-c takes its export again; node-b's late
    // outcome is refused, node-c's is stored.
    let later = t0 + LEASE;
    let retaken = db.claim("node-c", later, later + LEASE).await.unwrap().unwrap();
    assert_eq!((retaken.id, retaken.started_at), (second.id, Some(later)));
    let mut late = b.clone();
    late.finish("exports/late/1".to_owned(), 10, later).unwrap();
    assert!(!db.settle(&late, "node-b").await.unwrap());
    let mut done = retaken.clone();
    done.finish("exports/done/1".to_owned(), 2048, later).unwrap();
    assert!(db.settle(&done, "node-c").await.unwrap());
    assert_eq!(ExportRepository::get(&db, second.id).await.unwrap(), Some(done.clone()));
    assert!(!db.settle(&done, "node-c").await.unwrap(), "settled once");
}

async fn concurrent_claims_take_each_export_once(db: Database) {
    let people = citizens(&db, 3).await;
    for c in &people {
        ExportRepository::insert(&db, &export_of(c), &WriteMeta::default()).await.unwrap();
    }
    let t0 = now();
    let tasks: Vec<_> = (0..8)
        .map(|i| {
            let db = db.clone();
            tokio::spawn(async move { db.claim(&format!("node-{i}"), t0, t0 + LEASE).await })
        })
        .collect();
    let mut taken = Vec::new();
    for task in tasks {
        if let Some(e) = task.await.unwrap().unwrap() {
            taken.push(e.citizen_id);
        }
    }
    taken.sort();
    let mut expected: Vec<CitizenId> = people.iter().map(|c| c.id).collect();
    expected.sort();
    // A claimer that lost a race got nothing; what is left is claimed by the next pass.
    while taken.len() < expected.len() {
        let e = db.claim("node-late", t0, t0 + LEASE).await.unwrap().unwrap();
        taken.push(e.citizen_id);
        taken.sort();
    }
    assert_eq!(taken, expected, "each export is taken by exactly one node");
    assert_eq!(db.claim("node-late", t0, t0 + LEASE).await.unwrap(), None);
}

async fn ready_exports_expire_once_their_time_is_up(db: Database) {
    let alice = citizens(&db, 1).await.remove(0);
    ExportRepository::insert(&db, &export_of(&alice), &WriteMeta::default()).await.unwrap();
    let t0 = now();
    let mut e = db.claim("node-a", t0, t0 + LEASE).await.unwrap().unwrap();
    e.finish("exports/abc/1".to_owned(), 99, t0).unwrap();
    assert!(db.settle(&e, "node-a").await.unwrap());
    let expires_at = e.expires_at.unwrap();
    assert_eq!(db.due_to_expire(expires_at - Duration::seconds(1), 10).await.unwrap(), vec![]);
    let due = db.due_to_expire(expires_at, 10).await.unwrap();
    assert_eq!(due, vec![e.clone()]);
    let keys = vec!["exports/abc/1".to_owned(), "exports/nobody/1".to_owned()];
    assert_eq!(db.known_archive_keys(&keys).await.unwrap(), vec!["exports/abc/1".to_owned()]);

    let mut gone = due[0].clone();
    gone.expire(expires_at).unwrap();
    assert!(db.expire(&gone).await.unwrap());
    assert!(!db.expire(&gone).await.unwrap(), "expired once");
    assert_eq!(ExportRepository::get(&db, e.id).await.unwrap(), Some(gone));
    assert_eq!(db.due_to_expire(expires_at, 10).await.unwrap(), vec![]);
    assert_eq!(db.known_archive_keys(&keys).await.unwrap(), Vec::<String>::new());
}

on_both_databases!(
    one_running_export_per_citizen_even_when_asked_at_once,
    a_node_takes_the_oldest_export_and_holds_it_until_its_lease_runs_out,
    concurrent_claims_take_each_export_once,
    ready_exports_expire_once_their_time_is_up,
);
