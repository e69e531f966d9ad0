//! The request use cases' service and its ports, the view of a request they answer
//! with, and the lookups they share (`submit.rs`, `transitions.rs`, `notes_messages.rs`,
//! `queries.rs`): what they all use, apart from the module that declares them.

use crate::access_log::AccessRecorder;
use crate::adapters::Adapters;
use crate::error::{OrNotFound, ServiceError};
use consular_domain::document::checklist;
use consular_domain::policy::Owned;
use consular_domain::policy::requests as policy;
use consular_domain::{ChecklistItem, Principal, RequestId, ServiceRequest};
use consular_ports::{
    AppointmentRepository, CitizenRepository, Clock, DocumentRepository, IdempotencyRepository,
    MissionRepository, RequestRepository, ServiceTypeRepository, StaffRepository,
};
use std::sync::Arc;
use time::OffsetDateTime;

pub const RESOURCE: &str = "service_request";

/// A request as of the use case's clock: `overdue` is judged at the injected `Clock`'s
/// now, so that every response agrees with the `overdue` filter (a submission's answer
/// at its submission, which its replays repeat).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RequestView {
    pub request: ServiceRequest,
    /// Open and past its SLA.
    pub overdue: bool,
}

impl RequestView {
    pub(super) fn at(request: ServiceRequest, now: OffsetDateTime) -> Self {
        let overdue = request.is_overdue(now);
        RequestView { request, overdue }
    }

    /// The request as its submission answered it: judged at its submission, so that a
    /// replay repeats the first answer.
    pub(super) fn as_submitted(request: ServiceRequest) -> Self {
        let submitted_at = request.submitted_at;
        RequestView::at(request, submitted_at)
    }
}

/// The ports the request use cases need.
#[derive(Clone)]
pub struct RequestPorts {
    pub requests: Arc<dyn RequestRepository>,
    /// The bookings linked to a request, for its timeline.
    pub appointments: Arc<dyn AppointmentRepository>,
    pub citizens: Arc<dyn CitizenRepository>,
    pub service_types: Arc<dyn ServiceTypeRepository>,
    pub staff: Arc<dyn StaffRepository>,
    pub documents: Arc<dyn DocumentRepository>,
    pub idempotency: Arc<dyn IdempotencyRepository>,
    /// The mission's time zone: whether a citizen acting alone is a minor.
    pub missions: Arc<dyn MissionRepository>,
    /// The node's access log recorder, shared by every use case (`Services::new`).
    pub access: AccessRecorder,
    pub clock: Arc<dyn Clock>,
}

impl<D> From<&Adapters<D>> for RequestPorts
where
    D: RequestRepository
        + AppointmentRepository
        + CitizenRepository
        + ServiceTypeRepository
        + StaffRepository
        + DocumentRepository
        + IdempotencyRepository
        + MissionRepository
        + 'static,
{
    fn from(adapters: &Adapters<D>) -> Self {
        let db = &adapters.database;
        RequestPorts {
            missions: db.clone(),
            requests: db.clone(),
            appointments: db.clone(),
            citizens: db.clone(),
            service_types: db.clone(),
            staff: db.clone(),
            documents: db.clone(),
            idempotency: db.clone(),
            access: adapters.access.clone(),
            clock: adapters.clock.clone(),
        }
    }
}

#[derive(Clone)]
pub struct RequestService {
    pub(super) ports: RequestPorts,
}

impl RequestService {
    pub fn new(ports: RequestPorts) -> Self {
        RequestService { ports }
    }

    /// The request's required-documents checklist, from its live documents.
    pub(super) async fn checklist(
        &self,
        request: &ServiceRequest,
    ) -> Result<Vec<ChecklistItem>, ServiceError> {
        let required = self
            .ports
            .service_types
            .get(request.service_type_id)
            .await?
            .map(|t| t.required_documents)
            .unwrap_or_default();
        let documents = self.ports.documents.for_request(request.id).await?;
        Ok(checklist(&required, &documents))
    }

    pub(super) async fn fetch(&self, id: RequestId) -> Result<ServiceRequest, ServiceError> {
        self.ports.requests.get(id).await.or_not_found()
    }

    /// Refuses a minor's own token what a minor does through a parent or guardian.
    pub(super) async fn refuse_minor_alone(
        &self,
        actor: &Principal,
        now: OffsetDateTime,
    ) -> Result<(), ServiceError> {
        let ports = &self.ports;
        crate::acting::refuse_minor_alone(&*ports.citizens, &*ports.missions, actor, now).await
    }

    /// The request, if the caller may read it (and its thread).
    pub(super) async fn readable(
        &self,
        actor: &Principal,
        id: RequestId,
    ) -> Result<ServiceRequest, ServiceError> {
        let request = self.fetch(id).await?;
        policy::read(actor, &Owned::from(&request))?;
        Ok(request)
    }

    /// The request, if the caller may work on it (change it, write or read its notes);
    /// the scope is checked before the request is looked up.
    pub(super) async fn workable(
        &self,
        actor: &Principal,
        id: RequestId,
    ) -> Result<ServiceRequest, ServiceError> {
        policy::work(actor)?;
        let request = self.fetch(id).await?;
        policy::work_on(actor, &Owned::from(&request))?;
        Ok(request)
    }
}
