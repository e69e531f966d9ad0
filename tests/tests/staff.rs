//! `/api/v1/staff` through the API: admins of the mission create staff members (with
//! their API client if asked) and assign them to active service types; the member and
//! admins read a profile; lists are for admins, a mission admin seeing only their mission.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use consular_tests::{
    AUDIT_EVENTS, Backend, CITIZENS, Expect, SERVICES, STAFF, TestApp, both, citizen_body, error_codes,
    error_pointers, expect_problem, header, instant, staff_body, text, token_claims, with_query,
};
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

const CLIENTS: &str = "/api/v1/auth/clients";

fn path_of(member: &Value) -> String {
    format!("{STAFF}/{}", text(member, "id"))
}

fn assignments_of(member: &Value) -> String {
    format!("{STAFF}/{}/assignments", text(member, "id"))
}

/// Query parameters.
type Query<'a> = Vec<(&'a str, &'a str)>;

fn codes(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
    pairs.iter().map(|(p, c)| ((*p).to_owned(), (*c).to_owned())).collect()
}

/// A global admin token, a mission, two active service types and an inactive one.
struct Setup {
    admin: String,
    x: String,
    visa: String,
    passport: String,
    retired: String,
}

async fn setup(app: &TestApp) -> Setup {
    let admin = app.admin_token().await;
    let x = text(&app.create_mission(&admin, "fr-paris").await, "id");
    let visa = text(&app.create_service(&admin, "visa").await, "id");
    let passport = text(&app.create_service(&admin, "passport_renewal").await, "id");
    let retired = app.create_service(&admin, "old_visa").await;
    let retired = text(&app.deactivate_service(&admin, &retired).await, "id");
    Setup { admin, x, visa, passport, retired }
}

async fn an_admin_creates_a_staff_member(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let s = setup(&app).await;
    let mut body = staff_body(&s.x, "Bob Lee");
    body["service_type_ids"] = json!([s.passport, s.visa]);
    let response = app.post_json(STAFF, &s.admin, &body).await;
    assert_eq!(response.status(), StatusCode::CREATED);
    assert_eq!(header(response.headers(), "etag"), "\"1\"");
    let location = header(response.headers(), "location");
    let created: Value = response.json().await.unwrap();
    let id = uuid::Uuid::parse_str(&text(&created, "id")).unwrap();
    assert_eq!(id.get_version_num(), 7);
    assert_eq!(location, format!("{STAFF}/{id}"));
    assert_eq!(created["mission_id"], s.x.as_str());
    assert_eq!(created["name"], "Bob Lee");
    assert_eq!(created["email"], "officer@mission.example");
    assert_eq!(created["job_title"], "Consular officer");
    assert_eq!(created["active"], true);
    assert_eq!(created["service_type_ids"], json!([s.passport, s.visa]), "in the order given");
    assert_eq!(instant(&created["created_at"]), instant(&created["updated_at"]));
    assert!(created.get("client").is_none(), "no client unless asked: {created}");

    let read = app.get(&location, &s.admin).await;
    assert_eq!(read.status(), StatusCode::OK);
    assert_eq!(header(read.headers(), "etag"), "\"1\"");
    assert_eq!(read.json::<Value>().await.unwrap(), created);

    // Without assignments, by a mission admin of the member's mission.
    let head = app.principal_by(&s.admin, &["admin"], Some(&s.x)).await;
    let created = app.create_at(STAFF, &head.token, &staff_body(&s.x, "Ann Diaz")).await;
    assert_eq!(created["service_type_ids"], json!([]));
    assert_eq!(app.listed_ids(STAFF, &head.token).await.len(), 2);
}
both!(an_admin_creates_a_staff_member);

