//! What the worker looks up about an outbox event before the domain decides what it
//! produces: the request it is about, the person who hears it (by the domain's
//! `audience` table: only that person is looked up), and the details the notification
//! may carry. One [`Lookups`] serves a batch, so a request, a person or a mission that
//! several events share is read once.

use super::NotificationService;
use crate::ServiceError;
use consular_domain::notification::{Audience, Details, EventFacts, EventKind, Language, Person, audience};
use consular_domain::{
    CitizenId, LocalSlot, Mission, MissionId, PrincipalId, PrincipalKind, RequestId, ServiceRequest,
    ServiceTypeId, StaffId,
};
use consular_ports::OutboxEvent;
use serde_json::Value;
use std::collections::HashMap;
use std::str::FromStr;
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;
use time::macros::format_description;
use uuid::Uuid;

/// What a batch has looked up so far (`None`: looked up, not there).
#[derive(Default)]
pub(super) struct Lookups {
    requests: HashMap<RequestId, Option<ServiceRequest>>,
    people: HashMap<Uuid, Option<Person>>,
    missions: HashMap<MissionId, Option<Mission>>,
    services: HashMap<ServiceTypeId, Option<String>>,
}

/// A text field of the payload.
fn text<'a>(payload: &'a Value, field: &str) -> Option<&'a str> {
    payload.get(field).and_then(Value::as_str)
}

/// An id field of the payload.
fn id<T: FromStr>(payload: &Value, field: &str) -> Option<T> {
    text(payload, field).and_then(|s| s.parse().ok())
}

fn is_about_request(kind: EventKind) -> bool {
    matches!(
        kind,
        EventKind::RequestSubmitted
            | EventKind::RequestStatusChanged
            | EventKind::RequestStageAdvanced
            | EventKind::RequestAssigned
            | EventKind::MessagePosted
    )
}

impl NotificationService {
    async fn request(
        &self,
        cache: &mut Lookups,
        id: RequestId,
    ) -> Result<Option<ServiceRequest>, ServiceError> {
        if let Some(found) = cache.requests.get(&id) {
            return Ok(found.clone());
        }
        let found = self.ports.requests.get(id).await?;
        cache.requests.insert(id, found.clone());
        Ok(found)
    }

    async fn mission(&self, cache: &mut Lookups, id: MissionId) -> Result<Option<Mission>, ServiceError> {
        if let Some(found) = cache.missions.get(&id) {
            return Ok(found.clone());
        }
        let found = self.ports.missions.get(id).await?;
        cache.missions.insert(id, found.clone());
        Ok(found)
    }

    async fn service_name(
        &self,
        cache: &mut Lookups,
        id: ServiceTypeId,
    ) -> Result<Option<String>, ServiceError> {
        if let Some(found) = cache.services.get(&id) {
            return Ok(found.clone());
        }
        let found = self.ports.service_types.get(id).await?.map(|s| s.name);
        cache.services.insert(id, found.clone());
        Ok(found)
    }

    /// The citizen `id` as a recipient: their address and language, and their
    /// preferences.
    async fn citizen(&self, cache: &mut Lookups, id: CitizenId) -> Result<Option<Person>, ServiceError> {
        if let Some(found) = cache.people.get(&id.as_uuid()) {
            return Ok(found.clone());
        }
        let found = match self.ports.citizens.get(id).await? {
            Some(citizen) => Some(Person {
                id: PrincipalId(citizen.id.as_uuid()),
                kind: PrincipalKind::Citizen,
                email: Some(citizen.email).filter(|e| !e.trim().is_empty()),
                language: Language::for_preference(&citizen.preferred_language),
                preferences: self.ports.notifications.preferences(PrincipalId(id.as_uuid())).await?,
            }),
            None => None,
        };
        cache.people.insert(id.as_uuid(), found.clone());
        Ok(found)
    }

    /// The staff member `id` as a recipient, while active (staff write in English).
    async fn staff_member(&self, cache: &mut Lookups, id: StaffId) -> Result<Option<Person>, ServiceError> {
        if let Some(found) = cache.people.get(&id.as_uuid()) {
            return Ok(found.clone());
        }
        let found = match self.ports.staff.get(id).await? {
            Some(member) if member.active => Some(Person {
                id: PrincipalId(member.id.as_uuid()),
                kind: PrincipalKind::Staff,
                email: Some(member.email).filter(|e| !e.trim().is_empty()),
                language: Language::En,
                preferences: self.ports.notifications.preferences(PrincipalId(id.as_uuid())).await?,
            }),
            _ => None,
        };
        cache.people.insert(id.as_uuid(), found.clone());
        Ok(found)
    }

