//! What the repository suites share: a fresh database of each kind, the fixtures most
//! areas build on (a mission, a service type, a citizen, a request), and
//! `on_both_databases!`, which runs every `async fn(Database)` test of a suite on a fresh
//! SQLite file (`sqlite::<test>`) and on a fresh PostgreSQL database (`postgres::<test>`).
// Each test binary includes this module and uses a part of it.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use consular_db::{Backend, Database, DbConfig};
use consular_domain::{
    Address, AuditAction, AuditRecord, Citizen, CitizenId, ClientId, EmergencyContact, HistoryEntry, Mission,
    MissionId, Money, Principal, PrincipalId, PrincipalKind, ScopeSet, ServiceRequest, ServiceType, Stage,
    Subject, fixtures,
};
use consular_ports::{
    CitizenRepository, Clock, MissionRepository, OutboxEvent, RepoError, RequestRepository,
    ServiceTypeRepository, SystemClock, WriteMeta,
};
use std::path::Path;
use time::OffsetDateTime;
use uuid::Uuid;

pub(crate) async fn sqlite() -> (tempfile::TempDir, Database) {
    let dir = tempfile::tempdir().unwrap();
    let db = Database::connect(&DbConfig::new(consular_testkit::sqlite_url(dir.path()))).unwrap();
    assert_eq!(db.backend(), Backend::Sqlite);
    db.migrate().await.unwrap();
    (dir, db)
}

pub(crate) async fn postgres() -> Database {
    let db =
        Database::connect(&DbConfig { max_connections: 4, ..DbConfig::new(postgres_url().await) }).unwrap();
    assert_eq!(db.backend(), Backend::Postgres);
    // The clone is migrated already: this checks that migrating again is a no-op.
    db.migrate().await.unwrap();
    db
}

/// The URL of a fresh PostgreSQL database, migrated (a clone of the migrated template).
pub(crate) async fn postgres_url() -> String {
    tokio::task::spawn_blocking(|| {
        let migrations = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../migrations/postgres");
        let key = consular_testkit::fingerprint(&migrations)?;
        consular_testkit::postgres::fresh_database(&key, |url| {
            consular_db::migrate_blocking(url).map_err(|e| e.to_string())
        })
    })
    .await
    .unwrap()
    .unwrap()
}

pub(crate) fn now() -> OffsetDateTime {
    SystemClock.now()
}

pub(crate) fn mission(code: &str) -> Mission {
    Mission { code: code.to_owned(), name: format!("Mission {code}"), ..fixtures::mission(now()) }
}

pub(crate) fn admin() -> Principal {
    Principal {
        subject: Subject { kind: PrincipalKind::Admin, id: PrincipalId::new() },
        client_id: ClientId::new(),
        mission: None,
        scopes: ScopeSet::parse("admin").unwrap(),
        // Stored with every audit entry this principal writes (and read back).
        address: Some(std::net::IpAddr::from([192, 0, 2, 10])),
        acting_for: None,
    }
}

pub(crate) fn audited(resource_type: &str, resource_id: Uuid) -> WriteMeta {
    WriteMeta {
        events: Vec::new(),
        audit: vec![AuditRecord::new(
            Some(&admin()),
            now(),
            AuditAction::Created,
            resource_type,
            resource_id,
            vec!["name".to_owned(), "code".to_owned()],
        )],
        idempotency: None,
    }
}

pub(crate) async fn stored_mission(db: &Database, code: &str) -> Mission {
    let m = mission(code);
    MissionRepository::insert(db, &m, &WriteMeta::default()).await.unwrap();
    m
}

pub(crate) fn service_type(code: &str) -> ServiceType {
    ServiceType {
        code: code.to_owned(),
        name: format!("Service {code}"),
        description: "Renew an expiring passport".to_owned(),
        fee: Money { amount_minor: 8600, currency: "EUR".to_owned() },
        sla_days: 21,
        retention_days: 3650,
        required_documents: vec!["passport_photo".to_owned(), "old_passport".to_owned()],
        stages: vec![
            Stage {
                name: "Document check".to_owned(), description: "Quotes \" and ünïcode ✓".to_owned()
            },
            Stage { name: "Printing".to_owned(), description: String::new() },
        ],
        ..fixtures::service_type(now())
    }
}

pub(crate) async fn stored_service_type(db: &Database, code: &str) -> ServiceType {
    let t = service_type(code);
    ServiceTypeRepository::insert(db, &t, &WriteMeta::default()).await.unwrap();
    t
}