/// `issue_client: true` creates the member's client in the same call; its token reads
/// the member's own profile, and the citizens of their mission.
async fn creation_issues_the_members_own_client(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let s = setup(&app).await;
    let y = text(&app.create_mission(&s.admin, "de-berlin").await, "id");
    let colleague = app.create_at(STAFF, &s.admin, &staff_body(&s.x, "Ann Diaz")).await;
    let citizen_x = app.create_at(CITIZENS, &s.admin, &citizen_body(&s.x, "19AB00001")).await;
    let citizen_y = app.create_at(CITIZENS, &s.admin, &citizen_body(&y, "19AB00002")).await;
    let clients_before = app.list_all(CLIENTS, &s.admin).await.len();

    let mut body = staff_body(&s.x, "Bob Lee");
    body["service_type_ids"] = json!([s.visa]);
    body["issue_client"] = json!(true);
    let send = |body: Value| {
        let request =
            app.authed(Method::POST, STAFF, &s.admin).header("idempotency-key", "hire-bob").json(&body);
        async move { request.send().await.unwrap() }
    };
    let first = send(body.clone()).await;
    assert_eq!(first.status(), StatusCode::CREATED);
    let location = header(first.headers(), "location");
    let created: Value = first.json().await.unwrap();
    let client = &created["client"];
    assert_eq!(client["scopes"], json!(["staff"]));
    assert_eq!(text(client, "client_secret").len(), 43, "{client}");
    let client_id = text(client, "client_id");
    let stored: Value = app.get(&format!("{CLIENTS}/{client_id}"), &s.admin).await.json().await.unwrap();
    assert_eq!(stored["principal_kind"], "staff");
    assert_eq!(stored["principal_id"], created["id"]);
    assert_eq!(stored["mission_id"], s.x.as_str());

    // A replay has the client without its secret, and creates nothing.
    let replay = send(body.clone()).await;
    assert_eq!(replay.status(), StatusCode::CREATED);
    assert_eq!(header(replay.headers(), "idempotent-replayed"), "true");
    assert_eq!(header(replay.headers(), "location"), location);
    let replay: Value = replay.json().await.unwrap();
    let mut expected = created.clone();
    expected["client"].as_object_mut().unwrap().remove("client_secret");
    assert_eq!(replay, expected);
    assert_eq!(app.list_all(CLIENTS, &s.admin).await.len(), clients_before + 1);
    assert_eq!(app.listed_ids(STAFF, &s.admin).await.len(), 2);

    let member = app.issued(created.clone()).await;
    let claims = token_claims(&member.token);
    assert_eq!(claims["sub"], format!("staff:{}", member.id));
    assert_eq!(claims["mission"], s.x.as_str());
    assert_eq!(claims["scope"], "staff");
    let own = app.get(&location, &member.token).await;
    assert_eq!(own.status(), StatusCode::OK);
    assert_eq!(header(own.headers(), "etag"), "\"1\"");
    let mut without_client = created.clone();
    without_client.as_object_mut().unwrap().remove("client");
    assert_eq!(own.json::<Value>().await.unwrap(), without_client);

    let token = &member.token;
    for (what, response, expect) in [
        ("a colleague", app.get(&path_of(&colleague), token).await, Expect::NotFound),
        (
            "a citizen of the mission",
            app.get(&format!("{CITIZENS}/{}", text(&citizen_x, "id")), token).await,
            Expect::Ok,
        ),
        (
            "a citizen elsewhere",
            app.get(&format!("{CITIZENS}/{}", text(&citizen_y, "id")), token).await,
            Expect::NotFound,
        ),
        ("the catalog", app.get(SERVICES, token).await, Expect::Ok),
        ("the staff list", app.get(STAFF, token).await, Expect::Scope),
        ("the citizen list", app.get(CITIZENS, token).await, Expect::Scope),
        ("the audit log", app.get(AUDIT_EVENTS, token).await, Expect::Scope),
        (
            "their own assignments",
            app.patch_json(&assignments_of(&created), token, Some("*"), &json!({ "service_type_ids": [] }))
                .await,
            Expect::Scope,
        ),
        ("a new colleague", app.post_json(STAFF, token, &staff_body(&s.x, "Eve")).await, Expect::Scope),
    ] {
        expect.check(response, what).await;
    }
}
both!(creation_issues_the_members_own_client);

