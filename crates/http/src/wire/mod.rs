//! The wire: what the API reads and writes, apart from the handlers that do it. One file
//! per area (`<area>.rs`, beside `routes/<area>.rs`) holds the area's request and
//! response bodies, query parameters, their conversions from and to the core's types,
//! and the problem responses its operations document; `common` holds the pieces several
//! areas' files share; this root holds what route modules share and the areas' files do
//! not need: the problem responses of several areas' operations. The analytics CSV is
//! rendered by `analytics::csv`, an appointment's calendar file by `appointments`.
//!
//! An area's file uses `common` (and `crate::problem`), never another area's file nor
//! this root (`tests/module_graph.rs` reads a module's use of its parent as a cycle).

pub mod access_log;
pub mod analytics;
pub mod appointments;
pub mod audit;
pub mod auth;
pub mod catalog;
pub mod citizens;
pub mod clients;
pub mod common;
pub mod documents;
pub mod erasure;
pub mod exports;
pub mod missions;
pub mod notifications;
pub mod ops;
pub mod representation;
pub mod requests;
pub mod slots;
pub mod staff;

use common::problem_response;

problem_response! {
    /// 428: a change that needs `If-Match` came without it.
    IfMatchMissing = 428, "If-Match is missing";
    /// 409 of the creations whose only conflict is a reused key (docs/api.md
    /// "Idempotency").
    IdempotencyKeyInUse = 409, "The Idempotency-Key is in use";
    /// 409 of the creations of what has a unique code (a mission, a service type).
    CodeTaken = 409, "The code is taken, or the Idempotency-Key is in use";
}
