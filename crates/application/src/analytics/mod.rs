//! Analytics (docs/analytics.md): the overview, services and staff views for admins.
//!
//! A view is read in four steps: the policy decides whose figures the caller sees
//! ([`policy::view`]); the view's time zone follows (the mission's, or UTC for every mission
//! together); the period is parsed against today in that zone and cut into buckets of
//! instants by the domain; the repository counts in one snapshot, taking the instant of
//! the figures marked "now" (`generated_at`) from the clock once its snapshot has started,
//! and [`views`] turns its counts into the figures (rates, backlogs, shares), each by its
//! formula in the docs.

mod views;

#[cfg(test)]
mod tests;

pub use views::{
    AppointmentFigures, MissionLoad, Overview, OverviewPoint, RequestFigures, ServiceFigures, ServicePoint,
    Services, StaffFigures, StaffPoint, StaffView, StageFigures, StagePoint, ViewScope,
};

use crate::ServiceError;
use crate::adapters::Adapters;
use crate::reads::own_writes;
use consular_domain::analytics::{Bucket, Period, buckets, local_date};
use consular_domain::policy::analytics::{self as policy, Reach};
use consular_domain::{Mission, MissionId, Principal, ServiceTypeId};
use consular_ports::{
    AnalyticsQuery, AnalyticsRepository, Clock, MissionRepository, MissionScope, ServiceTypeRepository,
};
use std::sync::Arc;
use time::OffsetDateTime;

/// The zone of the view across missions (docs/analytics.md "Periods, time zones and
/// buckets").
pub const GLOBAL_TIMEZONE: &str = "UTC";

/// What a view is asked for, as the query string gives it (parsed here, so that every
/// failure is reported at once with its pointer).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ViewRequest {
    pub mission_id: Option<MissionId>,
    pub from: Option<String>,
    pub to: Option<String>,
    pub granularity: Option<String>,
    pub service_type_id: Option<ServiceTypeId>,
}

/// The ports the analytics views need.
#[derive(Clone)]
pub struct AnalyticsPorts {
    pub analytics: Arc<dyn AnalyticsRepository>,
    pub missions: Arc<dyn MissionRepository>,
    pub service_types: Arc<dyn ServiceTypeRepository>,
    pub clock: Arc<dyn Clock>,
}

impl<D> From<&Adapters<D>> for AnalyticsPorts
where
    D: AnalyticsRepository + MissionRepository + ServiceTypeRepository + 'static,
{
    fn from(adapters: &Adapters<D>) -> Self {
        let db = &adapters.database;
        AnalyticsPorts {
            analytics: db.clone(),
            missions: db.clone(),
            service_types: db.clone(),
            clock: adapters.clock.clone(),
        }
    }
}

#[derive(Clone)]
pub struct AnalyticsService {
    ports: AnalyticsPorts,
}

/// A resolved request: whose figures, in which zone, over which buckets.
struct Resolved {
    scope: ResolvedScope,
    buckets: Vec<Bucket>,
    query: AnalyticsQuery,
}

/// A [`ViewScope`] but for the instant of its figures, which the repository reads.
struct ResolvedScope {
    mission_id: Option<MissionId>,
    timezone: String,
    period: Period,
    service_type_id: Option<ServiceTypeId>,
}

impl ResolvedScope {
    fn at(self, generated_at: OffsetDateTime) -> ViewScope {
        let ResolvedScope { mission_id, timezone, period, service_type_id } = self;
        ViewScope { mission_id, timezone, period, service_type_id, generated_at }
    }
}

impl AnalyticsService {
    pub fn new(ports: AnalyticsPorts) -> Self {
        AnalyticsService { ports }
    }

    /// Volume, completion, SLA and appointment figures.
    pub async fn overview(&self, actor: &Principal, request: ViewRequest) -> Result<Overview, ServiceError> {
        let resolved = self.resolve(actor, request).await?;
        let figures =
            self.ports.analytics.overview(&resolved.query, &self.ports.clock, own_writes(actor)).await?;
        let scope = resolved.scope.at(figures.generated_at);
        Ok(views::overview(scope, &resolved.buckets, figures))
    }

