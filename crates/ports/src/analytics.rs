//! Analytics: the counts, sums and duration summaries the three admin views are made of
//! (docs/analytics.md), computed by the database over the base tables (or rollups that
//! match them exactly). The use cases turn them into rates and views; every formula is in
//! docs/analytics.md and every piece that needs no I/O in `consular_domain::analytics`.

use crate::{Clock, Consistency, RepoError};
use async_trait::async_trait;
use consular_domain::analytics::DurationSummary;
use consular_domain::{MissionId, RequestStatus, ServiceType, ServiceTypeId, StaffMember};
use std::sync::Arc;
use time::OffsetDateTime;

/// Which missions' rows are counted. Every count, denominator and duration list is
/// filtered by it before anything is added up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MissionScope {
    All,
    One(MissionId),
}

impl MissionScope {
    /// The one mission, or `None` for all of them.
    pub fn mission(self) -> Option<MissionId> {
        match self {
            MissionScope::All => None,
            MissionScope::One(mission) => Some(mission),
        }
    }
}

/// What a view asks the database for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AnalyticsQuery {
    pub missions: MissionScope,
    /// Only requests (and spells) of this service type; appointments ignore it.
    pub service_type: Option<ServiceTypeId>,
    /// The buckets' boundaries as the period gives them: `n + 1` instants in ascending
    /// order, bucket `i` being `[boundaries[i], boundaries[i + 1])`. The repository clips
    /// them to the instant its snapshot is taken at, `generated_at` (the last bucket of a
    /// range ending today ends there), so the last clipped boundary is the instant `E`
    /// the statuses of `by_status` are taken at; a call at the very instant a bucket
    /// starts clips that bucket to nothing (two equal boundaries: an empty bucket).
    pub boundaries: Vec<OffsetDateTime>,
}

impl AnalyticsQuery {
    /// The number of buckets.
    pub fn bucket_count(&self) -> usize {
        self.boundaries.len().saturating_sub(1)
    }
}

/// Request counts by status, in the order of [`RequestStatus::ALL`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct StatusCounts(pub [u64; 7]);

impl StatusCounts {
    pub fn get(&self, status: RequestStatus) -> u64 {
        self.0[Self::index(status)]
    }

    pub fn add(&mut self, status: RequestStatus, count: u64) {
        self.0[Self::index(status)] += count;
    }

    pub fn total(&self) -> u64 {
        self.0.iter().sum()
    }

    fn index(status: RequestStatus) -> usize {
        RequestStatus::ALL.iter().position(|s| *s == status).unwrap_or_default()
    }
}

/// The request figures of one bucket, or of the whole range.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct RequestCounts {
    /// Requests with `submitted_at` in the interval.
    pub submitted: u64,
    /// The same requests by their status at `E` (the last boundary): `status_at(E)`.
    pub by_status: StatusCounts,
    /// Requests with `closed_at` in the interval, by final status.
    pub completed: u64,
    pub rejected: u64,
    pub cancelled: u64,
    /// Of the closed ones, those closed on time (`closed_at ≤ sla_due_at`).
    pub on_time: u64,
    /// `seconds_between(submitted_at, closed_at)` of the closed ones.
    pub processing: DurationSummary,
}

impl RequestCounts {
    pub fn closed(&self) -> u64 {
        self.completed + self.rejected + self.cancelled
    }
}

/// The figures of one group of requests. The services view has one group per service type
/// with a non-zero figure, the staff view one per (mission, current assignee) with one.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct RequestGroup {
    /// The staff view: the mission of the group. `None` otherwise.
    pub mission: Option<MissionId>,
    /// The services view: the service type id; the staff view: the current assignee's
    /// staff id (`None` for the mission's unassigned requests); the overview: `None`.
    pub key: Option<uuid::Uuid>,
    /// The whole range (`[boundaries[0], boundaries[n])`); its medians are over the range.
    pub range: RequestCounts,
    /// One per bucket, in order.
    pub buckets: Vec<RequestCounts>,
    /// Requests open at `boundaries[0]` (`open_at`): the backlog before the first bucket.
    pub open_at_start: u64,
    /// Now: requests open at `generated_at` (`open_at`: submitted before it, and not
    /// closed or closed at or after it).
    pub open_now: u64,
    /// Now: of those, `sla_due_at < generated_at`.
    pub overdue_now: u64,
}

