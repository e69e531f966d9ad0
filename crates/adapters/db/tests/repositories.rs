//! The repository contracts of `consular-ports`, checked against both databases: every
//! test below is an `async fn(Database)`, and `on_both_databases!` (`common/mod.rs`) runs
//! it on a fresh SQLite file (`sqlite::<test>`) and on a fresh PostgreSQL database
//! (`postgres::<test>`). Documents have their own suite, `documents.rs`.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use common::*;

use consular_db::Database;
use consular_domain::{
    Action, ApiClient, AuditAction, AuditRecord, Citizen, CitizenId, ClientId, ClientStatus, HistoryEntry,
    MissionId, Money, Page, PageRequest, Principal, PrincipalId, PrincipalKind, RegistrationStatus,
    RequestId, RequestStatus, Role, ScopeSet, ServiceRequest, ServiceType, ServiceTypeId, StaffId,
    StaffMember, Stage, Subject,
};
use consular_ports::{
    AuditFilter, AuditRepository, CitizenFilter, CitizenRepository, ClientFilter, ClientRepository,
    HealthCheck, IdempotencyRecord, IdempotencyRepository, Message, MissionRepository, Note, OutboxEvent,
    QueueGroup, RefreshOutcome, RefreshReplacement, RefreshTokenRecord, RepoError, RequestFilter,
    RequestRepository, Revocation, RevocationKind, ServiceTypeFilter, ServiceTypeRepository, StaffFilter,
    StaffRepository, StoredOutcome, TokenRepository, WriteMeta,
};
use time::macros::{date, datetime};
use time::{Duration, OffsetDateTime};
use uuid::Uuid;

// ---------------------------------------------------------------- fixtures

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