    /// The overview's figures per service type, with the time spent in each stage.
    pub async fn services(&self, actor: &Principal, request: ViewRequest) -> Result<Services, ServiceError> {
        let resolved = self.resolve(actor, request).await?;
        let figures =
            self.ports.analytics.services(&resolved.query, &self.ports.clock, own_writes(actor)).await?;
        let catalog = self.ports.analytics.service_types().await?;
        let scope = resolved.scope.at(figures.generated_at);
        Ok(views::services(scope, &resolved.buckets, figures, catalog))
    }

    /// Workload and throughput per staff member.
    pub async fn staff(&self, actor: &Principal, request: ViewRequest) -> Result<StaffView, ServiceError> {
        let resolved = self.resolve(actor, request).await?;
        let figures =
            self.ports.analytics.staff(&resolved.query, &self.ports.clock, own_writes(actor)).await?;
        let members = self.ports.analytics.staff_members(resolved.query.missions).await?;
        let scope = resolved.scope.at(figures.generated_at);
        Ok(views::staff(scope, &resolved.buckets, figures.groups, members))
    }

    async fn resolve(&self, actor: &Principal, request: ViewRequest) -> Result<Resolved, ServiceError> {
        let reach = policy::view(actor, request.mission_id)?;
        let mission = match reach {
            Reach::AllMissions => None,
            Reach::Mission(id) => Some(self.mission(id).await?),
        };
        if let Some(service_type) = request.service_type_id {
            self.check_service_type(service_type).await?;
        }
        let timezone = mission.as_ref().map_or(GLOBAL_TIMEZONE, |m| m.timezone.as_str()).to_owned();
        // The day of the call, which the period's defaults and checks are relative to. The
        // figures' own instant is read later, by the repository inside its snapshot.
        let today = local_date(&timezone, self.ports.clock.now()).ok_or_else(|| bad_zone(&timezone))?;
        let period = Period::parse(
            request.from.as_deref(),
            request.to.as_deref(),
            request.granularity.as_deref(),
            today,
        )?;
        let buckets = buckets(&period, &timezone).ok_or_else(|| bad_zone(&timezone))?;
        let query = AnalyticsQuery {
            missions: mission.as_ref().map_or(MissionScope::All, |m| MissionScope::One(m.id)),
            service_type: request.service_type_id,
            boundaries: boundaries(&buckets),
        };
        let scope = ResolvedScope {
            mission_id: mission.map(|m| m.id),
            timezone,
            period,
            service_type_id: request.service_type_id,
        };
        Ok(Resolved { scope, buckets, query })
    }

    /// A `service_type_id` must name a service type of the catalog (an inactive one too:
    /// its past figures are still figures).
    async fn check_service_type(&self, id: ServiceTypeId) -> Result<(), ServiceError> {
        if self.ports.service_types.get(id).await?.is_some() {
            return Ok(());
        }
        Err(ServiceError::unknown("/service_type_id", "no such service type"))
    }

    /// The mission a global admin named: an unknown id is a bad parameter (there is no
    /// figure to show for it), not an empty view.
    async fn mission(&self, id: MissionId) -> Result<Mission, ServiceError> {
        self.ports
            .missions
            .get(id)
            .await?
            .ok_or_else(|| ServiceError::unknown("/mission_id", "no such mission"))
    }
}

/// The buckets' boundaries as the repository takes them: each bucket's start, then the
/// last one's end. The repository clips them to the instant of its snapshot (a range ending
/// today is counted up to it; nothing after it exists yet, and the statuses of `by_status`
/// are taken there).
fn boundaries(buckets: &[Bucket]) -> Vec<OffsetDateTime> {
    buckets.iter().map(|b| b.starts_at).chain(buckets.last().map(|b| b.ends_at)).collect()
}

/// A mission whose stored zone the zone database does not know: the missions area
/// validates zones, so this is a broken row, not a bad request.
fn bad_zone(timezone: &str) -> ServiceError {
    ServiceError::Internal(format!("unknown time zone `{timezone}`"))
}
