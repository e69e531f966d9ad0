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

/// `cache`'s entry for `key`, or what `load` finds, stored there first (a miss too).
async fn cached<K, V, F>(
    cache: &mut HashMap<K, Option<V>>,
    key: K,
    load: F,
) -> Result<Option<V>, ServiceError>
where
    K: Eq + std::hash::Hash,
    V: Clone,
    F: Future<Output = Result<Option<V>, ServiceError>>,
{
    if let Some(found) = cache.get(&key) {
        return Ok(found.clone());
    }
    let found = load.await?;
    cache.insert(key, found.clone());
    Ok(found)
}

impl NotificationService {
    async fn request(
        &self,
        cache: &mut Lookups,
        id: RequestId,
    ) -> Result<Option<ServiceRequest>, ServiceError> {
        cached(&mut cache.requests, id, async { Ok(self.ports.requests.get(id).await?) }).await
    }

    async fn mission(&self, cache: &mut Lookups, id: MissionId) -> Result<Option<Mission>, ServiceError> {
        cached(&mut cache.missions, id, async { Ok(self.ports.missions.get(id).await?) }).await
    }

    async fn service_name(
        &self,
        cache: &mut Lookups,
        id: ServiceTypeId,
    ) -> Result<Option<String>, ServiceError> {
        cached(&mut cache.services, id, async { Ok(self.ports.service_types.get(id).await?.map(|s| s.name)) })
            .await
    }

    /// A recipient with their preferences; no address when it is blank.
    async fn person(
        &self,
        id: PrincipalId,
        kind: PrincipalKind,
        email: String,
        language: Language,
    ) -> Result<Person, ServiceError> {
        Ok(Person {
            id,
            kind,
            email: Some(email).filter(|e| !e.trim().is_empty()),
            language,
            preferences: self.ports.notifications.preferences(id).await?,
        })
    }

    /// The citizen `id` as a recipient, in their preferred language.
    async fn citizen(&self, cache: &mut Lookups, id: CitizenId) -> Result<Option<Person>, ServiceError> {
        cached(&mut cache.people, id.as_uuid(), async {
            let Some(citizen) = self.ports.citizens.get(id).await? else { return Ok(None) };
            let language = Language::for_preference(&citizen.preferred_language);
            let principal = PrincipalId(id.as_uuid());
            Ok(Some(self.person(principal, PrincipalKind::Citizen, citizen.email, language).await?))
        })
        .await
    }

    /// The staff member `id` as a recipient, while active (staff write in English).
    async fn staff_member(&self, cache: &mut Lookups, id: StaffId) -> Result<Option<Person>, ServiceError> {
        cached(&mut cache.people, id.as_uuid(), async {
            let Some(member) = self.ports.staff.get(id).await?.filter(|m| m.active) else { return Ok(None) };
            let principal = PrincipalId(id.as_uuid());
            Ok(Some(self.person(principal, PrincipalKind::Staff, member.email, Language::En).await?))
        })
        .await
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
