//! The module list of every area's `queries.rs`. This file is compiled twice, as
//! `crate::pg::queries` and `crate::sqlite::queries` (`pg.rs` and `sqlite.rs` include it
//! with `#[path]`), with `Conn` the connection type of each database, so each query is
//! written once and type-checked for both. Write operations run in `write_tx!` and store
//! their `WriteMeta` in the same transaction (`write_meta::store`, first); reads that take
//! more than one statement run in `read_tx!`, so they see one snapshot. An area's
//! `queries.rs` reaches another area's queries as `super::<area>`.

// Paths are relative to `src/` (this file's directory), whichever module includes it.
//
// Why this list is not declared by each area's `mod.rs` (issue 29 asked): an area's
// `mod.rs` is compiled once, its `queries.rs` twice, and a query file's `super` is this
// per-database module: its `Conn`, `Backend`, `BoxedSelect` and `explain`, the other
// areas' queries of the same database (`super::write_meta`, `super::clients`), and
// `write_tx!`, `read_tx!` and `reads!`, which are in textual scope only inside `pg.rs` and
// `sqlite.rs`. Declared from `<area>/mod.rs`, each area would need a wrapper module per
// database rebuilding that scope (re-exporting, per database, the other areas' queries it
// uses), and every query file would import the macros by path: more lines per area than
// the one below. Forgetting the line fails to compile (`repository!` calls
// `crate::pg::queries::<area>`) and `crates/testkit/tests/orphan_files.rs`.
#[path = "access_log/queries.rs"]
pub(crate) mod access_log;
#[path = "analytics/queries.rs"]
pub(crate) mod analytics;
#[path = "appointments/queries.rs"]
pub(crate) mod appointments;
#[path = "audit/queries.rs"]
pub(crate) mod audit;
#[path = "catalog/queries.rs"]
pub(crate) mod catalog;
#[path = "citizens/queries.rs"]
pub(crate) mod citizens;
#[path = "clients/queries.rs"]
pub(crate) mod clients;
#[path = "demo/queries.rs"]
pub(crate) mod demo;
#[path = "documents/queries.rs"]
pub(crate) mod documents;
#[path = "erasure/queries.rs"]
pub(crate) mod erasure;
#[path = "exports/queries.rs"]
pub(crate) mod exports;
#[path = "health/queries.rs"]
pub(crate) mod health;
#[path = "idempotency/queries.rs"]
pub(crate) mod idempotency;
#[path = "markers/queries.rs"]
pub(crate) mod markers;
#[path = "missions/queries.rs"]
pub(crate) mod missions;
#[path = "notifications/queries.rs"]
pub(crate) mod notifications;
#[path = "outbox/queries.rs"]
pub(crate) mod outbox;
#[path = "rate_limits/queries.rs"]
pub(crate) mod rate_limits;
#[path = "representations/queries.rs"]
pub(crate) mod representations;
#[path = "requests/queries.rs"]
pub(crate) mod requests;
#[path = "service_secrets/queries.rs"]
pub(crate) mod service_secrets;
#[path = "signing_keys/queries.rs"]
pub(crate) mod signing_keys;
#[path = "staff/queries.rs"]
pub(crate) mod staff;
#[path = "tokens/queries.rs"]
pub(crate) mod tokens;
#[path = "write_meta/queries.rs"]
pub(crate) mod write_meta;

use super::{Batch, BatchError, Conn, explain};

/// The `SQL` dialect of this compilation.
pub(crate) type Backend = <Conn as diesel_async::AsyncConnectionCore>::Backend;

/// A `SELECT` of one table's row type, boxed: what a query function hands to the caller
/// that runs it (alone or with others in `reads!`) or shows it (`debug_query`, `explain`).
pub(crate) type BoxedSelect<T, R> =
    diesel::dsl::IntoBoxed<'static, diesel::dsl::Select<T, diesel::dsl::AsSelect<R, Backend>>, Backend>;
