//! The primary and synchronous standby of `consular_testkit::replication`: a commit the
//! primary acknowledged is on the standby, the standby refuses writes until promoted,
//! and after the primary is stopped hard and the standby promoted, the multi-host URL's
//! second server takes writes and holds every acknowledged row; with an apply delay the
//! standby confirms commits without showing them until the delay is lifted.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use consular_testkit::replication::{ReplicatedPair, Role};
use std::time::Duration;

#[test]
fn an_acknowledged_commit_survives_the_primary_and_the_standby_takes_over() {
    let pair = ReplicatedPair::start().unwrap();
    let url = pair.url("postgres");
    assert!(url.contains(&format!(
        "127.0.0.1:{},127.0.0.1:{}/postgres?target_session_attrs=read-write",
        pair.port(Role::Primary),
        pair.port(Role::Standby)
    )));
    pair.query(Role::Primary, "postgres", "CREATE TABLE acked (n integer PRIMARY KEY)").unwrap();
    pair.query(Role::Primary, "postgres", "INSERT INTO acked SELECT generate_series(1, 100)").unwrap();
    // Synchronous: once the primary acknowledged, the standby has the rows.
    assert_eq!(pair.query(Role::Standby, "postgres", "SELECT count(*) FROM acked").unwrap().trim(), "100");
    let refused = pair.query(Role::Standby, "postgres", "INSERT INTO acked VALUES (101)").unwrap_err();
    assert!(refused.contains("read-only transaction"), "{refused}");

    pair.stop_primary_immediately().unwrap();
    assert!(pair.query(Role::Primary, "postgres", "SELECT 1").is_err(), "the primary still answers");
    pair.promote().unwrap();
    assert_eq!(pair.query(Role::Standby, "postgres", "SELECT count(*) FROM acked").unwrap().trim(), "100");
    pair.query(Role::Standby, "postgres", "INSERT INTO acked VALUES (101)").unwrap();
    // The promoted server waits for no standby of its own.
    assert_eq!(pair.query(Role::Standby, "postgres", "SELECT count(*) FROM acked").unwrap().trim(), "101");
}

#[test]
fn a_delayed_standby_confirms_commits_but_replays_them_once_the_delay_is_lifted() {
    let pair = ReplicatedPair::start().unwrap();
    pair.query(Role::Primary, "postgres", "CREATE TABLE lagged (n integer PRIMARY KEY)").unwrap();
    pair.wait_replayed(Duration::from_secs(10)).unwrap();
    pair.set_apply_delay(Duration::from_secs(3600)).unwrap();
    // The commit returns (the standby flushed it) but is not replayed: the standby reads
    // the table as it was.
    pair.query(Role::Primary, "postgres", "INSERT INTO lagged VALUES (1)").unwrap();
    assert_eq!(pair.query(Role::Standby, "postgres", "SELECT count(*) FROM lagged").unwrap().trim(), "0");
    let refused = pair.wait_replayed(Duration::from_millis(200)).unwrap_err();
    assert!(refused.contains("the standby replayed up to"), "{refused}");
    assert!(pair.set_apply_delay(Duration::from_millis(10)).is_err(), "too short to be checked");

    pair.set_apply_delay(Duration::ZERO).unwrap();
    pair.wait_replayed(Duration::from_secs(10)).unwrap();
    assert_eq!(pair.query(Role::Standby, "postgres", "SELECT count(*) FROM lagged").unwrap().trim(), "1");
}