async fn creation_errors_list_every_failing_field(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let s = setup(&app).await;
    let bad = json!({
        "mission_id": s.x,
        "name": " ",
        "email": "bob",
        "job_title": "x".repeat(101),
    });
    let (_, problem) =
        expect_problem(app.post_json(STAFF, &s.admin, &bad).await, 422, "validation_failed").await;
    assert_eq!(error_pointers(&problem), ["/email", "/job_title", "/name"], "{problem}");

    // Service types: each unknown or inactive one is named; repeats are refused.
    let unknown = uuid::Uuid::now_v7().to_string();
    let mut types = staff_body(&s.x, "Bob Lee");
    types["service_type_ids"] = json!([s.visa, s.retired, unknown, s.passport]);
    let (_, problem) =
        expect_problem(app.post_json(STAFF, &s.admin, &types).await, 422, "validation_failed").await;
    assert_eq!(
        error_codes(&problem),
        codes(&[("/service_type_ids/1", "inactive"), ("/service_type_ids/2", "unknown")]),
        "{problem}"
    );
    types["service_type_ids"] = json!([s.visa, s.passport, s.visa]);
    let (_, problem) =
        expect_problem(app.post_json(STAFF, &s.admin, &types).await, 422, "validation_failed").await;
    assert_eq!(error_codes(&problem), codes(&[("/service_type_ids", "duplicate")]), "{problem}");

    // Shapes, and a mission that does not exist.
    for (change, pointer, code) in [
        (json!({ "service_type_ids": ["visa"] }), "/service_type_ids/0", "invalid"),
        (json!({ "active": false }), "/active", "unknown_field"),
        (json!({ "mission_id": uuid::Uuid::now_v7() }), "/mission_id", "unknown"),
    ] {
        let mut wrong = staff_body(&s.x, "Bob Lee");
        for (key, value) in change.as_object().unwrap() {
            wrong[key] = value.clone();
        }
        let (_, problem) =
            expect_problem(app.post_json(STAFF, &s.admin, &wrong).await, 422, "validation_failed").await;
        assert_eq!(error_codes(&problem), codes(&[(pointer, code)]), "{change}: {problem}");
    }
    let mut missing = staff_body(&s.x, "Bob Lee");
    missing.as_object_mut().unwrap().remove("job_title");
    let (_, problem) =
        expect_problem(app.post_json(STAFF, &s.admin, &missing).await, 422, "validation_failed").await;
    assert_eq!(error_codes(&problem), codes(&[("/job_title", "required")]));
    assert!(app.listed_ids(STAFF, &s.admin).await.is_empty(), "nothing was created");
}
both!(creation_errors_list_every_failing_field);

/// "Every failing field is listed": invalid fields and an unknown service type in one
/// body should all be named at once.
async fn creation_lists_unknown_service_types_with_the_other_failures(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let s = setup(&app).await;
    let mut bad = staff_body(&s.x, " ");
    bad["service_type_ids"] = json!([uuid::Uuid::now_v7()]);
    let (_, problem) =
        expect_problem(app.post_json(STAFF, &s.admin, &bad).await, 422, "validation_failed").await;
    assert_eq!(error_pointers(&problem), ["/name", "/service_type_ids/0"], "{problem}");
}
both!(creation_lists_unknown_service_types_with_the_other_failures);

