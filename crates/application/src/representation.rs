//! Representations (docs/representation.md): who may act for whom. The mission's staff
//! create one after checking its evidence and end it; the dependant and the mission read
//! them; a representative lists the dependants they act for now, and acts for one by
//! naming them (`On-Behalf-Of`): [`RepresentationService::mandate`] resolves it at each
//! call (docs/representation.md "Acting").

use crate::ServiceError;
use crate::access_log::{AccessRecorder, Whose};
use crate::adapters::Adapters;
use crate::error::OrNotFound;
use consular_domain::analytics::local_date;
use consular_domain::policy::representation as policy;
use consular_domain::representation::{NewRepresentation, end_reason, is_minor};
use consular_domain::{
    AccessEntry, AccessedData, AuditAction, AuditRecord, Citizen, CitizenId, Mandate, MissionId, Page,
    PageRequest, Principal, RegistrationStatus, Representation, RepresentationId, ServiceScope,
    ValidationErrors,
};
use consular_ports::{
    CitizenRepository, Clock, DocumentRepository, MissionRepository, ONE_REPRESENTATION, RepoError,
    RepresentationRepository, ServiceTypeRepository, WriteMeta,
};
use std::sync::Arc;
use time::{Date, OffsetDateTime};

/// The audit entries' resource type.
pub const RESOURCE: &str = "representation";

/// The ports the representation use cases need.
#[derive(Clone)]
pub struct RepresentationPorts {
    pub representations: Arc<dyn RepresentationRepository>,
    /// The dependant, the representative, and their dates of birth.
    pub citizens: Arc<dyn CitizenRepository>,
    /// The evidence.
    pub documents: Arc<dyn DocumentRepository>,
    pub service_types: Arc<dyn ServiceTypeRepository>,
    /// The mission's time zone: the dates of a representation are its local dates.
    pub missions: Arc<dyn MissionRepository>,
    /// The node's access log recorder (`Services::new`): a representative listing their
    /// dependants reads their names.
    pub access: AccessRecorder,
    pub clock: Arc<dyn Clock>,
}

impl<D> From<&Adapters<D>> for RepresentationPorts
where
    D: RepresentationRepository
        + CitizenRepository
        + DocumentRepository
        + ServiceTypeRepository
        + MissionRepository
        + 'static,
{
    fn from(adapters: &Adapters<D>) -> Self {
        let db = &adapters.database;
        RepresentationPorts {
            representations: db.clone(),
            citizens: db.clone(),
            documents: db.clone(),
            service_types: db.clone(),
            missions: db.clone(),
            access: adapters.access.clone(),
            clock: adapters.clock.clone(),
        }
    }
}

/// A representation as its reader sees it: whether it is in force now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RepresentationView {
    pub representation: Representation,
    pub in_force: bool,
}

/// A dependant the caller acts for now, with the representation they act under.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Dependant {
    pub citizen: Citizen,
    pub representation: RepresentationView,
}

#[derive(Clone)]
pub struct RepresentationService {
    ports: RepresentationPorts,
}

impl RepresentationService {
    pub fn new(ports: RepresentationPorts) -> Self {
        RepresentationService { ports }
    }

    /// Now, and today's date in `mission`'s time zone.
    async fn today(&self, mission: MissionId) -> Result<(OffsetDateTime, Date), ServiceError> {
        let now = self.ports.clock.now();
        let mission = self.ports.missions.get(mission).await.or_not_found()?;
        let today = local_date(&mission.timezone, now).ok_or_else(|| {
            ServiceError::Internal(format!("mission {} has no valid time zone", mission.id))
        })?;
        Ok((now, today))
    }

    /// The dependant `whose` names, if the caller may read their representations.
    async fn readable(&self, actor: &Principal, whose: Whose) -> Result<Citizen, ServiceError> {
        let id = match whose {
            Whose::Me => policy::own(actor)?.0,
            Whose::Citizen(id) => id,
        };
        let citizen = self.ports.citizens.get(id).await.or_not_found()?;
        policy::read(actor, citizen.id, citizen.mission_id)?;
        Ok(citizen)
    }

    /// Citizen `id`, if the caller may create and end their representations.
    async fn manageable(&self, actor: &Principal, id: CitizenId) -> Result<Citizen, ServiceError> {
        let citizen = self.ports.citizens.get(id).await.or_not_found()?;
        policy::manage(actor, citizen.mission_id)?;
        Ok(citizen)
    }

