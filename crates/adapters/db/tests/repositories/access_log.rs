//! The access log: batches stored whole or not at all, a citizen's entries newest first.

use super::*;
use consular_domain::{AccessEntry, AccessRole, AccessedData};
use consular_ports::AccessLogRepository;

/// A member of `mission`'s staff.
fn staff_of(mission: MissionId) -> Principal {
    Principal {
        subject: Subject { kind: PrincipalKind::Staff, id: PrincipalId::new() },
        client_id: ClientId::new(),
        mission: Some(mission),
        scopes: ScopeSet::parse("staff").unwrap(),
        address: None,
        acting_for: None,
    }
}

fn read(actor: &Principal, citizen: &Citizen, what: AccessedData, object: Uuid) -> AccessEntry {
    AccessEntry::of_read(actor, citizen.id, what, object, now()).unwrap()
}

async fn entries_are_listed_per_citizen_newest_first_in_pages(db: Database) {
    let paris = stored_mission(&db, "fr-paris").await;
    let alice = stored_citizen(&db, paris.id, "AA1").await;
    let bob = stored_citizen(&db, paris.id, "BB2").await;
    let (global, clerk) = (admin(), staff_of(paris.id));
    let request = Uuid::now_v7();
    let alices = vec![
        read(&global, &alice, AccessedData::Profile, alice.id.0),
        read(&clerk, &alice, AccessedData::Request, request),
        read(&clerk, &alice, AccessedData::RequestNotifications, request),
    ];
    let bobs = read(&clerk, &bob, AccessedData::CitizenList, bob.id.0);
    // Two batches, one of them mixing both citizens' entries.
    AccessLogRepository::append(&db, &alices[..2]).await.unwrap();
    AccessLogRepository::append(&db, &[alices[2].clone(), bobs.clone()]).await.unwrap();
    AccessLogRepository::append(&db, &[]).await.unwrap();

    let all = AccessLogRepository::list(&db, alice.id, PageRequest::default()).await.unwrap();
    let mut newest_first = alices.clone();
    newest_first.reverse();
    assert_eq!(all.items, newest_first, "read back as stored, newest first");
    assert_eq!(all.next_after, None);
    assert_eq!(all.items[2].actor_mission, None, "a global admin has no mission");
    assert_eq!(all.items[0].actor_role, AccessRole::Staff);
    assert_eq!(AccessLogRepository::list(&db, bob.id, PageRequest::default()).await.unwrap().items, [bobs]);
    let nobody = AccessLogRepository::list(&db, CitizenId::new(), PageRequest::default()).await.unwrap();
    assert!(nobody.items.is_empty());

    let first =
        AccessLogRepository::list(&db, alice.id, PageRequest { limit: 2, after: None }).await.unwrap();
    assert_eq!(first.items, newest_first[..2]);
    assert_eq!(first.next_after, Some(newest_first[1].id.0));
    let rest = AccessLogRepository::list(&db, alice.id, PageRequest { limit: 2, after: first.next_after })
        .await
        .unwrap();
    assert_eq!(rest.items, newest_first[2..]);
    assert_eq!(rest.next_after, None);
}

async fn a_batch_is_stored_whole_or_not_at_all(db: Database) {
    let paris = stored_mission(&db, "fr-paris").await;
    let alice = stored_citizen(&db, paris.id, "AA1").await;
    let clerk = staff_of(paris.id);
    let stored = read(&clerk, &alice, AccessedData::Profile, alice.id.0);
    AccessLogRepository::append(&db, std::slice::from_ref(&stored)).await.unwrap();

    // An entry stored already fails the batch it is in, and the batch's other entries.
    let fresh = read(&clerk, &alice, AccessedData::Appointment, Uuid::now_v7());
    let again = AccessLogRepository::append(&db, &[fresh.clone(), stored.clone()]).await;
    assert!(is_duplicate(&again, "access_log_pkey"), "{again:?}");
    // A single entry already stored is refused the same way.
    let alone = AccessLogRepository::append(&db, std::slice::from_ref(&stored)).await;
    assert!(is_duplicate(&alone, "access_log_pkey"), "{alone:?}");
    let listed = AccessLogRepository::list(&db, alice.id, PageRequest::default()).await.unwrap();
    assert_eq!(listed.items, [stored]);
}

on_both_databases!(
    entries_are_listed_per_citizen_newest_first_in_pages,
    a_batch_is_stored_whole_or_not_at_all
);
