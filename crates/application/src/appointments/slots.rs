//! Submitting availability (docs/appointments.md "Idempotent by content", "Changing a
//! slot"): the submission is expanded to UTC slots in the mission's zone, matched by
//! content with the stored slots, planned slot by slot, and stored in one transaction
//! with the cancellations it asks for. A plan overtaken by a concurrent booking or
//! submission is planned again.

use super::refusals::refused;
use super::service::{AppointmentService, RESOURCE, SLOT_RESOURCE, audit, change};
use crate::ServiceError;
use consular_domain::appointment::{plan_slot, schedule_release};
use consular_domain::policy::appointments as policy;
use consular_domain::{
    Appointment, AppointmentId, AppointmentStatus, AuditAction, Availability, FieldError, MissionId,
    Principal, Slot, SlotConflict, SlotKey, ValidationErrors,
};
use consular_ports::{AppointmentFilter, RepoError, SlotUpsert, StartPageRequest, WriteMeta};
use std::collections::{BTreeMap, HashMap};
use time::OffsetDateTime;

/// The most slots one submission makes (docs/appointments.md).
const MAX_SLOTS: usize = 10_000;

/// How often a submission is planned again after losing a race.
const PLAN_RETRIES: usize = 5;

/// One part of a submission and where it sits in the request (`/schedule`,
/// `/slots/3`), for field errors.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SlotPart {
    pub pointer: String,
    pub availability: Availability,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SlotSubmission {
    pub mission_id: MissionId,
    /// Cancel the bookings a lower capacity or a closed slot no longer holds, instead of
    /// refusing the submission.
    pub cancel_bookings: bool,
    /// When every slot the submission makes or updates opens to availability and booking
    /// (docs/appointments.md "Scheduled release"); `None`: at once. Part of the submitted
    /// configuration: submitting without it releases the slots.
    pub release_at: Option<OffsetDateTime>,
    pub parts: Vec<SlotPart>,
}

/// What a submission did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SlotReport {
    pub created: usize,
    pub updated: usize,
    pub unchanged: usize,
    pub cancelled_appointments: Vec<AppointmentId>,
    /// The release the submission's slots have (UTC, to the microsecond); `None`:
    /// released.
    pub release_at: Option<OffsetDateTime>,
}

/// The request's name for a field the domain names after its own types.
fn rename(part: &str, domain: &str) -> String {
    let explicit = part.starts_with("/slots");
    let field = match domain {
        "/first_day" => "/from".to_owned(),
        "/last_day" => "/to".to_owned(),
        "/service_types" => "/service_type_ids".to_owned(),
        "/slot_minutes" if explicit => "/minutes".to_owned(),
        "/booking_cutoff_minutes" => return "/cutoffs/booking_minutes".to_owned(),
        "/cancellation_cutoff_minutes" => return "/cutoffs/cancellation_minutes".to_owned(),
        "/" => return "/".to_owned(),
        other if explicit && other.starts_with("/starts") => "/starts_at".to_owned(),
        other => match other.strip_suffix("/closes") {
            Some(hours) => format!("{hours}/to"),
            None => other.replace("/opens", "/from"),
        },
    };
    format!("{part}{field}")
}

impl AppointmentService {
    /// Creates or updates the availability of a mission (its admins, global admins).
    pub async fn submit_slots(
        &self,
        actor: &Principal,
        submission: SlotSubmission,
    ) -> Result<SlotReport, ServiceError> {
        policy::manage_slots(actor, submission.mission_id)?;
        let Some(mission) = self.ports.missions.get(submission.mission_id).await? else {
            return Err(ServiceError::unknown("/mission_id", "no such mission"));
        };
        let now = self.ports.clock.now();
        let mut errors = ValidationErrors::new();
        let mut wanted: BTreeMap<SlotKey, Slot> = BTreeMap::new();
        for part in &submission.parts {
            match part.availability.expand(mission.id, &mission.timezone, now) {
                Ok(slots) => {
                    for slot in slots {
                        wanted.entry(slot.key()).or_insert(slot);
                    }
                }
                Err(found) => {
                    for e in found.0 {
                        let pointer = rename(&part.pointer, &e.pointer);
                        errors.0.push(FieldError { pointer, ..e });
                    }
                }
            }
        }
        if wanted.len() > MAX_SLOTS {
            errors.add("/", "too_many_slots", "one submission makes at most 10000 slots");
        }
        let mut wanted: Vec<Slot> = wanted.into_values().collect();
        let release_at = match schedule_release(&mut wanted, submission.release_at) {
            Ok(at) => at,
            Err(refused) => {
                errors.extend(Err(refused));
                None
            }
        };
        errors.into_result()?;
        let mut tries = 0;
        loop {
            match self.plan_and_store(actor, &wanted, submission.cancel_bookings).await {
                Ok(report) => return Ok(SlotReport { release_at, ..report }),
                Err(ServiceError::PreconditionFailed)
                | Err(ServiceError::Conflict { code: "duplicate", .. })
                    if tries < PLAN_RETRIES =>
                {
                    tries += 1;
                }
                result => return result,
            }
        }
    }