    /// Creates a representation of `dependant` (staff and admins of their mission). Every
    /// failing field is reported at once; an open one with the same representative and
    /// kind is `RepresentationExists` naming it, whichever of two requests at once loses.
    pub async fn create(
        &self,
        actor: &Principal,
        dependant: CitizenId,
        input: NewRepresentation,
    ) -> Result<RepresentationView, ServiceError> {
        let dependant = self.manageable(actor, dependant).await?;
        let (now, today) = self.today(dependant.mission_id).await?;
        let mut errors = ValidationErrors::new();
        errors.extend(input.validate());
        self.check_references(&dependant, &input, today, &mut errors).await?;
        if !input.kind.fits(is_minor(dependant.date_of_birth, today)) {
            errors.add(
                "/kind",
                "age_mismatch",
                "a parent represents a minor and an authorised representative an adult (the dependant's \
                 age today)",
            );
        }
        errors.0.sort_by(|a, b| a.pointer.cmp(&b.pointer));
        errors.into_result()?;
        let representation =
            input.into_representation(dependant.id, dependant.mission_id, actor.subject, now);
        let meta = WriteMeta {
            audit: vec![AuditRecord::new(
                Some(actor),
                now,
                AuditAction::Created,
                RESOURCE,
                representation.id.as_uuid(),
                created_fields(&representation),
            )],
            ..WriteMeta::default()
        };
        match self.ports.representations.insert(&representation, &meta).await {
            Ok(()) => {
                let in_force = representation.in_force(now, today, dependant.date_of_birth);
                Ok(RepresentationView { representation, in_force })
            }
            Err(RepoError::Duplicate { constraint }) if constraint == ONE_REPRESENTATION => {
                let open = self
                    .ports
                    .representations
                    .between(representation.representative_id, dependant.id)
                    .await?;
                match open.into_iter().find(|r| r.kind == representation.kind) {
                    Some(existing) => Err(ServiceError::RepresentationExists {
                        existing: existing.id,
                        detail: format!(
                            "representation {} of this dependant by this representative as {} is not ended",
                            existing.id, existing.kind
                        ),
                    }),
                    // The other one was ended in between: the caller may simply ask again.
                    None => {
                        Err(ServiceError::Unavailable("a representation like this one just ended".to_owned()))
                    }
                }
            }
            Err(e) => Err(e.into()),
        }
    }

    /// The references of `input` that need reading: the representative (another citizen
    /// of the dependant's mission, not erased, an adult on `today`), the evidence (a live document of the
    /// dependant's) and the service types (existing ones). What the caller may not see
    /// answers like what does not exist.
    async fn check_references(
        &self,
        dependant: &Citizen,
        input: &NewRepresentation,
        today: Date,
        errors: &mut ValidationErrors,
    ) -> Result<(), ServiceError> {
        if input.representative_id == dependant.id {
            errors.add("/representative_id", "same_as_dependant", "a citizen does not represent themself");
        } else {
            let representative = self.ports.citizens.get(input.representative_id).await?;
            let fits = representative.as_ref().is_some_and(|r| {
                r.mission_id == dependant.mission_id && r.registration_status != RegistrationStatus::Erased
            });
            match representative {
                _ if !fits => {
                    errors.unknown("/representative_id", "no such citizen in the dependant's mission")
                }
                // Nobody becomes younger: checked once, here, it holds for as long as the
                // representation does.
                Some(r) if is_minor(r.date_of_birth, today) => errors.add(
                    "/representative_id",
                    "minor",
                    "a representative is an adult (a minor acts through a parent or guardian)",
                ),
                _ => {}
            }
        }
        let evidence = self.ports.documents.get(input.evidence_document_id).await?;
        if !evidence.is_some_and(|d| d.citizen_id == dependant.id && d.deleted_at.is_none()) {
            errors.unknown("/evidence_document_id", "no such document of the dependant's");
        }
        if let Some(ids) = input.service_type_ids.as_deref().filter(|ids| !ids.is_empty()) {
            let found = self.ports.service_types.get_many(ids).await?;
            for (index, id) in ids.iter().enumerate() {
                if !found.iter().any(|s| s.id == *id) {
                    errors.unknown(&format!("/service_type_ids/{index}"), "no such service type");
                }
            }
        }
        Ok(())
    }

    /// The representations of the dependant `whose` names, ended ones included, newest
    /// first (the dependant, staff and admins of their mission).
    pub async fn list(
        &self,
        actor: &Principal,
        whose: Whose,
        page: PageRequest,
    ) -> Result<Page<RepresentationView>, ServiceError> {
        let dependant = self.readable(actor, whose).await?;
        let (now, today) = self.today(dependant.mission_id).await?;
        let page = self.ports.representations.for_dependant(dependant.id, page).await?;
        Ok(page.map(|r| view(r, now, today, &dependant)))
    }

    /// Representation `id` of the dependant `whose` names.
    pub async fn get(
        &self,
        actor: &Principal,
        whose: Whose,
        id: RepresentationId,
    ) -> Result<RepresentationView, ServiceError> {
        let dependant = self.readable(actor, whose).await?;
        let representation = self.of_dependant(&dependant, id).await?;
        let (now, today) = self.today(dependant.mission_id).await?;
        Ok(view(representation, now, today, &dependant))
    }

    async fn of_dependant(
        &self,
        dependant: &Citizen,
        id: RepresentationId,
    ) -> Result<Representation, ServiceError> {
        let representation = self.ports.representations.get(id).await.or_not_found()?;
        if representation.dependant_id == dependant.id {
            Ok(representation)
        } else {
            Err(ServiceError::NotFound)
        }
    }

