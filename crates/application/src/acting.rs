//! What acting needs beyond the policy's tables: whether a citizen's own token is a
//! minor's, who acts only through a parent or guardian (docs/representation.md "Minors").
//! The acting use cases (submit, upload, book, reschedule, message, cancel, delete) ask
//! it before they change anything.

use crate::ServiceError;
use consular_domain::analytics::local_date;
use consular_domain::policy::citizens as policy;
use consular_domain::representation::is_minor;
use consular_domain::{CitizenId, Principal, PrincipalKind};
use consular_ports::{CitizenRepository, MissionRepository};
use time::OffsetDateTime;

/// Refuses (403) a minor's own token: the caller's citizen born less than 18 years before
/// `now`'s date in their mission's time zone. Staff, admins and a representative acting
/// for someone are not asked, and cost no read.
pub(crate) async fn refuse_minor_alone(
    citizens: &dyn CitizenRepository,
    missions: &dyn MissionRepository,
    actor: &Principal,
    now: OffsetDateTime,
) -> Result<(), ServiceError> {
    if actor.subject.kind != PrincipalKind::Citizen || actor.acting_for.is_some() {
        return Ok(());
    }
    // A token naming no citizen of a mission is the area's own checks' to refuse.
    let Some(citizen) = citizens.get(CitizenId(actor.subject.id.as_uuid())).await? else { return Ok(()) };
    let Some(mission) = missions.get(citizen.mission_id).await? else { return Ok(()) };
    let today = local_date(&mission.timezone, now)
        .ok_or_else(|| ServiceError::Internal(format!("mission {} has no valid time zone", mission.id)))?;
    Ok(policy::act_alone(actor, is_minor(citizen.date_of_birth, today))?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixtures::principal;
    use consular_domain::{MissionId, fixtures};
    use consular_ports::{MockCitizenRepository, MockMissionRepository};
    use time::macros::{date, datetime};

    async fn refused(born: time::Date, actor: &Principal, now: OffsetDateTime) -> bool {
        let mission = crate::fixtures::mission(MissionId::new());
        let citizen = consular_domain::Citizen {
            id: CitizenId(actor.subject.id.as_uuid()),
            date_of_birth: born,
            ..fixtures::citizen(mission.id, now)
        };
        let mut citizens = MockCitizenRepository::new();
        citizens.expect_get().returning(move |_| Ok(Some(citizen.clone())));
        let mut missions = MockMissionRepository::new();
        missions.expect_get().returning(move |_| Ok(Some(mission.clone())));
        refuse_minor_alone(&citizens, &missions, actor, now).await.is_err()
    }

    #[tokio::test]
    async fn a_minor_is_judged_on_the_date_in_their_missions_zone() {
        let me = principal(PrincipalKind::Citizen, uuid::Uuid::now_v7(), "citizen", Some(MissionId::new()));
        // 22:30 UTC on the eve of the 18th birthday is already the birthday in Paris.
        let eve = datetime!(2026-05-09 22:30 UTC);
        assert!(!refused(date!(2008 - 05 - 10), &me, eve).await, "18 in Paris");
        assert!(refused(date!(2008 - 05 - 11), &me, eve).await, "17 in Paris");
    }

    #[tokio::test]
    async fn staff_and_representatives_cost_no_read() {
        let staff = principal(PrincipalKind::Staff, uuid::Uuid::now_v7(), "staff", Some(MissionId::new()));
        let (citizens, missions) = (MockCitizenRepository::new(), MockMissionRepository::new());
        let now = datetime!(2026-05-09 12:00 UTC);
        assert!(refuse_minor_alone(&citizens, &missions, &staff, now).await.is_ok());
    }
}