fn idempotency(owner: ClientId, key: &str, expires_in: Duration) -> IdempotencyRecord {
    let now = now();
    IdempotencyRecord {
        owner,
        key: key.to_owned(),
        fingerprint: "POST /v1/missions 1f2e".to_owned(),
        outcome: StoredOutcome {
            resource_id: Uuid::now_v7(),
            snapshot: serde_json::json!({ "code": "x", "version": 1 }),
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

/// A stored active client, for the token tests (refresh tokens reference their client).
async fn stored_client(db: &Database) -> ApiClient {
    let client = client("staff", None);
    ClientRepository::insert(db, &client, &WriteMeta::default()).await.unwrap();
    client
}

/// The API client issued to a citizen or staff member (`principal`).
fn client_of(scopes: &str, mission: MissionId, principal: Uuid) -> ApiClient {
    let mut c = client(scopes, Some(mission));
    c.subject.id = PrincipalId(principal);
    c
}

fn staff_member(mission: MissionId, service_types: &[ServiceTypeId]) -> StaffMember {
    let now = now();
    StaffMember {
        id: StaffId::new(),
        mission_id: mission,
        name: "Bob Lee".to_owned(),
        email: "bob@mission.example".to_owned(),
        job_title: "Consular officer".to_owned(),
        active: true,
        service_type_ids: service_types.to_vec(),
        version: 1,
        created_at: now,
        updated_at: now,
    }
}

/// Ids in the order a listing must return them: ascending.
fn sorted<T: Ord + Copy>(ids: &[T]) -> Vec<T> {
    let mut ids = ids.to_vec();
    ids.sort();
    ids
}

async fn listed_citizens(db: &Database, filter: CitizenFilter) -> Vec<CitizenId> {
    let page = CitizenRepository::list(db, filter, PageRequest::default()).await.unwrap();
    assert_eq!(page.next_after, None);
    page.items.iter().map(|c| c.id).collect()
}

async fn listed_staff(db: &Database, filter: StaffFilter) -> Vec<StaffId> {
    let page = StaffRepository::list(db, filter, PageRequest::default()).await.unwrap();
    page.items.iter().map(|m| m.id).collect()
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
    let meta = WriteMeta { events: Vec::new(), audit: vec![entry.clone()], idempotency: None };
    MissionRepository::insert(&db, &paris, &meta).await.unwrap();
    assert_eq!(db.audit_trail("mission", paris.id.0).await.unwrap(), vec![entry]);
}

async fn a_used_idempotency_key_is_refused(db: Database) {
    let owner = ClientId::new();
    let first = WriteMeta {
        events: Vec::new(),
        idempotency: Some(idempotency(owner, "k", Duration::hours(24))),
        audit: vec![],
    };
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
    let meta = WriteMeta { events: Vec::new(), idempotency: Some(old), audit: vec![] };
    MissionRepository::insert(&db, &mission("fr-paris"), &meta).await.unwrap();

    let fresh = idempotency(owner, "k", Duration::hours(24));
    let meta = WriteMeta { events: Vec::new(), idempotency: Some(fresh.clone()), audit: vec![] };
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
        let meta = WriteMeta { events: Vec::new(), idempotency: Some(record.clone()), audit: vec![] };
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

// ---------------------------------------------------------------- health (signing keys: signing_keys.rs)

async fn the_health_check_answers(db: Database) {
    assert_eq!(db.name(), "database");
    assert_eq!(db.check().await, Ok(()));
    db.close();
    assert!(db.check().await.is_err());
    let closed = MissionRepository::get(&db, MissionId::new()).await;
    assert!(matches!(closed, Err(RepoError::Unavailable(_))), "{closed:?}");
}

// ---------------------------------------------------------------- service types

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

// ---------------------------------------------------------------- citizens

async fn citizens_round_trip_with_exact_dates(db: Database) {
    let paris = stored_mission(&db, "fr-paris").await;
    let mut alice = citizen(paris.id, "19AB12345");
    alice.date_of_birth = date!(1900 - 01 - 01);
    alice.passport_expiry = date!(2000 - 02 - 29);
    alice.registered_at = datetime!(2026-11-22 23:59:59.999999 -05:00);
    alice.activated_at = Some(datetime!(2026-11-23 08:00:00.000001 UTC));
    alice.registration_status = RegistrationStatus::Active;
    CitizenRepository::insert(&db, &alice, None, &WriteMeta::default()).await.unwrap();
    assert_eq!(CitizenRepository::get(&db, alice.id).await.unwrap(), Some(alice.clone()));
    assert_eq!(CitizenRepository::get(&db, CitizenId::new()).await.unwrap(), None);

    // Optional parts absent, the latest date a `time::Date` formats with four digits.
    let mut bob = citizen(paris.id, "XY0000001");
    bob.date_of_birth = date!(2024 - 12 - 31);
    bob.passport_expiry = date!(9999 - 12 - 31);
    bob.emergency_contact = None;
    bob.address.region = None;
    bob.address.postal_code = None;
    bob.address.line2 = Some("Apt. 4 — « bis »".to_owned());
    CitizenRepository::insert(&db, &bob, None, &WriteMeta::default()).await.unwrap();
    assert_eq!(CitizenRepository::get(&db, bob.id).await.unwrap(), Some(bob));
}

async fn a_citizen_is_stored_with_their_client(db: Database) {
    let paris = stored_mission(&db, "fr-paris").await;
    let alice = citizen(paris.id, "19AB12345");
    let portal = client_of("citizen", paris.id, alice.id.0);
    let meta = WriteMeta {
        events: Vec::new(),
        audit: [audited("citizen", alice.id.0).audit, audited("client", portal.id.0).audit].concat(),
        idempotency: None,
    };
    CitizenRepository::insert(&db, &alice, Some(portal.clone()), &meta).await.unwrap();
    assert_eq!(CitizenRepository::get(&db, alice.id).await.unwrap(), Some(alice));
    assert_eq!(ClientRepository::get(&db, portal.id).await.unwrap(), Some(portal));
    assert_eq!(db.count_rows("audit_events").await.unwrap(), 2);
}

async fn a_passport_is_registered_once_per_mission(db: Database) {
    let paris = stored_mission(&db, "fr-paris").await;
    let lyon = stored_mission(&db, "fr-lyon").await;
    let first = citizen(paris.id, "19AB12345");
    CitizenRepository::insert(
        &db,
        &first,
        Some(client_of("citizen", paris.id, first.id.0)),
        &WriteMeta::default(),
    )
    .await
    .unwrap();

    let owner = ClientId::new();
    let second = citizen(paris.id, "19AB12345");
    let second_client = client_of("citizen", paris.id, second.id.0);
    let meta = WriteMeta {
        idempotency: Some(idempotency(owner, "register", Duration::hours(24))),
        ..audited("citizen", second.id.0)
    };
    let duplicate = CitizenRepository::insert(&db, &second, Some(second_client.clone()), &meta).await;
    assert!(is_duplicate(&duplicate, "citizens_passport"), "{duplicate:?}");
    assert_eq!(CitizenRepository::get(&db, second.id).await.unwrap(), None);
    assert_eq!(ClientRepository::get(&db, second_client.id).await.unwrap(), None);
    assert_eq!(db.count_rows("citizens").await.unwrap(), 1);
    assert_eq!(db.count_rows("api_clients").await.unwrap(), 1);
    assert_eq!(db.count_rows("audit_events").await.unwrap(), 0);
    assert_eq!(IdempotencyRepository::find(&db, owner, "register", now()).await.unwrap(), None);

    // Another mission may register the same passport.
    let elsewhere = citizen(lyon.id, "19AB12345");
    CitizenRepository::insert(&db, &elsewhere, None, &WriteMeta::default()).await.unwrap();
    assert_eq!(db.count_rows("citizens").await.unwrap(), 2);
}

async fn a_citizen_whose_client_fails_is_not_stored(db: Database) {
    let paris = stored_mission(&db, "fr-paris").await;
    let taken = stored_client(&db).await;
    let alice = citizen(paris.id, "19AB12345");
    let clash = ApiClient { id: taken.id, ..client_of("citizen", paris.id, alice.id.0) };
    let failed = CitizenRepository::insert(&db, &alice, Some(clash), &audited("citizen", alice.id.0)).await;
    assert!(is_duplicate(&failed, "api_clients_pkey"), "{failed:?}");
    assert_eq!(CitizenRepository::get(&db, alice.id).await.unwrap(), None);
    assert_eq!(db.count_rows("audit_events").await.unwrap(), 0);
}

async fn a_citizen_of_an_unknown_mission_is_refused(db: Database) {
    let orphan = citizen(MissionId::new(), "19AB12345");
    let refused = CitizenRepository::insert(&db, &orphan, None, &audited("citizen", orphan.id.0)).await;
    assert!(matches!(refused, Err(RepoError::Other(_))), "{refused:?}");
    assert_eq!(db.count_rows("citizens").await.unwrap(), 0);
    assert_eq!(db.count_rows("audit_events").await.unwrap(), 0);
}

async fn citizen_updates_check_the_version(db: Database) {
    let paris = stored_mission(&db, "fr-paris").await;
    let mut alice = citizen(paris.id, "19AB12345");
    CitizenRepository::insert(&db, &alice, None, &WriteMeta::default()).await.unwrap();
    let bob = citizen(paris.id, "XY0000001");
    CitizenRepository::insert(&db, &bob, None, &WriteMeta::default()).await.unwrap();

    let at = now();
    alice.emergency_contact = None;
    alice.address.line2 = Some("Floor 2".to_owned());
    alice.date_of_birth = date!(1991 - 05 - 13);
    alice.registration_status = RegistrationStatus::Deregistered;
    alice.deregistered_at = Some(at);
    alice.version = 2;
    alice.updated_at = at;
    CitizenRepository::update(&db, &alice, 1, &audited("citizen", alice.id.0)).await.unwrap();
    assert_eq!(CitizenRepository::get(&db, alice.id).await.unwrap(), Some(alice.clone()));

    let stale = CitizenRepository::update(&db, &alice, 1, &WriteMeta::default()).await;
    assert!(matches!(stale, Err(RepoError::VersionConflict)), "{stale:?}");
    let gone =
        CitizenRepository::update(&db, &citizen(paris.id, "ZZ0000001"), 1, &WriteMeta::default()).await;
    assert!(matches!(gone, Err(RepoError::NotFound)), "{gone:?}");
    let taken = Citizen { passport_number: bob.passport_number.clone(), version: 3, ..alice.clone() };
    let duplicate = CitizenRepository::update(&db, &taken, 2, &audited("citizen", alice.id.0)).await;
    assert!(is_duplicate(&duplicate, "citizens_passport"), "{duplicate:?}");
    assert_eq!(CitizenRepository::get(&db, alice.id).await.unwrap(), Some(alice));
    assert_eq!(db.count_rows("audit_events").await.unwrap(), 1);
}

async fn citizens_are_listed_by_every_filter(db: Database) {
    let paris = stored_mission(&db, "fr-paris").await;
    let lyon = stored_mission(&db, "fr-lyon").await;
    let person = |mission: MissionId,
                  passport: &str,
                  (given, family, email): (&str, &str, &str),
                  nationality: &str,
                  status: RegistrationStatus,
                  registered_at: OffsetDateTime| Citizen {
        given_name: given.to_owned(),
        family_name: family.to_owned(),
        email: email.to_owned(),
        nationality: nationality.to_owned(),
        registration_status: status,
        registered_at,
        ..citizen(mission, passport)
    };
    use RegistrationStatus::{Active, Deregistered, Pending};
    let a = person(
        paris.id,
        "AA0000001",
        ("Alice", "Martin", "alice@example.org"),
        "FR",
        Pending,
        datetime!(2026-01-10 12:00 UTC),
    );
    let b = person(
        paris.id,
        "BB0000001",
        ("Bob", "Durand", "bob@example.net"),
        "CA",
        Active,
        datetime!(2026-02-01 00:00 UTC),
    );
    let c = person(
        lyon.id,
        "CC0000001",
        ("Chloé", "MARTINEZ", "chloe@mail.fr"),
        "FR",
        Active,
        datetime!(2026-03-01 00:00 UTC),
    );
    // 07:30 UTC, written with another offset: compared as the instant.
    let d = person(
        paris.id,
        "DD0000001",
        ("Dan", "Smith", "Dan.Martin@Example.org"),
        "FR",
        Deregistered,
        datetime!(2026-02-15 09:30 +02:00),
    );
    for x in [&a, &b, &c, &d] {
        CitizenRepository::insert(&db, x, None, &WriteMeta::default()).await.unwrap();
    }

    let all = CitizenFilter::default();
    assert_eq!(listed_citizens(&db, all.clone()).await, sorted(&[a.id, b.id, c.id, d.id]));
    let in_paris = CitizenFilter { mission_id: Some(paris.id), ..all.clone() };
    assert_eq!(listed_citizens(&db, in_paris.clone()).await, sorted(&[a.id, b.id, d.id]));
    let active = CitizenFilter { registration_status: Some(Active), ..all.clone() };
    assert_eq!(listed_citizens(&db, active).await, sorted(&[b.id, c.id]));
    let french = CitizenFilter { nationality: Some("FR".to_owned()), ..all.clone() };
    assert_eq!(listed_citizens(&db, french).await, sorted(&[a.id, c.id, d.id]));

    // `q`: any case, in the given name, the family name or the email.
    let q = |text: &str| CitizenFilter { q: Some(text.to_owned()), ..all.clone() };
    assert_eq!(listed_citizens(&db, q("MARTIN")).await, sorted(&[a.id, c.id, d.id]));
    assert_eq!(listed_citizens(&db, q("bOb")).await, [b.id]);
    assert_eq!(listed_citizens(&db, q("example.ORG")).await, sorted(&[a.id, d.id]));
    assert_eq!(listed_citizens(&db, q("CHLO")).await, [c.id]);
    assert_eq!(listed_citizens(&db, q("li")).await, [a.id]);
    assert_eq!(listed_citizens(&db, q("nobody")).await, []);

    // `registered_from` is inclusive, `registered_to` exclusive.
    let boundary = datetime!(2026-02-01 00:00 UTC);
    let from = CitizenFilter { registered_from: Some(boundary), ..all.clone() };
    assert_eq!(listed_citizens(&db, from).await, sorted(&[b.id, c.id, d.id]));
    let to = CitizenFilter { registered_to: Some(boundary), ..all.clone() };
    assert_eq!(listed_citizens(&db, to).await, [a.id]);
    // `c`'s registration instant, written with another offset: excluded.
    let february = CitizenFilter {
        registered_from: Some(boundary),
        registered_to: Some(datetime!(2026-03-01 01:00 +01:00)),
        ..all.clone()
    };
    assert_eq!(listed_citizens(&db, february).await, sorted(&[b.id, d.id]));

    // Every filter present must match.
    let combined = CitizenFilter {
        nationality: Some("FR".to_owned()),
        q: Some("martin".to_owned()),
        ..in_paris.clone()
    };
    assert_eq!(listed_citizens(&db, combined.clone()).await, sorted(&[a.id, d.id]));
    let narrower = CitizenFilter { registered_from: Some(boundary), ..combined.clone() };
    assert_eq!(listed_citizens(&db, narrower).await, [d.id]);
    let status = CitizenFilter { registration_status: Some(Pending), ..combined };
    assert_eq!(listed_citizens(&db, status).await, [a.id]);
    let none = CitizenFilter { mission_id: Some(lyon.id), registration_status: Some(Pending), ..all };
    assert_eq!(listed_citizens(&db, none).await, []);

    // Pages of a filtered listing.
    let expected = sorted(&[a.id, b.id, d.id]);
    let mut after = None;
    let mut seen = Vec::new();
    loop {
        let page =
            CitizenRepository::list(&db, in_paris.clone(), PageRequest { limit: 2, after }).await.unwrap();
        seen.extend(page.items.iter().map(|c| c.id));
        after = page.next_after;
        if after.is_none() {
            break;
        }
    }
    assert_eq!(seen, expected);
}

async fn citizen_search_matches_wildcards_literally(db: Database) {
    let paris = stored_mission(&db, "fr-paris").await;
    let named = |passport: &str, family: &str| Citizen {
        family_name: family.to_owned(),
        email: format!("{}@example.org", passport.to_lowercase()),
        ..citizen(paris.id, passport)
    };
    let underscore = named("AA0000001", "O_Neil");
    let any_char = named("BB0000001", "OxNeil");
    let percent = named("CC0000001", "50% Off");
    let digits = named("DD0000001", "500 Off");
    let backslash = named("EE0000001", "Back\\Slash");
    let plain = named("FF0000001", "Backslash");
    for x in [&underscore, &any_char, &percent, &digits, &backslash, &plain] {
        CitizenRepository::insert(&db, x, None, &WriteMeta::default()).await.unwrap();
    }

    let q = |text: &str| CitizenFilter { q: Some(text.to_owned()), ..CitizenFilter::default() };
    assert_eq!(listed_citizens(&db, q("o_n")).await, [underscore.id]);
    assert_eq!(listed_citizens(&db, q("_")).await, [underscore.id]);
    assert_eq!(listed_citizens(&db, q("50%")).await, [percent.id]);
    assert_eq!(listed_citizens(&db, q("%")).await, [percent.id]);
    assert_eq!(listed_citizens(&db, q("K\\s")).await, [backslash.id]);
    assert_eq!(listed_citizens(&db, q("'; DROP TABLE citizens; --")).await, []);
    assert_eq!(db.count_rows("citizens").await.unwrap(), 6);
}

// ---------------------------------------------------------------- staff

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

// ---------------------------------------------------------------- audit log

async fn the_audit_log_is_listed_newest_first_with_each_filter(db: Database) {
    let (alice, bob) = (admin(), admin());
    let (mission_id, client_id) = (Uuid::now_v7(), Uuid::now_v7());
    let entry = |actor: Option<&Principal>, resource_type: &str, resource_id: Uuid| {
        AuditRecord::new(
            actor,
            now(),
            AuditAction::Updated,
            resource_type,
            resource_id,
            vec!["name".to_owned()],
        )
    };
    let entries = vec![
        entry(Some(&alice), "mission", mission_id),
        entry(Some(&bob), "client", client_id),
        entry(None, "mission", mission_id),
        entry(Some(&alice), "client", client_id),
        entry(Some(&alice), "mission", Uuid::now_v7()),
    ];
    MissionRepository::insert(
        &db,
        &mission("fr-paris"),
        &WriteMeta { events: Vec::new(), audit: entries.clone(), idempotency: None },
    )
    .await
    .unwrap();
    let newest_first = |picked: &[usize]| {
        let mut ids: Vec<Uuid> = picked.iter().map(|&i| entries[i].id.0).collect();
        ids.sort_by(|x, y| y.cmp(x));
        ids
    };
    let listed = async |filter: AuditFilter| {
        let page = AuditRepository::list(&db, filter, PageRequest::default()).await.unwrap();
        page.items.iter().map(|r| r.id.0).collect::<Vec<_>>()
    };

    let all = AuditRepository::list(&db, AuditFilter::default(), PageRequest::default()).await.unwrap();
    let mut expected = entries.clone();
    expected.reverse();
    assert_eq!(all.items, expected, "newest first, as stored");
    let missions = AuditFilter { resource_type: Some("mission".to_owned()), ..AuditFilter::default() };
    assert_eq!(listed(missions.clone()).await, newest_first(&[0, 2, 4]));
    let one_resource = AuditFilter { resource_id: Some(client_id), ..AuditFilter::default() };
    assert_eq!(listed(one_resource).await, newest_first(&[1, 3]));
    let by_alice = AuditFilter { actor_id: Some(alice.subject.id.0), ..AuditFilter::default() };
    assert_eq!(listed(by_alice.clone()).await, newest_first(&[0, 3, 4]));
    let alice_on_missions = AuditFilter { actor_id: Some(alice.subject.id.0), ..missions.clone() };
    assert_eq!(listed(alice_on_missions).await, newest_first(&[0, 4]));
    let exact = AuditFilter { resource_id: Some(mission_id), ..missions.clone() };
    assert_eq!(listed(exact).await, newest_first(&[0, 2]));
    let nobody = AuditFilter { actor_id: Some(Uuid::now_v7()), ..AuditFilter::default() };
    assert!(listed(nobody).await.is_empty());

    // Pages continue with older entries.
    let expected = newest_first(&[0, 2, 4]);
    let first = AuditRepository::list(&db, missions.clone(), PageRequest { limit: 2, after: None }).await;
    let first = first.unwrap();
    assert_eq!(first.items.iter().map(|r| r.id.0).collect::<Vec<_>>(), expected[..2]);
    assert_eq!(first.next_after, Some(expected[1]));
    let rest = AuditRepository::list(&db, missions, PageRequest { limit: 2, after: first.next_after }).await;
    let rest = rest.unwrap();
    assert_eq!(rest.items.iter().map(|r| r.id.0).collect::<Vec<_>>(), expected[2..]);
    assert_eq!(rest.next_after, None);
}

// ---------------------------------------------------------------- outbox

fn with_events(events: Vec<OutboxEvent>) -> WriteMeta {
    WriteMeta { events, ..WriteMeta::default() }
}

async fn all_outbox_events(db: &Database) -> Vec<OutboxEvent> {
    db.outbox_events(None, 1000).await.unwrap()
}

async fn outbox_events_are_stored_with_the_change(db: Database) {
    let paris = mission("fr-paris");
    let first = vec![outbox_event("mission.created", paris.id.0), outbox_event("mission.opened", paris.id.0)];
    let meta = WriteMeta { events: first.clone(), ..audited("mission", paris.id.0) };
    MissionRepository::insert(&db, &paris, &meta).await.unwrap();
    assert_eq!(all_outbox_events(&db).await, first, "stored as given, JSON payload included");

    // Every repository stores the events of its writes: a service type update, a request.
    let mut passport = stored_service_type(&db, "passport").await;
    passport.version = 2;
    let renamed = outbox_event("service_type.renamed", passport.id.0);
    ServiceTypeRepository::update(&db, &passport, 1, &with_events(vec![renamed.clone()])).await.unwrap();
    let alice = stored_citizen(&db, paris.id, "AA1").await;
    let r = request(paris.id, alice.id, &passport);
    let submitted = outbox_event("request.submitted", r.id.0);
    RequestRepository::insert(&db, &r, &first_entry(&r), &with_events(vec![submitted.clone()]))
        .await
        .unwrap();

    let all = [first.clone(), vec![renamed.clone(), submitted.clone()]].concat();
    assert_eq!(all_outbox_events(&db).await, all, "oldest first");
    assert_eq!(db.count_rows("outbox_events").await.unwrap(), 4);
    // Keyset pages, after an event.
    assert_eq!(db.outbox_events(None, 2).await.unwrap(), all[..2]);
    assert_eq!(db.outbox_events(Some(all[1].id), 2).await.unwrap(), all[2..]);
    assert_eq!(db.outbox_events(Some(all[3].id), 2).await.unwrap(), []);
    assert_eq!(db.outbox_events(None, 0).await.unwrap(), []);
}

async fn a_failed_write_stores_no_outbox_event(db: Database) {
    let paris = stored_mission(&db, "fr-paris").await;
    let twin = mission("fr-paris");
    let meta = WriteMeta {
        events: vec![outbox_event("mission.created", twin.id.0)],
        ..audited("mission", twin.id.0)
    };
    let duplicate = MissionRepository::insert(&db, &twin, &meta).await;
    assert!(is_duplicate(&duplicate, "missions_code"), "{duplicate:?}");
    assert_eq!(all_outbox_events(&db).await, []);

    // A version conflict and an unknown request: no event either.
    let passport = stored_service_type(&db, "passport").await;
    let alice = stored_citizen(&db, paris.id, "AA1").await;
    let r = stored_request(&db, request(paris.id, alice.id, &passport)).await;
    let stale = RequestRepository::update(
        &db,
        &ServiceRequest { version: 2, ..r.clone() },
        7,
        None,
        &with_events(vec![outbox_event("request.assigned", r.id.0)]),
    )
    .await;
    assert!(matches!(stale, Err(RepoError::VersionConflict)), "{stale:?}");
    let stray = note(RequestId::new(), "lost");
    let refused = RequestRepository::add_note(
        &db,
        &stray,
        &with_events(vec![outbox_event("note.added", stray.request_id.0)]),
    )
    .await;
    assert!(matches!(refused, Err(RepoError::Other(_))), "{refused:?}");
    assert_eq!(db.count_rows("outbox_events").await.unwrap(), 0);
    assert_eq!(db.count_rows("audit_events").await.unwrap(), 0);
}

// ---------------------------------------------------------------- service requests

async fn stored_staff(db: &Database, member: StaffMember) -> StaffMember {
    StaffRepository::insert(db, &member, None, &WriteMeta::default()).await.unwrap();
    member
}

fn staff_subject(member: &StaffMember) -> Subject {
    Subject { kind: PrincipalKind::Staff, id: PrincipalId(member.id.0) }
}

async fn requests_round_trip_and_updates_check_the_version(db: Database) {
    let paris = stored_mission(&db, "fr-paris").await;
    let passport = stored_service_type(&db, "passport").await;
    let alice = stored_citizen(&db, paris.id, "AA1").await;
    let bob = stored_staff(&db, staff_member(paris.id, &[passport.id])).await;
    let eve = stored_staff(&db, staff_member(paris.id, &[passport.id])).await;

    let mut r = ServiceRequest { assignee_id: Some(bob.id), ..request(paris.id, alice.id, &passport) };
    let first = first_entry(&r);
    RequestRepository::insert(&db, &r, &first, &audited("service_request", r.id.0)).await.unwrap();
    assert_eq!(RequestRepository::get(&db, r.id).await.unwrap(), Some(r.clone()));
    assert_eq!(RequestRepository::get(&db, RequestId::new()).await.unwrap(), None);
    let again = RequestRepository::insert(&db, &r, &first_entry(&r), &WriteMeta::default()).await;
    assert!(is_duplicate(&again, "service_requests_pkey"), "{again:?}");

    // A transition with its history entry.
    let review =
        r.apply(Role::Staff, Action::To(RequestStatus::InReview), Some(staff_subject(&bob)), None, now());
    let review = review.unwrap();
    RequestRepository::update(&db, &r, 1, Some(review.clone()), &audited("service_request", r.id.0))
        .await
        .unwrap();
    assert_eq!(RequestRepository::get(&db, r.id).await.unwrap(), Some(r.clone()));

    // A pure reassignment appends no entry; unassigning stores NULL.
    r.assignee_id = Some(eve.id);
    r.version = 3;
    RequestRepository::update(&db, &r, 2, None, &WriteMeta::default()).await.unwrap();
    assert_eq!(RequestRepository::get(&db, r.id).await.unwrap().unwrap().assignee_id, Some(eve.id));
    r.assignee_id = None;
    r.version = 4;
    RequestRepository::update(&db, &r, 3, None, &WriteMeta::default()).await.unwrap();
    assert_eq!(RequestRepository::get(&db, r.id).await.unwrap(), Some(r.clone()));
    assert_eq!(db.history(r.id).await.unwrap(), [first, review.clone()]);

    // Stages and closing round-trip.
    let advanced =
        r.apply(Role::Staff, Action::AdvanceStage, None, Some("documents ok".into()), now()).unwrap();
    RequestRepository::update(&db, &r, 4, Some(advanced), &WriteMeta::default()).await.unwrap();
    let approved = r.apply(Role::Staff, Action::To(RequestStatus::Approved), None, None, now()).unwrap();
    RequestRepository::update(&db, &r, 5, Some(approved), &WriteMeta::default()).await.unwrap();
    let completed = r.apply(Role::Staff, Action::To(RequestStatus::Completed), None, None, now()).unwrap();
    RequestRepository::update(&db, &r, 6, Some(completed), &WriteMeta::default()).await.unwrap();
    let stored = RequestRepository::get(&db, r.id).await.unwrap().unwrap();
    assert_eq!((stored.status, stored.current_stage, stored.version), (RequestStatus::Completed, 1, 7));
    assert!(stored.closed_at.is_some());
    assert_eq!(stored, r);

    // A stale or vanished request changes nothing and stores no entry or audit.
    let stale = ServiceRequest { assignee_id: Some(bob.id), version: 8, ..r.clone() };
    let entry = HistoryEntry { reason: Some("stale".into()), ..review.clone() };
    let conflict =
        RequestRepository::update(&db, &stale, 6, Some(entry.clone()), &audited("service_request", r.id.0))
            .await;
    assert!(matches!(conflict, Err(RepoError::VersionConflict)), "{conflict:?}");
    let unknown = request(paris.id, alice.id, &passport);
    let meta = audited("service_request", unknown.id.0);
    let gone = RequestRepository::update(&db, &unknown, 1, Some(entry), &meta).await;
    assert!(matches!(gone, Err(RepoError::NotFound)), "{gone:?}");
    assert_eq!(RequestRepository::get(&db, r.id).await.unwrap(), Some(r.clone()));
    assert_eq!(db.history(r.id).await.unwrap().len(), 5);
    assert_eq!(db.count_rows("request_history").await.unwrap(), 5);
    assert_eq!(db.count_rows("audit_events").await.unwrap(), 2);
}

async fn a_request_with_unknown_references_is_not_stored(db: Database) {
    let paris = stored_mission(&db, "fr-paris").await;
    let passport = stored_service_type(&db, "passport").await;
    let alice = stored_citizen(&db, paris.id, "AA1").await;
    let valid = request(paris.id, alice.id, &passport);
    let broken = [
        ServiceRequest { mission_id: MissionId::new(), ..valid.clone() },
        ServiceRequest { citizen_id: CitizenId::new(), ..valid.clone() },
        ServiceRequest { service_type_id: ServiceTypeId::new(), ..valid.clone() },
        ServiceRequest { assignee_id: Some(StaffId::new()), ..valid.clone() },
    ];
    for r in &broken {
        let meta = WriteMeta {
            events: vec![outbox_event("request.submitted", r.id.0)],
            ..audited("service_request", r.id.0)
        };
        let refused = RequestRepository::insert(&db, r, &first_entry(r), &meta).await;
        assert!(matches!(refused, Err(RepoError::Other(_))), "{refused:?}");
    }
    for table in ["service_requests", "request_history", "audit_events", "outbox_events"] {
        assert_eq!(db.count_rows(table).await.unwrap(), 0, "{table}");
    }
    // An update to an unknown assignee is refused the same way.
    let r = stored_request(&db, valid).await;
    let reassigned = ServiceRequest { assignee_id: Some(StaffId::new()), version: 2, ..r.clone() };
    let refused = RequestRepository::update(&db, &reassigned, 1, None, &WriteMeta::default()).await;
    assert!(matches!(refused, Err(RepoError::Other(_))), "{refused:?}");
    assert_eq!(RequestRepository::get(&db, r.id).await.unwrap(), Some(r));
}

async fn history_is_kept_in_insertion_order(db: Database) {
    let paris = stored_mission(&db, "fr-paris").await;
    let passport = stored_service_type(&db, "passport").await;
    let alice = stored_citizen(&db, paris.id, "AA1").await;
    let bob = stored_staff(&db, staff_member(paris.id, &[passport.id])).await;
    let mut r = stored_request(&db, request(paris.id, alice.id, &passport)).await;
    let other = stored_request(&db, request(paris.id, alice.id, &passport)).await;

    // The same instant, then earlier ones: the order is the insertion order, not `at`.
    let at = datetime!(2026-11-22 10:00:00 UTC);
    let steps = [
        (Action::To(RequestStatus::InReview), at, Some(staff_subject(&bob)), None),
        (Action::To(RequestStatus::ActionRequired), at, None, Some("missing photo".to_owned())),
        (Action::To(RequestStatus::InReview), at - Duration::hours(1), Some(staff_subject(&bob)), None),
        (Action::AdvanceStage, at - Duration::days(1), None, Some("ünïcode ✓".to_owned())),
    ];
    let mut expected = vec![first_entry(&r)];
    for (action, when, actor, reason) in steps {
        let expected_version = r.version;
        let entry = r.apply(Role::Staff, action, actor, reason, when).unwrap();
        RequestRepository::update(&db, &r, expected_version, Some(entry.clone()), &WriteMeta::default())
            .await
            .unwrap();
        expected.push(entry);
        // Interleaved with another request's history.
        let note = HistoryEntry { reason: Some("other".into()), ..first_entry(&other) };
        let mut o = RequestRepository::get(&db, other.id).await.unwrap().unwrap();
        o.version += 1;
        RequestRepository::update(&db, &o, o.version - 1, Some(note), &WriteMeta::default()).await.unwrap();
    }
    assert_eq!(db.history(r.id).await.unwrap(), expected);
    assert_eq!(expected[4].from_stage, Some(0));
    assert_eq!(expected[4].to_stage, 1);
    assert_eq!(db.history(other.id).await.unwrap().len(), 5);
    assert_eq!(db.history(RequestId::new()).await.unwrap(), []);
}

/// What `RequestRepository::list` must return for `filter`, decided in Rust from the
/// port's contract: every given filter matches, newest (largest id) first.
fn expected_list(all: &[ServiceRequest], f: &RequestFilter) -> Vec<RequestId> {
    let mut ids: Vec<RequestId> = all
        .iter()
        .filter(|r| f.mission_id.is_none_or(|m| r.mission_id == m))
        .filter(|r| f.citizen_id.is_none_or(|c| r.citizen_id == c))
        .filter(|r| f.statuses.is_empty() || f.statuses.contains(&r.status))
        .filter(|r| f.service_type_id.is_none_or(|t| r.service_type_id == t))
        .filter(|r| f.submitted_from.is_none_or(|from| r.submitted_at >= from))
        .filter(|r| f.submitted_to.is_none_or(|to| r.submitted_at < to))
        .filter(|r| f.assignee_id.is_none_or(|a| r.assignee_id == Some(a)))
        .filter(|r| f.overdue.is_none_or(|o| o == r.is_overdue(f.overdue_at.unwrap())))
        .map(|r| r.id)
        .collect();
    ids.sort_by(|a, b| b.cmp(a));
    ids
}

/// Every page of a listing, two at a time: the concatenation must be the whole listing,
/// with no gap and no repeat.
async fn listed_requests(db: &Database, filter: &RequestFilter) -> Vec<RequestId> {
    let whole = RequestRepository::list(db, filter.clone(), PageRequest { limit: 100, after: None }).await;
    let whole: Vec<RequestId> = whole.unwrap().items.iter().map(|r| r.id).collect();
    let mut paged = Vec::new();
    let mut after = None;
    loop {
        let page =
            RequestRepository::list(db, filter.clone(), PageRequest { limit: 2, after }).await.unwrap();
        assert!(page.items.len() <= 2);
        paged.extend(page.items.iter().map(|r| r.id));
        match page.next_after {
            Some(next) => {
                assert_eq!(Some(next), page.items.last().map(|r| r.id.0));
                after = Some(next);
            }
            None => break,
        }
    }
    assert_eq!(paged, whole, "pages of {filter:?}");
    whole
}

async fn requests_are_listed_newest_first_by_every_filter(db: Database) {
    use RequestStatus::*;
    let paris = stored_mission(&db, "fr-paris").await;
    let lyon = stored_mission(&db, "fr-lyon").await;
    let passport = stored_service_type(&db, "passport").await;
    let visa = stored_service_type(&db, "visa").await;
    let alice = stored_citizen(&db, paris.id, "AA1").await;
    let carol = stored_citizen(&db, paris.id, "CC1").await;
    let dave = stored_citizen(&db, lyon.id, "DD1").await;
    let bob = stored_staff(&db, staff_member(paris.id, &[passport.id, visa.id])).await;
    let eve = stored_staff(&db, staff_member(paris.id, &[visa.id])).await;
    let zed = stored_staff(&db, staff_member(lyon.id, &[passport.id])).await;

    let t0 = datetime!(2026-03-01 09:00:00 UTC);
    let at = t0 + Duration::days(30);
    let day = |n: i64| t0 + Duration::days(n);
    // (mission, citizen, type, status, assignee, submitted, due)
    let specs = [
        (paris.id, alice.id, &passport, Submitted, Some(bob.id), day(0), day(21)), // 0 overdue
        (paris.id, alice.id, &visa, InReview, Some(eve.id), day(1), day(40)),      // 1
        (paris.id, carol.id, &passport, Completed, Some(bob.id), day(2), day(5)),  // 2 closed
        (paris.id, carol.id, &visa, ActionRequired, None, day(3), day(10)),        // 3 overdue
        (lyon.id, dave.id, &passport, Approved, Some(zed.id), day(4), day(25)),    // 4 overdue
        (lyon.id, dave.id, &visa, Cancelled, None, day(5), day(6)),                // 5 closed
        (paris.id, alice.id, &passport, Rejected, Some(bob.id), day(6), day(7)),   // 6 closed
        (paris.id, alice.id, &passport, InReview, Some(bob.id), day(7), day(31)),  // 7
        (paris.id, carol.id, &passport, Submitted, Some(eve.id), day(8), at),      // 8 due at `at`
    ];
    let mut all = Vec::new();
    for (mission, citizen, service_type, status, assignee, submitted_at, sla_due_at) in specs {
        let r = ServiceRequest {
            status,
            assignee_id: assignee,
            submitted_at,
            sla_due_at,
            closed_at: status.is_final().then_some(sla_due_at),
            ..request(mission, citizen, service_type)
        };
        all.push(stored_request(&db, r).await);
    }
    let ids = |picked: &[usize]| {
        let mut ids: Vec<RequestId> = picked.iter().map(|&i| all[i].id).collect();
        ids.sort_by(|a, b| b.cmp(a));
        ids
    };

    // The whole listing returns the stored requests, newest first.
    let everything = RequestRepository::list(&db, RequestFilter::default(), PageRequest::default()).await;
    let mut newest_first = all.clone();
    newest_first.reverse();
    assert_eq!(everything.unwrap().items, newest_first);

    let none = RequestFilter::default();
    let overdue_at = Some(at);
    let filters = [
        RequestFilter { mission_id: Some(paris.id), ..none.clone() },
        RequestFilter { mission_id: Some(MissionId::new()), ..none.clone() },
        RequestFilter { citizen_id: Some(carol.id), ..none.clone() },
        RequestFilter { statuses: vec![InReview], ..none.clone() },
        RequestFilter { statuses: vec![Submitted, ActionRequired, Cancelled], ..none.clone() },
        RequestFilter { statuses: RequestStatus::ALL.to_vec(), ..none.clone() },
        RequestFilter { service_type_id: Some(visa.id), ..none.clone() },
        RequestFilter { submitted_from: Some(day(2)), ..none.clone() },
        RequestFilter { submitted_to: Some(day(6)), ..none.clone() },
        RequestFilter { submitted_from: Some(day(2)), submitted_to: Some(day(6)), ..none.clone() },
        RequestFilter { assignee_id: Some(bob.id), ..none.clone() },
        RequestFilter { overdue: Some(true), overdue_at, ..none.clone() },
        RequestFilter { overdue: Some(false), overdue_at, ..none.clone() },
        // Combined.
        RequestFilter { mission_id: Some(paris.id), statuses: vec![Submitted, InReview], ..none.clone() },
        RequestFilter { mission_id: Some(paris.id), assignee_id: Some(bob.id), ..none.clone() },
        RequestFilter { mission_id: Some(paris.id), overdue: Some(true), overdue_at, ..none.clone() },
        RequestFilter { citizen_id: Some(alice.id), service_type_id: Some(passport.id), ..none.clone() },
        RequestFilter { assignee_id: Some(bob.id), overdue: Some(false), overdue_at, ..none.clone() },
        RequestFilter { service_type_id: Some(passport.id), submitted_from: Some(day(4)), ..none.clone() },
        RequestFilter {
            mission_id: Some(paris.id),
            citizen_id: Some(alice.id),
            statuses: vec![Submitted, InReview, Rejected],
            service_type_id: Some(passport.id),
            submitted_from: Some(day(0)),
            submitted_to: Some(day(7)),
            assignee_id: Some(bob.id),
            overdue: Some(false),
            overdue_at,
        },
        RequestFilter { mission_id: Some(lyon.id), citizen_id: Some(alice.id), ..none.clone() },
        // `overdue_at` alone filters nothing.
        RequestFilter { overdue_at, ..none.clone() },
    ];
    for filter in &filters {
        assert_eq!(listed_requests(&db, filter).await, expected_list(&all, filter), "{filter:?}");
    }

    // The same answers, spelled out for the filters whose reference could share a mistake.
    assert_eq!(listed_requests(&db, &filters[0]).await, ids(&[0, 1, 2, 3, 6, 7, 8]));
    assert_eq!(listed_requests(&db, &filters[4]).await, ids(&[0, 3, 5, 8]));
    assert_eq!(listed_requests(&db, &filters[9]).await, ids(&[2, 3, 4, 5]), "from inclusive, to exclusive");
    assert_eq!(listed_requests(&db, &filters[11]).await, ids(&[0, 3, 4]), "open and due before `at`");
    assert_eq!(listed_requests(&db, &filters[12]).await, ids(&[1, 2, 5, 6, 7, 8]));
    assert_eq!(listed_requests(&db, &filters[15]).await, ids(&[0, 3]));
    assert_eq!(listed_requests(&db, &filters[19]).await, ids(&[6]));
    assert_eq!(listed_requests(&db, &filters[20]).await, []);
}

async fn request_pages_have_no_gaps_or_duplicates(db: Database) {
    let paris = stored_mission(&db, "fr-paris").await;
    let passport = stored_service_type(&db, "passport").await;
    let alice = stored_citizen(&db, paris.id, "AA1").await;
    let mut ids = Vec::new();
    for _ in 0..7 {
        ids.push(stored_request(&db, request(paris.id, alice.id, &passport)).await.id);
    }
    ids.sort_by(|a, b| b.cmp(a));
    let filter = RequestFilter { mission_id: Some(paris.id), ..RequestFilter::default() };
    let page =
        |after: Option<Uuid>| RequestRepository::list(&db, filter.clone(), PageRequest { limit: 3, after });

    let first = page(None).await.unwrap();
    assert_eq!(first.items.iter().map(|r| r.id).collect::<Vec<_>>(), ids[..3]);
    assert_eq!(first.next_after, Some(ids[2].0));
    // A request submitted meanwhile is newer: it does not shift the later pages.
    stored_request(&db, request(paris.id, alice.id, &passport)).await;
    let second = page(first.next_after).await.unwrap();
    assert_eq!(second.items.iter().map(|r| r.id).collect::<Vec<_>>(), ids[3..6]);
    let last = page(second.next_after).await.unwrap();
    assert_eq!(last.items.iter().map(|r| r.id).collect::<Vec<_>>(), ids[6..]);
    assert_eq!(last.next_after, None);
    assert_eq!(page(Some(ids[6].0)).await.unwrap(), Page { items: vec![], next_after: None });
}

async fn the_overdue_filter_needs_its_instant(db: Database) {
    let filter = RequestFilter { overdue: Some(true), ..RequestFilter::default() };
    let refused = RequestRepository::list(&db, filter, PageRequest::default()).await;
    assert!(matches!(refused, Err(RepoError::Other(_))), "{refused:?}");
}

/// Stores a request of `service_type` assigned to `assignee`, in `status`.
async fn assigned(
    db: &Database,
    citizen: &Citizen,
    service_type: &ServiceType,
    assignee: &StaffMember,
    status: RequestStatus,
) -> ServiceRequest {
    let r = ServiceRequest {
        status,
        assignee_id: Some(assignee.id),
        ..request(citizen.mission_id, citizen.id, service_type)
    };
    stored_request(db, r).await
}

async fn least_loaded_staff_picks_the_member_with_the_fewest_open_requests(db: Database) {
    use RequestStatus::*;
    let paris = stored_mission(&db, "fr-paris").await;
    let passport = stored_service_type(&db, "passport").await;
    let visa = stored_service_type(&db, "visa").await;
    let alice = stored_citizen(&db, paris.id, "AA1").await;
    let x = stored_staff(&db, staff_member(paris.id, &[passport.id, visa.id])).await;
    let y = stored_staff(&db, staff_member(paris.id, &[visa.id, passport.id])).await;
    let [low, high] = if x.id < y.id { [x, y] } else { [y, x] };
    let least = async || RequestRepository::least_loaded_staff(&db, paris.id, passport.id).await.unwrap();

    assert_eq!(least().await, Some(low.id), "a tie goes to the smallest id");
    // Open requests of any type count; closed ones do not.
    assigned(&db, &alice, &passport, &low, Submitted).await;
    assigned(&db, &alice, &visa, &low, ActionRequired).await;
    assigned(&db, &alice, &passport, &high, InReview).await;
    for status in [Completed, Rejected, Cancelled] {
        assigned(&db, &alice, &passport, &high, status).await;
    }
    assert_eq!(least().await, Some(high.id), "1 open request against 2");
    assigned(&db, &alice, &visa, &high, Approved).await;
    assert_eq!(least().await, Some(low.id), "2 against 2: the smallest id");
    assigned(&db, &alice, &passport, &high, Submitted).await;
    assert_eq!(least().await, Some(low.id), "2 against 3");
    // Unassigned requests count for nobody.
    stored_request(&db, request(paris.id, alice.id, &passport)).await;
    assert_eq!(least().await, Some(low.id));
}

async fn least_loaded_staff_ignores_members_who_cannot_take_the_request(db: Database) {
    let paris = stored_mission(&db, "fr-paris").await;
    let lyon = stored_mission(&db, "fr-lyon").await;
    let passport = stored_service_type(&db, "passport").await;
    let visa = stored_service_type(&db, "visa").await;
    let alice = stored_citizen(&db, paris.id, "AA1").await;
    let least = async |mission: MissionId, service_type: ServiceTypeId| {
        RequestRepository::least_loaded_staff(&db, mission, service_type).await.unwrap()
    };
    assert_eq!(least(paris.id, passport.id).await, None, "no staff at all");

    // Idle members who may not take a Paris passport request: another type only, inactive,
    // another mission's, assigned to nothing.
    let visa_only = stored_staff(&db, staff_member(paris.id, &[visa.id])).await;
    let inactive =
        stored_staff(&db, StaffMember { active: false, ..staff_member(paris.id, &[passport.id]) }).await;
    let in_lyon = stored_staff(&db, staff_member(lyon.id, &[passport.id])).await;
    stored_staff(&db, staff_member(paris.id, &[])).await;
    assert_eq!(least(paris.id, passport.id).await, None, "nobody is assigned");
    assert_eq!(least(paris.id, visa.id).await, Some(visa_only.id));
    assert_eq!(least(lyon.id, passport.id).await, Some(in_lyon.id));
    assert_eq!(least(lyon.id, visa.id).await, None);

    // A busy member who may take it wins over all of them.
    let busy = stored_staff(&db, staff_member(paris.id, &[passport.id])).await;
    for _ in 0..3 {
        assigned(&db, &alice, &passport, &busy, RequestStatus::InReview).await;
    }
    assert_eq!(least(paris.id, passport.id).await, Some(busy.id));
    // Once inactive, they are ignored too.
    let mut on_leave = inactive.clone();
    on_leave.active = true;
    on_leave.version = 2;
    StaffRepository::update(&db, &on_leave, 1, &WriteMeta::default()).await.unwrap();
    assert_eq!(least(paris.id, passport.id).await, Some(inactive.id), "back from leave, with no load");
}

/// `staff_workloads` is kept by triggers: after every kind of write of a request (insert
/// open or closed, assigned or not; reassign, unassign, close, reopen, an update that
/// changes neither; a refused update) each member's count equals a recount.
async fn staff_workloads_follow_every_write_of_a_request(db: Database) {
    use RequestStatus::*;
    let paris = stored_mission(&db, "fr-paris").await;
    let passport = stored_service_type(&db, "passport").await;
    let alice = stored_citizen(&db, paris.id, "AA1").await;
    let x = stored_staff(&db, staff_member(paris.id, &[passport.id])).await;
    let y = stored_staff(&db, staff_member(paris.id, &[passport.id])).await;
    let no_drift = async |step: &str| {
        assert_eq!(db.staff_workload_drift().await.unwrap(), [], "{step}");
    };
    no_drift("new members count nothing").await;

    let open = assigned(&db, &alice, &passport, &x, Submitted).await;
    assigned(&db, &alice, &passport, &x, Completed).await;
    stored_request(&db, request(paris.id, alice.id, &passport)).await;
    no_drift("inserts").await;

    let mut r = open;
    let update = async |r: &mut ServiceRequest, change: &dyn Fn(&mut ServiceRequest), step: &str| {
        change(r);
        r.version += 1;
        RequestRepository::update(&db, r, r.version - 1, None, &WriteMeta::default()).await.unwrap();
        no_drift(step).await;
    };
    update(&mut r, &|r| r.assignee_id = Some(y.id), "reassigned").await;
    update(&mut r, &|r| r.status = InReview, "still open").await;
    update(&mut r, &|r| r.assignee_id = None, "unassigned").await;
    update(&mut r, &|r| r.assignee_id = Some(x.id), "assigned again").await;
    update(&mut r, &|r| r.status = Rejected, "closed").await;
    update(&mut r, &|r| r.status = Submitted, "open again (the adapter does not judge the transition)").await;
    update(&mut r, &|r| (r.status, r.assignee_id) = (Cancelled, Some(y.id)), "closed and reassigned").await;
    update(&mut r, &|r| (r.status, r.assignee_id) = (ActionRequired, Some(x.id)), "both again").await;
    assert_eq!(RequestRepository::least_loaded_staff(&db, paris.id, passport.id).await.unwrap(), Some(y.id));

    // A refused write (an unknown assignee) moves no count.
    let stray = ServiceRequest { assignee_id: Some(StaffId::new()), version: r.version + 1, ..r.clone() };
    let refused = RequestRepository::update(&db, &stray, r.version, None, &WriteMeta::default()).await;
    assert!(matches!(refused, Err(RepoError::Other(_))), "{refused:?}");
    no_drift("refused").await;
    assert_eq!(RequestRepository::least_loaded_staff(&db, paris.id, passport.id).await.unwrap(), Some(y.id));
}

async fn the_queue_groups_open_requests_by_service_type(db: Database) {
    use RequestStatus::*;
    let paris = stored_mission(&db, "fr-paris").await;
    let passport = stored_service_type(&db, "passport").await;
    let visa = stored_service_type(&db, "visa").await;
    let notary = stored_service_type(&db, "notary").await;
    let alice = stored_citizen(&db, paris.id, "AA1").await;
    let bob = stored_staff(&db, staff_member(paris.id, &[passport.id, visa.id, notary.id])).await;
    let eve = stored_staff(&db, staff_member(paris.id, &[passport.id])).await;

    let now = datetime!(2026-06-01 12:00:00 UTC);
    let at = |days: i64| now + Duration::days(days);
    let store = async |service_type: &ServiceType, assignee: Option<&StaffMember>, status, submitted, due| {
        let r = ServiceRequest {
            status,
            assignee_id: assignee.map(|m| m.id),
            submitted_at: submitted,
            sla_due_at: due,
            ..request(paris.id, alice.id, service_type)
        };
        stored_request(&db, r).await;
    };
    // Bob's open passports: 3, the oldest at -20 days, 2 past due (the one due exactly
    // now is not).
    store(&passport, Some(&bob), Submitted, at(-10), at(-1)).await;
    store(&passport, Some(&bob), InReview, at(-20), at(1)).await;
    store(&passport, Some(&bob), ActionRequired, at(-5), at(-2)).await;
    store(&passport, Some(&bob), Approved, at(-4), now).await;
    // Closed ones, older and overdue-looking, are not in the queue.
    for status in [Completed, Rejected, Cancelled] {
        store(&passport, Some(&bob), status, at(-90), at(-60)).await;
    }
    // One open visa, not overdue; notary: closed only.
    store(&visa, Some(&bob), InReview, at(-3), at(10)).await;
    store(&notary, Some(&bob), Completed, at(-3), at(-1)).await;
    // Someone else's and unassigned requests.
    store(&passport, Some(&eve), Submitted, at(-50), at(-40)).await;
    store(&visa, None, Submitted, at(-50), at(-40)).await;

    let mut expected = vec![
        QueueGroup { service_type_id: passport.id, count: 4, oldest_submitted_at: at(-20), overdue: 2 },
        QueueGroup { service_type_id: visa.id, count: 1, oldest_submitted_at: at(-3), overdue: 0 },
    ];
    expected.sort_by_key(|g| g.service_type_id);
    assert_eq!(RequestRepository::queue(&db, bob.id, now).await.unwrap(), expected);
    let eves =
        vec![QueueGroup { service_type_id: passport.id, count: 1, oldest_submitted_at: at(-50), overdue: 1 }];
    assert_eq!(RequestRepository::queue(&db, eve.id, now).await.unwrap(), eves);
    // Judged at another instant.
    let later = RequestRepository::queue(&db, bob.id, at(100)).await.unwrap();
    assert_eq!(later.iter().map(|g| (g.count, g.overdue)).collect::<Vec<_>>(), [(4, 4), (1, 1)]);
    assert_eq!(RequestRepository::queue(&db, StaffId::new(), now).await.unwrap(), []);
}

fn note(request: RequestId, body: &str) -> Note {
    Note {
        id: Uuid::now_v7(),
        request_id: request,
        author: Subject { kind: PrincipalKind::Staff, id: PrincipalId::new() },
        body: body.to_owned(),
        created_at: now(),
    }
}

fn message(request: RequestId, body: &str, kind: PrincipalKind) -> Message {
    Message {
        id: Uuid::now_v7(),
        request_id: request,
        author: Subject { kind, id: PrincipalId::new() },
        body: body.to_owned(),
        created_at: now(),
    }
}

async fn notes_and_messages_are_paged_oldest_first(db: Database) {
    let paris = stored_mission(&db, "fr-paris").await;
    let passport = stored_service_type(&db, "passport").await;
    let alice = stored_citizen(&db, paris.id, "AA1").await;
    let r = stored_request(&db, request(paris.id, alice.id, &passport)).await;
    let other = stored_request(&db, request(paris.id, alice.id, &passport)).await;

    let mut notes = Vec::new();
    for i in 0..5 {
        let n = note(r.id, &format!("note {i}: Quotes \" and ünïcode ✓"));
        let meta = WriteMeta {
            events: vec![outbox_event("note.added", r.id.0)],
            ..audited("service_request", r.id.0)
        };
        RequestRepository::add_note(&db, &n, &meta).await.unwrap();
        notes.push(n);
    }
    RequestRepository::add_note(&db, &note(other.id, "elsewhere"), &WriteMeta::default()).await.unwrap();
    let mut messages = Vec::new();
    for (i, kind) in
        [PrincipalKind::Citizen, PrincipalKind::Staff, PrincipalKind::Admin].into_iter().enumerate()
    {
        let m = message(r.id, &format!("message {i}"), kind);
        let meta = with_events(vec![outbox_event("message.posted", r.id.0)]);
        RequestRepository::add_message(&db, &m, &meta).await.unwrap();
        messages.push(m);
    }
    assert_eq!(db.count_rows("audit_events").await.unwrap(), 5);
    assert_eq!(all_outbox_events(&db).await.len(), 8);

    let page = |after: Option<Uuid>| PageRequest { limit: 2, after };
    let first = RequestRepository::notes(&db, r.id, page(None)).await.unwrap();
    assert_eq!(first, Page { items: notes[..2].to_vec(), next_after: Some(notes[1].id) });
    let second = RequestRepository::notes(&db, r.id, page(first.next_after)).await.unwrap();
    assert_eq!(second, Page { items: notes[2..4].to_vec(), next_after: Some(notes[3].id) });
    let last = RequestRepository::notes(&db, r.id, page(second.next_after)).await.unwrap();
    assert_eq!(last, Page { items: notes[4..].to_vec(), next_after: None });
    let all = RequestRepository::notes(&db, r.id, PageRequest::default()).await.unwrap();
    assert_eq!(all, Page { items: notes.clone(), next_after: None });

    let first = RequestRepository::messages(&db, r.id, page(None)).await.unwrap();
    assert_eq!(first, Page { items: messages[..2].to_vec(), next_after: Some(messages[1].id) });
    let last = RequestRepository::messages(&db, r.id, page(first.next_after)).await.unwrap();
    assert_eq!(last, Page { items: messages[2..].to_vec(), next_after: None });
    assert_eq!(RequestRepository::messages(&db, other.id, PageRequest::default()).await.unwrap().items, []);
    assert_eq!(RequestRepository::notes(&db, other.id, PageRequest::default()).await.unwrap().items.len(), 1);
    assert_eq!(
        RequestRepository::notes(&db, RequestId::new(), PageRequest::default()).await.unwrap().items,
        []
    );

    // The detail: the same request, history, thread and notes in one read; the notes only
    // when asked for; nothing for an unknown request.
    let detail = RequestRepository::detail(&db, r.id, true).await.unwrap().unwrap();
    assert_eq!(detail.request, RequestRepository::get(&db, r.id).await.unwrap().unwrap());
    assert_eq!(detail.required_documents, passport.required_documents);
    assert_eq!(detail.history, db.history(r.id).await.unwrap());
    assert_eq!(detail.history.len(), 1);
    assert_eq!((detail.messages, detail.notes), (messages, Some(notes)));
    assert_eq!((detail.documents, detail.appointments), (vec![], vec![]));
    let without_notes = RequestRepository::detail(&db, other.id, false).await.unwrap().unwrap();
    assert_eq!((without_notes.request.id, without_notes.notes), (other.id, None));
    assert_eq!(RequestRepository::detail(&db, RequestId::new(), true).await.unwrap(), None);
}

async fn a_note_or_message_on_an_unknown_request_stores_nothing(db: Database) {
    let unknown = RequestId::new();
    let meta = WriteMeta {
        events: vec![outbox_event("note.added", unknown.0)],
        ..audited("service_request", unknown.0)
    };
    let refused = RequestRepository::add_note(&db, &note(unknown, "lost"), &meta).await;
    assert!(matches!(refused, Err(RepoError::Other(_))), "{refused:?}");
    let refused =
        RequestRepository::add_message(&db, &message(unknown, "lost", PrincipalKind::Citizen), &meta).await;
    assert!(matches!(refused, Err(RepoError::Other(_))), "{refused:?}");
    for table in ["request_notes", "request_messages", "audit_events", "outbox_events"] {
        assert_eq!(db.count_rows(table).await.unwrap(), 0, "{table}");
    }
}

/// Each filter of the listing, alone and combined, can be served by an index (no full
/// scan). On PostgreSQL sequential scans and sorts are disabled for the EXPLAIN, so a
/// `Seq Scan` left in the plan means that no index fits, whatever the statistics.
async fn the_request_list_can_use_an_index_for_every_filter(db: Database) {
    use RequestStatus::*;
    let some = |n: u128| Some(Uuid::from_u128(n));
    let at = Some(now());
    let none = RequestFilter::default();
    let filters = [
        none.clone(),
        RequestFilter { mission_id: Some(MissionId::new()), ..none.clone() },
        RequestFilter { citizen_id: Some(CitizenId::new()), ..none.clone() },
        RequestFilter { statuses: vec![InReview], ..none.clone() },
        RequestFilter { statuses: vec![Submitted, InReview], ..none.clone() },
        RequestFilter { service_type_id: Some(ServiceTypeId::new()), ..none.clone() },
        RequestFilter { submitted_from: at, ..none.clone() },
        RequestFilter { submitted_from: at, submitted_to: at, ..none.clone() },
        RequestFilter { assignee_id: Some(StaffId::new()), ..none.clone() },
        RequestFilter { overdue: Some(true), overdue_at: at, ..none.clone() },
        RequestFilter { overdue: Some(false), overdue_at: at, ..none.clone() },
        RequestFilter {
            mission_id: Some(MissionId::new()),
            statuses: vec![Submitted, Approved],
            ..none.clone()
        },
        RequestFilter {
            mission_id: Some(MissionId::new()),
            overdue: Some(true),
            overdue_at: at,
            ..none.clone()
        },
        RequestFilter {
            mission_id: Some(MissionId::new()),
            citizen_id: Some(CitizenId::new()),
            statuses: vec![Submitted],
            service_type_id: Some(ServiceTypeId::new()),
            submitted_from: at,
            submitted_to: at,
            assignee_id: Some(StaffId::new()),
            overdue: Some(false),
            overdue_at: at,
        },
    ];
    for filter in &filters {
        for after in [None, some(1)] {
            let plan =
                db.explain_request_list(filter.clone(), PageRequest { limit: 20, after }).await.unwrap();
            assert_no_full_scan(db.backend(), "service_requests", &plan, &format!("{filter:?}"));
        }
    }

    // The mission filter (every staff listing has it) is read backwards from its own
    // index, already in order: no sort, whatever the page.
    let in_mission = RequestFilter { mission_id: Some(MissionId::new()), ..none };
    for after in [None, some(1)] {
        let plan =
            db.explain_request_list(in_mission.clone(), PageRequest { limit: 20, after }).await.unwrap();
        assert_ordered_by_index(&plan, "service_requests_mission_id_idx");
    }
}

// ---------------------------------------------------------------- both databases

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
    the_health_check_answers,
    service_types_round_trip_with_their_json_fields,
    a_taken_service_type_code_is_a_duplicate,
    service_type_updates_check_the_version,
    service_types_are_listed_by_activity_in_keyset_pages,
    citizens_round_trip_with_exact_dates,
    a_citizen_is_stored_with_their_client,
    a_passport_is_registered_once_per_mission,
    a_citizen_whose_client_fails_is_not_stored,
    a_citizen_of_an_unknown_mission_is_refused,
    citizen_updates_check_the_version,
    citizens_are_listed_by_every_filter,
    citizen_search_matches_wildcards_literally,
    staff_members_round_trip_with_their_client,
    a_staff_member_with_an_unknown_service_type_is_not_stored,
    a_staff_update_replaces_the_assignments_in_order,
    staff_are_listed_by_mission_service_type_and_activity,
    the_audit_log_is_listed_newest_first_with_each_filter,
    outbox_events_are_stored_with_the_change,
    a_failed_write_stores_no_outbox_event,
    requests_round_trip_and_updates_check_the_version,
    a_request_with_unknown_references_is_not_stored,
    history_is_kept_in_insertion_order,
    requests_are_listed_newest_first_by_every_filter,
    request_pages_have_no_gaps_or_duplicates,
    the_overdue_filter_needs_its_instant,
    least_loaded_staff_picks_the_member_with_the_fewest_open_requests,
    least_loaded_staff_ignores_members_who_cannot_take_the_request,
    staff_workloads_follow_every_write_of_a_request,
    the_queue_groups_open_requests_by_service_type,
    notes_and_messages_are_paged_oldest_first,
    a_note_or_message_on_an_unknown_request_stores_nothing,
    the_request_list_can_use_an_index_for_every_filter,
);
