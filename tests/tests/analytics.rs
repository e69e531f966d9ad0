//! `/api/v1/analytics/{overview,services,staff}` through the API, on both databases:
//! refused to staff and citizens, a mission admin's figures are their mission's only (never
//! another's, not even in totals), a global admin sees all or one mission, CSV carries the
//! same numbers, and bad parameters are problems. The figures themselves are checked against
//! an independent computation in crates/adapters/db/tests/analytics.rs.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

#[allow(dead_code)]
mod requests_support;

use consular_tests::reqwest::{Method, StatusCode, header::ACCEPT};
use consular_tests::{Backend, TestApp, both, expect_problem, header};
use requests_support::*;
use serde_json::{Value, json};

const VIEWS: [&str; 3] = ["overview", "services", "staff"];

fn view(name: &str) -> String {
    format!("/api/v1/analytics/{name}")
}

/// Two missions, X with two requests (one rejected by its staff, one open) and Y with one
/// open request; admins of each, a global admin, staff and citizens.
struct Scene {
    admin: String,
    x: String,
    y: String,
    admin_x: String,
    staff_x: Person,
    citizen_x: Person,
    service: String,
}

async fn scene(app: &TestApp) -> Scene {
    let admin = app.admin_token().await;
    let x = mission(app, &admin, "fr-paris").await;
    let y = mission(app, &admin, "de-berlin").await;
    let service = text(&service_type(app, &admin, "passport_renewal", &STAGES, 21).await, "id");
    let staff_x = staff(app, &admin, &x, "Xavier Staff", &[service.as_str()]).await;
    staff(app, &admin, &y, "Yann Staff", &[service.as_str()]).await;
    let citizen_x = citizen(app, &admin, &x, "X0000A").await;
    let citizen_y = citizen(app, &admin, &y, "Y0000C").await;
    let done = text(&submit_own(app, &citizen_x, &service).await, "id");
    submit_own(app, &citizen_x, &service).await;
    submit_own(app, &citizen_y, &service).await;
    change(app, &staff_x.token, &done, &to("in_review", "Documents received")).await;
    change(app, &staff_x.token, &done, &to("rejected", "Not eligible")).await;
    let admin_x = app.principal_by(&admin, &["admin"], Some(&x)).await.token;
    Scene { admin, x, y, admin_x, staff_x, citizen_x, service }
}

async fn get_view(app: &TestApp, token: &str, name: &str, query: &[(&str, &str)]) -> Value {
    expect(app.get(&with_query(&view(name), query), token).await, StatusCode::OK, name).await
}

async fn only_admins_see_analytics_and_a_mission_admin_only_their_mission(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let s = scene(&app).await;
    for name in VIEWS {
        for token in [&s.staff_x.token, &s.citizen_x.token] {
            expect_problem(app.get(&view(name), token).await, 403, "insufficient_scope").await;
        }
        let other = with_query(&view(name), &[("mission_id", &s.y)]);
        expect_problem(app.get(&other, &s.admin_x).await, 403, "forbidden").await;
    }

    // The mission admin's overview counts X's two requests, never Y's.
    let x = get_view(&app, &s.admin_x, "overview", &[]).await;
    assert_eq!(x["scope"]["mission_id"], s.x.as_str());
    assert_eq!(x["scope"]["timezone"], "Europe/Paris");
    assert_eq!(x["totals"]["submitted"], 2, "{x}");
    assert_eq!(x["totals"]["closed"], 1);
    assert_eq!(x["totals"]["rejected"], 1);
    assert_eq!(x["totals"]["rejection_rate"], 1.0);
    assert_eq!(x["totals"]["completion_rate"], 0.0);
    assert_eq!(x["totals"]["by_status"]["rejected"], 1);
    assert_eq!(x["totals"]["by_status"]["submitted"], 1);
    assert_eq!(x["totals"]["backlog"], 1);
    assert_eq!((x["open"].as_u64(), x["open_overdue"].as_u64()), (Some(1), Some(0)));
    assert_eq!(x["series"].as_array().unwrap().len(), 30, "the last 30 days by default");
    assert_eq!(x["totals"], get_view(&app, &s.admin, "overview", &[("mission_id", &s.x)]).await["totals"]);

    // Every mission together, in UTC.
    let all = get_view(&app, &s.admin, "overview", &[]).await;
    assert_eq!(all["scope"]["mission_id"], Value::Null);
    assert_eq!(all["scope"]["timezone"], "UTC");
    assert_eq!(all["totals"]["submitted"], 3);
    assert_eq!(all["open"], 2);

    // Services: the one type, with the time X's rejected request spent in its first stage.
    let services = get_view(&app, &s.admin_x, "services", &[]).await;
    let listed = services["services"].as_array().unwrap();
    assert_eq!(listed.len(), 1, "{services}");
    assert_eq!(listed[0]["service_type_id"], s.service.as_str());
    assert_eq!(listed[0]["totals"]["submitted"], 2);
    assert_eq!(listed[0]["stages"][0]["position"], 0);
    assert_eq!(listed[0]["stages"][0]["name"], STAGES[0]);
    assert_eq!(listed[0]["stages"][0]["spells"], 1);

    // Staff: X's member only, with the whole open load of X.
    let staff_view = get_view(&app, &s.admin_x, "staff", &[]).await;
    let members = staff_view["staff"].as_array().unwrap();
    assert_eq!(members.len(), 1, "{staff_view}");
    assert_eq!(members[0]["staff_id"], s.staff_x.id.as_str());
    assert_eq!(members[0]["open_assigned"], 1);
    assert_eq!(members[0]["share_of_open_load"], 1.0);
    assert_eq!(members[0]["closed"], 1);
    assert_eq!(staff_view["missions"][0]["mission_id"], s.x.as_str());
    assert_eq!(staff_view["missions"][0]["open"], 1);
    let everyone = get_view(&app, &s.admin, "staff", &[]).await;
    assert_eq!(everyone["staff"].as_array().unwrap().len(), 2);
    assert_eq!(everyone["missions"].as_array().unwrap().len(), 2);
}
both!(only_admins_see_analytics_and_a_mission_admin_only_their_mission);

