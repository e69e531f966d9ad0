//! Tolerant reads on a read replica, and read-your-writes (docs/operations.md "Read
//! replicas"), against a primary and a standby of the test's own
//! (`consular_testkit::replication`) whose replay of commits is held back an hour
//! (`recovery_min_apply_delay`): the standby confirms every commit but shows none of
//! them, so a tolerant read that sees a write made after the delay was set was served by
//! the primary, and one that misses it by the replica.
//!
//! Checked on the four tolerant reads (the citizens list, the requests list, the audit
//! log, the analytics overview): a reader that never wrote, or whose writes the replica
//! has replayed, is served by the replica; a writer whose mark the replica has not
//! replayed is served by the primary; the replica serves everyone again once it has
//! caught up; a sweep keeps the swept marks' guarantee (until the replica reaches the
//! furthest of them, everyone is served by the primary); a replica nobody answers on
//! leaves the reads to the primary; without a replica a mark costs no round trip; a
//! replica is PostgreSQL's only.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

// For its fixtures; its `on_both_databases!` is not used here.
#[allow(unused_macros, unused_imports)]
mod common;

use common::{citizen, first_entry, request, stored_mission, stored_service_type};
use consular_db::{Database, DbConfig};
use consular_domain::{
    AuditAction, AuditRecord, ClientId, MissionId, PageRequest, Principal, PrincipalId, PrincipalKind,
    ScopeSet, Subject,
};
use consular_ports::{
    AnalyticsQuery, AnalyticsRepository, AuditFilter, AuditRepository, CitizenFilter, CitizenRepository,
    Clock, Consistency, MissionScope, RequestFilter, RequestRepository, SystemClock, WriteMarks, WriteMeta,
};
use consular_testkit::replication::{ReplicatedPair, Role};
use std::sync::Arc;
use std::time::{Duration, Instant};
use time::OffsetDateTime;
use uuid::Uuid;

/// The API's database on the pair.
const DATABASE: &str = "consular";
/// Long enough that nothing held back is replayed during the test.
const HELD_BACK: Duration = Duration::from_secs(3600);
/// How long the standby may take to catch up once the delay is lifted.
const CATCH_UP: Duration = Duration::from_secs(20);

/// Runs `f` on the pair outside the runtime (each call runs psql).
async fn on_pair<T: Send + 'static>(
    pair: &Arc<ReplicatedPair>,
    f: impl FnOnce(&ReplicatedPair) -> Result<T, String> + Send + 'static,
) -> T {
    let pair = Arc::clone(pair);
    tokio::task::spawn_blocking(move || f(&pair)).await.unwrap().unwrap()
}

/// A pair with the database `consular` migrated, a pool on its primary reading tolerant
/// reads from its standby, and the standby caught up.
async fn replicated() -> (Arc<ReplicatedPair>, Database) {
    let pair = Arc::new(tokio::task::spawn_blocking(ReplicatedPair::start).await.unwrap().unwrap());
    on_pair(&pair, |p| p.query(Role::Primary, "postgres", &format!("CREATE DATABASE {DATABASE}"))).await;
    let config = DbConfig {
        max_connections: 4,
        read_url: Some(pair.url_of(Role::Standby, DATABASE)),
        ..DbConfig::new(pair.url_of(Role::Primary, DATABASE))
    };
    let db = Database::connect(&config).unwrap();
    db.migrate().await.unwrap();
    on_pair(&pair, |p| p.wait_replayed(CATCH_UP)).await;
    (pair, db)
}

fn subject(kind: PrincipalKind) -> Subject {
    Subject { kind, id: PrincipalId::new() }
}

/// What `writer` writes: a citizen of `mission` and a request of theirs, each with its
/// audit entry by `writer`, as the use cases write them.
struct Written {
    citizen: Uuid,
    request: Uuid,
}

async fn write(
    db: &Database,
    writer: Subject,
    mission: MissionId,
    service: &consular_domain::ServiceType,
) -> Written {
    let actor = Principal {
        subject: writer,
        client_id: ClientId::new(),
        mission: Some(mission),
        scopes: ScopeSet::parse("admin").unwrap(),
        address: None,
        acting_for: None,
    };
    let audited = |resource_type: &str, id: Uuid| WriteMeta {
        events: Vec::new(),
        audit: vec![AuditRecord::new(
            Some(&actor),
            common::now(),
            AuditAction::Created,
            resource_type,
            id,
            Vec::new(),
        )],
        idempotency: None,
    };
    let c = citizen(mission, &format!("P{}", Uuid::now_v7().simple()));
    CitizenRepository::insert(db, &c, None, &audited("citizen", c.id.0)).await.unwrap();
    let r = request(mission, c.id, service);
    RequestRepository::insert(db, &r, &first_entry(&r), &audited("service_request", r.id.0)).await.unwrap();
    Written { citizen: c.id.0, request: r.id.0 }
}

