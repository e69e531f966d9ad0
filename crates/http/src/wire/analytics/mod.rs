//! The wire of `/api/v1/analytics`: the views as JSON (the overview, the services view,
//! the staff view), their parameters, and the problem these operations document; `csv`
//! renders the same views as CSV. Every figure is defined in docs/analytics.md.

pub mod csv;

use crate::wire::common::{closed_set, iso_date, problem_response};
use consular_application::analytics::{
    AppointmentFigures, Overview, RequestFigures, ServiceFigures, Services, StaffFigures, StaffView,
    StageFigures, ViewRequest, ViewScope,
};
use consular_domain::analytics::{Bucket, Granularity};
use consular_domain::{MissionId, RequestStatus, ServiceTypeId};
use serde::{Deserialize, Serialize};
use time::{Date, OffsetDateTime};
use utoipa::{IntoParams, ToSchema};
use uuid::Uuid;

#[derive(Debug, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct AnalyticsParams {
    /// Global admins: one mission's figures, in its time zone (default: every mission, in
    /// UTC). Mission admins: their own mission only (another one is 403).
    pub mission_id: Option<Uuid>,
    /// The first day, `YYYY-MM-DD` in the view's time zone (default: 29 days before `to`).
    #[param(value_type = Option<String>, format = Date)]
    pub from: Option<String>,
    /// The last day, included (default: today in the view's time zone); not in the future.
    #[param(value_type = Option<String>, format = Date)]
    pub to: Option<String>,
    /// The buckets of the series: `day` (default; at most 366 days), `week` (ISO) or `month`.
    #[param(pattern = "^(day|week|month)$")]
    pub granularity: Option<String>,
    /// Only the requests of this service type (appointments are not split by type).
    pub service_type_id: Option<Uuid>,
}

impl From<AnalyticsParams> for ViewRequest {
    fn from(p: AnalyticsParams) -> Self {
        ViewRequest {
            mission_id: p.mission_id.map(MissionId),
            from: p.from,
            to: p.to,
            granularity: p.granularity,
            service_type_id: p.service_type_id.map(ServiceTypeId),
        }
    }
}

closed_set!(GranularityName from Granularity, "The length of the buckets of a series: a day, an ISO week or a month.");

/// Whose figures, in which zone, over which days.
#[derive(Debug, Serialize, ToSchema)]
pub struct ScopeBody {
    /// null: every mission together.
    pub mission_id: Option<Uuid>,
    /// The IANA zone days are counted in: the mission's, or `UTC` across missions.
    pub timezone: String,
    #[serde(with = "iso_date")]
    #[schema(value_type = String, format = Date)]
    pub from: Date,
    #[serde(with = "iso_date")]
    #[schema(value_type = String, format = Date)]
    pub to: Date,
    #[schema(value_type = GranularityName)]
    pub granularity: String,
    pub service_type_id: Option<Uuid>,
    /// The instant the figures marked "now" (`open`, `open_overdue`, loads) were taken at.
    #[serde(with = "time::serde::rfc3339")]
    #[schema(value_type = String, format = DateTime)]
    pub generated_at: OffsetDateTime,
}

impl From<&ViewScope> for ScopeBody {
    fn from(s: &ViewScope) -> Self {
        ScopeBody {
            mission_id: s.mission_id.map(|m| m.as_uuid()),
            timezone: s.timezone.clone(),
            from: s.period.from(),
            to: s.period.to(),
            granularity: s.period.granularity().as_str().to_owned(),
            service_type_id: s.service_type_id.map(|t| t.as_uuid()),
            generated_at: s.generated_at,
        }
    }
}

/// A bucket of a series: whole local days, clipped to the range.
#[derive(Debug, Serialize, ToSchema)]
pub struct BucketBody {
    /// `2026-03-29` (day), `2026-W13` (ISO week) or `2026-03` (month).
    pub label: String,
    #[serde(with = "iso_date")]
    #[schema(value_type = String, format = Date)]
    pub first_day: Date,
    #[serde(with = "iso_date")]
    #[schema(value_type = String, format = Date)]
    pub last_day: Date,
    /// The bucket's instants are `[starts_at, ends_at)`.
    #[serde(with = "time::serde::rfc3339")]
    #[schema(value_type = String, format = DateTime)]
    pub starts_at: OffsetDateTime,
    #[serde(with = "time::serde::rfc3339")]
    #[schema(value_type = String, format = DateTime)]
    pub ends_at: OffsetDateTime,
}

impl From<&Bucket> for BucketBody {
    fn from(b: &Bucket) -> Self {
        BucketBody {
            label: b.label.clone(),
            first_day: b.first_day,
            last_day: b.last_day,
            starts_at: b.starts_at,
            ends_at: b.ends_at,
        }
    }
}

