//! Service requests: submission, the workflow, internal notes, the message thread and
//! staff queues (docs/requests.md). Who may do what is the domain's access policy
//! (`consular_domain::policy::requests`): a citizen sees their own requests; staff and
//! admins those of their mission (global admins all). Internal notes never reach a
//! citizen.

mod notes_messages;
mod queries;
mod service;
mod submit;
#[cfg(test)]
mod tests;
mod transitions;

/// What a submission asks for: the domain's, here where the use case is.
pub use consular_domain::NewRequest;
pub use queries::{DocumentEvent, Queue, RequestDetails, TimelineItem};
pub use service::{RESOURCE, RequestPorts, RequestService, RequestView};
pub use transitions::StatusChange;
