//! The contract of `SigningKeyRepository`, checked against both databases with the harness
//! of `common/mod.rs`: the first key and the rotation guard when nodes race, the kid poll
//! every node runs, sealing a key stored in clear, and retirement that never takes the
//! newest key.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use common::*;

use consular_db::Database;
use consular_ports::{KeyProtection, SigningKeyRecord, SigningKeyRepository};
use time::Duration;

fn signing_key(kid: &str, age_minutes: i64) -> SigningKeyRecord {
    SigningKeyRecord {
        kid: kid.to_owned(),
        private_key: vec![1, 2, 3],
        protection: KeyProtection::Clear,
        public_key: vec![4; 32],
        created_at: now() - Duration::minutes(age_minutes),
    }
}

fn kids(records: &[SigningKeyRecord]) -> Vec<&str> {
    records.iter().map(|r| r.kid.as_str()).collect()
}

async fn the_first_signing_key_wins(db: Database) {
    assert_eq!(SigningKeyRepository::all(&db).await.unwrap(), vec![]);
    assert_eq!(db.kids().await.unwrap(), Vec::<String>::new());
    let first = signing_key("k1", 0);
    assert!(db.insert_first(&first).await.unwrap());
    assert!(!db.insert_first(&signing_key("k2", 0)).await.unwrap());
    assert_eq!(SigningKeyRepository::all(&db).await.unwrap(), vec![first]);
}

async fn concurrent_first_signing_keys_make_one_key(db: Database) {
    let (a, b) = (signing_key("ka", 0), signing_key("kb", 0));
    let (db_a, db_b) = (db.clone(), db.clone());
    let (first, second) = tokio::join!(db_a.insert_first(&a), db_b.insert_first(&b));
    assert!(first.unwrap() ^ second.unwrap());
    assert_eq!(SigningKeyRepository::all(&db).await.unwrap().len(), 1);
}

async fn sealed_keys_round_trip_and_are_listed_newest_first(db: Database) {
    let mut first = signing_key("k1", 60);
    first.protection = KeyProtection::Aes256Gcm;
    first.private_key = vec![9; 60];
    assert!(db.insert_first(&first).await.unwrap());
    let second = SigningKeyRecord { protection: KeyProtection::Aes256Gcm, ..signing_key("k2", 30) };
    assert!(db.insert_successor(&second, "k1").await.unwrap());
    let third = signing_key("k3", 0);
    assert!(db.insert_successor(&third, "k2").await.unwrap());
    let all = SigningKeyRepository::all(&db).await.unwrap();
    assert_eq!(all, vec![third, second, first]);
    assert_eq!(db.kids().await.unwrap(), kids(&all));
}

async fn a_successor_of_a_key_no_longer_newest_is_refused(db: Database) {
    assert!(db.insert_first(&signing_key("k1", 60)).await.unwrap());
    assert!(db.insert_successor(&signing_key("k2", 30), "k1").await.unwrap());
    assert!(!db.insert_successor(&signing_key("k3", 0), "k1").await.unwrap());
    assert!(!db.insert_successor(&signing_key("k4", 0), "unknown").await.unwrap());
    assert_eq!(db.kids().await.unwrap(), ["k2", "k1"]);
}

async fn concurrent_rotations_make_one_key(db: Database) {
    assert!(db.insert_first(&signing_key("k1", 60)).await.unwrap());
    let (a, b, c) = (signing_key("ra", 0), signing_key("rb", 0), signing_key("rc", 0));
    let (db_a, db_b, db_c) = (db.clone(), db.clone(), db.clone());
    let results = tokio::join!(
        db_a.insert_successor(&a, "k1"),
        db_b.insert_successor(&b, "k1"),
        db_c.insert_successor(&c, "k1")
    );
    let stored = [results.0.unwrap(), results.1.unwrap(), results.2.unwrap()];
    assert_eq!(stored.iter().filter(|s| **s).count(), 1, "{stored:?}");
    assert_eq!(db.kids().await.unwrap().len(), 2);
}

async fn a_key_in_clear_is_sealed_once(db: Database) {
    assert!(db.insert_first(&signing_key("k1", 0)).await.unwrap());
    assert!(db.protect("k1", &[7; 40], KeyProtection::Aes256Gcm).await.unwrap());
    // A second node sealing the same key (with its own nonce) finds it done.
    assert!(!db.protect("k1", &[8; 40], KeyProtection::Aes256Gcm).await.unwrap());
    assert!(!db.protect("unknown", &[8; 40], KeyProtection::Aes256Gcm).await.unwrap());
    let stored = SigningKeyRepository::all(&db).await.unwrap().remove(0);
    assert_eq!((stored.private_key, stored.protection), (vec![7; 40], KeyProtection::Aes256Gcm));
}

async fn retirement_never_takes_the_newest_key(db: Database) {
    assert!(db.insert_first(&signing_key("k1", 90)).await.unwrap());
    assert!(db.insert_successor(&signing_key("k2", 60), "k1").await.unwrap());
    assert!(db.insert_successor(&signing_key("k3", 0), "k2").await.unwrap());
    let all = |kids: &[&str]| kids.iter().map(|k| (*k).to_owned()).collect::<Vec<_>>();
    assert_eq!(db.retire(&all(&["k1", "k3", "unknown"])).await.unwrap(), 1);
    assert_eq!(db.kids().await.unwrap(), ["k3", "k2"]);
    // Retiring again (another node) is harmless.
    assert_eq!(db.retire(&all(&["k1"])).await.unwrap(), 0);
    assert_eq!(db.retire(&all(&["k2", "k3"])).await.unwrap(), 1);
    assert_eq!(db.kids().await.unwrap(), ["k3"]);
    assert_eq!(db.retire(&[]).await.unwrap(), 0);
}

on_both_databases!(
    the_first_signing_key_wins,
    concurrent_first_signing_keys_make_one_key,
    sealed_keys_round_trip_and_are_listed_newest_first,
    a_successor_of_a_key_no_longer_newest_is_refused,
    concurrent_rotations_make_one_key,
    a_key_in_clear_is_sealed_once,
    retirement_never_takes_the_newest_key,
);
