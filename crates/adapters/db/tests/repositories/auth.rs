//! API clients, refresh tokens and revocations; the health check.

use super::*;

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
    let in_paris = ClientFilter { mission: Some(paris.id), ..ClientFilter::default() };
    let first = ClientRepository::list(&db, in_paris, PageRequest { limit: 1, after: None }).await.unwrap();
    let rest = ClientRepository::list(&db, in_paris, PageRequest { limit: 1, after: first.next_after })
        .await
        .unwrap();
    let mut expected = [staff.id, citizen.id];
    expected.sort();
    assert_eq!([first.items[0].id, rest.items[0].id], expected[..]);
    assert_eq!(rest.next_after, None);
    let of_citizen = ClientFilter { principal: Some(citizen.subject.id), ..ClientFilter::default() };
    let found = ClientRepository::list(&db, of_citizen, PageRequest::default()).await.unwrap();
    assert_eq!(found.items.iter().map(|c| c.id).collect::<Vec<_>>(), [citizen.id]);
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

on_both_databases!(
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
);
