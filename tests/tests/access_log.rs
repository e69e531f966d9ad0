//! `/api/v1/citizens/{me,id}/access-log` (docs/data-protection.md "Access log"): every read
//! of a citizen's personal data by someone else is an entry (who, their mission and role,
//! their client, what, when), listed newest first to the citizen and the admins of their
//! mission; the citizen's own reads and refused reads are not.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use consular_tests::files::pdf;
use consular_tests::reqwest::StatusCode;
use consular_tests::serde_json::{Value, json};
use consular_tests::{
    Backend, CITIZENS, Expect, TestApp, World, both, expect_problem, instant, text, with_query,
};

const MINE: &str = "/api/v1/citizens/me/access-log";

fn log_of(citizen: &str) -> String {
    format!("{CITIZENS}/{citizen}/access-log")
}

/// Every entry of a log, checked for order, without `id` and `at`.
async fn entries(app: &TestApp, path: &str, token: &str) -> Vec<Value> {
    let all = app.list_all(path, token).await;
    for pair in all.windows(2) {
        assert!(text(&pair[0], "id") > text(&pair[1], "id"), "newest first: {pair:?}");
        assert!(instant(&pair[0]["at"]) >= instant(&pair[1]["at"]), "newest first: {pair:?}");
    }
    all.into_iter()
        .map(|mut e| {
            let object = e.as_object_mut().unwrap();
            object.remove("id");
            object.remove("at");
            e
        })
        .collect()
}

/// An expected entry: the reader (`kind`, their creation response's id, their client),
/// their mission, role, what and which object.
fn entry(
    kind: &str,
    id: &str,
    client: &str,
    mission: Option<&str>,
    role: &str,
    what: &str,
    object: &str,
) -> Value {
    json!({
        "actor": { "kind": kind, "id": id },
        "actor_mission_id": mission,
        "actor_role": role,
        "client_id": client,
        "what": what,
        "object_id": object,
    })
}

/// A GET that must answer 200.
async fn read(app: &TestApp, path: &str, token: &str) -> Value {
    Expect::Ok.check(app.get(path, token).await, path).await
}

