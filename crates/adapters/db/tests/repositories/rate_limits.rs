//! Attempt counters (docs/appointments.md "Attempt caps"): one statement counts every key
//! of an attempt, fixed windows of a minute, a node whose clock is behind never resets a
//! newer window, and concurrent attempts on one key each get their own count.

use super::*;
use consular_domain::rate::{RateKey, window_of};
use consular_ports::RateLimitRepository;

fn citizen_key() -> RateKey {
    let subject = Subject { kind: PrincipalKind::Citizen, id: PrincipalId::new() };
    RateKey::booking_by_citizen(&Principal {
        subject,
        client_id: ClientId::new(),
        mission: None,
        scopes: ScopeSet::default(),
        address: None,
        acting_for: None,
    })
}

fn client_key() -> RateKey {
    RateKey::booking_by_client(ClientId::new())
}

async fn counts_restart_in_each_window_and_keys_count_apart(db: Database) {
    let (citizen, client) = (citizen_key(), client_key());
    let w1 = window_of(datetime!(2026-11-27 09:00:30 UTC));
    let w2 = window_of(datetime!(2026-11-27 09:01:05 UTC));
    // Nothing to count: nothing done.
    assert_eq!(db.count_attempt(&[], w1).await.unwrap(), Vec::<u32>::new());
    // Counts come back in the order the keys were given, whatever their text order.
    let both = [client.clone(), citizen.clone()];
    assert_eq!(db.count_attempt(&both, w1).await.unwrap(), vec![1, 1]);
    assert_eq!(db.count_attempt(&both, w1).await.unwrap(), vec![2, 2]);
    assert_eq!(db.count_attempt(std::slice::from_ref(&client), w1).await.unwrap(), vec![3]);
    assert_eq!(db.count_attempt(&[citizen.clone(), client.clone()], w1).await.unwrap(), vec![3, 4]);
    // The next minute starts again at 1, each key on its own.
    assert_eq!(db.count_attempt(std::slice::from_ref(&citizen), w2).await.unwrap(), vec![1]);
    assert_eq!(db.count_attempt(&both, w2).await.unwrap(), vec![1, 2]);
    // A later window after a gap of several minutes: 1 again.
    let w9 = w2 + Duration::minutes(7);
    assert_eq!(db.count_attempt(&both, w9).await.unwrap(), vec![1, 1]);
    // Another key is another count.
    assert_eq!(db.count_attempt(&[client_key()], w9).await.unwrap(), vec![1]);
}

async fn a_node_whose_clock_is_behind_counts_into_the_newer_window(db: Database) {
    let key = client_key();
    let one = std::slice::from_ref(&key);
    let newer = window_of(datetime!(2026-11-27 09:01:00 UTC));
    let older = newer - Duration::minutes(1);
    assert_eq!(db.count_attempt(one, newer).await.unwrap(), vec![1]);
    assert_eq!(db.count_attempt(one, newer).await.unwrap(), vec![2]);
    // The lagging node is still in the previous minute: it adds to the newer count
    // instead of restarting it (and does not move the window back)...
    assert_eq!(db.count_attempt(one, older).await.unwrap(), vec![3]);
    assert_eq!(db.count_attempt(one, older).await.unwrap(), vec![4]);
    // ...so the node in the newer minute goes on from there.
    assert_eq!(db.count_attempt(one, newer).await.unwrap(), vec![5]);
    // And the next minute restarts for everyone.
    assert_eq!(db.count_attempt(one, newer + Duration::minutes(1)).await.unwrap(), vec![1]);
}

async fn concurrent_attempts_on_one_key_each_get_their_own_count(db: Database) {
    const ATTEMPTS: u32 = 50;
    let (citizen, client) = (citizen_key(), client_key());
    let window = window_of(now());
    let attempts: Vec<_> = (0..ATTEMPTS)
        .map(|i| {
            let db = db.clone();
            // Half of them count the citizen too: the rows are taken in one order.
            let keys = if i % 2 == 0 { vec![client.clone()] } else { vec![citizen.clone(), client.clone()] };
            tokio::spawn(async move { db.count_attempt(&keys, window).await.unwrap() })
        })
        .collect();
    let mut client_counts = Vec::new();
    let mut citizen_counts = Vec::new();
    for attempt in attempts {
        let counts = attempt.await.unwrap();
        client_counts.push(*counts.last().unwrap());
        if counts.len() == 2 {
            citizen_counts.push(counts[0]);
        }
    }
    client_counts.sort_unstable();
    citizen_counts.sort_unstable();
    assert_eq!(client_counts, (1..=ATTEMPTS).collect::<Vec<_>>(), "no increment lost, none counted twice");
    assert_eq!(citizen_counts, (1..=ATTEMPTS / 2).collect::<Vec<_>>());
    assert_eq!(db.count_attempt(&[client], window).await.unwrap(), vec![ATTEMPTS + 1]);
}

on_both_databases!(
    counts_restart_in_each_window_and_keys_count_apart,
    a_node_whose_clock_is_behind_counts_into_the_newer_window,
    concurrent_attempts_on_one_key_each_get_their_own_count,
);
