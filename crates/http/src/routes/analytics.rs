//! `/api/v1/analytics`: the overview, services and staff views (spec 4.8), admins only, as
//! JSON or, with `Accept: text/csv`, as CSV with one row per bucket (and a `total` row per
//! entity) holding the same numbers. Every figure is defined in docs/analytics.md.

use crate::extract::{ApiQuery, Authenticated};
use crate::problem::{ApiError, Problem};
use crate::respond;
use crate::state::AppState;
use crate::wire::iso_date;
use actix_web::http::header;
use actix_web::{HttpRequest, HttpResponse, get, web};
use consular_application::analytics::{
    AppointmentFigures, Overview, RequestFigures, ServiceFigures, Services, StaffFigures, StaffView,
    StageFigures, ViewRequest, ViewScope,
};
use consular_domain::analytics::Bucket;
use consular_domain::{MissionId, RequestStatus, ServiceTypeId};
use serde::{Deserialize, Serialize};
use time::{Date, OffsetDateTime};
use utoipa::{IntoParams, ToSchema};
use uuid::Uuid;

const CSV: &str = "text/csv";

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
    /// `day`, `week` or `month`.
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

/// The view `name` as JSON (`body`), or as CSV (`csv`) when the client asks for it; only
/// the one asked for is made.
fn respond<B: Serialize>(
    req: &HttpRequest,
    name: &str,
    scope: &ViewScope,
    body: impl FnOnce() -> B,
    csv: impl FnOnce() -> Result<String, csv::Error>,
) -> Result<HttpResponse, ApiError> {
    if !respond::accepts(req.headers(), CSV) {
        return Ok(HttpResponse::Ok().insert_header((header::VARY, "Accept")).json(body()));
    }
    let csv = csv().map_err(|e| {
        tracing::error!(error = %e, "the CSV of an analytics view could not be written");
        ApiError::internal()
    })?;
    let file = format!("analytics-{name}-{}-{}.csv", scope.period.from(), scope.period.to());
    Ok(HttpResponse::Ok()
        .insert_header((header::CONTENT_TYPE, "text/csv; charset=utf-8"))
        .insert_header((header::CONTENT_DISPOSITION, format!("attachment; filename=\"{file}\"")))
        .insert_header((header::VARY, "Accept"))
        .body(csv))
}

/// Service volume, completion rates and SLA metrics.
///
/// Admins only: a mission admin sees their own mission (in its time zone), a global admin
/// every mission together (in UTC) or one with `mission_id`. `from`/`to` are whole local
/// days, both included (default: the last 30 days); the series has one point per
/// `granularity` bucket. `Accept: text/csv` gives the same numbers as CSV, one row per
/// bucket and a `total` row. Definitions: docs/analytics.md.
#[utoipa::path(
    tag = "analytics",
    operation_id = "analytics_overview",
    params(AnalyticsParams),
    security(("bearer" = [])),
    extensions(("x-maturity" = json!("Coming Soon"))),
    responses(
        (status = 200, description = "The overview (JSON), or its CSV (`text/csv`)",
            content((OverviewBody = "application/json"), (String = "text/csv"))),
        (status = 422, description = "A date, the range or the granularity is invalid, or `mission_id` / `service_type_id` names nothing (`errors` lists each)",
            body = Problem, content_type = "application/problem+json"),
    )
)]
#[get("/api/v1/analytics/overview")]
pub async fn analytics_overview(
    req: HttpRequest,
    state: web::Data<AppState>,
    Authenticated(actor): Authenticated,
    ApiQuery(params): ApiQuery<AnalyticsParams>,
) -> Result<HttpResponse, ApiError> {
    let view = state.analytics.overview(&actor, params.into()).await?;
    respond(&req, "overview", &view.scope, || OverviewBody::from(&view), || csv_overview(&view))
}

