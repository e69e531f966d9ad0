//! Query strings (docs/api.md "List filters" and "Basics"): a filter of several values
//! given repeated (`status=a&status=b`, what generated clients send) lists what its
//! comma-separated form lists, page after page; and every operation that takes query
//! parameters refuses an unknown one, while one that takes none ignores the query string.

use super::*;
use consular_tests::files::{DOCUMENTS, pdf};
use consular_tests::service_body;

const APPOINTMENTS: &str = "/api/v1/appointments";
const SLOTS: &str = "/api/v1/appointments/slots";

/// The ids `path` lists with `query` (every page, one item per page so that each `Link`
/// is followed), asserting the repeated and comma-separated forms of `status` agree.
async fn same_in_both_forms(app: &TestApp, token: &str, path: &str, statuses: &[&str]) -> Vec<String> {
    let mut repeated: Vec<(&str, &str)> = statuses.iter().map(|s| ("status", *s)).collect();
    repeated.push(("limit", "1"));
    let joined = statuses.join(",");
    let comma = [("status", joined.as_str()), ("limit", "1")];
    let (first, rest) = statuses.split_at(1);
    let rest = rest.join(",");
    let mixed = [("status", first[0]), ("limit", "1"), ("status", rest.as_str())];
    let listed = ids(&list_all(app, token, &with_query(path, &comma)).await);
    assert_eq!(ids(&list_all(app, token, &with_query(path, &repeated)).await), listed, "{path} {repeated:?}");
    assert_eq!(ids(&list_all(app, token, &with_query(path, &mixed)).await), listed, "{path} {mixed:?}");
    listed
}

async fn repeated_filters_list_what_comma_separated_ones_do(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let cast = cast(&app).await;
    let staff = cast.staff.token.as_str();
    let bruno = citizen(&app, &cast.admin, &cast.mission, "X0000B").await;

    // Requests: submitted, in review, cancelled.
    let reviewed = text(&submit_own(&app, &cast.citizen, &cast.service).await, "id");
    let cancelled = text(&submit_own(&app, &cast.citizen, &cast.service).await, "id");
    let submitted = text(&submit_own(&app, &bruno, &cast.service).await, "id");
    change(&app, staff, &reviewed, &to("in_review", "r")).await;
    expect(
        app.post_json(&at(&cancelled, "/cancel"), &cast.citizen.token, &json!({})).await,
        StatusCode::OK,
        "cancel",
    )
    .await;
    let listed = same_in_both_forms(&app, staff, REQUESTS, &["submitted", "in_review"]).await;
    assert_eq!(listed, [submitted.as_str(), reviewed.as_str()]);
    let listed = same_in_both_forms(&app, staff, REQUESTS, &["cancelled", "approved", "submitted"]).await;
    assert_eq!(listed, [submitted.as_str(), cancelled.as_str()]);

    // Documents: uploaded, verified, rejected (kinds a type of the catalog requires).
    created(&app, SERVICES, &cast.admin, &service_body("photo_check")).await;
    let uploaded = upload(&app, &cast.citizen.token, "passport_photo", 1).await;
    let verified = upload(&app, &cast.citizen.token, "old_passport", 2).await;
    let rejected = upload(&app, &bruno.token, "passport_photo", 3).await;
    for (id, decision) in [
        (&verified, json!({ "status": "verified" })),
        (&rejected, json!({ "status": "rejected", "reason": "Blurred" })),
    ] {
        let response =
            app.patch_json(&format!("{DOCUMENTS}/{id}/verify"), staff, Some("\"1\""), &decision).await;
        expect(response, StatusCode::OK, "decision").await;
    }
    let mut listed = same_in_both_forms(&app, staff, DOCUMENTS, &["uploaded", "rejected"]).await;
    listed.sort();
    let mut expected = vec![rejected.clone(), uploaded.clone()];
    expected.sort();
    assert_eq!(listed, expected);
    let mut listed = same_in_both_forms(&app, staff, DOCUMENTS, &["verified", "uploaded", "rejected"]).await;
    listed.sort();
    expected.push(verified.clone());
    expected.sort();
    assert_eq!(listed, expected);

    // Appointments: booked and cancelled.
    let day = (time::OffsetDateTime::now_utc() + time::Duration::days(10)).date();
    let at_hour = |hour: u8| {
        let (y, m, d) = (day.year(), u8::from(day.month()), day.day());
        json!({ "starts_at": format!("{y:04}-{m:02}-{d:02}T{hour:02}:00"), "minutes": 60, "capacity": 2,
                "service_type_ids": [cast.service] })
    };
    let slots = json!({ "mission_id": cast.mission, "slots": [at_hour(9), at_hour(10)] });
    expect(app.post_json(SLOTS, &cast.admin, &slots).await, StatusCode::OK, "slots").await;
    let open = with_query(SLOTS, &[("mission_id", &cast.mission), ("service_type_id", &cast.service)]);
    let open = list_all(&app, &cast.citizen.token, &open).await;
    let mut appointments = Vec::new();
    for slot in &open {
        let booking = json!({ "slot_id": slot["id"], "service_type_id": cast.service });
        let response = app.post_json(APPOINTMENTS, &cast.citizen.token, &booking).await;
        appointments.push(text(&expect(response, StatusCode::CREATED, "booking").await, "id"));
    }
    let [booked, cancelled] = [&appointments[0], &appointments[1]];
    let cancel = app.authed(Method::DELETE, &format!("{APPOINTMENTS}/{cancelled}"), &cast.citizen.token);
    assert_eq!(cancel.send().await.expect("DELETE").status(), StatusCode::NO_CONTENT);
    let listed = same_in_both_forms(&app, staff, APPOINTMENTS, &["booked", "no_show"]).await;
    assert_eq!(listed, [booked.as_str()]);
    let listed = same_in_both_forms(&app, staff, APPOINTMENTS, &["cancelled", "booked"]).await;
    assert_eq!(listed, [booked.as_str(), cancelled.as_str()]);

    // Each value is checked in either form, and a single-valued parameter stays single.
    for (path, known) in [(REQUESTS, "cancelled"), (DOCUMENTS, "rejected"), (APPOINTMENTS, "cancelled")] {
        let both = format!("{known},archived");
        for query in [
            vec![("status", known), ("status", "archived")],
            vec![("status", both.as_str())],
            vec![("status", "archived"), ("limit", "2"), ("status", known)],
        ] {
            let (_, problem) =
                expect_problem(app.get(&with_query(path, &query), staff).await, 400, "invalid_query").await;
            let error = json!({ "pointer": "/query/status", "code": "invalid", "message": "unknown value `archived`" });
            assert_eq!(problem["errors"], json!([error]), "{path} {query:?}");
        }
        let twice = with_query(path, &[("status", known), ("limit", "1"), ("limit", "2")]);
        let (_, problem) = expect_problem(app.get(&twice, staff).await, 400, "invalid_query").await;
        let error = json!({ "pointer": "/query", "code": "invalid", "message": "duplicate field `limit`" });
        assert_eq!(problem["errors"], json!([error]), "{path}");
    }
}
both!(repeated_filters_list_what_comma_separated_ones_do);

