//! The views' figures from the repository's counts: rates, backlogs and shares, each by
//! its formula in docs/analytics.md. Nothing here reads or rounds; a rate whose
//! denominator is 0 is `None` (null), never 0.

use consular_domain::analytics::{Bucket, DurationSummary, Period, rate};
use consular_domain::{MissionId, ServiceType, ServiceTypeId, StaffId, StaffMember};
use consular_ports::{
    OverviewFigures, RequestCounts, RequestGroup, SeatCounts, ServiceFigures as RawServiceFigures,
    StageGroup, StatusCounts,
};
use std::collections::BTreeMap;
use time::OffsetDateTime;
use uuid::Uuid;

/// Whose figures, in which zone, over which days.
#[derive(Debug, Clone, PartialEq)]
pub struct ViewScope {
    /// `None`: every mission together.
    pub mission_id: Option<MissionId>,
    /// The zone days and buckets are counted in: the mission's, or UTC.
    pub timezone: String,
    pub period: Period,
    pub service_type_id: Option<ServiceTypeId>,
    /// The instant the figures marked "now" were taken at.
    pub generated_at: OffsetDateTime,
}

/// The request figures of one bucket or of the whole range.
#[derive(Debug, Clone, PartialEq)]
pub struct RequestFigures {
    pub submitted: u64,
    /// The submitted requests by their status at the end of the range (or now).
    pub by_status: StatusCounts,
    pub closed: u64,
    pub completed: u64,
    pub rejected: u64,
    pub cancelled: u64,
    pub completion_rate: Option<f64>,
    pub rejection_rate: Option<f64>,
    pub cancellation_rate: Option<f64>,
    pub processing_median_seconds: Option<f64>,
    pub processing_p90_seconds: Option<f64>,
    pub sla_compliance: Option<f64>,
    /// Requests open at the end of the interval (or now, for today's).
    pub backlog: u64,
}

impl RequestFigures {
    fn of(counts: &RequestCounts, backlog: u64) -> RequestFigures {
        let closed = counts.closed();
        RequestFigures {
            submitted: counts.submitted,
            by_status: counts.by_status,
            closed,
            completed: counts.completed,
            rejected: counts.rejected,
            cancelled: counts.cancelled,
            completion_rate: rate(counts.completed, closed),
            rejection_rate: rate(counts.rejected, closed),
            cancellation_rate: rate(counts.cancelled, closed),
            processing_median_seconds: counts.processing.median_seconds,
            processing_p90_seconds: counts.processing.p90_seconds,
            sla_compliance: rate(counts.on_time, closed),
            backlog,
        }
    }
}

/// Seats and attendance of one bucket or of the range.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AppointmentFigures {
    pub booked: u64,
    pub capacity: u64,
    /// `booked / capacity` over the open slots.
    pub utilisation: Option<f64>,
    pub attended: u64,
    pub no_show: u64,
    /// `no_show / (attended + no_show)`.
    pub no_show_rate: Option<f64>,
}

