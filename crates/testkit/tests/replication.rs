//! The primary and synchronous standby of `consular_testkit::replication`: a commit the
//! primary acknowledged is on the standby, the standby refuses writes until promoted,
//! and after the primary is stopped hard and the standby promoted, the multi-host URL's
//! second server takes writes and holds every acknowledged row.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use consular_testkit::replication::{ReplicatedPair, Role};

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
