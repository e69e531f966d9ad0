//! Manages the PostgreSQL cluster the test suites share (see `consular_testkit::postgres`).
//!
//! `pg-test-cluster start` starts it (if needed) and prints its admin URL;
//! `pg-test-cluster stop` stops it and deletes its files (run after a test run).

use std::process::ExitCode;

fn main() -> ExitCode {
    let command = std::env::args().nth(1).unwrap_or_default();
    let result = match command.as_str() {
        "start" => consular_testkit::postgres::server_url().map(|url| println!("{url}")),
        "stop" => consular_testkit::postgres::stop_shared_cluster().map(|stopped| {
            println!(
                "{}",
                if stopped {
                    "stopped the shared test cluster"
                } else {
                    "no shared test cluster was running"
                }
            )
        }),
        _ => {
            eprintln!("usage: pg-test-cluster start|stop");
            return ExitCode::from(2);
        }
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("pg-test-cluster {command}: {e}");
            ExitCode::FAILURE
        }
    }
}