/// The stage spells of one stage (by position) of one service type that ended in the range
/// and in each bucket, `seconds_between(entered_at, left_at)` (`stage_spells`).
#[derive(Debug, Clone, PartialEq)]
pub struct StageGroup {
    pub service_type: ServiceTypeId,
    /// The 0-based position of the stage (as `current_stage`).
    pub stage: u32,
    pub range: DurationSummary,
    pub buckets: Vec<DurationSummary>,
}

/// Seats and attendance of the appointments of one bucket (or the range).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SeatCounts {
    /// Σ `booked` over the open slots starting in the interval.
    pub booked: u64,
    /// Σ `capacity` over the same slots.
    pub capacity: u64,
    /// Appointments starting in the interval that were attended / not shown.
    pub attended: u64,
    pub no_show: u64,
}

impl std::ops::AddAssign for SeatCounts {
    fn add_assign(&mut self, other: SeatCounts) {
        self.booked += other.booked;
        self.capacity += other.capacity;
        self.attended += other.attended;
        self.no_show += other.no_show;
    }
}

/// The overview's raw figures, read in one snapshot.
#[derive(Debug, Clone, PartialEq)]
pub struct OverviewFigures {
    /// The instant the figures marked "now" are taken at (see [`AnalyticsRepository`]).
    pub generated_at: OffsetDateTime,
    pub requests: RequestGroup,
    /// One per bucket.
    pub appointments: Vec<SeatCounts>,
}

/// The services view's raw figures, read in one snapshot.
#[derive(Debug, Clone, PartialEq)]
pub struct ServiceFigures {
    /// The instant the figures marked "now" are taken at (see [`AnalyticsRepository`]).
    pub generated_at: OffsetDateTime,
    /// One per service type with a non-zero figure.
    pub requests: Vec<RequestGroup>,
    /// One per (service type, stage) with at least one spell in the range.
    pub stages: Vec<StageGroup>,
}

/// The staff view's raw figures, read in one snapshot.
#[derive(Debug, Clone, PartialEq)]
pub struct StaffGroups {
    /// The instant the figures marked "now" are taken at (see [`AnalyticsRepository`]).
    pub generated_at: OffsetDateTime,
    /// One per (mission, current assignee) with a non-zero figure; unassigned requests
    /// included (`key: None`), for the missions' open totals.
    pub groups: Vec<RequestGroup>,
}

/// The analytics reads. Each method reads in one snapshot (a read-only transaction), so
/// that its figures agree with each other under concurrent writes, and takes the instant
/// of its figures marked "now", `generated_at`, from `clock` **once that snapshot has
/// started**: every write the snapshot sees was stamped before it. Every figure "now" is
/// then computed *at* `generated_at` from the requests' instants (open at it, past their
/// SLA at it), like the backlog at the end of the range, so that the two agree whatever
/// the snapshot holds (docs/analytics.md "How the figures are computed"). The three views
/// are tolerant: a read replica may serve them ([`Consistency`]).
#[cfg_attr(feature = "mock", mockall::automock)]
#[async_trait]
pub trait AnalyticsRepository: Send + Sync {
    /// Overview: requests grouped by nothing, and appointments.
    async fn overview(
        &self,
        query: &AnalyticsQuery,
        clock: &Arc<dyn Clock>,
        consistency: Consistency,
    ) -> Result<OverviewFigures, RepoError>;
    /// Services: requests grouped by service type, and stage spells.
    async fn services(
        &self,
        query: &AnalyticsQuery,
        clock: &Arc<dyn Clock>,
        consistency: Consistency,
    ) -> Result<ServiceFigures, RepoError>;
    /// Staff: requests grouped by (mission, assignee).
    async fn staff(
        &self,
        query: &AnalyticsQuery,
        clock: &Arc<dyn Clock>,
        consistency: Consistency,
    ) -> Result<StaffGroups, RepoError>;
    /// Every service type of the catalog, inactive ones too, by code.
    async fn service_types(&self) -> Result<Vec<ServiceType>, RepoError>;
    /// Every staff member of the missions in scope, inactive ones too, by id.
    async fn staff_members(&self, missions: MissionScope) -> Result<Vec<StaffMember>, RepoError>;
}