async fn csv_carries_the_same_numbers_one_row_per_bucket(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let s = scene(&app).await;
    let query = [("granularity", "week")];
    for name in VIEWS {
        let json = get_view(&app, &s.admin_x, name, &query).await;
        let response = app
            .authed(Method::GET, &with_query(&view(name), &query), &s.admin_x)
            .header(ACCEPT, "text/csv")
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), StatusCode::OK);
        assert_eq!(header(response.headers(), "content-type"), "text/csv; charset=utf-8");
        assert!(
            header(response.headers(), "content-disposition")
                .starts_with("attachment; filename=\"analytics-")
        );
        let body = response.text().await.unwrap();
        let mut reader = csv::Reader::from_reader(body.as_bytes());
        let columns: Vec<String> = reader.headers().unwrap().iter().map(str::to_owned).collect();
        let rows: Vec<csv::StringRecord> = reader.records().map(Result::unwrap).collect();
        let cell = |row: &csv::StringRecord, column: &str| {
            row.get(columns.iter().position(|c| c == column).unwrap()).unwrap().to_owned()
        };
        let totals: Vec<&csv::StringRecord> = rows.iter().filter(|r| cell(r, "bucket") == "total").collect();
        match name {
            "overview" => {
                assert_eq!(rows.len(), json["series"].as_array().unwrap().len() + 1, "{body}");
                assert_eq!(cell(totals[0], "submitted"), json["totals"]["submitted"].to_string());
                assert_eq!(cell(totals[0], "rejection_rate"), "1");
                assert_eq!(cell(totals[0], "open"), json["open"].to_string());
                assert_eq!(cell(&rows[0], "open"), "", "now-figures only on the total row");
                let series = json["series"].as_array().unwrap();
                for (row, point) in rows.iter().zip(series) {
                    assert_eq!(cell(row, "bucket"), point["bucket"]["label"].as_str().unwrap());
                    assert_eq!(cell(row, "submitted"), point["requests"]["submitted"].to_string());
                    assert_eq!(cell(row, "backlog"), point["requests"]["backlog"].to_string());
                }
            }
            "services" => {
                assert_eq!(totals.len(), 1);
                assert_eq!(cell(totals[0], "service_type_id"), s.service);
                assert_eq!(cell(totals[0], "stage_0_spells"), "1");
                let seconds = json["services"][0]["stages"][0]["median_seconds"].as_f64().unwrap();
                assert_eq!(cell(totals[0], "stage_0_median_seconds").parse::<f64>().unwrap(), seconds);
            }
            _ => {
                assert_eq!(totals.len(), 1);
                assert_eq!(cell(totals[0], "staff_id"), s.staff_x.id);
                assert_eq!(cell(totals[0], "closed"), "1");
                assert_eq!(cell(totals[0], "share_of_open_load"), "1");
            }
        }
    }
}
both!(csv_carries_the_same_numbers_one_row_per_bucket);