/// What each tolerant read shows `reader` of `written`, and the mission's open requests
/// in the overview.
#[derive(Debug, PartialEq, Eq)]
struct Seen {
    citizen: bool,
    request: bool,
    audit: bool,
    open_now: u64,
}

impl Seen {
    /// Every read shows the write, the overview `open` requests.
    fn all(open: u64) -> Seen {
        Seen { citizen: true, request: true, audit: true, open_now: open }
    }

    /// No read shows the write, the overview `open` requests.
    fn none(open: u64) -> Seen {
        Seen { citizen: false, request: false, audit: false, open_now: open }
    }
}

/// What `reader`'s tolerant reads show of `written`.
async fn seen(db: &Database, reader: Subject, mission: MissionId, written: &Written) -> Seen {
    seen_as(db, Consistency::OwnWrites(reader), mission, written).await
}

async fn seen_as(db: &Database, reader: Consistency, mission: MissionId, written: &Written) -> Seen {
    let page = PageRequest { limit: 100, after: None };
    let citizens = CitizenRepository::list(
        db,
        CitizenFilter { mission_id: Some(mission), ..CitizenFilter::default() },
        page,
        reader,
    )
    .await
    .unwrap();
    let requests = RequestRepository::list(
        db,
        RequestFilter { mission_id: Some(mission), ..RequestFilter::default() },
        page,
        reader,
    )
    .await
    .unwrap();
    let audit = AuditRepository::list(
        db,
        AuditFilter { resource_id: Some(written.request), ..AuditFilter::default() },
        page,
        reader,
    )
    .await
    .unwrap();
    let now = OffsetDateTime::now_utc();
    let query = AnalyticsQuery {
        missions: MissionScope::One(mission),
        service_type: None,
        boundaries: vec![now - time::Duration::days(1), now + time::Duration::days(1)],
    };
    let clock: Arc<dyn Clock> = Arc::new(SystemClock);
    let overview = AnalyticsRepository::overview(db, &query, &clock, reader).await.unwrap();
    Seen {
        citizen: citizens.items.iter().any(|c| c.id.0 == written.citizen),
        request: requests.items.iter().any(|r| r.id.0 == written.request),
        audit: !audit.items.is_empty(),
        open_now: overview.requests.open_now,
    }
}

#[tokio::test]
async fn tolerant_reads_come_from_the_replica_unless_the_reader_wrote_what_it_has_not_replayed() {
    let started = Instant::now();
    let (pair, db) = replicated().await;
    let mission = stored_mission(&db, "RR1").await;
    let service = stored_service_type(&db, "passport_renewal").await;
    // An earlier writer, whose write and mark the replica replays before the delay.
    let earlier = subject(PrincipalKind::Admin);
    let before = write(&db, earlier, mission.id, &service).await;
    db.mark(earlier).await.unwrap();
    on_pair(&pair, |p| p.wait_replayed(CATCH_UP)).await;
    on_pair(&pair, |p| p.set_apply_delay(HELD_BACK)).await;

    let writer = subject(PrincipalKind::Staff);
    let written = write(&db, writer, mission.id, &service).await;
    db.mark(writer).await.unwrap();
    let other = subject(PrincipalKind::Staff);
    // The replica serves a reader that never wrote and one whose mark it replayed: the
    // earlier write, not the new one.
    assert_eq!(seen(&db, other, mission.id, &written).await, Seen::none(1), "a reader that never wrote");
    assert_eq!(
        seen(&db, other, mission.id, &before).await,
        Seen::all(1),
        "the replica has the earlier write"
    );
    assert_eq!(
        seen(&db, earlier, mission.id, &written).await,
        Seen::none(1),
        "a reader whose mark is replayed"
    );
    // The primary serves the writer, its own write and all, and a read that must be current.
    assert_eq!(seen(&db, writer, mission.id, &written).await, Seen::all(2), "the writer reads its write");
    assert_eq!(seen_as(&db, Consistency::Latest, mission.id, &written).await, Seen::all(2), "a current read");
    // A write without a mark yet (the request not answered) does not send its writer to
    // the primary; its mark does.
    let late = subject(PrincipalKind::Citizen);
    let unmarked = write(&db, late, mission.id, &service).await;
    assert_eq!(seen(&db, late, mission.id, &unmarked).await, Seen::none(1), "before its mark");
    db.mark(late).await.unwrap();
    assert_eq!(seen(&db, late, mission.id, &unmarked).await, Seen::all(3), "after its mark");

    // A sweep forgets nothing younger than it is told, and then the marks made before its
    // instant; what they promised holds: until the replica has replayed the furthest of
    // them, every tolerant read is the primary's.
    assert_eq!(db.sweep_marks(OffsetDateTime::now_utc() - time::Duration::hours(1)).await.unwrap(), 0);
    let swept = db.sweep_marks(OffsetDateTime::now_utc() + time::Duration::seconds(1)).await.unwrap();
    assert_eq!(swept, 3, "the marks of the earlier writer, the writer and the late writer");
    assert_eq!(seen(&db, writer, mission.id, &written).await, Seen::all(3), "the writer after the sweep");
    assert_eq!(seen(&db, other, mission.id, &written).await, Seen::all(3), "anyone after the sweep");

    // Caught up, the replica shows everything to everyone.
    on_pair(&pair, |p| p.set_apply_delay(Duration::ZERO)).await;
    on_pair(&pair, |p| p.wait_replayed(CATCH_UP)).await;
    let third = subject(PrincipalKind::Admin);
    assert_eq!(seen(&db, third, mission.id, &written).await, Seen::all(3), "after the replica caught up");

    // And serves again: held back once more, a new write is the primary's for its writer
    // alone, also for the writers whose swept marks the replica has now passed.
    on_pair(&pair, |p| p.set_apply_delay(HELD_BACK)).await;
    let next = subject(PrincipalKind::Staff);
    let newer = write(&db, next, mission.id, &service).await;
    db.mark(next).await.unwrap();
    assert_eq!(seen(&db, next, mission.id, &newer).await, Seen::all(4), "the new writer");
    for (reader, what) in [(writer, "a swept writer"), (other, "a reader that never wrote")] {
        assert_eq!(seen(&db, reader, mission.id, &newer).await, Seen::none(3), "{what}, once replayed");
    }
    eprintln!("read replica: {:?}", started.elapsed());
}

