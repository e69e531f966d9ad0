//! The routes, one module per area, and the one registration that both serves them and
//! documents them. A route module holds handlers (and their small private helpers) and a
//! `register` that adds them; the bodies they read and write are in `crate::wire`, the
//! response helpers in `crate::respond`. Route modules never use each other.

pub mod access_log;
pub mod analytics;
pub mod appointments;
pub mod audit;
pub mod auth;
pub mod catalog;
pub mod citizens;
pub mod clients;
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

use utoipa_actix_web::service_config::ServiceConfig;

/// Registers every documented route, area by area; the OpenAPI document is generated from
/// the same call. Actix tries routes in this order, so a fixed path must come before a
/// template that also matches it (`tests/routes.rs`). `/metrics` is not one: it is served
/// on its own listener ([`crate::metrics_app`]).
pub fn register(cfg: &mut ServiceConfig) {
    auth::register(cfg);
    clients::register(cfg);
    missions::register(cfg);
    catalog::register(cfg);
    citizens::register(cfg);
    access_log::register(cfg);
    representation::register(cfg);
    exports::register(cfg);
    erasure::register(cfg);
    staff::register(cfg);
    requests::register(cfg);
    documents::register(cfg);
    slots::register(cfg);
    appointments::register(cfg);
    notifications::register(cfg);
    analytics::register(cfg);
    audit::register(cfg);
    ops::register(cfg);
}