async fn assignments_need_if_match_and_active_types(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let s = setup(&app).await;
    let mut body = staff_body(&s.x, "Bob Lee");
    body["service_type_ids"] = json!([s.visa]);
    let member = app.create_at(STAFF, &s.admin, &body).await;
    let path = assignments_of(&member);
    let both_types = json!({ "service_type_ids": [s.passport, s.visa] });

    expect_problem(app.patch_json(&path, &s.admin, None, &both_types).await, 428, "precondition_required")
        .await;
    for stale in ["\"2\"", "\"0\"", "W/\"1\""] {
        expect_problem(
            app.patch_json(&path, &s.admin, Some(stale), &both_types).await,
            412,
            "precondition_failed",
        )
        .await;
    }
    let read = app.get(&path_of(&member), &s.admin).await;
    assert_eq!(header(read.headers(), "etag"), "\"1\"");
    assert_eq!(read.json::<Value>().await.unwrap()["service_type_ids"], json!([s.visa]));

    // The list is replaced as a whole, in the order given.
    let response = app.patch_json(&path, &s.admin, Some("\"1\""), &both_types).await;
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(header(response.headers(), "etag"), "\"2\"");
    let updated: Value = response.json().await.unwrap();
    assert_eq!(updated["service_type_ids"], json!([s.passport, s.visa]));
    for same in ["id", "mission_id", "name", "email", "job_title", "active", "created_at"] {
        assert_eq!(updated[same], member[same], "{same}");
    }
    assert_eq!(app.get(&path_of(&member), &s.admin).await.json::<Value>().await.unwrap(), updated);
    // The same list again changes nothing.
    let same = app.patch_json(&path, &s.admin, Some("\"2\""), &both_types).await;
    assert_eq!(same.status(), StatusCode::OK);
    assert_eq!(header(same.headers(), "etag"), "\"2\"");
    let stale = app.patch_json(&path, &s.admin, Some("\"1\""), &json!({ "service_type_ids": [] })).await;
    expect_problem(stale, 412, "precondition_failed").await;

    // Unknown, inactive and repeated types are refused, and nothing changes.
    let unknown = uuid::Uuid::now_v7().to_string();
    for (ids, expected) in [
        (
            json!([s.visa, unknown, s.retired]),
            codes(&[("/service_type_ids/1", "unknown"), ("/service_type_ids/2", "inactive")]),
        ),
        (json!([s.retired]), codes(&[("/service_type_ids/0", "inactive")])),
        (json!([s.visa, s.visa]), codes(&[("/service_type_ids", "duplicate")])),
    ] {
        let response =
            app.patch_json(&path, &s.admin, Some("\"2\""), &json!({ "service_type_ids": ids })).await;
        let (_, problem) = expect_problem(response, 422, "validation_failed").await;
        assert_eq!(error_codes(&problem), expected, "{ids}: {problem}");
    }
    for (body, pointer, code) in [
        (json!({}), "/service_type_ids", "required"),
        (json!({ "service_type_ids": [s.visa], "name": "Robert" }), "/name", "unknown_field"),
    ] {
        let response = app.patch_json(&path, &s.admin, Some("\"2\""), &body).await;
        let (_, problem) = expect_problem(response, 422, "validation_failed").await;
        assert_eq!(error_codes(&problem), codes(&[(pointer, code)]), "{body}: {problem}");
    }
    let read = app.get(&path_of(&member), &s.admin).await;
    assert_eq!(header(read.headers(), "etag"), "\"2\"");
    assert_eq!(read.json::<Value>().await.unwrap(), updated);

    // A type deactivated after the assignment stays assigned, but cannot be assigned again.
    let visa = app.get(&format!("{SERVICES}/{}", s.visa), &s.admin).await.json::<Value>().await.unwrap();
    app.deactivate_service(&s.admin, &visa).await;
    let kept: Value = app.get(&path_of(&member), &s.admin).await.json().await.unwrap();
    assert_eq!(kept["service_type_ids"], json!([s.passport, s.visa]));
    let response =
        app.patch_json(&path, &s.admin, Some("\"2\""), &json!({ "service_type_ids": [s.visa] })).await;
    let (_, problem) = expect_problem(response, 422, "validation_failed").await;
    assert_eq!(error_codes(&problem), codes(&[("/service_type_ids/0", "inactive")]));
    // Emptying the list is fine.
    let emptied = app.patch_json(&path, &s.admin, Some("*"), &json!({ "service_type_ids": [] })).await;
    assert_eq!(emptied.status(), StatusCode::OK);
    assert_eq!(header(emptied.headers(), "etag"), "\"3\"");
    assert_eq!(emptied.json::<Value>().await.unwrap()["service_type_ids"], json!([]));

    let nobody = format!("{STAFF}/{}/assignments", uuid::Uuid::now_v7());
    expect_problem(
        app.patch_json(&nobody, &s.admin, Some("*"), &json!({ "service_type_ids": [] })).await,
        404,
        "not_found",
    )
    .await;
}
both!(assignments_need_if_match_and_active_types);

