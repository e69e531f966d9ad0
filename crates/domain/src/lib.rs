//! The consular domain: entities, value objects and the rules that govern them.
//!
//! This crate owns the vocabulary of the product (mission, client, principal, scope, ...)
//! and every rule that can be decided without I/O. It must not depend on an async
//! runtime, a database, a web framework or a storage library: internal tools reuse it.

pub mod audit;
pub mod client;
pub mod ids;
pub mod mission;
pub mod page;
pub mod principal;
pub mod scope;
pub mod validation;

pub use audit::{AuditAction, AuditRecord};
pub use client::{ApiClient, ClientStatus, NewClient};
pub use ids::{AuditEventId, ClientId, MissionId, PrincipalId};
pub use mission::{Mission, MissionChanges, NewMission};
pub use page::{Page, PageRequest};
pub use principal::{Principal, PrincipalKind, Subject};
pub use scope::{Scope, ScopeSet};
pub use validation::{FieldError, ValidationErrors};
