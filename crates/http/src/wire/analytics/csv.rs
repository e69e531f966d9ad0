//! The analytics views as CSV (`Accept: text/csv`, docs/analytics.md): one row per
//! bucket, then a `total` row, per entity (the whole view, a service type, a staff
//! member), holding the same numbers as the JSON. Figures taken "now" are on the `total`
//! row only; empty cells are nulls. Rendered from the use case's views, not from the
//! JSON bodies.

use consular_application::analytics::{
    AppointmentFigures, Overview, RequestFigures, ServiceFigures, Services, StaffView, ViewScope,
};
use consular_domain::RequestStatus;
use consular_domain::analytics::Bucket;
use time::OffsetDateTime;

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

fn write_csv(header: Vec<String>, rows: Vec<Vec<String>>) -> Result<String, ::csv::Error> {
    let mut out = ::csv::Writer::from_writer(Vec::new());
    out.write_record(&header)?;
    for row in rows {
        out.write_record(&row)?;
    }
    let bytes = out.into_inner().map_err(|e| ::csv::Error::from(e.into_error()))?;
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

fn names(parts: &[&[&str]]) -> Vec<String> {
    parts.iter().flat_map(|part| part.iter().map(|s| (*s).to_owned())).collect()
}

/// The overview: a row per bucket, then the `total` row.
pub fn overview(v: &Overview) -> Result<String, ::csv::Error> {
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

/// The services view: per service type, a row per bucket, then its `total` row; the
/// stages as column pairs.
pub fn services(v: &Services) -> Result<String, ::csv::Error> {
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

/// The staff view: per member, a row per bucket, then their `total` row.
pub fn staff(v: &StaffView) -> Result<String, ::csv::Error> {
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
