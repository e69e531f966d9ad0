//! Use cases of the consular API, written against the ports only.
//!
//! Each service here asks the domain's access policy (`consular_domain::policy`) who may
//! do what with every object it touches (authorisation lives in the core, not in
//! routes), validates input through the domain, and writes its changes together with
//! their audit entries and idempotency records. It must not know about HTTP, SQL or any
//! concrete adapter.

pub mod access_log;
mod access_recorder;
mod acting;
mod adapters;
pub mod analytics;
pub mod appointments;
pub mod audit;
pub mod auth;
pub mod catalog;
pub mod citizens;
pub mod clients;
pub mod concurrency;
pub mod demo;
pub mod documents;
pub mod erasure;
pub mod error;
pub mod exports;
#[cfg(test)]
mod fixtures;
pub mod health;
pub mod idempotency;
pub mod missions;
pub mod notifications;
pub mod paging;
pub mod reads;
pub mod representation;
pub mod requests;
pub mod services;
pub mod staff;

pub use adapters::Adapters;
pub use error::ServiceError;
pub use idempotency::{Created, IdempotencyRequest};
pub use services::{ServiceConfig, Services};
