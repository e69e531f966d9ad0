//! The repository contracts of `consular-ports`, checked against both databases: every
//! test below is an `async fn(Database)`, and `on_both_databases!` runs it on a fresh
//! SQLite file (`sqlite::<test>`) and on a fresh PostgreSQL database (`postgres::<test>`).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use consular_db::{Backend, Database, DbConfig};
use consular_domain::{
    ApiClient, AuditAction, AuditRecord, ClientId, ClientStatus, Mission, MissionId, PageRequest, Principal,
    PrincipalId, PrincipalKind, ScopeSet, Subject,
};
use consular_ports::{
    ClientFilter, ClientRepository, Clock, HealthCheck, IdempotencyRecord, IdempotencyRepository,
    MissionRepository, RefreshOutcome, RefreshReplacement, RefreshTokenRecord, RepoError, Revocation,
    RevocationKind, SigningKeyRecord, SigningKeyRepository, StoredResponse, SystemClock, TokenRepository,
    WriteMeta,
};
use std::path::Path;
use time::macros::datetime;
use time::{Duration, OffsetDateTime};
use uuid::Uuid;

// ---------------------------------------------------------------- fixtures

async fn sqlite() -> (tempfile::TempDir, Database) {
    let dir = tempfile::tempdir().unwrap();
    let db = Database::connect(&DbConfig::new(consular_testkit::sqlite_url(dir.path()))).unwrap();
    assert_eq!(db.backend(), Backend::Sqlite);
    db.migrate().await.unwrap();
    (dir, db)
}

async fn postgres() -> Database {
    let url = tokio::task::spawn_blocking(|| {
        let migrations = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../migrations/postgres");
        let key = consular_testkit::fingerprint(&migrations)?;
        consular_testkit::postgres::fresh_database(&key, |url| {
            consular_db::migrate_blocking(url).map_err(|e| e.to_string())
        })
    })
    .await
    .unwrap()
    .unwrap();
    let db = Database::connect(&DbConfig { max_connections: 4, ..DbConfig::new(url) }).unwrap();
    assert_eq!(db.backend(), Backend::Postgres);
    // The clone is migrated already: this checks that migrating again is a no-op.
    db.migrate().await.unwrap();
    db
}

fn now() -> OffsetDateTime {
    SystemClock.now()
}

fn mission(code: &str) -> Mission {
    let now = now();
    Mission {
        id: MissionId::new(),
        code: code.to_owned(),
        name: format!("Mission {code}"),
        country: "FR".to_owned(),
        city: "Paris".to_owned(),
        timezone: "Europe/Paris".to_owned(),
        version: 1,
        created_at: now,
        updated_at: now,
    }
}

fn client(scopes: &str, mission: Option<MissionId>) -> ApiClient {
    let scopes = ScopeSet::parse(scopes).unwrap();
    let now = now();
    ApiClient {
        id: ClientId::new(),
        name: "portal".to_owned(),
        subject: Subject { kind: scopes.principal_kind().unwrap(), id: PrincipalId::new() },
        mission,
        scopes,
        secret_hash: vec![7; 32],
        status: ClientStatus::Active,
        version: 1,
        created_at: now,
        updated_at: now,
    }
}

fn admin() -> Principal {
    Principal {
        subject: Subject { kind: PrincipalKind::Admin, id: PrincipalId::new() },
        client_id: ClientId::new(),
        mission: None,
        scopes: ScopeSet::parse("admin").unwrap(),
    }
}