/// The requests submitted in the interval by their status at the end of the range.
#[derive(Debug, Serialize, ToSchema)]
pub struct StatusCountsBody {
    pub submitted: u64,
    pub in_review: u64,
    pub action_required: u64,
    pub approved: u64,
    pub rejected: u64,
    pub completed: u64,
    pub cancelled: u64,
}

/// Request figures of one bucket or of the range. Rates are fractions in [0, 1], null
/// when nothing closed; durations are seconds, null when nothing closed.
#[derive(Debug, Serialize, ToSchema)]
pub struct RequestFiguresBody {
    pub submitted: u64,
    pub by_status: StatusCountsBody,
    pub closed: u64,
    pub completed: u64,
    pub rejected: u64,
    pub cancelled: u64,
    pub completion_rate: Option<f64>,
    pub rejection_rate: Option<f64>,
    pub cancellation_rate: Option<f64>,
    pub processing_median_seconds: Option<f64>,
    pub processing_p90_seconds: Option<f64>,
    /// Closed on or before their SLA due date, over closed.
    pub sla_compliance: Option<f64>,
    /// Open at the end of the interval (at the time of the call for today's).
    pub backlog: u64,
}

impl From<&RequestFigures> for RequestFiguresBody {
    fn from(f: &RequestFigures) -> Self {
        let count = |status| f.by_status.get(status);
        RequestFiguresBody {
            submitted: f.submitted,
            by_status: StatusCountsBody {
                submitted: count(RequestStatus::Submitted),
                in_review: count(RequestStatus::InReview),
                action_required: count(RequestStatus::ActionRequired),
                approved: count(RequestStatus::Approved),
                rejected: count(RequestStatus::Rejected),
                completed: count(RequestStatus::Completed),
                cancelled: count(RequestStatus::Cancelled),
            },
            closed: f.closed,
            completed: f.completed,
            rejected: f.rejected,
            cancelled: f.cancelled,
            completion_rate: f.completion_rate,
            rejection_rate: f.rejection_rate,
            cancellation_rate: f.cancellation_rate,
            processing_median_seconds: f.processing_median_seconds,
            processing_p90_seconds: f.processing_p90_seconds,
            sla_compliance: f.sla_compliance,
            backlog: f.backlog,
        }
    }
}

/// Seats of the open slots and attendance of the appointments starting in the interval.
#[derive(Debug, Serialize, ToSchema)]
pub struct AppointmentFiguresBody {
    pub booked: u64,
    pub capacity: u64,
    /// booked / capacity; null without open slots.
    pub utilisation: Option<f64>,
    pub attended: u64,
    pub no_show: u64,
    /// no_show / (attended + no_show); null when none was marked.
    pub no_show_rate: Option<f64>,
}

impl From<&AppointmentFigures> for AppointmentFiguresBody {
    fn from(a: &AppointmentFigures) -> Self {
        AppointmentFiguresBody {
            booked: a.booked,
            capacity: a.capacity,
            utilisation: a.utilisation,
            attended: a.attended,
            no_show: a.no_show,
            no_show_rate: a.no_show_rate,
        }
    }
}

#[derive(Debug, Serialize, ToSchema)]
pub struct OverviewPointBody {
    pub bucket: BucketBody,
    pub requests: RequestFiguresBody,
    pub appointments: AppointmentFiguresBody,
}

/// Volume, completion and SLA figures over the range and per bucket.
#[derive(Debug, Serialize, ToSchema)]
pub struct OverviewBody {
    pub scope: ScopeBody,
    pub totals: RequestFiguresBody,
    /// Now: open requests.
    pub open: u64,
    /// Now: open requests past their SLA due date.
    pub open_overdue: u64,
    pub appointments: AppointmentFiguresBody,
    pub series: Vec<OverviewPointBody>,
}

impl From<&Overview> for OverviewBody {
    fn from(o: &Overview) -> Self {
        OverviewBody {
            scope: (&o.scope).into(),
            totals: (&o.totals).into(),
            open: o.open,
            open_overdue: o.open_overdue,
            appointments: (&o.appointments).into(),
            series: o
                .series
                .iter()
                .map(|p| OverviewPointBody {
                    bucket: (&p.bucket).into(),
                    requests: (&p.requests).into(),
                    appointments: (&p.appointments).into(),
                })
                .collect(),
        }
    }
}