/// The domain's base citizen with every optional field set (each one is read back).
pub(crate) fn citizen(mission: MissionId, passport: &str) -> Citizen {
    let base = fixtures::citizen(mission, now());
    Citizen {
        passport_number: passport.to_owned(),
        address: Address {
            region: Some("Ontario".to_owned()),
            postal_code: Some("K1A 0A1".to_owned()),
            ..base.address
        },
        emergency_contact: Some(EmergencyContact {
            name: "Jean Martin".to_owned(),
            phone: "+33600000000".to_owned(),
            relationship: "brother".to_owned(),
        }),
        ..base
    }
}

pub(crate) fn is_duplicate<T: std::fmt::Debug>(result: &Result<T, RepoError>, name: &str) -> bool {
    matches!(result, Err(RepoError::Duplicate { constraint }) if constraint == name)
}

pub(crate) fn outbox_event(kind: &str, aggregate_id: Uuid) -> OutboxEvent {
    OutboxEvent {
        id: Uuid::now_v7(),
        kind: kind.to_owned(),
        aggregate_id,
        payload: serde_json::json!({
            "assignee_id": Uuid::now_v7(),
            "previous_assignee_id": null,
            "reason": "Quotes \" and ünïcode ✓",
            "stage": 2,
            "fee": 86.5,
            "tags": ["a", {"nested": true}],
        }),
        created_at: now(),
    }
}

pub(crate) async fn stored_citizen(db: &Database, mission: MissionId, passport: &str) -> Citizen {
    let c = citizen(mission, passport);
    CitizenRepository::insert(db, &c, None, &WriteMeta::default()).await.unwrap();
    c
}

/// A new `submitted` request at its first stage, as the use case makes it.
pub(crate) fn request(mission: MissionId, citizen: CitizenId, service_type: &ServiceType) -> ServiceRequest {
    fixtures::service_request(mission, citizen, service_type, now())
}

pub(crate) fn first_entry(r: &ServiceRequest) -> HistoryEntry {
    HistoryEntry {
        actor: Some(Subject { kind: PrincipalKind::Citizen, id: PrincipalId(r.citizen_id.0) }),
        ..fixtures::history_entry(r.submitted_at, r.status, r.current_stage)
    }
}

pub(crate) async fn stored_request(db: &Database, r: ServiceRequest) -> ServiceRequest {
    RequestRepository::insert(db, &r, &first_entry(&r), &WriteMeta::default()).await.unwrap();
    r
}

/// Checks that a plan (`Database::explain_*_list`) reads `table` through indexes only. On
/// PostgreSQL sequential scans are disabled for the EXPLAIN, so a `Seq Scan` left in the
/// plan means that no index fits, whatever the statistics; SQLite says `SCAN <table>` for
/// a full scan and `SCAN/SEARCH <table> USING [COVERING] INDEX …` otherwise.
pub(crate) fn assert_no_full_scan(backend: Backend, table: &str, plan: &[String], what: &str) {
    let text = plan.join("\n");
    match backend {
        Backend::Postgres => assert!(!text.contains("Seq Scan"), "{what}:\n{text}"),
        Backend::Sqlite => assert!(
            plan.iter().all(|step| !step.starts_with(&format!("SCAN {table}")) || step.contains(" INDEX ")),
            "{what}:\n{text}"
        ),
    }
}

/// Checks that a plan reads `index`, which yields the list's order: no sort step.
pub(crate) fn assert_ordered_by_index(plan: &[String], index: &str) {
    let text = plan.join("\n");
    assert!(text.contains(index), "{text}");
    assert!(!text.contains("Sort") && !text.contains("TEMP B-TREE"), "{text}");
}

/// Runs each named `async fn(Database)` of the invoking file on both databases.
macro_rules! on_both_databases {
    ($($test:ident),* $(,)?) => {
        mod sqlite {
            $(
                #[tokio::test(flavor = "multi_thread")]
                async fn $test() {
                    let (_dir, db) = $crate::common::sqlite().await;
                    super::$test(db).await;
                }
            )*
        }

        mod postgres {
            $(
                #[tokio::test(flavor = "multi_thread")]
                async fn $test() {
                    super::$test($crate::common::postgres().await).await;
                }
            )*
        }
    };
}
pub(crate) use on_both_databases;