/// Per-service-type metrics and trends.
///
/// The overview's request figures for each service type (every active one, inactive ones
/// with a figure), and the median time spent in each workflow stage (spells that ended in
/// the bucket): where cases wait. Same scope, parameters and CSV as the overview.
#[utoipa::path(
    tag = "analytics",
    operation_id = "analytics_services",
    params(AnalyticsParams),
    security(("bearer" = [])),
    extensions(("x-maturity" = json!("Coming Soon"))),
    responses(
        (status = 200, description = "The services view (JSON), or its CSV (`text/csv`)",
            content((ServicesBody = "application/json"), (String = "text/csv"))),
        (status = 422, description = "A date, the range or the granularity is invalid, or `mission_id` / `service_type_id` names nothing (`errors` lists each)",
            body = Problem, content_type = "application/problem+json"),
    )
)]
#[get("/api/v1/analytics/services")]
pub async fn analytics_services(
    req: HttpRequest,
    state: web::Data<AppState>,
    Authenticated(actor): Authenticated,
    ApiQuery(params): ApiQuery<AnalyticsParams>,
) -> Result<HttpResponse, ApiError> {
    let view = state.analytics.services(&actor, params.into()).await?;
    respond(&req, "services", &view.scope, || ServicesBody::from(&view), || csv_services(&view))
}

/// Staff workload distribution and performance.
///
/// Per member of the missions in scope (active ones, inactive ones with a figure): open
/// requests assigned now, overdue, share of the mission's open load, requests closed in
/// the range and per bucket, median handling time. Same scope, parameters and CSV as the
/// overview.
#[utoipa::path(
    tag = "analytics",
    operation_id = "analytics_staff",
    params(AnalyticsParams),
    security(("bearer" = [])),
    extensions(("x-maturity" = json!("Coming Soon"))),
    responses(
        (status = 200, description = "The staff view (JSON), or its CSV (`text/csv`)",
            content((StaffViewBody = "application/json"), (String = "text/csv"))),
        (status = 422, description = "A date, the range or the granularity is invalid, or `mission_id` / `service_type_id` names nothing (`errors` lists each)",
            body = Problem, content_type = "application/problem+json"),
    )
)]
#[get("/api/v1/analytics/staff")]
pub async fn analytics_staff(
    req: HttpRequest,
    state: web::Data<AppState>,
    Authenticated(actor): Authenticated,
    ApiQuery(params): ApiQuery<AnalyticsParams>,
) -> Result<HttpResponse, ApiError> {
    let view = state.analytics.staff(&actor, params.into()).await?;
    respond(&req, "staff", &view.scope, || StaffViewBody::from(&view), || csv_staff(&view))
}

/// The CSV forms: one row per bucket, then a `total` row, per entity (the whole view, a
/// service type, a staff member). Figures taken "now" are on the `total` row only; empty
/// cells are nulls.
const BUCKET: [&str; 5] = ["bucket", "first_day", "last_day", "starts_at", "ends_at"];
const REQUESTS: [&str; 20] = [
    "submitted",
    "status_submitted",
    "status_in_review",
    "status_action_required",
    "status_approved",
    "status_rejected",
    "status_completed",
    "status_cancelled",
    "closed",
    "completed",
    "rejected",
    "cancelled",
    "completion_rate",
    "rejection_rate",
    "cancellation_rate",
    "processing_median_seconds",
    "processing_p90_seconds",
    "sla_compliance",
    "backlog",
    "open",
];

fn number(value: Option<f64>) -> String {
    value.map(|v| v.to_string()).unwrap_or_default()
}

fn instant(at: OffsetDateTime) -> String {
    at.format(&time::format_description::well_known::Rfc3339).unwrap_or_default()
}

fn bucket(b: &Bucket) -> Vec<String> {
    vec![
        b.label.clone(),
        b.first_day.to_string(),
        b.last_day.to_string(),
        instant(b.starts_at),
        instant(b.ends_at),
    ]
}

fn total(scope: &ViewScope) -> Vec<String> {
    let (start, end) =
        scope.period.instants(&scope.timezone).unwrap_or((scope.generated_at, scope.generated_at));
    vec![
        "total".into(),
        scope.period.from().to_string(),
        scope.period.to().to_string(),
        instant(start),
        instant(end),
    ]
}

/// The request columns; `now` (open, open overdue) only on a total row.
fn requests(f: &RequestFigures, now: Option<(u64, u64)>) -> Vec<String> {
    let mut row = vec![f.submitted.to_string()];
    row.extend(RequestStatus::ALL.iter().map(|s| f.by_status.get(*s).to_string()));
    row.extend([f.closed, f.completed, f.rejected, f.cancelled].map(|n| n.to_string()));
    row.extend(
        [
            f.completion_rate,
            f.rejection_rate,
            f.cancellation_rate,
            f.processing_median_seconds,
            f.processing_p90_seconds,
            f.sla_compliance,
        ]
        .map(number),
    );
    row.push(f.backlog.to_string());
    row.push(now.map(|(open, _)| open.to_string()).unwrap_or_default());
    row.push(now.map(|(_, overdue)| overdue.to_string()).unwrap_or_default());
    row
}