fn audited(resource_type: &str, resource_id: Uuid) -> WriteMeta {
    WriteMeta {
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

fn idempotency(owner: ClientId, key: &str, expires_in: Duration) -> IdempotencyRecord {
    let now = now();
    IdempotencyRecord {
        owner,
        key: key.to_owned(),
        fingerprint: "POST /v1/missions 1f2e".to_owned(),
        response: StoredResponse {
            status: 201,
            headers: vec![
                ("location".to_owned(), "/v1/missions/x".to_owned()),
                ("etag".to_owned(), "\"1\"".to_owned()),
            ],
            body: "{\"id\":\"x\"}".to_owned(),
        },
        created_at: now,
        expires_at: now + expires_in,
    }
}

fn refresh_token(client: &ApiClient, lifetime: Duration) -> RefreshTokenRecord {
    let now = now();
    RefreshTokenRecord {
        hash: Uuid::now_v7().as_bytes().to_vec(),
        client_id: client.id,
        family_id: Uuid::now_v7(),
        scopes: client.scopes,
        access_jti: Uuid::now_v7(),
        access_expires_at: now + Duration::minutes(15),
        issued_at: now,
        expires_at: now + lifetime,
    }
}

fn replacement() -> RefreshReplacement {
    let now = now();
    RefreshReplacement {
        hash: Uuid::now_v7().as_bytes().to_vec(),
        access_jti: Uuid::now_v7(),
        access_expires_at: now + Duration::minutes(15),
        issued_at: now,
        expires_at: now + Duration::days(30),
    }
}

fn signing_key(kid: &str) -> SigningKeyRecord {
    SigningKeyRecord {
        kid: kid.to_owned(),
        private_pkcs8: vec![1, 2, 3],
        public_key: vec![4; 32],
        created_at: now(),
    }
}

/// A stored active client, for the token tests (refresh tokens reference their client).
async fn stored_client(db: &Database) -> ApiClient {
    let client = client("staff", None);
    ClientRepository::insert(db, &client, &WriteMeta::default()).await.unwrap();
    client
}

// ---------------------------------------------------------------- missions

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

// ---------------------------------------------------------------- audit and idempotency

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
    let meta = WriteMeta { audit: vec![entry.clone()], idempotency: None };
    MissionRepository::insert(&db, &paris, &meta).await.unwrap();
    assert_eq!(db.audit_trail("mission", paris.id.0).await.unwrap(), vec![entry]);
}

async fn a_used_idempotency_key_is_refused(db: Database) {
    let owner = ClientId::new();
    let first = WriteMeta { idempotency: Some(idempotency(owner, "k", Duration::hours(24))), audit: vec![] };
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
    let meta = WriteMeta { idempotency: Some(old), audit: vec![] };
    MissionRepository::insert(&db, &mission("fr-paris"), &meta).await.unwrap();

    let fresh = idempotency(owner, "k", Duration::hours(24));
    let meta = WriteMeta { idempotency: Some(fresh.clone()), audit: vec![] };
    MissionRepository::insert(&db, &mission("fr-lyon"), &meta).await.unwrap();
    assert_eq!(IdempotencyRepository::find(&db, owner, "k", now()).await.unwrap(), Some(fresh));
}

// ---------------------------------------------------------------- clients

async fn clients_round_trip_and_list_by_mission(db: Database) {
    let paris = mission("fr-paris");
    let lyon = mission("fr-lyon");
    for m in [&paris, &lyon] {
        MissionRepository::insert(&db, m, &WriteMeta::default()).await.unwrap();
    }
    let global = client("admin", None);
    let staff = client("staff admin", Some(paris.id));
    let citizen = client("citizen", Some(paris.id));
    let elsewhere = client("staff", Some(lyon.id));
    for c in [&global, &staff, &citizen, &elsewhere] {
        ClientRepository::insert(&db, c, &audited("client", c.id.0)).await.unwrap();
    }

    assert_eq!(ClientRepository::get(&db, staff.id).await.unwrap(), Some(staff.clone()));
    assert_eq!(ClientRepository::get(&db, ClientId::new()).await.unwrap(), None);

    let all = ClientRepository::list(&db, ClientFilter::default(), PageRequest::default()).await.unwrap();
    assert_eq!(all.items.len(), 4);
    let in_paris = ClientFilter { mission: Some(paris.id) };
    let first = ClientRepository::list(&db, in_paris, PageRequest { limit: 1, after: None }).await.unwrap();
    let rest = ClientRepository::list(&db, in_paris, PageRequest { limit: 1, after: first.next_after })
        .await
        .unwrap();
    let mut expected = [staff.id, citizen.id];
    expected.sort();
    assert_eq!([first.items[0].id, rest.items[0].id], expected[..]);
    assert_eq!(rest.next_after, None);
}

async fn a_client_update_replaces_every_field(db: Database) {
    let paris = mission("fr-paris");
    MissionRepository::insert(&db, &paris, &WriteMeta::default()).await.unwrap();
    let mut c = client("staff admin", Some(paris.id));
    ClientRepository::insert(&db, &c, &WriteMeta::default()).await.unwrap();

    c.mission = None;
    c.scopes = ScopeSet::parse("admin").unwrap();
    c.secret_hash = vec![9; 32];
    c.version = 2;
    c.updated_at = now();
    ClientRepository::update(&db, &c, 1, now(), &WriteMeta::default()).await.unwrap();
    assert_eq!(ClientRepository::get(&db, c.id).await.unwrap(), Some(c.clone()));
    let stale = ClientRepository::update(&db, &c, 1, now(), &WriteMeta::default()).await;
    assert!(matches!(stale, Err(RepoError::VersionConflict)));
}

async fn disabling_a_client_revokes_its_tokens(db: Database) {
    let c = stored_client(&db).await;
    let token = refresh_token(&c, Duration::days(30));
    TokenRepository::insert_refresh(&db, &token).await.unwrap();

    let at = now();
    let disabled = ApiClient { status: ClientStatus::Disabled, version: 2, updated_at: at, ..c.clone() };
    ClientRepository::update(&db, &disabled, 1, at, &audited("client", c.id.0)).await.unwrap();

    let outcome =
        TokenRepository::rotate_refresh(&db, c.id, &token.hash, &replacement(), now()).await.unwrap();
    assert_eq!(outcome, RefreshOutcome::Invalid);
    assert!(TokenRepository::is_revoked(&db, Uuid::now_v7(), c.id).await.unwrap());
    let active = TokenRepository::active_revocations(&db, now()).await.unwrap();
    assert!(
        active.iter().any(|r| r.kind == RevocationKind::Client { client_id: c.id } && r.created_at == at)
    );
}

async fn the_first_admin_is_created_once(db: Database) {
    let first = client("admin", None);
    assert!(ClientRepository::insert_first(&db, &first, &audited("client", first.id.0)).await.unwrap());
    let second = client("admin", None);
    assert!(!ClientRepository::insert_first(&db, &second, &audited("client", second.id.0)).await.unwrap());
    assert_eq!(ClientRepository::get(&db, second.id).await.unwrap(), None);
    assert_eq!(db.count_rows("audit_events").await.unwrap(), 1);
}

async fn no_first_admin_once_a_client_exists(db: Database) {
    stored_client(&db).await;
    assert!(
        !ClientRepository::insert_first(&db, &client("admin", None), &WriteMeta::default()).await.unwrap()
    );
    assert_eq!(db.count_rows("api_clients").await.unwrap(), 1);
}

async fn concurrent_first_admins_make_one_client(db: Database) {
    let (a, b) = (client("admin", None), client("admin", None));
    let (db_a, db_b) = (db.clone(), db.clone());
    let (meta_a, meta_b) = (WriteMeta::default(), WriteMeta::default());
    let (first, second) = tokio::join!(
        ClientRepository::insert_first(&db_a, &a, &meta_a),
        ClientRepository::insert_first(&db_b, &b, &meta_b)
    );
    assert!(first.unwrap() ^ second.unwrap());
    assert_eq!(db.count_rows("api_clients").await.unwrap(), 1);
}

// ---------------------------------------------------------------- refresh tokens

async fn a_refresh_token_rotates_once(db: Database) {
    let c = stored_client(&db).await;
    let token = refresh_token(&c, Duration::days(30));
    TokenRepository::insert_refresh(&db, &token).await.unwrap();

    let next = replacement();
    let outcome = TokenRepository::rotate_refresh(&db, c.id, &token.hash, &next, now()).await.unwrap();
    assert_eq!(outcome, RefreshOutcome::Rotated(token.clone()));

    // The replacement inherits family and scopes and rotates in turn.
    let outcome =
        TokenRepository::rotate_refresh(&db, c.id, &next.hash, &replacement(), now()).await.unwrap();
    let RefreshOutcome::Rotated(spent) = outcome else { panic!("{outcome:?}") };
    assert_eq!(
        (spent.family_id, spent.scopes, spent.access_jti),
        (token.family_id, token.scopes, next.access_jti)
    );
    assert_eq!(spent.expires_at, next.expires_at);
}

async fn reusing_a_spent_token_revokes_its_family(db: Database) {
    let c = stored_client(&db).await;
    let token = refresh_token(&c, Duration::days(30));
    TokenRepository::insert_refresh(&db, &token).await.unwrap();
    let next = replacement();
    TokenRepository::rotate_refresh(&db, c.id, &token.hash, &next, now()).await.unwrap();

    let reuse = TokenRepository::rotate_refresh(&db, c.id, &token.hash, &replacement(), now()).await.unwrap();
    assert_eq!(reuse, RefreshOutcome::Reused);

    // The thief's (or the victim's) newer token is dead too, with both access tokens.
    let outcome =
        TokenRepository::rotate_refresh(&db, c.id, &next.hash, &replacement(), now()).await.unwrap();
    assert_eq!(outcome, RefreshOutcome::Invalid);
    let other_client = ClientId::new();
    assert!(TokenRepository::is_revoked(&db, token.access_jti, other_client).await.unwrap());
    assert!(TokenRepository::is_revoked(&db, next.access_jti, other_client).await.unwrap());
    assert!(!TokenRepository::is_revoked(&db, Uuid::now_v7(), c.id).await.unwrap());
}

async fn a_family_revocation_skips_expired_access_tokens(db: Database) {
    let c = stored_client(&db).await;
    let mut token = refresh_token(&c, Duration::days(30));
    token.access_expires_at = now() - Duration::minutes(1);
    TokenRepository::insert_refresh(&db, &token).await.unwrap();
    assert!(TokenRepository::revoke_refresh(&db, c.id, &token.hash, now()).await.unwrap());
    assert!(!TokenRepository::is_revoked(&db, token.access_jti, c.id).await.unwrap());
    assert_eq!(db.count_rows("revocations").await.unwrap(), 0);
}

async fn another_clients_or_an_expired_token_is_invalid(db: Database) {
    let owner = stored_client(&db).await;
    let thief = stored_client(&db).await;
    let token = refresh_token(&owner, Duration::days(30));
    let mut expired = refresh_token(&owner, Duration::days(30));
    expired.expires_at = now() - Duration::seconds(1);
    for t in [&token, &expired] {
        TokenRepository::insert_refresh(&db, t).await.unwrap();
    }

    let stolen =
        TokenRepository::rotate_refresh(&db, thief.id, &token.hash, &replacement(), now()).await.unwrap();
    assert_eq!(stolen, RefreshOutcome::Invalid);
    let late =
        TokenRepository::rotate_refresh(&db, owner.id, &expired.hash, &replacement(), now()).await.unwrap();
    assert_eq!(late, RefreshOutcome::Invalid);
    let unknown =
        TokenRepository::rotate_refresh(&db, owner.id, b"nope", &replacement(), now()).await.unwrap();
    assert_eq!(unknown, RefreshOutcome::Invalid);
    // The owner's token was not touched by the attempts.
    let outcome =
        TokenRepository::rotate_refresh(&db, owner.id, &token.hash, &replacement(), now()).await.unwrap();
    assert_eq!(outcome, RefreshOutcome::Rotated(token));
}

async fn revoking_a_refresh_token(db: Database) {
    let owner = stored_client(&db).await;
    let token = refresh_token(&owner, Duration::days(30));
    TokenRepository::insert_refresh(&db, &token).await.unwrap();

    assert!(!TokenRepository::revoke_refresh(&db, ClientId::new(), &token.hash, now()).await.unwrap());
    assert!(TokenRepository::revoke_refresh(&db, owner.id, &token.hash, now()).await.unwrap());
    assert!(!TokenRepository::revoke_refresh(&db, owner.id, &token.hash, now()).await.unwrap());
    assert!(TokenRepository::is_revoked(&db, token.access_jti, owner.id).await.unwrap());
    let outcome =
        TokenRepository::rotate_refresh(&db, owner.id, &token.hash, &replacement(), now()).await.unwrap();
    assert_eq!(outcome, RefreshOutcome::Invalid);
}

// ---------------------------------------------------------------- revocations

async fn revocations_are_recorded_once_and_listed(db: Database) {
    let start = now();
    let jti = Uuid::now_v7();
    let token = Revocation {
        id: Uuid::now_v7(),
        kind: RevocationKind::AccessToken { jti, expires_at: start + Duration::minutes(10) },
        created_at: start,
    };
    TokenRepository::insert_revocation(&db, &token).await.unwrap();
    let again = Revocation { id: Uuid::now_v7(), created_at: start + Duration::seconds(1), ..token };
    TokenRepository::insert_revocation(&db, &again).await.unwrap();

    let expired = Revocation {
        id: Uuid::now_v7(),
        kind: RevocationKind::AccessToken { jti: Uuid::now_v7(), expires_at: start - Duration::minutes(1) },
        created_at: start - Duration::minutes(20),
    };
    let client_id = ClientId::new();
    let client = Revocation {
        id: Uuid::now_v7(),
        kind: RevocationKind::Client { client_id },
        created_at: start + Duration::seconds(2),
    };
    for r in [&expired, &client] {
        TokenRepository::insert_revocation(&db, r).await.unwrap();
    }

    assert_eq!(TokenRepository::revocations_since(&db, start).await.unwrap(), vec![token, client]);
    assert_eq!(
        TokenRepository::revocations_since(&db, start + Duration::seconds(2)).await.unwrap(),
        vec![client]
    );
    assert_eq!(TokenRepository::active_revocations(&db, start).await.unwrap(), vec![token, client]);

    assert!(TokenRepository::is_revoked(&db, jti, ClientId::new()).await.unwrap());
    assert!(TokenRepository::is_revoked(&db, Uuid::now_v7(), client_id).await.unwrap());
    assert!(!TokenRepository::is_revoked(&db, Uuid::now_v7(), ClientId::new()).await.unwrap());
}

async fn purging_removes_only_what_expired(db: Database) {
    let c = stored_client(&db).await;
    let live = refresh_token(&c, Duration::days(30));
    let mut dead = refresh_token(&c, Duration::days(30));
    dead.expires_at = now() - Duration::hours(1);
    for t in [&live, &dead] {
        TokenRepository::insert_refresh(&db, t).await.unwrap();
    }
    let at = now();
    let access = |expires_at| Revocation {
        id: Uuid::now_v7(),
        kind: RevocationKind::AccessToken { jti: Uuid::now_v7(), expires_at },
        created_at: at,
    };
    let client =
        Revocation { id: Uuid::now_v7(), kind: RevocationKind::Client { client_id: c.id }, created_at: at };
    for r in [access(at - Duration::minutes(1)), access(at + Duration::minutes(10)), client] {
        TokenRepository::insert_revocation(&db, &r).await.unwrap();
    }

    // Expired idempotency records go too (the application's housekeeping relies on it).
    let owner = ClientId::new();
    let mut stale = idempotency(owner, "old", Duration::hours(24));
    stale.expires_at = at - Duration::minutes(1);
    for record in [stale, idempotency(owner, "new", Duration::hours(24))] {
        let meta = WriteMeta { idempotency: Some(record.clone()), audit: vec![] };
        MissionRepository::insert(&db, &mission(&format!("fr-{}", record.key)), &meta).await.unwrap();
    }

    assert_eq!(TokenRepository::purge_expired(&db, now()).await.unwrap(), 3);
    assert_eq!(db.count_rows("refresh_tokens").await.unwrap(), 1);
    assert_eq!(db.count_rows("revocations").await.unwrap(), 2);
    assert_eq!(db.count_rows("idempotency_keys").await.unwrap(), 1);
    assert!(IdempotencyRepository::find(&db, owner, "new", now()).await.unwrap().is_some());
    let outcome =
        TokenRepository::rotate_refresh(&db, c.id, &live.hash, &replacement(), now()).await.unwrap();
    assert_eq!(outcome, RefreshOutcome::Rotated(live));
}

// ---------------------------------------------------------------- signing keys and health

async fn the_first_signing_key_wins(db: Database) {
    assert_eq!(SigningKeyRepository::all(&db).await.unwrap(), vec![]);
    let first = signing_key("k1");
    assert!(SigningKeyRepository::insert_first(&db, &first).await.unwrap());
    assert!(!SigningKeyRepository::insert_first(&db, &signing_key("k2")).await.unwrap());
    assert_eq!(SigningKeyRepository::all(&db).await.unwrap(), vec![first]);
}

async fn concurrent_first_signing_keys_make_one_key(db: Database) {
    let (a, b) = (signing_key("ka"), signing_key("kb"));
    let (db_a, db_b) = (db.clone(), db.clone());
    let (first, second) = tokio::join!(
        SigningKeyRepository::insert_first(&db_a, &a),
        SigningKeyRepository::insert_first(&db_b, &b)
    );
    assert!(first.unwrap() ^ second.unwrap());
    assert_eq!(SigningKeyRepository::all(&db).await.unwrap().len(), 1);
}

async fn the_health_check_answers(db: Database) {
    assert_eq!(db.name(), "database");
    assert_eq!(db.check().await, Ok(()));
    db.close();
    assert!(db.check().await.is_err());
    let closed = MissionRepository::get(&db, MissionId::new()).await;
    assert!(matches!(closed, Err(RepoError::Unavailable(_))), "{closed:?}");
}

// ---------------------------------------------------------------- both databases

macro_rules! on_both_databases {
    ($($test:ident),* $(,)?) => {
        mod sqlite {
            $(
                #[tokio::test(flavor = "multi_thread")]
                async fn $test() {
                    let (_dir, db) = super::sqlite().await;
                    super::$test(db).await;
                }
            )*
        }

        mod postgres {
            $(
                #[tokio::test(flavor = "multi_thread")]
                async fn $test() {
                    super::$test(super::postgres().await).await;
                }
            )*
        }
    };
}

on_both_databases!(
    missions_round_trip,
    mission_updates_check_the_version,
    a_taken_mission_code_is_a_duplicate_and_stores_nothing,
    a_failed_update_stores_no_audit_entry,
    missions_are_listed_in_keyset_pages,
    timestamps_round_trip_to_the_microsecond,
    audit_and_idempotency_are_stored_with_the_change,
    a_system_audit_entry_has_no_actor,
    a_used_idempotency_key_is_refused,
    an_expired_idempotency_key_may_be_used_again,
    clients_round_trip_and_list_by_mission,
    a_client_update_replaces_every_field,
    disabling_a_client_revokes_its_tokens,
    the_first_admin_is_created_once,
    no_first_admin_once_a_client_exists,
    concurrent_first_admins_make_one_client,
    a_refresh_token_rotates_once,
    reusing_a_spent_token_revokes_its_family,
    a_family_revocation_skips_expired_access_tokens,
    another_clients_or_an_expired_token_is_invalid,
    revoking_a_refresh_token,
    revocations_are_recorded_once_and_listed,
    purging_removes_only_what_expired,
    the_first_signing_key_wins,
    concurrent_first_signing_keys_make_one_key,
    the_health_check_answers,
);
