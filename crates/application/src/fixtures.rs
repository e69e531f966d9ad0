//! Test fixtures shared by the use-case tests: principals, and the domain's base entities
//! (`consular_domain::fixtures`) as these tests use them.

use consular_domain::fixtures;
use consular_domain::{
    ClientId, Mission, MissionId, NewCitizen, Principal, PrincipalId, PrincipalKind, ScopeSet, ServiceType,
    Subject,
};
use consular_ports::{MockAccessLogRepository, MockMissionRepository};
use time::OffsetDateTime;
use uuid::Uuid;

/// A principal of `kind` with principal id `id`, holding `scopes` (space separated).
pub fn principal(kind: PrincipalKind, id: Uuid, scopes: &str, mission: Option<MissionId>) -> Principal {
    Principal {
        subject: Subject { kind, id: PrincipalId(id) },
        client_id: ClientId::new(),
        mission,
        scopes: ScopeSet::parse(scopes).unwrap(),
        address: None,
        acting_for: None,
    }
}

/// An admin-kind principal with `scopes` (global when `mission` is `None`).
pub fn admin_with(scopes: &str, mission: Option<MissionId>) -> Principal {
    principal(PrincipalKind::Admin, Uuid::now_v7(), scopes, mission)
}

/// The domain's base mission (`fr-paris`) under id `id`.
pub fn mission(id: MissionId) -> Mission {
    Mission { id, ..fixtures::mission(OffsetDateTime::UNIX_EPOCH) }
}

/// An access log recorder whose log stores every entry (the tests of the use cases that
/// record reads; `access_log/tests.rs` tests the recorder itself).
pub fn access_recorder() -> crate::access_log::AccessRecorder {
    let mut log = MockAccessLogRepository::new();
    log.expect_append().returning(|_| Ok(()));
    crate::access_log::AccessRecorder::new(std::sync::Arc::new(log))
}

/// A mission repository that knows every id it is asked for.
pub fn any_mission() -> MockMissionRepository {
    let mut missions = MockMissionRepository::new();
    missions.expect_get().returning(|id| Ok(Some(mission(id))));
    missions
}

/// A valid citizen of `mission`, registration pending.
pub fn alice(mission: MissionId) -> NewCitizen {
    fixtures::new_citizen(mission)
}

/// A stored service type with two stages and a 10-day SLA.
pub fn service_type(active: bool) -> ServiceType {
    ServiceType { active, ..fixtures::service_type(OffsetDateTime::UNIX_EPOCH) }
}
