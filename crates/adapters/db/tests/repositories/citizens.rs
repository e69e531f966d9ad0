//! Citizens: exact dates, their clients, passports, versions, every filter.

use super::*;

async fn listed_citizens(db: &Database, filter: CitizenFilter) -> Vec<CitizenId> {
    let page =
        CitizenRepository::list(db, filter, PageRequest::default(), Consistency::Latest).await.unwrap();
    assert_eq!(page.next_after, None);
    page.items.iter().map(|c| c.id).collect()
}

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
        let page = CitizenRepository::list(
            &db,
            in_paris.clone(),
            PageRequest { limit: 2, after },
            Consistency::Latest,
        )
        .await
        .unwrap();
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

on_both_databases!(
    citizens_round_trip_with_exact_dates,
    a_citizen_is_stored_with_their_client,
    a_passport_is_registered_once_per_mission,
    a_citizen_whose_client_fails_is_not_stored,
    a_citizen_of_an_unknown_mission_is_refused,
    citizen_updates_check_the_version,
    citizens_are_listed_by_every_filter,
    citizen_search_matches_wildcards_literally,
);