async fn staff_lists_filter_and_paginate(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let s = setup(&app).await;
    let y = text(&app.create_mission(&s.admin, "de-berlin").await, "id");
    let mut ids = Vec::new();
    for (mission, name, types) in [
        (&s.x, "Ann", json!([s.visa])),
        (&s.x, "Bob", json!([s.passport, s.visa])),
        (&s.x, "Cid", json!([])),
        (&y, "Dee", json!([s.visa])),
    ] {
        let mut body = staff_body(mission, name);
        body["service_type_ids"] = types;
        ids.push(text(&app.create_at(STAFF, &s.admin, &body).await, "id"));
    }
    let nobody = uuid::Uuid::now_v7().to_string();
    let cases: Vec<(Query, Vec<usize>)> = vec![
        (vec![], vec![0, 1, 2, 3]),
        (vec![("mission_id", &s.x)], vec![0, 1, 2]),
        (vec![("mission_id", &y)], vec![3]),
        (vec![("service_type_id", &s.visa)], vec![0, 1, 3]),
        (vec![("service_type_id", &s.passport)], vec![1]),
        (vec![("service_type_id", &s.retired)], vec![]),
        (vec![("service_type_id", &nobody)], vec![]),
        (vec![("active", "true")], vec![0, 1, 2, 3]),
        (vec![("active", "false")], vec![]),
        (vec![("mission_id", &s.x), ("service_type_id", &s.visa)], vec![0, 1]),
        (vec![("mission_id", &y), ("service_type_id", &s.passport)], vec![]),
        (vec![("mission_id", &s.x), ("active", "true"), ("service_type_id", &s.passport)], vec![1]),
    ];
    for (query, expected) in &cases {
        let expected: Vec<&String> = expected.iter().map(|n| &ids[*n]).collect();
        for limit in ["1", "2", "100"] {
            let mut query = query.clone();
            query.push(("limit", limit));
            let listed = app.listed_ids(&with_query(STAFF, &query), &s.admin).await;
            assert_eq!(listed.iter().collect::<Vec<_>>(), expected, "{query:?}");
        }
    }
    // Items carry their assignments.
    let all = app.list_all(STAFF, &s.admin).await;
    assert_eq!(all[1]["service_type_ids"], json!([s.passport, s.visa]));
    assert_eq!(all[2]["service_type_ids"], json!([]));

    // A mission admin's filters apply within their mission.
    let head = app.principal_by(&s.admin, &["admin"], Some(&s.x)).await;
    for (query, expected) in [
        (vec![], vec![0, 1, 2]),
        (vec![("service_type_id", s.visa.as_str())], vec![0, 1]),
        (vec![("mission_id", s.x.as_str())], vec![0, 1, 2]),
        (vec![("mission_id", y.as_str())], vec![]),
        (vec![("mission_id", y.as_str()), ("service_type_id", s.visa.as_str())], vec![]),
    ] {
        let expected: Vec<&String> = expected.iter().map(|n| &ids[*n]).collect();
        let listed = app.listed_ids(&with_query(STAFF, &query), &head.token).await;
        assert_eq!(listed.iter().collect::<Vec<_>>(), expected, "mission admin {query:?}");
    }

    let first = app.get(&format!("{STAFF}?service_type_id={}&limit=1", s.visa), &s.admin).await;
    let link = header(first.headers(), "link");
    let page: Value = first.json().await.unwrap();
    let cursor = text(&page, "next_cursor");
    assert_eq!(link, format!("<{STAFF}?service_type_id={}&limit=1&cursor={cursor}>; rel=\"next\"", s.visa));
    for (query, pointer) in [
        ("service_type_id=visa", "/query/service_type_id"),
        ("mission_id=fr-paris", "/query/mission_id"),
        ("active=maybe", "/query/active"),
        ("limit=0", "/query/limit"),
        ("job_title=officer", "/query/job_title"),
    ] {
        let (_, problem) =
            expect_problem(app.get(&format!("{STAFF}?{query}"), &s.admin).await, 400, "invalid_query").await;
        assert_eq!(error_pointers(&problem), [pointer], "{query}: {problem}");
    }
}
both!(staff_lists_filter_and_paginate);

