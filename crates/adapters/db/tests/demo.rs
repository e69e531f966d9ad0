//! The demo data set's bulk inserts (`DemoRepository`), on both databases: what the
//! generator produced is what the areas' own repositories read back, field for field and
//! entry for entry, with no audit entry written; a second load of the same data set is
//! refused and stores nothing.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use common::*;
use consular_ports::Consistency;

use consular_application::demo::{DemoPlan, DemoPorts, DemoService, Generator};
use consular_db::Database;
use consular_domain::PageRequest;
use consular_ports::{
    AuditFilter, AuditRepository, CitizenRepository, DemoRepository, MissionRepository, RepoError,
    RequestFilter, RequestRepository, SeededRequest, ServiceTypeRepository, StaffRepository, SystemClock,
};
use std::collections::BTreeSet;
use std::sync::Arc;

fn plan() -> DemoPlan {
    DemoPlan { missions: 2, requests: 200, seed: 42, days: 120, now: now() }
}

async fn seeded_data_reads_back_through_the_repositories(db: Database) {
    let generator = Generator::new(plan()).unwrap();
    let counts = DemoService::new(DemoPorts { demo: Arc::new(db.clone()), clock: Arc::new(SystemClock) })
        .seed_plan(plan(), |_| {})
        .await
        .unwrap();
    assert_eq!((counts.missions, counts.requests), (2, 200));

    for mission in generator.missions() {
        assert_eq!(MissionRepository::get(&db, mission.id).await.unwrap().as_ref(), Some(mission));
    }
    for service_type in generator.service_types() {
        assert_eq!(
            ServiceTypeRepository::get(&db, service_type.id).await.unwrap().as_ref(),
            Some(service_type)
        );
    }
    for member in generator.staff() {
        assert_eq!(StaffRepository::get(&db, member.id).await.unwrap().as_ref(), Some(member));
    }
    let mut citizens = 0;
    for batch in generator.citizens(17) {
        for citizen in batch {
            assert_eq!(CitizenRepository::get(&db, citizen.id).await.unwrap(), Some(citizen));
            citizens += 1;
        }
    }
    assert_eq!(counts.citizens, citizens);

    let requests: Vec<SeededRequest> = generator.requests(64).flat_map(|b| b.unwrap()).collect();
    assert_eq!(counts.history_entries, requests.iter().map(|r| r.history.len() as u64).sum::<u64>());
    for SeededRequest { request, history } in &requests {
        assert_eq!(RequestRepository::get(&db, request.id).await.unwrap().as_ref(), Some(request));
        assert_eq!(&db.history(request.id).await.unwrap(), history, "in order");
    }

    // Listings see them as any request: per mission, newest first, through the pages.
    for mission in generator.missions() {
        let expected: BTreeSet<_> =
            requests.iter().filter(|r| r.request.mission_id == mission.id).map(|r| r.request.id).collect();
        let mut listed = Vec::new();
        let mut page = PageRequest { limit: 50, after: None };
        loop {
            let filter = RequestFilter { mission_id: Some(mission.id), ..RequestFilter::default() };
            let found = RequestRepository::list(&db, filter, page, Consistency::Latest).await.unwrap();
            listed.extend(found.items.into_iter().map(|r| r.id));
            match found.next_after {
                Some(after) => page.after = Some(after),
                None => break,
            }
        }
        assert!(listed.windows(2).all(|w| w[0] > w[1]), "newest first");
        assert_eq!(listed.into_iter().collect::<BTreeSet<_>>(), expected);
    }

    // Seeded history is not an event: nothing in the audit log.
    let audit = AuditRepository::list(
        &db,
        AuditFilter::default(),
        PageRequest { limit: 10, after: None },
        Consistency::Latest,
    )
    .await
    .unwrap();
    assert!(audit.items.is_empty(), "{:?}", audit.items);

    // The same data set again: refused by its first transaction, nothing more stored.
    let again = DemoRepository::insert_reference(
        &db,
        generator.missions(),
        generator.service_types(),
        generator.staff(),
    )
    .await;
    assert!(matches!(again, Err(RepoError::Duplicate { .. })), "{again:?}");
    let first = generator.requests(10).next().unwrap().unwrap();
    assert!(matches!(DemoRepository::insert_requests(&db, &first).await, Err(RepoError::Duplicate { .. })));
}

/// More rows than one PostgreSQL statement may bind (65,535 parameters): the chunks.
async fn large_batches_are_split(db: Database) {
    let plan = DemoPlan { missions: 1, requests: 6_000, seed: 7, days: 30, now: now() };
    let generator = Generator::new(plan.clone()).unwrap();
    DemoRepository::insert_reference(&db, generator.missions(), generator.service_types(), generator.staff())
        .await
        .unwrap();
    let citizens: Vec<_> = generator.citizens(usize::MAX).flatten().collect();
    DemoRepository::insert_citizens(&db, &citizens).await.unwrap();
    let requests: Vec<_> = generator.requests(6_000).flat_map(|b| b.unwrap()).collect();
    DemoRepository::insert_requests(&db, &requests).await.unwrap();
    let last = requests.last().unwrap();
    assert_eq!(db.history(last.request.id).await.unwrap(), last.history);
}

on_both_databases!(seeded_data_reads_back_through_the_repositories, large_batches_are_split);