/// Uploads a PDF as `kind` for the caller; the document's id.
async fn upload(app: &TestApp, token: &str, kind: &str, seed: u32) -> String {
    text(&app.upload_ok(token, &[("kind", kind)], pdf(4000, seed), "f.pdf", "application/pdf").await, "id")
}

/// `path` with each `{name}` replaced by a fresh UUID.
fn with_fresh_ids(path: &str) -> String {
    let mut out = String::new();
    let mut rest = path;
    while let Some((before, after)) = rest.split_once('{') {
        out.push_str(before);
        out.push_str(&uuid::Uuid::now_v7().to_string());
        rest = after.split_once('}').map_or("", |(_, tail)| tail);
    }
    out.push_str(rest);
    out
}

async fn unknown_query_parameters_are_refused_where_an_operation_takes_some(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let admin = app.admin_token().await;
    let document = expect(app.get("/api/v1/openapi.json", &admin).await, StatusCode::OK, "document").await;
    let rule = "An operation that declares query parameters refuses an unknown one (400 invalid_query); one \
                that declares none ignores the query string";
    assert!(document["info"]["description"].as_str().is_some_and(|d| d.contains(rule)), "the rule is stated");
    let (mut refused, mut ignored) = (0, 0);
    for (path, item) in document["paths"].as_object().expect("paths") {
        for (method, operation) in item.as_object().expect("a path item") {
            let Ok(method) = Method::from_bytes(method.to_uppercase().as_bytes()) else { continue };
            let parameters = operation["parameters"].as_array().cloned().unwrap_or_default();
            let takes_query = parameters.iter().any(|p| p["in"] == "query");
            let target = with_fresh_ids(path);
            let call = |query: &'static str| {
                let url = format!("{target}{query}");
                app.authed(method.clone(), &url, &admin).send()
            };
            let what = format!("{method} {path}");
            if takes_query {
                // Every such operation is a GET; the unknown parameter is refused before
                // anything else is looked at.
                assert_eq!(method, Method::GET, "{what}");
                let (_, problem) =
                    expect_problem(call("?zz_unknown=1").await.expect(&what), 400, "invalid_query").await;
                assert_eq!(problem["errors"][0]["pointer"], "/query/zz_unknown", "{what}: {problem}");
                assert_eq!(problem["errors"][0]["code"], "invalid", "{what}: {problem}");
                refused += 1;
            } else if method == Method::GET {
                let plain = call("").await.expect(&what);
                let (status, etag) = (plain.status(), plain.headers().get("etag").cloned());
                let queried = call("?zz_unknown=1&status=%2C").await.expect(&what);
                assert_eq!(
                    (queried.status(), queried.headers().get("etag").cloned()),
                    (status, etag),
                    "{what}"
                );
                ignored += 1;
            }
        }
    }
    assert!(refused >= 18 && ignored >= 15, "{refused} operations refuse, {ignored} ignore");

    // Reads of real resources answer as without the query string.
    let mission = text(&app.create_mission(&admin, "fr-paris").await, "id");
    for path in [format!("/api/v1/missions/{mission}"), "/health/live".to_owned()] {
        let plain = expect(app.get(&path, &admin).await, StatusCode::OK, &path).await;
        let queried =
            expect(app.get(&format!("{path}?foo=1&limit=0"), &admin).await, StatusCode::OK, &path).await;
        assert_eq!(plain, queried, "{path}");
    }
}
both!(unknown_query_parameters_are_refused_where_an_operation_takes_some);