async fn bad_parameters_are_problems_that_name_each_field(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let s = scene(&app).await;
    let problem = |query: Vec<(&'static str, String)>| {
        let app = &app;
        let token = s.admin.clone();
        async move {
            let query: Vec<(&str, &str)> = query.iter().map(|(k, v)| (*k, v.as_str())).collect();
            let response = app.get(&with_query(&view("overview"), &query), &token).await;
            let (_, body) = expect_problem(response, 422, "validation_failed").await;
            consular_tests::error_codes(&body)
        }
    };
    let pairs = |list: &[(&str, &str)]| -> Vec<(String, String)> {
        list.iter().map(|(p, c)| ((*p).to_owned(), (*c).to_owned())).collect()
    };
    assert_eq!(problem(vec![("from", "2026-3-5".into())]).await, pairs(&[("/from", "invalid")]));
    assert_eq!(
        problem(vec![("from", "2999-01-01".into()), ("granularity", "hour".into())]).await,
        pairs(&[("/granularity", "invalid"), ("/from", "in_future")])
    );
    assert_eq!(
        problem(vec![("from", "2020-01-10".into()), ("to", "2020-01-01".into())]).await,
        pairs(&[("/to", "before_from")])
    );
    assert_eq!(
        problem(vec![("from", "2020-01-01".into()), ("to", "2021-06-01".into())]).await,
        pairs(&[("/granularity", "too_fine")])
    );
    assert_eq!(
        problem(vec![("service_type_id", uuid::Uuid::now_v7().to_string())]).await,
        pairs(&[("/service_type_id", "unknown")])
    );
    assert_eq!(
        problem(vec![("mission_id", uuid::Uuid::now_v7().to_string())]).await,
        pairs(&[("/mission_id", "unknown")])
    );
    let unknown = with_query(&view("staff"), &[("limit", "3")]);
    expect_problem(app.get(&unknown, &s.admin).await, 400, "invalid_query").await;
    // A range in the past with months: the figures of that time, in Y's zone (none).
    let past = get_view(
        &app,
        &s.admin,
        "overview",
        &[("mission_id", &s.y), ("from", "2025-01-15"), ("to", "2025-04-10"), ("granularity", "month")],
    )
    .await;
    let labels: Vec<&str> =
        past["series"].as_array().unwrap().iter().map(|p| p["bucket"]["label"].as_str().unwrap()).collect();
    assert_eq!(labels, ["2025-01", "2025-02", "2025-03", "2025-04"]);
    assert_eq!(past["scope"]["from"], "2025-01-15", "dates are YYYY-MM-DD");
    assert_eq!(past["scope"]["to"], "2025-04-10");
    assert_eq!(past["series"][0]["bucket"]["first_day"], "2025-01-15", "clipped to the range");
    assert_eq!(past["series"][0]["bucket"]["last_day"], "2025-01-31");
    assert_eq!(past["totals"]["submitted"], 0);
    assert_eq!(past["totals"]["completion_rate"], Value::Null, "nothing closed: null, not 0");
    assert_eq!(past["totals"]["processing_median_seconds"], Value::Null);
}
both!(bad_parameters_are_problems_that_name_each_field);

/// The statuses a request is open in, and those that end it.
const OPEN_STATUSES: [&str; 4] = ["submitted", "in_review", "action_required", "approved"];
const FINAL_STATUSES: [&str; 3] = ["rejected", "completed", "cancelled"];

/// How long the writers and readers of [`every_answer_agrees_with_itself_while_requests_are_written`]
/// run.
const RACE: std::time::Duration = std::time::Duration::from_secs(6);

/// What one answer of a view breaks of the identities its figures obey when every request of
/// the scope was submitted inside the range (docs/analytics.md): the backlog at the end of
/// the range (the last bucket's, and the total's) is the open count taken at `generated_at`;
/// the submitted requests by their status at that instant add up to the submitted ones, those
/// in an open status to the open count, those in a final status to the closed ones.
fn broken_identities(what: &str, totals: &Value, series: &Value, open: &Value) -> Vec<String> {
    let n = |value: &Value| value.as_u64().unwrap_or_else(|| panic!("{what}: not a count: {value}"));
    let by_status = |statuses: &[&str]| -> u64 { statuses.iter().map(|s| n(&totals["by_status"][*s])).sum() };
    let open = n(open);
    let last = &series.as_array().unwrap().last().unwrap()["requests"];
    let checks = [
        ("totals.backlog", n(&totals["backlog"]), open),
        ("the last bucket's backlog", n(&last["backlog"]), open),
        ("by_status in open statuses", by_status(&OPEN_STATUSES), open),
        ("by_status in final statuses", by_status(&FINAL_STATUSES), n(&totals["closed"])),
        ("submitted", n(&totals["submitted"]), n(&totals["closed"]) + open),
    ];
    checks
        .into_iter()
        .filter(|(_, got, want)| got != want)
        .map(|(figure, got, want)| format!("{what}: {figure} is {got}, {want} expected (open {open})"))
        .collect()
}