#[derive(Debug, Serialize, ToSchema)]
pub struct ServicePointBody {
    pub bucket: BucketBody,
    pub requests: RequestFiguresBody,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct StagePointBody {
    /// The bucket's label.
    pub bucket: String,
    /// Spells of the stage that ended in the bucket.
    pub spells: u64,
    pub median_seconds: Option<f64>,
}

/// The time requests spent in one stage: where cases wait.
#[derive(Debug, Serialize, ToSchema)]
pub struct StageTimesBody {
    /// 0-based, as a request's `current_stage`.
    pub position: u32,
    /// The service type's current stage at that position; null when it has fewer now.
    pub name: Option<String>,
    /// Spells of the stage that ended in the range.
    pub spells: u64,
    pub median_seconds: Option<f64>,
    pub series: Vec<StagePointBody>,
}

impl From<&StageFigures> for StageTimesBody {
    fn from(s: &StageFigures) -> Self {
        StageTimesBody {
            position: s.position,
            name: s.name.clone(),
            spells: s.spells,
            median_seconds: s.median_seconds,
            series: s
                .series
                .iter()
                .map(|p| StagePointBody {
                    bucket: p.bucket.label.clone(),
                    spells: p.spells,
                    median_seconds: p.median_seconds,
                })
                .collect(),
        }
    }
}

#[derive(Debug, Serialize, ToSchema)]
pub struct ServiceBody {
    pub service_type_id: Uuid,
    pub code: String,
    pub name: String,
    pub active: bool,
    pub totals: RequestFiguresBody,
    pub open: u64,
    pub open_overdue: u64,
    pub series: Vec<ServicePointBody>,
    pub stages: Vec<StageTimesBody>,
}

impl From<&ServiceFigures> for ServiceBody {
    fn from(s: &ServiceFigures) -> Self {
        ServiceBody {
            service_type_id: s.service_type_id.as_uuid(),
            code: s.code.clone(),
            name: s.name.clone(),
            active: s.active,
            totals: (&s.totals).into(),
            open: s.open,
            open_overdue: s.open_overdue,
            series: s
                .series
                .iter()
                .map(|p| ServicePointBody { bucket: (&p.bucket).into(), requests: (&p.requests).into() })
                .collect(),
            stages: s.stages.iter().map(StageTimesBody::from).collect(),
        }
    }
}

impl From<&Services> for ServicesBody {
    fn from(v: &Services) -> Self {
        ServicesBody {
            scope: (&v.scope).into(),
            services: v.services.iter().map(ServiceBody::from).collect(),
        }
    }
}

/// The overview's figures per service type (every active one, and inactive ones with a
/// figure), with the time spent in each stage.
#[derive(Debug, Serialize, ToSchema)]
pub struct ServicesBody {
    pub scope: ScopeBody,
    pub services: Vec<ServiceBody>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct StaffPointBody {
    /// The bucket's label.
    pub bucket: String,
    pub closed: u64,
    pub handling_median_seconds: Option<f64>,
}

/// One staff member's workload (now) and throughput (in the range).
#[derive(Debug, Serialize, ToSchema)]
pub struct StaffMemberFiguresBody {
    pub staff_id: Uuid,
    pub mission_id: Uuid,
    pub name: String,
    pub active: bool,
    pub open_assigned: u64,
    pub overdue: u64,
    /// open_assigned / open requests of the member's mission (unassigned included).
    pub share_of_open_load: Option<f64>,
    /// Requests assigned to the member that closed in the range.
    pub closed: u64,
    pub handling_median_seconds: Option<f64>,
    pub series: Vec<StaffPointBody>,
}

impl From<&StaffFigures> for StaffMemberFiguresBody {
    fn from(s: &StaffFigures) -> Self {
        StaffMemberFiguresBody {
            staff_id: s.staff_id.as_uuid(),
            mission_id: s.mission_id.as_uuid(),
            name: s.name.clone(),
            active: s.active,
            open_assigned: s.open_assigned,
            overdue: s.overdue,
            share_of_open_load: s.share_of_open_load,
            closed: s.closed,
            handling_median_seconds: s.handling_median_seconds,
            series: s
                .series
                .iter()
                .map(|p| StaffPointBody {
                    bucket: p.bucket.label.clone(),
                    closed: p.closed,
                    handling_median_seconds: p.handling_median_seconds,
                })
                .collect(),
        }
    }
}

/// Now: a mission's open requests and those nobody is assigned.
#[derive(Debug, Serialize, ToSchema)]
pub struct MissionLoadBody {
    pub mission_id: Uuid,
    pub open: u64,
    pub unassigned_open: u64,
}

/// Workload distribution and performance per staff member.
#[derive(Debug, Serialize, ToSchema)]
pub struct StaffViewBody {
    pub scope: ScopeBody,
    pub missions: Vec<MissionLoadBody>,
    pub staff: Vec<StaffMemberFiguresBody>,
}

impl From<&StaffView> for StaffViewBody {
    fn from(v: &StaffView) -> Self {
        StaffViewBody {
            scope: (&v.scope).into(),
            missions: v
                .missions
                .iter()
                .map(|m| MissionLoadBody {
                    mission_id: m.mission_id.as_uuid(),
                    open: m.open,
                    unassigned_open: m.unassigned_open,
                })
                .collect(),
            staff: v.staff.iter().map(StaffMemberFiguresBody::from).collect(),
        }
    }
}

problem_response! {
    /// 422 of every view.
    InvalidView = 422, "A date, the range or the granularity is invalid, or `mission_id` / `service_type_id` names nothing (`errors` lists each)";
}