fn appointments(a: &AppointmentFigures) -> Vec<String> {
    vec![
        a.booked.to_string(),
        a.capacity.to_string(),
        number(a.utilisation),
        a.attended.to_string(),
        a.no_show.to_string(),
        number(a.no_show_rate),
    ]
}

fn write_csv(header: Vec<String>, rows: Vec<Vec<String>>) -> Result<String, csv::Error> {
    let mut out = csv::Writer::from_writer(Vec::new());
    out.write_record(&header)?;
    for row in rows {
        out.write_record(&row)?;
    }
    let bytes = out.into_inner().map_err(|e| csv::Error::from(e.into_error()))?;
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

fn names(parts: &[&[&str]]) -> Vec<String> {
    parts.iter().flat_map(|part| part.iter().map(|s| (*s).to_owned())).collect()
}

fn csv_overview(v: &Overview) -> Result<String, csv::Error> {
    let header = names(&[
        &BUCKET,
        &REQUESTS,
        &["open_overdue", "booked", "capacity", "utilisation", "attended", "no_show", "no_show_rate"],
    ]);
    let mut rows: Vec<Vec<String>> = v
        .series
        .iter()
        .map(|p| [bucket(&p.bucket), requests(&p.requests, None), appointments(&p.appointments)].concat())
        .collect();
    rows.push(
        [total(&v.scope), requests(&v.totals, Some((v.open, v.open_overdue))), appointments(&v.appointments)]
            .concat(),
    );
    write_csv(header, rows)
}

fn csv_services(v: &Services) -> Result<String, csv::Error> {
    let positions =
        v.services.iter().flat_map(|s| s.stages.iter().map(|st| st.position + 1)).max().unwrap_or(0);
    let mut header = names(&[&["service_type_id", "service_code"], &BUCKET, &REQUESTS, &["open_overdue"]]);
    for k in 0..positions {
        header.push(format!("stage_{k}_spells"));
        header.push(format!("stage_{k}_median_seconds"));
    }
    let stages = |s: &ServiceFigures, point: Option<usize>| -> Vec<String> {
        (0..positions)
            .flat_map(|k| match s.stages.iter().find(|st| st.position == k) {
                None => vec!["0".to_owned(), String::new()],
                Some(st) => match point.and_then(|i| st.series.get(i)) {
                    Some(p) => vec![p.spells.to_string(), number(p.median_seconds)],
                    None if point.is_some() => vec!["0".to_owned(), String::new()],
                    None => vec![st.spells.to_string(), number(st.median_seconds)],
                },
            })
            .collect()
    };
    let mut rows = Vec::new();
    for s in &v.services {
        let id = vec![s.service_type_id.to_string(), s.code.clone()];
        for (i, p) in s.series.iter().enumerate() {
            rows.push(
                [id.clone(), bucket(&p.bucket), requests(&p.requests, None), stages(s, Some(i))].concat(),
            );
        }
        rows.push(
            [id, total(&v.scope), requests(&s.totals, Some((s.open, s.open_overdue))), stages(s, None)]
                .concat(),
        );
    }
    write_csv(header, rows)
}

fn csv_staff(v: &StaffView) -> Result<String, csv::Error> {
    let header = names(&[
        &["staff_id", "name", "mission_id"],
        &BUCKET,
        &["closed", "handling_median_seconds", "open_assigned", "overdue", "share_of_open_load"],
    ]);
    let mut rows = Vec::new();
    for s in &v.staff {
        let id = vec![s.staff_id.to_string(), s.name.clone(), s.mission_id.to_string()];
        for p in &s.series {
            let figures = vec![
                p.closed.to_string(),
                number(p.handling_median_seconds),
                String::new(),
                String::new(),
                String::new(),
            ];
            rows.push([id.clone(), bucket(&p.bucket), figures].concat());
        }
        let figures = vec![
            s.closed.to_string(),
            number(s.handling_median_seconds),
            s.open_assigned.to_string(),
            s.overdue.to_string(),
            number(s.share_of_open_load),
        ];
        rows.push([id, total(&v.scope), figures].concat());
    }
    write_csv(header, rows)
}