/// A staff view's answer: each mission's open load is its unassigned requests plus its
/// members', and the members' shares are of that load.
fn broken_staff_identities(answer: &Value) -> Vec<String> {
    let mut broken = Vec::new();
    for load in answer["missions"].as_array().unwrap() {
        let members: Vec<&Value> = answer["staff"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|m| m["mission_id"] == load["mission_id"])
            .collect();
        let assigned: u64 = members.iter().map(|m| m["open_assigned"].as_u64().unwrap()).sum();
        let open = load["open"].as_u64().unwrap();
        if assigned + load["unassigned_open"].as_u64().unwrap() != open {
            broken.push(format!("staff: members' {assigned} + unassigned ≠ open {open}"));
        }
        for member in members {
            let share = member["share_of_open_load"].as_f64();
            let want = (open > 0).then(|| member["open_assigned"].as_u64().unwrap() as f64 / open as f64);
            if share != want {
                broken.push(format!("staff: share {share:?}, want {want:?}"));
            }
        }
    }
    broken
}

/// Issue 30: one writer submits requests and at once cancels them, another submits, takes
/// and rejects them, while a global admin reads the three views over and over; every answer
/// must agree with itself, the figures "taken now" (`open`, the staff's loads) with the
/// backlog and the statuses counted at `generated_at`, although writes commit between the
/// instant the view is generated at and the moment its snapshot opens.
async fn every_answer_agrees_with_itself_while_requests_are_written(backend: Backend) {
    use std::sync::atomic::{AtomicU64, Ordering};
    let app = TestApp::spawn(backend).await;
    let cast = cast(&app).await;
    let second = citizen(&app, &cast.admin, &cast.mission, "X0000B").await;
    let deadline = tokio::time::Instant::now() + RACE;
    let writes = AtomicU64::new(0);

    let cancelling = async {
        while tokio::time::Instant::now() < deadline {
            let id = text(&submit_own(&app, &cast.citizen, &cast.service).await, "id");
            let response = app.post_json(&at(&id, "/cancel"), &cast.citizen.token, &json!({})).await;
            expect(response, StatusCode::OK, "cancel").await;
            writes.fetch_add(2, Ordering::Relaxed);
        }
    };
    let rejecting = async {
        while tokio::time::Instant::now() < deadline {
            let id = text(&submit_own(&app, &second, &cast.service).await, "id");
            let take = json!({ "status": "in_review", "reason": "r", "assignee_id": cast.staff.id });
            let response = patch(&app, &cast.staff.token, &id, Some("\"1\""), &take).await;
            expect(response, StatusCode::OK, "take").await;
            let response = patch(&app, &cast.staff.token, &id, Some("\"2\""), &to("rejected", "r")).await;
            expect(response, StatusCode::OK, "reject").await;
            writes.fetch_add(3, Ordering::Relaxed);
        }
    };
    let reading = async {
        let (mut answers, mut broken) = (0u64, Vec::new());
        while tokio::time::Instant::now() < deadline {
            let overview = get_view(&app, &cast.admin, "overview", &[]).await;
            broken.extend(broken_identities(
                "overview",
                &overview["totals"],
                &overview["series"],
                &overview["open"],
            ));
            let services = get_view(&app, &cast.admin, "services", &[]).await;
            for service in services["services"].as_array().unwrap() {
                broken.extend(broken_identities(
                    "services",
                    &service["totals"],
                    &service["series"],
                    &service["open"],
                ));
            }
            let staff = get_view(&app, &cast.admin, "staff", &[]).await;
            broken.extend(broken_staff_identities(&staff));
            answers += 3;
        }
        (answers, broken)
    };
    let ((answers, broken), (), ()) = tokio::join!(reading, cancelling, rejecting);
    let writes = writes.into_inner();
    eprintln!("{backend:?}: {answers} answers during {writes} writes, {} broken identities", broken.len());
    assert!(broken.is_empty(), "{} of {answers} answers disagree with themselves: {broken:#?}", broken.len());
    assert!(answers >= 30 && writes >= 30, "too little happened: {answers} answers, {writes} writes");
}
both!(every_answer_agrees_with_itself_while_requests_are_written);
