//! The consular domain: entities, value objects and the rules that govern them.
//!
//! This crate owns the vocabulary of the product (mission, client, principal, scope, ...)
//! and every rule that can be decided without I/O. It must not depend on an async
//! runtime, a database, a web framework or a storage library: internal tools reuse it.

mod text_enum;

pub mod access_log;
pub mod analytics;
pub mod appointment;
pub mod audit;
pub mod catalog;
pub mod citizen;
pub mod client;
pub mod document;
pub mod erasure;
pub mod event;
pub mod export;
/// One base value of every entity, for tests (the `fixtures` feature).
#[cfg(any(test, feature = "fixtures"))]
pub mod fixtures;
pub mod ids;
pub mod mandate;
pub mod mission;
pub mod notification;
pub mod page;
pub mod policy;
pub mod principal;
pub mod rate;
pub mod representation;
pub mod request;
pub mod rules;
pub mod scope;
pub mod staff;
pub mod validation;

pub use access_log::{AccessEntry, AccessRole, AccessedData};
pub use appointment::{
    Appointment, AppointmentAction, AppointmentChange, AppointmentEntry, AppointmentRefused,
    AppointmentStatus, Availability, BookingRefused, CancelRefused, CancelledBy, Cutoffs, ExplicitSlots,
    LocalSlot, OpeningHours, RecurringSchedule, RescheduleRefused, Slot, SlotConflict, SlotKey, SlotPlan,
    SlotTemplate, StartCursor,
};
pub use audit::{AuditAction, AuditRecord, Trace};
pub use catalog::{
    DEFAULT_RETENTION_DAYS, MAX_RETENTION_DAYS, Money, NewServiceType, ServiceType, ServiceTypeChanges, Stage,
};
pub use citizen::{Address, Citizen, CitizenChanges, EmergencyContact, NewCitizen, RegistrationStatus};
pub use client::{ApiClient, ClientDisabled, ClientStatus, NewClient};
pub use document::{
    ChecklistItem, ChecklistState, Document, DocumentAction, DocumentStatus, IllegalDocumentTransition,
    NewDocument, ScanStatus, UploadRefused,
};
pub use event::{AppointmentRef, DocumentRef, DomainEvent};
pub use export::{EXPORT_LIFETIME, Export, ExportAction, ExportState, IllegalExportTransition};
pub use ids::ExportId;
pub use ids::{
    AccessEntryId, AppointmentId, AuditEventId, CitizenId, ClientId, DocumentId, EmailId, MissionId,
    NotificationId, PrincipalId, RepresentationId, RequestId, ServiceTypeId, SlotId, StaffId,
};
pub use mission::{Mission, MissionChanges, NewMission};
pub use page::{Page, PageRequest};
pub use principal::{Binding, Principal, PrincipalKind, Subject};
pub use representation::{Mandate, Representation, RepresentationKind, ServiceScope};
pub use request::{
    Action, Changed, HistoryEntry, IllegalTransition, NewRequest, Reason, RequestChange, RequestStatus, Role,
    ServiceRequest,
};
pub use scope::{Scope, ScopeSet};
pub use staff::{Assignments, NewStaffMember, StaffMember};
pub use validation::{FieldError, ValidationErrors};
