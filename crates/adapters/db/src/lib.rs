//! The persistence adapter: implements the repository ports of `consular-ports` on
//! PostgreSQL or SQLite (chosen at run time from the URL) with diesel-async, and owns the
//! schema (`migrations/postgres`, `migrations/sqlite`), the connection pool and the mapping
//! of database errors to [`consular_ports::RepoError`].
//!
//! It must not hold business rules (those live in `consular-domain` and the use cases),
//! know about HTTP, or let SQL or driver types leak through its public API.
//!
//! # Layout: one directory per area
//!
//! Each area (`appointments`, `missions`, `clients`, `tokens`, `signing_keys`, `idempotency`, `audit`,
//! `service_types`, `citizens`, `staff`, `requests`, `documents`, `service_secrets`, `outbox`,
//! `notifications`, `analytics` (the admin views' reads and the stage-spell projection),
//! `markers`, `health`, `demo` (bulk inserts of the demo data set into the other areas'
//! tables), and `write_meta`, the write path every area shares) keeps its tables, rows and
//! queries together, in two files:
//!
//! - `<area>/mod.rs`, compiled once: the area's `diesel::table!`s, its rows (the diesel
//!   `Queryable`/`Insertable` structs and their conversions to and from the domain and
//!   port types), its unique constraints (for `error.rs`), and its port implemented on
//!   [`Database`] with `repository!`, which writes each method as "check out a connection
//!   and call the query function of the same name, with the same arguments, on whichever
//!   database the pool holds";
//! - `<area>/queries.rs`, compiled twice: every query, written once. `src/queries.rs` lists
//!   the areas' `queries.rs` with `#[path]`; `pg.rs` and `sqlite.rs` each include that list
//!   (as `crate::pg::queries` and `crate::sqlite::queries`) with their own `Conn` type and
//!   `write_tx!`/`read_tx!`, so each query is type-checked against both databases.
//!   `write_meta` has only this file.
//!
//! What several areas use lives in `shared/`: the portable column types (`sql_types`), the
//! joins between the areas' tables (`schema`), shared column shapes (`columns`) and the
//! macros (`repository!`, `run!`, `update_versioned!`). `database.rs` builds the pool and
//! migrates; `tls.rs` opens every PostgreSQL connection (the URL's `sslmode` and
//! `sslrootcert`, with rustls); `error.rs` maps errors.
//!
//! A new field of an existing table touches its area only (and both migration trees): the
//! `table!` and the row in `<area>/mod.rs`, the queries in `<area>/queries.rs`. A new area
//! adds its directory, a line in `lib.rs` and `queries.rs`, its tables in
//! `shared/schema.rs` and in `health`'s list, and its constraints in `error.rs`.

mod database;
mod error;
mod pg;
mod shards;
mod shared;
mod sqlite;
mod tls;

mod analytics;
mod appointments;
mod audit;
mod citizens;
mod clients;
mod demo;
mod documents;
mod health;
mod idempotency;
mod markers;
mod missions;
mod notifications;
mod outbox;
mod requests;
mod service_secrets;
mod service_types;
mod signing_keys;
mod staff;
mod tokens;

pub use database::{Backend, Database, DbConfig, backend_of, migrate_blocking};
pub use error::DbError;
