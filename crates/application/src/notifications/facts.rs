//! What the worker looks up about an outbox event before the domain decides what it
//! produces: the request it is about, the person who hears it (by the domain's
//! `audience` table: only that person is looked up) and, for a citizen with
//! representatives, those of them the domain says hear it too, and the details the
//! notification may carry. One [`Lookups`] serves a batch, so a request, a person or a
//! mission that several events share is read once.

use super::service::NotificationService;
use crate::ServiceError;
use consular_domain::analytics::local_date;
use consular_domain::notification::{
    Audience, Details, EventFacts, Language, Person, audience, representatives_hearing,
};
use consular_domain::representation::is_minor;
use consular_domain::{
    AppointmentId, Citizen, CitizenId, DomainEvent, LocalSlot, Mission, MissionId, PageRequest, PrincipalId,
    PrincipalKind, RegistrationStatus, Representation, RequestId, ServiceRequest, ServiceTypeId, StaffId,
};
use consular_ports::OutboxEvent;
use std::collections::HashMap;
use time::OffsetDateTime;
use time::macros::format_description;
use uuid::Uuid;

/// What a batch has looked up so far (`None`: looked up, not there).
#[derive(Default)]
pub(super) struct Lookups {
    requests: HashMap<RequestId, Option<ServiceRequest>>,
    people: HashMap<Uuid, Option<Person>>,
    citizens: HashMap<CitizenId, Option<Citizen>>,
    missions: HashMap<MissionId, Option<Mission>>,
    services: HashMap<ServiceTypeId, Option<String>>,
    /// A citizen's representations not ended (`Some`: `cached` stores what it finds).
    representations: HashMap<CitizenId, Option<Vec<Representation>>>,
    /// An appointment's service type.
    appointment_services: HashMap<AppointmentId, Option<ServiceTypeId>>,
}

/// Who wrote a `message.posted`.
fn author(event: &DomainEvent) -> Option<PrincipalKind> {
    match event {
        DomainEvent::MessagePosted { author_kind, .. } => Some(*author_kind),
        _ => None,
    }
}

/// The mission the event names (the events of a request reach theirs through it).
fn named_mission(event: &DomainEvent) -> Option<MissionId> {
    match event {
        DomainEvent::RequestSubmitted { mission_id, .. } => Some(*mission_id),
        _ => event.appointment().map(|a| a.mission_id),
    }
}

