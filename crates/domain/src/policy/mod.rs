//! Who may read, change and list what: the one access policy of the API, as pure
//! functions over the caller (`Principal`) and the object, or the mission and owner it
//! belongs to. The rules are those of docs/api.md ("Who sees what", "Product decisions")
//! and docs/requests.md; each area's table test reads as their specification.
//!
//! The use cases call these functions first and turn a `Denied` into their error in one
//! place. An object the caller may not see is `NotFound`, exactly like an id that does
//! not exist, so that a refusal never reveals that something exists.
//!
//! `common.rs` holds the answer (`Access`, `Denied`, `Listing`, re-exported here) and the
//! checks the areas' files build on, so that no area's file uses this module.

pub mod access_log;
pub mod analytics;
pub mod appointments;
pub mod audit;
pub mod catalog;
pub mod citizens;
pub mod clients;
mod common;
pub mod documents;
pub mod erasure;
pub mod exports;
pub mod missions;
pub mod notifications;
pub mod representation;
pub mod requests;
pub mod staff;
#[cfg(test)]
pub(crate) mod table;

pub use common::{Access, Denied, Listing, Owned};