    /// Ends representation `id` of `dependant` for `reason` (staff and admins of their
    /// mission); it is kept. Ending an ended one is the conflict `representation_ended`.
    pub async fn end(
        &self,
        actor: &Principal,
        dependant: CitizenId,
        id: RepresentationId,
        reason: String,
    ) -> Result<RepresentationView, ServiceError> {
        let dependant = self.manageable(actor, dependant).await?;
        let representation = self.of_dependant(&dependant, id).await?;
        let reason = end_reason(reason)?;
        if representation.ended_at.is_some() {
            return Err(already_ended(id));
        }
        let (now, today) = self.today(dependant.mission_id).await?;
        let meta = WriteMeta {
            audit: vec![AuditRecord::new(
                Some(actor),
                now,
                AuditAction::Ended,
                RESOURCE,
                id.as_uuid(),
                vec!["ended_at".to_owned(), "ended_by".to_owned(), "end_reason".to_owned()],
            )],
            ..WriteMeta::default()
        };
        match self.ports.representations.end(id, now, actor.subject, &reason, &meta).await? {
            Some(ended) => Ok(view(ended, now, today, &dependant)),
            // Another request ended it first.
            None => Err(already_ended(id)),
        }
    }

    /// The mandate under which `actor` (a citizen's token) acts for `dependant` at this
    /// moment: the representations between the two that are in force now, read from the
    /// primary at each call (never cached, so an ending stops the next call on every
    /// node), their services united. None in force, or a dependant of another mission or
    /// erased: 404, as for a citizen the caller cannot see. A token that is not a
    /// citizen's is 403 `insufficient_scope`.
    pub async fn mandate(&self, actor: &Principal, dependant: CitizenId) -> Result<Mandate, ServiceError> {
        let (me, mission) = policy::own(actor)?;
        let facts = self.ports.representations.acting(me, dependant).await?;
        let Some(facts) = facts.filter(|f| f.representations.iter().any(|r| r.mission_id == mission)) else {
            return Err(ServiceError::NotFound);
        };
        let now = self.ports.clock.now();
        let today = local_date(&facts.timezone, now)
            .ok_or_else(|| ServiceError::Internal(format!("mission {mission} has no valid time zone")))?;
        let in_force = facts
            .representations
            .iter()
            .filter(|r| r.mission_id == mission && r.in_force(now, today, facts.dependant_born));
        Mandate::of(in_force).ok_or(ServiceError::NotFound)
    }

    /// The representations the caller (a citizen's token) holds that are in force now,
    /// with their dependants, oldest first; not paged (a handful). Each dependant's names
    /// read this way are an access-log entry of the dependant's.
    pub async fn dependants(&self, actor: &Principal) -> Result<Vec<Dependant>, ServiceError> {
        let (me, mission) = policy::own(actor)?;
        // A token naming a citizen of another mission has no record here.
        let own = self.ports.citizens.get(me).await?;
        if own.is_none_or(|c| c.mission_id != mission) {
            return Err(ServiceError::NotFound);
        }
        let held = self.ports.representations.held_by(me).await?;
        let held: Vec<_> = held.into_iter().filter(|r| r.mission_id == mission).collect();
        if held.is_empty() {
            return Ok(Vec::new());
        }
        let (now, today) = self.today(mission).await?;
        let mut dependants = Vec::with_capacity(held.len());
        for representation in held {
            let Some(citizen) = self.ports.citizens.get(representation.dependant_id).await? else {
                continue;
            };
            if representation.in_force(now, today, citizen.date_of_birth) {
                let representation = RepresentationView { representation, in_force: true };
                dependants.push(Dependant { citizen, representation });
            }
        }
        let reads = dependants.iter().filter_map(|d| {
            let id = d.citizen.id;
            AccessEntry::of_read(actor, id, AccessedData::Profile, id.as_uuid(), now)
        });
        self.ports.access.record(reads)?;
        Ok(dependants)
    }
}

fn view(
    representation: Representation,
    now: OffsetDateTime,
    today: Date,
    dependant: &Citizen,
) -> RepresentationView {
    let in_force = representation.in_force(now, today, dependant.date_of_birth);
    RepresentationView { representation, in_force }
}

fn already_ended(id: RepresentationId) -> ServiceError {
    ServiceError::conflict("representation_ended", format!("representation {id} is already ended"))
}

/// The fields a creation set, as its audit entry names them.
fn created_fields(r: &Representation) -> Vec<String> {
    let mut fields = vec!["dependant_id", "representative_id", "kind", "valid_from", "evidence_document_id"];
    if matches!(r.services, ServiceScope::Only(_)) {
        fields.push("service_type_ids");
    }
    if r.valid_until.is_some() {
        fields.push("valid_until");
    }
    fields.into_iter().map(str::to_owned).collect()
}

#[cfg(test)]
mod tests;