/// Every caller against every staff endpoint (docs/api.md "Who sees what"): a member sees
/// only themself, admins their mission's members; objects the caller may not see are
/// 404, endpoints their scope does not reach are 403, and lists hold only what they may see.
async fn the_staff_isolation_matrix(backend: Backend) {
    use Expect::*;
    let app = TestApp::spawn(backend).await;
    let w = app.world().await;
    let colleague = app.create_at(STAFF, &w.admin, &consular_tests::staff_body(&w.x, "Colin League")).await;
    let (sx, sx2, sy) = (&w.staff_x.id, &text(&colleague, "id"), &w.staff_y.id);
    enum Listed<'a> {
        Only(Vec<&'a String>),
        Refused(Expect),
    }
    use Listed::*;
    let assign = json!({ "service_type_ids": [text(&w.service, "id")] });
    //       caller, get SX (staff of X), get SX2 (colleague), PATCH SX assignments,
    //       list, list ?mission_id=X, create in X
    /// Caller, token, then what each endpoint answers them.
    type Row<'a> = (&'a str, &'a str, Expect, Expect, Expect, Listed<'a>, Listed<'a>, Expect);
    let table: [Row; 8] = [
        ("global admin", &w.admin, Ok, Ok, Ok, Only(vec![sx, sy, sx2]), Only(vec![sx, sx2]), Created),
        ("admin of X", &w.admin_x.token, Ok, Ok, Ok, Only(vec![sx, sx2]), Only(vec![sx, sx2]), Created),
        (
            "admin of Y",
            &w.admin_y.token,
            NotFound,
            NotFound,
            NotFound,
            Only(vec![sy]),
            Only(vec![]),
            Forbidden,
        ),
        ("staff of X", &w.staff_x.token, Ok, NotFound, Scope, Refused(Scope), Refused(Scope), Scope),
        ("staff of Y", &w.staff_y.token, NotFound, NotFound, Scope, Refused(Scope), Refused(Scope), Scope),
        (
            "citizen A of X",
            &w.citizen_a.token,
            NotFound,
            NotFound,
            Scope,
            Refused(Scope),
            Refused(Scope),
            Scope,
        ),
        (
            "citizen B of X",
            &w.citizen_b.token,
            NotFound,
            NotFound,
            Scope,
            Refused(Scope),
            Refused(Scope),
            Scope,
        ),
        (
            "citizen C of Y",
            &w.citizen_c.token,
            NotFound,
            NotFound,
            Scope,
            Refused(Scope),
            Refused(Scope),
            Scope,
        ),
    ];
    for (who, token, get_sx, get_sx2, patch, list, own_mission, _) in &table {
        for (id, expect) in [(sx, get_sx), (sx2, get_sx2)] {
            let body = expect
                .check(app.get(&format!("{STAFF}/{id}"), token).await, &format!("{who}: GET {id}"))
                .await;
            if *expect == Ok {
                assert_eq!(&text(&body, "id"), id);
            }
        }
        let path = format!("{STAFF}/{sx}/assignments");
        patch
            .check(
                app.patch_json(&path, token, Some("*"), &assign).await,
                &format!("{who}: PATCH assignments"),
            )
            .await;
        for (query, expected) in [("", list), (&*format!("?mission_id={}", w.x), own_mission)] {
            let path = format!("{STAFF}{query}");
            match expected {
                Only(ids) => {
                    let listed = app.listed_ids(&path, token).await;
                    assert_eq!(listed.iter().collect::<Vec<_>>(), *ids, "{who}: GET {path}");
                }
                Refused(expect) => {
                    expect.check(app.get(&path, token).await, &format!("{who}: GET {path}")).await;
                }
            }
        }
        let unknown = format!("{STAFF}/{}", uuid::Uuid::now_v7());
        NotFound.check(app.get(&unknown, token).await, &format!("{who}: GET unknown")).await;
    }
    // The first allowed PATCH assigned the service type; the others changed nothing.
    let read = app.get(&format!("{STAFF}/{sx}"), &w.admin).await;
    assert_eq!(header(read.headers(), "etag"), "\"2\"");

    for (n, (who, token, .., create)) in table.iter().enumerate() {
        let body = staff_body(&w.x, &format!("Recruit {n}"));
        create.check(app.post_json(STAFF, token, &body).await, &format!("{who}: create in X")).await;
    }
    let listed = app.listed_ids(&format!("{STAFF}?mission_id={}", w.x), &w.admin).await;
    assert_eq!(listed.len(), 4, "two members and two recruits: {listed:?}");
    Created
        .check(app.post_json(STAFF, &w.admin_y.token, &staff_body(&w.y, "Yves")).await, "admin of Y in Y")
        .await;
    let anonymous = app.request(Method::GET, STAFF).send().await.unwrap();
    expect_problem(anonymous, 401, "unauthorized").await;
}
both!(the_staff_isolation_matrix);

/// A mission admin may create clients for their own mission, but a client naming
/// another mission's staff member as its principal must not open that profile to them.
async fn a_minted_client_does_not_reach_another_missions_member(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let w = app.world().await;
    let path = format!("{STAFF}/{}", w.staff_x.id);
    let minted = app
        .post_json(
            CLIENTS,
            &w.admin_y.token,
            &json!({ "name": "not X", "scopes": ["staff"], "mission_id": w.y, "principal_id": w.staff_x.id }),
        )
        .await;
    // Refused outright since issue 23 (tests/tests/clients.rs has every combination).
    let (_, problem) = expect_problem(minted, 422, "validation_failed").await;
    assert_eq!(problem["errors"][0]["pointer"], "/principal_id", "{problem}");
    Expect::NotFound.check(app.get(&path, &w.staff_y.token).await, "GET staff of X as staff of Y").await;
}
both!(a_minted_client_does_not_reach_another_missions_member);
