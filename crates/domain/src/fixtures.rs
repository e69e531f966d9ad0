//! Well-formed entities for tests, one base value each (compiled for this crate's tests
//! and, behind the `fixtures` feature, for the crates that enable it in their
//! dev-dependencies; never in the `consular` binary).
//!
//! A test takes the base value and changes what it is about with struct update syntax,
//! `ServiceRequest { status, ..fixtures::service_request(mission, citizen, &service_type, now) }`,
//! so that it names the fields it cares about and nothing else: a new field of an entity
//! is written in its domain constructor (`NewMission::into_mission`,
//! `ServiceRequest::submit`, ...), which these go through, or here when an entity has no
//! constructor from plain values (a slot, a notification, an email), and no test has to
//! change. Every value passes the domain's validation; ids are fresh, times are `now`.

use crate::notification::{Details, Email, EmailStatus, Language, Notification, NotificationKind};
use crate::{
    Address, Citizen, CitizenId, Cutoffs, EmailId, HistoryEntry, Mission, MissionId, Money, NewCitizen,
    NewMission, NewServiceType, NewStaffMember, NotificationId, PrincipalId, PrincipalKind,
    RegistrationStatus, RequestStatus, ServiceRequest, ServiceType, ServiceTypeId, Slot, SlotId, StaffId,
    StaffMember, Stage, Subject,
};
use time::macros::date;
use time::{Duration, OffsetDateTime};

/// The Embassy in Paris (`fr-paris`, Europe/Paris), as created.
pub fn new_mission() -> NewMission {
    NewMission {
        code: "fr-paris".into(),
        name: "Embassy in Paris".into(),
        country: "FR".into(),
        city: "Paris".into(),
        timezone: "Europe/Paris".into(),
    }
}

/// `new_mission()` stored at `now`, version 1.
pub fn mission(now: OffsetDateTime) -> Mission {
    new_mission().into_mission(MissionId::new(), now)
}

/// An active visa service (`visa`) in two stages, "Check" and "Print", due in 10 days,
/// free, needing no document.
pub fn new_service_type() -> NewServiceType {
    NewServiceType {
        code: "visa".into(),
        name: "Visa".into(),
        description: String::new(),
        fee: Money { amount_minor: 0, currency: "EUR".into() },
        sla_days: 10,
        retention_days: crate::DEFAULT_RETENTION_DAYS,
        required_documents: vec![],
        stages: vec![
            Stage { name: "Check".into(), description: String::new() },
            Stage { name: "Print".into(), description: String::new() },
        ],
        active: true,
    }
}

/// `new_service_type()` stored at `now`, version 1.
pub fn service_type(now: OffsetDateTime) -> ServiceType {
    new_service_type().into_service_type(ServiceTypeId::new(), now)
}

/// Alice Martin of `mission`, French, living in Ottawa, registration pending.
pub fn new_citizen(mission: MissionId) -> NewCitizen {
    NewCitizen {
        mission_id: mission,
        given_name: "Alice".into(),
        family_name: "Martin".into(),
        date_of_birth: date!(1990 - 04 - 12),
        place_of_birth: "Lyon".into(),
        nationality: "FR".into(),
        passport_number: "19AB12345".into(),
        passport_expiry: date!(2031 - 04 - 11),
        email: "alice@example.org".into(),
        phone: "+33612345678".into(),
        address: Address {
            line1: "1 Main Street".into(),
            line2: None,
            city: "Ottawa".into(),
            region: None,
            postal_code: None,
            country: "CA".into(),
        },
        emergency_contact: None,
        preferred_language: "fr".into(),
        registration_status: RegistrationStatus::Pending,
    }
}

/// `new_citizen(mission)` registered at `now`, version 1.
pub fn citizen(mission: MissionId, now: OffsetDateTime) -> Citizen {
    new_citizen(mission).into_citizen(CitizenId::new(), now)
}

/// Bob Lee, an officer of `mission` assigned to no service type.
pub fn new_staff_member(mission: MissionId) -> NewStaffMember {
    NewStaffMember {
        mission_id: mission,
        name: "Bob Lee".into(),
        email: "bob@mission.example".into(),
        job_title: "Officer".into(),
        service_type_ids: vec![],
    }
}

/// `new_staff_member(mission)` created at `now`: active, version 1.
pub fn staff_member(mission: MissionId, now: OffsetDateTime) -> StaffMember {
    new_staff_member(mission).into_staff_member(StaffId::new(), now)
}