    /// The facts of `event`; None for an event kind this version does not know (logged
    /// and passed over: a newer node wrote it, or it was removed).
    pub(super) async fn facts(
        &self,
        cache: &mut Lookups,
        event: &OutboxEvent,
    ) -> Result<Option<EventFacts>, ServiceError> {
        let Ok(kind) = event.kind.parse::<EventKind>() else {
            tracing::warn!(event = %event.id, kind = %event.kind, "an outbox event of unknown kind is passed over");
            return Ok(None);
        };
        let payload = &event.payload;
        let author = text(payload, "author_kind").and_then(|k| k.parse::<PrincipalKind>().ok());
        let mut facts = EventFacts {
            event_id: event.id,
            kind,
            author,
            citizen: None,
            assignee: None,
            mission_id: id(payload, "mission_id"),
            request_id: if is_about_request(kind) {
                Some(RequestId(event.aggregate_id))
            } else {
                id(payload, "request_id")
            },
            details: Details::default(),
        };
        let Some((_, who)) = audience(kind, author) else {
            return Ok(Some(facts));
        };
        let request = match facts.request_id {
            Some(request_id) => self.request(cache, request_id).await?,
            None => None,
        };
        if let Some(request) = &request {
            facts.mission_id = Some(request.mission_id);
        }
        match who {
            Audience::Citizen => {
                let citizen =
                    id::<CitizenId>(payload, "citizen_id").or(request.as_ref().map(|r| r.citizen_id));
                if let Some(citizen) = citizen {
                    facts.citizen = self.citizen(cache, citizen).await?;
                }
            }
            Audience::Assignee => {
                let assignee = match kind {
                    EventKind::RequestAssigned => id::<StaffId>(payload, "assignee_id"),
                    _ => request.as_ref().and_then(|r| r.assignee_id),
                };
                if let Some(assignee) = assignee {
                    facts.assignee = self.staff_member(cache, assignee).await?;
                }
            }
        }
        facts.details = self.details(cache, kind, payload, request.as_ref(), facts.mission_id).await?;
        Ok(Some(facts))
    }

    /// What the notification says: only fields the recipient may read through the API.
    async fn details(
        &self,
        cache: &mut Lookups,
        kind: EventKind,
        payload: &Value,
        request: Option<&ServiceRequest>,
        mission_id: Option<MissionId>,
    ) -> Result<Details, ServiceError> {
        let owned = |field: &str| text(payload, field).map(str::to_owned);
        let mut details = Details::default();
        if let Some(request) = request {
            details.service = self.service_name(cache, request.service_type_id).await?;
        }
        match kind {
            EventKind::RequestStatusChanged => {
                details.status = owned("to");
                details.reason = owned("reason");
            }
            EventKind::RequestStageAdvanced => details.stage = owned("stage"),
            EventKind::DocumentVerified | EventKind::DocumentRejected => {
                details.document_id = id(payload, "document_id");
                details.document_kind = owned("kind");
                details.reason = owned("reason");
            }
            EventKind::AppointmentBooked
            | EventKind::AppointmentRescheduled
            | EventKind::AppointmentCancelled
            | EventKind::AppointmentCancelledByMission
            | EventKind::AppointmentReminder => {
                details.appointment_id = id(payload, "appointment_id");
                details.starts_at =
                    text(payload, "starts_at").and_then(|t| OffsetDateTime::parse(t, &Rfc3339).ok());
                if let Some(mission_id) = mission_id
                    && let Some(mission) = self.mission(cache, mission_id).await?
                {
                    details.local_time = details.starts_at.and_then(|at| local_time(at, &mission.timezone));
                    details.timezone = Some(mission.timezone);
                    details.mission = Some(mission.name);
                }
            }
            _ => {}
        }
        Ok(details)
    }
}

/// `at` on the wall clock of `timezone`: `2027-03-02 10:00`.
fn local_time(at: OffsetDateTime, timezone: &str) -> Option<String> {
    let local = LocalSlot::between(at, at, timezone)?.starts_at;
    local.format(format_description!("[year]-[month]-[day] [hour]:[minute]")).ok()
}