/// The citizen the event names (the others are their request's citizen's).
fn named_citizen(event: &DomainEvent) -> Option<CitizenId> {
    match event {
        DomainEvent::RequestSubmitted { citizen_id, .. } | DomainEvent::MessagePosted { citizen_id, .. } => {
            Some(*citizen_id)
        }
        _ => event.document().map(|d| d.citizen_id).or_else(|| event.appointment().map(|a| a.citizen_id)),
    }
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

    /// The citizen `id`, unless erased: an erased citizen hears nothing, and nobody hears
    /// of them (docs/data-protection.md "Retention and erasure").
    async fn citizen_record(
        &self,
        cache: &mut Lookups,
        id: CitizenId,
    ) -> Result<Option<Citizen>, ServiceError> {
        cached(&mut cache.citizens, id, async {
            let found = self.ports.citizens.get(id).await?;
            Ok(found.filter(|c| c.registration_status != RegistrationStatus::Erased))
        })
        .await
    }

    /// The citizen `id` as a recipient, in their preferred language.
    async fn citizen(&self, cache: &mut Lookups, id: CitizenId) -> Result<Option<Person>, ServiceError> {
        if let Some(found) = cache.people.get(&id.as_uuid()) {
            return Ok(found.clone());
        }
        let person = match self.citizen_record(cache, id).await? {
            Some(citizen) => {
                let language = Language::for_preference(&citizen.preferred_language);
                let principal = PrincipalId(id.as_uuid());
                Some(self.person(principal, PrincipalKind::Citizen, citizen.email, language).await?)
            }
            None => None,
        };
        cache.people.insert(id.as_uuid(), person.clone());
        Ok(person)
    }

    /// The representations of `dependant` not ended, every page of them (a handful).
    async fn representations(
        &self,
        cache: &mut Lookups,
        dependant: CitizenId,
    ) -> Result<Vec<Representation>, ServiceError> {
        let found = cached(&mut cache.representations, dependant, async {
            let mut open = Vec::new();
            let mut page = PageRequest { limit: consular_domain::page::MAX_LIMIT, after: None };
            loop {
                let found = self.ports.representations.for_dependant(dependant, page).await?;
                open.extend(found.items.into_iter().filter(|r| r.ended_at.is_none()));
                match found.next_after {
                    Some(after) => page = PageRequest { after: Some(after), ..page },
                    None => return Ok(Some(open)),
                }
            }
        })
        .await?;
        Ok(found.unwrap_or_default())
    }

    /// The service an event is about: an appointment's service type, else its request's
    /// (a document's request's); `None` for a document of no request.
    async fn service_of(
        &self,
        cache: &mut Lookups,
        event: &DomainEvent,
        request: Option<&ServiceRequest>,
    ) -> Result<Option<ServiceTypeId>, ServiceError> {
        let Some(appointment) = event.appointment() else {
            return Ok(request.map(|r| r.service_type_id));
        };
        let id = appointment.appointment_id;
        cached(&mut cache.appointment_services, id, async {
            Ok(self.ports.appointments.get(id).await?.map(|a| a.service_type_id))
        })
        .await
    }

    /// Whether the citizen `dependant` is a minor at `now`, their given name (which the
    /// representatives' emails name), and those of their representatives who hear of
    /// `event` (the domain's `representatives_hearing`), as recipients. A citizen without
    /// representations costs one read.
    async fn represented(
        &self,
        cache: &mut Lookups,
        facts: &mut EventFacts,
        dependant: CitizenId,
        event: &DomainEvent,
        request: Option<&ServiceRequest>,
        now: OffsetDateTime,
    ) -> Result<(), ServiceError> {
        let representations = self.representations(cache, dependant).await?;
        if representations.is_empty() {
            return Ok(());
        }
        let Some(citizen) = self.citizen_record(cache, dependant).await? else { return Ok(()) };
        let Some(mission) = self.mission(cache, citizen.mission_id).await? else { return Ok(()) };
        let today = local_date(&mission.timezone, now).ok_or_else(|| {
            ServiceError::Internal(format!("mission {} has no valid time zone", mission.id))
        })?;
        facts.citizen_minor = is_minor(citizen.date_of_birth, today);
        facts.citizen_name = Some(citizen.given_name.clone());
        let service = self.service_of(cache, event, request).await?;
        for representative in
            representatives_hearing(&representations, service, now, today, citizen.date_of_birth)
        {
            if let Some(person) = self.citizen(cache, representative).await? {
                facts.representatives.push(person);
            }
        }
        Ok(())
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

    /// The facts of `event`, decoded once into its `DomainEvent`; None for an event this
    /// version cannot read (logged and passed over: a newer node wrote a kind or a field
    /// this one does not know, or the kind was removed).
    pub(super) async fn facts(
        &self,
        cache: &mut Lookups,
        event: &OutboxEvent,
        now: OffsetDateTime,
    ) -> Result<Option<EventFacts>, ServiceError> {
        let raised = match event.event() {
            Ok(raised) => raised,
            Err(error) => {
                tracing::warn!(event = %event.id, kind = %event.kind, %error, "an outbox event this version cannot read is passed over");
                return Ok(None);
            }
        };
        let kind = raised.kind();
        let author = author(&raised);
        let mut facts = EventFacts {
            event_id: event.id,
            kind,
            author,
            citizen: None,
            citizen_name: None,
            citizen_minor: false,
            representatives: Vec::new(),
            assignee: None,
            mission_id: named_mission(&raised),
            request_id: raised.request_id(),
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
                let citizen = named_citizen(&raised).or(request.as_ref().map(|r| r.citizen_id));
                if let Some(citizen) = citizen {
                    facts.citizen = self.citizen(cache, citizen).await?;
                    if facts.citizen.is_some() {
                        self.represented(cache, &mut facts, citizen, &raised, request.as_ref(), now).await?;
                    }
                }
            }
            Audience::Assignee => {
                let assignee = match &raised {
                    DomainEvent::RequestAssigned { assignee_id, .. } => *assignee_id,
                    _ => request.as_ref().and_then(|r| r.assignee_id),
                };
                if let Some(assignee) = assignee {
                    facts.assignee = self.staff_member(cache, assignee).await?;
                }
            }
        }
        facts.details = self.details(cache, &raised, request.as_ref(), facts.mission_id).await?;
        Ok(Some(facts))
    }

    /// What the notification says: only fields the recipient may read through the API.
    async fn details(
        &self,
        cache: &mut Lookups,
        event: &DomainEvent,
        request: Option<&ServiceRequest>,
        mission_id: Option<MissionId>,
    ) -> Result<Details, ServiceError> {
        use DomainEvent as E;
        let mut details = Details::default();
        if let Some(request) = request {
            details.service = self.service_name(cache, request.service_type_id).await?;
        }
        match event {
            E::RequestStatusChanged { to, reason, .. } => {
                details.status = Some(to.as_str().to_owned());
                details.reason = reason.clone();
            }
            E::RequestStageAdvanced { stage, .. } => details.stage = stage.clone(),
            E::DocumentVerified { document } | E::DocumentRejected { document, .. } => {
                details.document_id = Some(document.document_id.as_uuid());
                details.document_kind = Some(document.kind.clone());
                if let E::DocumentRejected { reason, .. } = event {
                    details.reason = Some(reason.clone());
                }
            }
            E::AppointmentBooked { appointment }
            | E::AppointmentRescheduled { appointment, .. }
            | E::AppointmentCancelled { appointment, .. }
            | E::AppointmentCancelledByMission { appointment }
            | E::AppointmentReminder { appointment } => {
                details.appointment_id = Some(appointment.appointment_id.as_uuid());
                details.starts_at = Some(appointment.starts_at);
                if let Some(mission_id) = mission_id
                    && let Some(mission) = self.mission(cache, mission_id).await?
                {
                    details.local_time = local_time(appointment.starts_at, &mission.timezone);
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