/// A request of citizen `citizen` of `mission` for `service_type`, as the citizen submits
/// it at `now` (`ServiceRequest::submit`): `submitted` at the first of the type's stages,
/// due `sla_days` later, unassigned, version 1.
pub fn service_request(
    mission: MissionId,
    citizen: CitizenId,
    service_type: &ServiceType,
    now: OffsetDateTime,
) -> ServiceRequest {
    let owner = Citizen { id: citizen, ..self::citizen(mission, now) };
    let actor = Subject { kind: PrincipalKind::Citizen, id: PrincipalId(citizen.0) };
    ServiceRequest::submit(
        &crate::NewRequest::for_service(service_type.id),
        &owner,
        service_type,
        None,
        actor,
        now,
    )
    .0
}

/// A history entry moving a request to `to_status` at stage `to_stage` at `at`, by the
/// system (no actor), from nowhere recorded and without a reason.
pub fn history_entry(at: OffsetDateTime, to_status: RequestStatus, to_stage: usize) -> HistoryEntry {
    HistoryEntry {
        at,
        actor: None,
        from_status: None,
        to_status,
        from_stage: None,
        to_stage,
        reason: None,
        on_behalf_of: None,
    }
}

/// An open slot of `mission` from `starts_at`, 30 minutes long, with one free seat, the
/// default cut-offs and no service type; created at `now`, version 1.
pub fn slot(mission: MissionId, starts_at: OffsetDateTime, now: OffsetDateTime) -> Slot {
    Slot {
        id: SlotId::new(),
        mission_id: mission,
        starts_at,
        ends_at: starts_at + Duration::minutes(30),
        capacity: 1,
        booked: 0,
        service_types: vec![],
        open: true,
        cutoffs: Cutoffs::default(),
        release_at: None,
        version: 1,
        created_at: now,
        updated_at: now,
    }
}

/// An unread "request submitted" notification for `recipient` (a principal of `kind`),
/// of no mission or request, created at `now`.
pub fn notification(recipient: PrincipalId, kind: PrincipalKind, now: OffsetDateTime) -> Notification {
    Notification {
        id: NotificationId::new(),
        recipient_id: recipient,
        recipient_kind: kind,
        event_id: uuid::Uuid::now_v7(),
        kind: NotificationKind::RequestSubmitted,
        mission_id: None,
        request_id: None,
        on_behalf_of: None,
        details: Details::default(),
        created_at: now,
        read_at: None,
    }
}

/// A pending email of `kind` in English to `to`, of a notification without details, made
/// at `now` and due at once.
pub fn email(to: &str, kind: NotificationKind, now: OffsetDateTime) -> Email {
    Email {
        id: EmailId::new(),
        notification_id: NotificationId::new(),
        to: to.to_owned(),
        language: Language::En,
        kind,
        details: Details::default(),
        about: None,
        status: EmailStatus::Pending,
        attempts: 0,
        next_attempt_at: Some(now),
        last_error: None,
        created_at: now,
        updated_at: now,
        delivered_at: None,
    }
}

/// A guardianship over every service, from 2026-01-01 with no end, made by a staff
/// member (a guardian fits a dependant of any age).
pub fn representation() -> crate::Representation {
    use crate::representation::{RepresentationKind, ServiceScope};
    crate::Representation {
        id: crate::RepresentationId::new(),
        dependant_id: CitizenId::new(),
        representative_id: CitizenId::new(),
        mission_id: MissionId::new(),
        kind: RepresentationKind::Guardian,
        services: ServiceScope::All,
        valid_from: date!(2026 - 01 - 01),
        valid_until: None,
        evidence_document_id: crate::DocumentId::new(),
        created_by: Subject { kind: PrincipalKind::Staff, id: PrincipalId::new() },
        created_at: OffsetDateTime::UNIX_EPOCH,
        ended_at: None,
        ended_by: None,
        end_reason: None,
    }
}

/// A citizen's token of `mission` acting for `dependant` in every service
/// (`On-Behalf-Of`), as the representation use case resolves it.
pub fn acting_for(mission: MissionId, dependant: CitizenId) -> crate::Principal {
    crate::Principal {
        subject: Subject { kind: PrincipalKind::Citizen, id: PrincipalId::new() },
        client_id: crate::ClientId::new(),
        mission: Some(mission),
        scopes: crate::ScopeSet::only(crate::Scope::Citizen),
        address: None,
        acting_for: Some(crate::Mandate {
            dependant,
            mission,
            services: crate::ServiceScope::All,
            representations: vec![crate::RepresentationId::new()],
        }),
    }
}
