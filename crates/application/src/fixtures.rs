//! Test fixtures shared by the use-case tests: principals and well-formed entities.

use consular_domain::{
    Address, ClientId, Mission, MissionId, Money, NewCitizen, Principal, PrincipalId, PrincipalKind,
    RegistrationStatus, ScopeSet, ServiceType, ServiceTypeId, Stage, Subject,
};
use consular_ports::MockMissionRepository;
use time::OffsetDateTime;
use time::macros::date;
use uuid::Uuid;

/// A principal of `kind` with principal id `id`, holding `scopes` (space separated).
pub fn principal(kind: PrincipalKind, id: Uuid, scopes: &str, mission: Option<MissionId>) -> Principal {
    Principal {
        subject: Subject { kind, id: PrincipalId(id) },
        client_id: ClientId::new(),
        mission,
        scopes: ScopeSet::parse(scopes).unwrap(),
        address: None,
    }
}

/// An admin-kind principal with `scopes` (global when `mission` is `None`).
pub fn admin_with(scopes: &str, mission: Option<MissionId>) -> Principal {
    principal(PrincipalKind::Admin, Uuid::now_v7(), scopes, mission)
}

pub fn mission(id: MissionId) -> Mission {
    Mission {
        id,
        code: "fr-paris".into(),
        name: "Embassy in Paris".into(),
        country: "FR".into(),
        city: "Paris".into(),
        timezone: "Europe/Paris".into(),
        version: 1,
        created_at: OffsetDateTime::UNIX_EPOCH,
        updated_at: OffsetDateTime::UNIX_EPOCH,
    }
}

/// A mission repository that knows every id it is asked for.
pub fn any_mission() -> MockMissionRepository {
    let mut missions = MockMissionRepository::new();
    missions.expect_get().returning(|id| Ok(Some(mission(id))));
    missions
}

/// A valid citizen of `mission`, registration pending.
pub fn alice(mission: MissionId) -> NewCitizen {
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

/// A stored service type with two stages and a 10-day SLA.
pub fn service_type(active: bool) -> ServiceType {
    ServiceType {
        id: ServiceTypeId::new(),
        code: "visa".into(),
        name: "Visa".into(),
        description: String::new(),
        fee: Money { amount_minor: 0, currency: "EUR".into() },
        sla_days: 10,
        required_documents: vec![],
        stages: vec![
            Stage { name: "Check".into(), description: String::new() },
            Stage { name: "Print".into(), description: String::new() },
        ],
        active,
        version: 1,
        created_at: OffsetDateTime::UNIX_EPOCH,
        updated_at: OffsetDateTime::UNIX_EPOCH,
    }
}