async fn every_read_by_someone_else_is_an_entry_and_only_those(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let w: World = app.world().await;
    let (alice, bob) = (&w.citizen_a, &w.citizen_b);
    let global = app.principal_by(&w.admin, &["admin"], None).await;
    let (staff, staff_id) = (&w.staff_x, w.staff_x.id.as_str());
    let service = text(&w.service, "id");

    // Alice's own reads: her profile, her request, her document, her appointment.
    let request = text(
        &app.create_at("/api/v1/requests", &alice.token, &json!({ "service_type_id": service })).await,
        "id",
    );
    let document = app
        .upload_ok(&alice.token, &[("kind", "passport_photo")], pdf(4096, 1), "a.pdf", "application/pdf")
        .await;
    let document = text(&document, "id");
    let day = (time::OffsetDateTime::now_utc() + time::Duration::days(10)).date();
    let starts = format!("{:04}-{:02}-{:02}T09:00", day.year(), u8::from(day.month()), day.day());
    let slots = json!({ "mission_id": w.x, "slots": [
        { "starts_at": starts, "minutes": 60, "capacity": 1, "service_type_ids": [service] }] });
    assert_eq!(app.post_json("/api/v1/appointments/slots", &w.admin, &slots).await.status(), StatusCode::OK);
    let slot = app
        .list_all(
            &with_query("/api/v1/appointments/slots", &[("mission_id", &w.x), ("service_type_id", &service)]),
            &alice.token,
        )
        .await;
    let booking = json!({ "slot_id": text(&slot[0], "id"), "service_type_id": service });
    let appointment = text(&app.create_at("/api/v1/appointments", &alice.token, &booking).await, "id");
    for path in [
        format!("{CITIZENS}/{}", alice.id),
        format!("/api/v1/requests/{request}"),
        format!("/api/v1/documents/{document}"),
        format!("/api/v1/appointments/{appointment}"),
    ] {
        read(&app, &path, &alice.token).await;
    }
    assert_eq!(entries(&app, MINE, &alice.token).await, Vec::<Value>::new(), "her own reads are not logged");

    // Others of another mission are refused, and their attempts are not entries.
    for token in [&w.staff_y.token, &w.admin_y.token] {
        for path in [
            format!("{CITIZENS}/{}", alice.id),
            format!("/api/v1/requests/{request}"),
            format!("/api/v1/documents/{document}"),
            format!("/api/v1/appointments/{appointment}"),
            format!("/api/v1/requests/{request}/notifications"),
            log_of(&alice.id),
        ] {
            expect_problem(app.get(&path, token).await, 404, "not_found").await;
        }
    }
    // The other mission's admin lists no citizen of X; Bob's token is not Alice's.
    assert!(
        read(&app, CITIZENS, &w.admin_y.token).await["items"]
            .as_array()
            .unwrap()
            .iter()
            .all(|c| c["mission_id"] == json!(w.y))
    );
    expect_problem(app.get(&log_of(&alice.id), &bob.token).await, 404, "not_found").await;
    assert_eq!(entries(&app, MINE, &alice.token).await, Vec::<Value>::new(), "nothing was read");

    // Staff of X read each kind of data; the admin of X lists the citizens; a global
    // admin reads the profile.
    let staff_entry = |what: &str, object: &str| {
        entry("staff", staff_id, &staff.client_id, Some(&w.x), "staff", what, object)
    };
    read(&app, &format!("{CITIZENS}/{}", alice.id), &staff.token).await;
    read(&app, &format!("/api/v1/requests/{request}"), &staff.token).await;
    read(&app, &format!("/api/v1/documents/{document}"), &staff.token).await;
    read(&app, &format!("/api/v1/appointments/{appointment}"), &staff.token).await;
    read(&app, &format!("/api/v1/requests/{request}/notifications"), &staff.token).await;
    let listed = read(&app, &with_query(CITIZENS, &[("limit", "100")]), &w.admin_x.token).await;
    let listed: Vec<String> = listed["items"].as_array().unwrap().iter().map(|c| text(c, "id")).collect();
    assert!(listed.contains(&alice.id) && listed.contains(&bob.id), "{listed:?}");
    read(&app, &format!("{CITIZENS}/{}", alice.id), &global.token).await;
    let admin_x = (text(&w.admin_x.body, "principal_id"), w.admin_x.client_id.clone());
    let global_id = text(&global.body, "principal_id");

    let expected = vec![
        entry("admin", &global_id, &global.client_id, None, "admin", "profile", &alice.id),
        entry("admin", &admin_x.0, &admin_x.1, Some(&w.x), "admin", "citizen_list", &alice.id),
        staff_entry("request_notifications", &request),
        staff_entry("appointment", &appointment),
        staff_entry("document", &document),
        staff_entry("request", &request),
        staff_entry("profile", &alice.id),
    ];
    assert_eq!(entries(&app, MINE, &alice.token).await, expected);
    // The same log for the admins of X and global admins, by id.
    assert_eq!(entries(&app, &log_of(&alice.id), &w.admin_x.token).await, expected);
    assert_eq!(entries(&app, &log_of(&alice.id), &w.admin).await, expected);
    assert_eq!(entries(&app, &log_of(&alice.id), &alice.token).await, expected, "her own id works too");
    // Bob was only listed.
    assert_eq!(
        entries(&app, MINE, &bob.token).await,
        [entry("admin", &admin_x.0, &admin_x.1, Some(&w.x), "admin", "citizen_list", &bob.id)]
    );
    // No staff member of Y appears in any log of X's citizens.
    assert!(expected.iter().all(|e| e["actor_mission_id"] != json!(w.y)));

    // Staff see the citizen but not who else did; other tokens have no "me".
    expect_problem(app.get(&log_of(&alice.id), &staff.token).await, 403, "insufficient_scope").await;
    for token in [&staff.token, &w.admin_x.token, &w.admin] {
        expect_problem(app.get(MINE, token).await, 403, "insufficient_scope").await;
    }
    expect_problem(app.get(&log_of(&uuid::Uuid::now_v7().to_string()), &w.admin).await, 404, "not_found")
        .await;
}

async fn the_log_is_paged_newest_first(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let w = app.world().await;
    let profile = format!("{CITIZENS}/{}", w.citizen_c.id);
    for _ in 0..5 {
        read(&app, &profile, &w.staff_y.token).await;
    }
    let first = app.get(&with_query(MINE, &[("limit", "2")]), &w.citizen_c.token).await;
    let link = first.headers().get("link").map(|l| l.to_str().unwrap().to_owned());
    let first: Value = first.json().await.unwrap();
    assert_eq!(first["items"].as_array().unwrap().len(), 2);
    let cursor = text(&first, "next_cursor");
    assert!(link.unwrap().contains(&format!("cursor={cursor}")));
    let all = app.list_all(&with_query(MINE, &[("limit", "2")]), &w.citizen_c.token).await;
    assert_eq!(all.len(), 5);
    assert_eq!(all[..2], first["items"].as_array().unwrap()[..]);
    let ids: Vec<String> = all.iter().map(|e| text(e, "id")).collect();
    let mut newest_first = ids.clone();
    newest_first.sort_by(|a, b| b.cmp(a));
    assert_eq!(ids, newest_first);
    expect_problem(
        app.get(&with_query(MINE, &[("limit", "0")]), &w.citizen_c.token).await,
        400,
        "invalid_query",
    )
    .await;
}

both!(every_read_by_someone_else_is_an_entry_and_only_those);
both!(the_log_is_paged_newest_first);