#[tokio::test]
async fn tolerant_reads_fall_back_to_the_primary_when_the_replica_does_not_answer() {
    let url = common::postgres_url().await;
    // A port nobody listens on: every connection to it is refused.
    let dead = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let config = DbConfig {
        max_connections: 4,
        read_url: Some(format!("postgres://postgres@127.0.0.1:{dead}/postgres?connect_timeout=2")),
        ..DbConfig::new(url)
    };
    let db = Database::connect(&config).unwrap();
    let mission = stored_mission(&db, "RR2").await;
    let service = stored_service_type(&db, "passport_renewal").await;
    let writer = subject(PrincipalKind::Staff);
    let written = write(&db, writer, mission.id, &service).await;
    db.mark(writer).await.unwrap();
    let started = Instant::now();
    // Neither is served by the replica: the writer by its mark, the other for want of it.
    assert_eq!(seen(&db, writer, mission.id, &written).await, Seen::all(1), "the writer");
    assert_eq!(seen(&db, subject(PrincipalKind::Admin), mission.id, &written).await, Seen::all(1), "another");
    let served = db.tolerant_reads().unwrap();
    assert_eq!(served.replica, 0, "{served:?}");
    assert!(served.primary >= 8, "the eight reads went to the primary: {served:?}");
    eprintln!("eight tolerant reads with the replica down: {:?}", started.elapsed());
}

#[tokio::test]
async fn without_a_read_replica_a_mark_costs_no_round_trip() {
    // A pool on a server nobody answers on: a mark that reached for it would fail.
    let dead = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let config = DbConfig {
        acquire_timeout: Duration::from_secs(1),
        ..DbConfig::new(format!("postgres://postgres@127.0.0.1:{dead}/postgres?connect_timeout=1"))
    };
    let db = Database::connect(&config).unwrap();
    assert_eq!(config.read_url, None, "DbConfig::new has no read replica");
    db.mark(subject(PrincipalKind::Staff)).await.unwrap();
    assert!(db.backend_pid().await.is_err(), "the server answers after all: the test proves nothing");

    let (dir, sqlite) = common::sqlite().await;
    sqlite.mark(subject(PrincipalKind::Citizen)).await.unwrap();
    assert_eq!(sqlite.sweep_marks(OffsetDateTime::now_utc() + time::Duration::seconds(1)).await.unwrap(), 0);

    // A read replica is PostgreSQL's, beside a PostgreSQL primary.
    let sqlite_url = consular_testkit::sqlite_url(dir.path());
    let replicated_sqlite =
        DbConfig { read_url: Some(config.url.clone()), ..DbConfig::new(sqlite_url.clone()) };
    assert!(Database::connect(&replicated_sqlite).is_err(), "SQLite has no replicas");
    let sqlite_replica = DbConfig { read_url: Some(sqlite_url), ..DbConfig::new(config.url.clone()) };
    assert!(Database::connect(&sqlite_replica).is_err(), "a SQLite file as the replica");
}