    async fn plan_and_store(
        &self,
        actor: &Principal,
        wanted: &[Slot],
        cancel_bookings: bool,
    ) -> Result<SlotReport, ServiceError> {
        let (Some(first), Some(last)) = (wanted.first(), wanted.last()) else {
            return Ok(SlotReport::default());
        };
        let repo = &self.ports.appointments;
        let now = self.ports.clock.now();
        let stored = repo
            .slots_between(first.mission_id, first.starts_at, last.starts_at + time::Duration::seconds(1))
            .await?;
        let stored: HashMap<SlotKey, Slot> = stored.into_iter().map(|s| (s.key(), s)).collect();
        let mut report = SlotReport::default();
        let mut upsert = SlotUpsert::default();
        let mut conflicts: Vec<SlotConflict> = Vec::new();
        let mut meta = WriteMeta::default();
        for slot in wanted {
            let existing = stored.get(&slot.key());
            let seats = if slot.open { slot.capacity } else { 0 };
            let active = match existing {
                Some(e) if e.booked > seats && cancel_bookings => self.active_bookings(e).await?,
                _ => Vec::new(),
            };
            let plan = match plan_slot(existing, slot.clone(), &active, cancel_bookings, now) {
                Ok(plan) => plan,
                Err(conflict) => {
                    conflicts.push(conflict);
                    continue;
                }
            };
            for id in &plan.cancel {
                let Some(found) = active.iter().find(|a| a.id == *id) else { continue };
                let mut appointment = found.clone();
                let cancelled = appointment.cancel_by_mission(now).map_err(refused)?;
                meta.audit.push(audit(
                    actor,
                    now,
                    AuditAction::StatusChanged,
                    RESOURCE,
                    appointment.id.as_uuid(),
                    &["status", "cancelled_by"],
                ));
                let (event, entry) = change(&cancelled, &appointment, actor, now)?;
                meta.events.push(event);
                report.cancelled_appointments.push(appointment.id);
                upsert.cancelled.push((appointment, found.version, entry));
            }
            match (plan.expected_version, plan.changed) {
                (None, _) => report.created += 1,
                (Some(_), true) => report.updated += 1,
                (Some(_), false) => {
                    report.unchanged += 1;
                    continue;
                }
            }
            let action =
                if plan.expected_version.is_none() { AuditAction::Created } else { AuditAction::Updated };
            meta.audit.push(audit(
                actor,
                now,
                action,
                SLOT_RESOURCE,
                plan.slot.id.as_uuid(),
                &["capacity", "open", "service_types", "cutoffs", "release_at"],
            ));
            upsert.slots.push((plan.slot, plan.expected_version));
        }
        if !conflicts.is_empty() {
            return Err(ServiceError::SlotsHaveBookings(conflicts));
        }
        if !upsert.slots.is_empty() || !upsert.cancelled.is_empty() {
            match repo.upsert_slots(&upsert, &meta).await {
                Ok(()) => self.availability.invalidate(first.mission_id),
                Err(RepoError::NotFound) => return Err(ServiceError::PreconditionFailed),
                Err(e) => return Err(e.into()),
            }
        }
        Ok(report)
    }

    async fn active_bookings(&self, slot: &Slot) -> Result<Vec<Appointment>, ServiceError> {
        let filter = AppointmentFilter {
            slot_id: Some(slot.id),
            statuses: vec![AppointmentStatus::Booked],
            ..AppointmentFilter::default()
        };
        let repo = &self.ports.appointments;
        let mut all = Vec::new();
        let mut after = None;
        loop {
            let page = repo.list(filter.clone(), StartPageRequest { limit: 100, after }).await?;
            all.extend(page.items);
            match page.next_after {
                Some(next) => after = Some(next),
                None => return Ok(all),
            }
        }
    }
}
