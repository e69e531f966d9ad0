//! The persistence adapter: implements the repository ports of `consular-ports` on
//! PostgreSQL or SQLite (chosen at run time from the URL) with diesel-async, and owns the
//! schema (`migrations/postgres`, `migrations/sqlite`), the connection pool and the mapping
//! of database errors to [`consular_ports::RepoError`].
//!
//! It must not hold business rules (those live in `consular-domain` and the use cases),
//! know about HTTP, or let SQL or driver types leak through its public API.
//!
//! Layout: `schema.rs` and `sql_types.rs` describe the tables once for both databases;
//! `queries/` holds every query, written once and compiled for each database (`pg.rs`,
//! `sqlite.rs`); `repositories.rs` implements the ports by running those queries;
//! `error.rs` maps errors.

mod database;
mod error;
mod pg;
mod repositories;
mod rows;
mod schema;
mod sql_types;
mod sqlite;

pub use database::{Backend, Database, DbConfig, backend_of, migrate_blocking};
pub use error::DbError;