impl AppointmentFigures {
    fn of(seats: SeatCounts) -> AppointmentFigures {
        AppointmentFigures {
            booked: seats.booked,
            capacity: seats.capacity,
            utilisation: rate(seats.booked, seats.capacity),
            attended: seats.attended,
            no_show: seats.no_show,
            no_show_rate: rate(seats.no_show, seats.attended + seats.no_show),
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct OverviewPoint {
    pub bucket: Bucket,
    pub requests: RequestFigures,
    pub appointments: AppointmentFigures,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Overview {
    pub scope: ViewScope,
    pub totals: RequestFigures,
    /// Now: open requests, and those of them past their SLA.
    pub open: u64,
    pub open_overdue: u64,
    pub appointments: AppointmentFigures,
    pub series: Vec<OverviewPoint>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct ServicePoint {
    pub bucket: Bucket,
    pub requests: RequestFigures,
}

/// The stage spells of one bucket.
#[derive(Debug, Clone, PartialEq)]
pub struct StagePoint {
    pub bucket: Bucket,
    pub spells: u64,
    pub median_seconds: Option<f64>,
}

/// The time spent in one stage (by position) of a service type.
#[derive(Debug, Clone, PartialEq)]
pub struct StageFigures {
    /// 0-based, as a request's `current_stage`.
    pub position: u32,
    /// The service type's current stage at that position; `None` when it has fewer now.
    pub name: Option<String>,
    pub spells: u64,
    pub median_seconds: Option<f64>,
    pub series: Vec<StagePoint>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct ServiceFigures {
    pub service_type_id: ServiceTypeId,
    pub code: String,
    pub name: String,
    pub active: bool,
    pub totals: RequestFigures,
    pub open: u64,
    pub open_overdue: u64,
    pub series: Vec<ServicePoint>,
    pub stages: Vec<StageFigures>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Services {
    pub scope: ViewScope,
    pub services: Vec<ServiceFigures>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct StaffPoint {
    pub bucket: Bucket,
    pub closed: u64,
    pub handling_median_seconds: Option<f64>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct StaffFigures {
    pub staff_id: StaffId,
    pub mission_id: MissionId,
    pub name: String,
    pub active: bool,
    /// Now: open requests assigned to the member, and those of them past their SLA.
    pub open_assigned: u64,
    pub overdue: u64,
    /// Now: `open_assigned / open requests of the member's mission` (unassigned included).
    pub share_of_open_load: Option<f64>,
    pub closed: u64,
    pub handling_median_seconds: Option<f64>,
    pub series: Vec<StaffPoint>,
}

/// Now: a mission's open requests, and those nobody is assigned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MissionLoad {
    pub mission_id: MissionId,
    pub open: u64,
    pub unassigned_open: u64,
}

#[derive(Debug, Clone, PartialEq)]
pub struct StaffView {
    pub scope: ViewScope,
    pub missions: Vec<MissionLoad>,
    pub staff: Vec<StaffFigures>,
}

/// The figures of a group over the range and per bucket, backlogs carried forward from
/// the one at the start: `backlog(end of b) = backlog(end of b−1) + submitted(b) − closed(b)`.
fn request_series(group: &RequestGroup) -> (RequestFigures, Vec<RequestFigures>) {
    let mut backlog = group.open_at_start;
    let series: Vec<RequestFigures> = group
        .buckets
        .iter()
        .map(|counts| {
            backlog = (backlog + counts.submitted).saturating_sub(counts.closed());
            RequestFigures::of(counts, backlog)
        })
        .collect();
    (RequestFigures::of(&group.range, backlog), series)
}

/// A group's bucket `i`, or zeros when the repository sent fewer (it never should).
fn point<T: Clone + Default>(items: &[T], i: usize) -> T {
    items.get(i).cloned().unwrap_or_default()
}

pub(super) fn overview(scope: ViewScope, buckets: &[Bucket], figures: OverviewFigures) -> Overview {
    let (totals, series) = request_series(&figures.requests);
    let mut seats = SeatCounts::default();
    for bucket in &figures.appointments {
        seats += *bucket;
    }
    Overview {
        scope,
        totals,
        open: figures.requests.open_now,
        open_overdue: figures.requests.overdue_now,
        appointments: AppointmentFigures::of(seats),
        series: buckets
            .iter()
            .zip(series)
            .enumerate()
            .map(|(i, (bucket, requests))| OverviewPoint {
                bucket: bucket.clone(),
                requests,
                appointments: AppointmentFigures::of(point(&figures.appointments, i)),
            })
            .collect(),
    }
}

/// Every active service type (or the one asked for), and inactive ones with a figure; by
/// code.
pub(super) fn services(
    scope: ViewScope,
    buckets: &[Bucket],
    figures: RawServiceFigures,
    catalog: Vec<ServiceType>,
) -> Services {
    let mut groups: BTreeMap<Uuid, RequestGroup> =
        figures.requests.into_iter().filter_map(|g| Some((g.key?, g))).collect();
    let mut stages: BTreeMap<ServiceTypeId, Vec<StageGroup>> = BTreeMap::new();
    for stage in figures.stages {
        stages.entry(stage.service_type).or_default().push(stage);
    }
    let mut services: Vec<ServiceFigures> = catalog
        .into_iter()
        .filter(|service| scope.service_type_id.is_none_or(|asked| asked == service.id))
        .filter_map(|service| {
            let group = groups.remove(&service.id.as_uuid());
            let stages = stages.remove(&service.id).unwrap_or_default();
            if !service.active && group.is_none() && stages.is_empty() && scope.service_type_id.is_none() {
                return None;
            }
            let group = group.unwrap_or_else(|| RequestGroup {
                buckets: vec![RequestCounts::default(); buckets.len()],
                ..RequestGroup::default()
            });
            let (totals, series) = request_series(&group);
            Some(ServiceFigures {
                service_type_id: service.id,
                totals,
                open: group.open_now,
                open_overdue: group.overdue_now,
                series: buckets
                    .iter()
                    .zip(series)
                    .map(|(bucket, requests)| ServicePoint { bucket: bucket.clone(), requests })
                    .collect(),
                stages: stage_figures(buckets, &service, stages),
                code: service.code,
                name: service.name,
                active: service.active,
            })
        })
        .collect();
    services.sort_by(|a, b| a.code.cmp(&b.code));
    Services { scope, services }
}

fn stage_figures(
    buckets: &[Bucket],
    service: &ServiceType,
    mut stages: Vec<StageGroup>,
) -> Vec<StageFigures> {
    stages.sort_by_key(|s| s.stage);
    stages
        .into_iter()
        .map(|stage| StageFigures {
            position: stage.stage,
            name: service.stages.get(stage.stage as usize).map(|s| s.name.clone()),
            spells: stage.range.count,
            median_seconds: stage.range.median_seconds,
            series: buckets
                .iter()
                .enumerate()
                .map(|(i, bucket)| {
                    let spells: DurationSummary = point(&stage.buckets, i);
                    StagePoint {
                        bucket: bucket.clone(),
                        spells: spells.count,
                        median_seconds: spells.median_seconds,
                    }
                })
                .collect(),
        })
        .collect()
}

/// Every active member of the scope, and inactive ones with a figure; by mission, then
/// name.
pub(super) fn staff(
    scope: ViewScope,
    buckets: &[Bucket],
    groups: Vec<RequestGroup>,
    members: Vec<StaffMember>,
) -> StaffView {
    let mut loads: BTreeMap<MissionId, MissionLoad> = BTreeMap::new();
    if let Some(mission_id) = scope.mission_id {
        loads.insert(mission_id, MissionLoad { mission_id, open: 0, unassigned_open: 0 });
    }
    let mut by_member: BTreeMap<Uuid, RequestGroup> = BTreeMap::new();
    for group in groups {
        let Some(mission_id) = group.mission else { continue };
        let load = loads.entry(mission_id).or_insert(MissionLoad { mission_id, open: 0, unassigned_open: 0 });
        load.open += group.open_now;
        match group.key {
            None => load.unassigned_open += group.open_now,
            Some(member) => {
                by_member.insert(member, group);
            }
        }
    }
    let mut staff: Vec<StaffFigures> = members
        .into_iter()
        .filter_map(|member| {
            let group = by_member.remove(&member.id.as_uuid());
            if !member.active && group.is_none() {
                return None;
            }
            let group = group.unwrap_or_default();
            let mission_open = loads.get(&member.mission_id).map_or(0, |load| load.open);
            Some(StaffFigures {
                staff_id: member.id,
                mission_id: member.mission_id,
                open_assigned: group.open_now,
                overdue: group.overdue_now,
                share_of_open_load: rate(group.open_now, mission_open),
                closed: group.range.closed(),
                handling_median_seconds: group.range.processing.median_seconds,
                series: buckets
                    .iter()
                    .enumerate()
                    .map(|(i, bucket)| {
                        let counts: RequestCounts = point(&group.buckets, i);
                        StaffPoint {
                            bucket: bucket.clone(),
                            closed: counts.closed(),
                            handling_median_seconds: counts.processing.median_seconds,
                        }
                    })
                    .collect(),
                name: member.name,
                active: member.active,
            })
        })
        .collect();
    staff.sort_by(|a, b| (a.mission_id, &a.name, a.staff_id).cmp(&(b.mission_id, &b.name, b.staff_id)));
    StaffView { scope, missions: loads.into_values().collect(), staff }
}
