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
//! `catalog` (the service types), `citizens`, `staff`, `requests`, `documents`, `service_secrets`,
//! `outbox`, `notifications`, `representations`, `analytics` (the admin views' reads and the
//! stage-spell projection), `markers`, `health`, `demo` (bulk inserts of the demo data set into
//! the other areas' tables), and `write_meta`, the write path every area shares, which has only
//! `queries.rs`) keeps its tables, rows and queries together, in two files:
//!
//! - `<area>/mod.rs`, compiled once: the area's `diesel::table!`s, its rows (the diesel
//!   `Queryable`/`Insertable` structs and their conversions to and from the domain and
//!   port types), its unique constraints (`UNIQUE_CONSTRAINTS`: the name PostgreSQL
//!   reports and the columns SQLite lists, which `error.rs` matches errors against),
//!   and its port implemented on [`Database`] with `repository!`, which writes each method
//!   as "check out a connection and call the query function of the same name, with the
//!   same arguments, on whichever database the pool holds";
//! - `<area>/queries.rs`, compiled twice: every query, written once. `src/queries.rs` lists
//!   the areas' `queries.rs` with `#[path]`; `pg.rs` and `sqlite.rs` each include that list
//!   (as `crate::pg::queries` and `crate::sqlite::queries`) with their own `Conn` type and
//!   `write_tx!`/`read_tx!`, so each query is type-checked against both databases.
//!
//! `schema.rs` names every area's tables once (`tables!`, one line per area) and holds the
//! joins between them; from that line come diesel's permission to use any two tables in
//! one query, the unique constraints `error.rs` consults, the tables `health` may
//! count, and the declared columns that `tests/schema.rs` compares, on both databases, with
//! the migrated ones (so a `table!` that drifts from its migration, or a migrated table no
//! area declares, fails a test). `schema.rs` uses the areas it lists and none of them uses
//! it (`health`, which has no table, reads its list of tables), so the modules form no
//! cycle (`crates/http/tests/module_graph.rs` checks every crate).
//!
//! What several areas use lives in `shared/`: the portable column types (`sql_types`),
//! shared column shapes (`columns`) and the macros (`repository!`, `run!`,
//! `update_versioned!`). `database.rs` builds the pool and migrates; `tls.rs` opens every
//! PostgreSQL connection (the URL's `sslmode` and `sslrootcert`, with rustls); `failure.rs`
//! holds what fails and `error.rs` maps it to `RepoError`.
//!
//! A new field of an existing table touches its area only (and both migration trees): the
//! `table!` and the row in `<area>/mod.rs`, the queries in `<area>/queries.rs` (and a new
//! unique constraint, the area's `UNIQUE_CONSTRAINTS`). A new table also adds its name to
//! its area's line in `schema.rs` (and its joins there). A new area adds its directory and
//! three registrations outside it: `mod <area>;` here, its `#[path]` module in
//! `src/queries.rs`, and, if it owns tables, its line in `schema.rs` (with its joins); its
//! constraints, `health`'s tables and the schema test follow from these. The first two stay
//! written out because the compiler and rustfmt find a module's file only through a
//! literal `mod` declaration, and the queries are compiled once per database (the top of
//! `src/queries.rs` says why the area's `mod.rs` does not declare them instead).

mod database;
mod error;
mod failure;
mod pg;
mod replica;
mod schema;
mod shards;
mod shared;
mod sqlite;
mod tls;

mod access_log;
mod analytics;
mod appointments;
mod audit;
mod catalog;
mod citizens;
mod clients;
mod demo;
mod documents;
mod erasure;
mod exports;
mod health;
mod idempotency;
mod markers;
mod missions;
mod notifications;
mod outbox;
mod rate_limits;
mod reads;
mod representations;
mod requests;
mod service_secrets;
mod signing_keys;
mod staff;
mod tokens;

pub use database::{Backend, Database, DbConfig, backend_of, migrate_blocking};
pub use failure::DbError;
#[doc(hidden)]
pub use health::MigratedColumn;
#[doc(hidden)]
pub use replica::TolerantReads;
#[doc(hidden)]
pub use schema::{DeclaredColumn, DeclaredTable, declared_tables};
