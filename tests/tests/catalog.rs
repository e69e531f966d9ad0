//! `/api/v1/services`, the service catalog, through the API: every bearer reads the active
//! types, global admins create and change them (the catalog is shared by all missions),
//! and inactive types are shown only to admins who ask for them.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use consular_tests::{
    Backend, Expect, SERVICES, TestApp, both, error_codes, error_pointers, expect_problem, header,
    service_body, text,
};
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

fn path_of(service: &Value) -> String {
    format!("{SERVICES}/{}", text(service, "id"))
}

async fn a_global_admin_creates_and_reads_a_service_type(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let admin = app.admin_token().await;
    let response = app.post_json(SERVICES, &admin, &service_body("passport_renewal")).await;
    assert_eq!(response.status(), StatusCode::CREATED);
    assert_eq!(header(response.headers(), "etag"), "\"1\"");
    let location = header(response.headers(), "location");
    let created: Value = response.json().await.unwrap();
    let id = uuid::Uuid::parse_str(&text(&created, "id")).unwrap();
    assert_eq!(id.get_version_num(), 7);
    assert_eq!(location, format!("{SERVICES}/{id}"));
    assert_eq!(created["code"], "passport_renewal");
    assert_eq!(created["name"], "Service passport_renewal");
    assert_eq!(created["description"], "Renew an expiring passport");
    assert_eq!(created["fee"], json!({ "amount_minor": 8600, "currency": "EUR" }));
    assert_eq!(created["sla_days"], 21);
    assert_eq!(created["required_documents"], json!(["passport_photo", "old_passport"]));
    assert_eq!(
        created["stages"],
        json!([
            { "name": "Document check", "description": "Documents are complete and valid" },
            { "name": "Printing", "description": "" },
        ]),
        "stages keep their order"
    );
    assert_eq!(created["active"], true, "active by default");
    for stamp in ["created_at", "updated_at"] {
        let value = text(&created, stamp);
        assert!(value.ends_with('Z'), "{stamp}: {value}");
        time::OffsetDateTime::parse(&value, &time::format_description::well_known::Rfc3339).unwrap();
    }

    let read = app.get(&location, &admin).await;
    assert_eq!(read.status(), StatusCode::OK);
    assert_eq!(header(read.headers(), "etag"), "\"1\"");
    assert_eq!(read.json::<Value>().await.unwrap(), created);

    // Optional members: description, required documents, stage descriptions, active.
    let minimal = json!({
        "code": "notarial_act",
        "name": "Notarial act",
        "fee": { "amount_minor": 0, "currency": "JPY" },
        "sla_days": 1,
        "stages": [{ "name": "Signature" }],
        "active": false,
    });
    let created = app.create_at(SERVICES, &admin, &minimal).await;
    assert_eq!(created["description"], "");
    assert_eq!(created["required_documents"], json!([]));
    assert_eq!(created["stages"], json!([{ "name": "Signature", "description": "" }]));
    assert_eq!(created["active"], false);
    assert_eq!(created["fee"], json!({ "amount_minor": 0, "currency": "JPY" }));
}
both!(a_global_admin_creates_and_reads_a_service_type);

async fn an_update_changes_only_the_given_fields(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let admin = app.admin_token().await;
    let service = app.create_service(&admin, "passport_renewal").await;
    let path = path_of(&service);
    let change = json!({
        "name": "Passport renewal",
        "fee": { "amount_minor": 9000, "currency": "EUR" },
        "stages": [{ "name": "Intake" }, { "name": "Document check" }, { "name": "Printing" }],
    });
    let response = app.patch_json(&path, &admin, Some("\"1\""), &change).await;
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(header(response.headers(), "etag"), "\"2\"");
    let updated: Value = response.json().await.unwrap();
    assert_eq!(updated["name"], "Passport renewal");
    assert_eq!(updated["fee"]["amount_minor"], 9000);
    let stages: Vec<&str> =
        updated["stages"].as_array().unwrap().iter().map(|s| s["name"].as_str().unwrap()).collect();
    assert_eq!(stages, ["Intake", "Document check", "Printing"]);
    for same in ["id", "code", "description", "sla_days", "required_documents", "active", "created_at"] {
        assert_eq!(updated[same], service[same], "{same}");
    }
    assert_eq!(app.get(&path, &admin).await.json::<Value>().await.unwrap(), updated);

    // Nothing really changes: the version stays.
    for same in [json!({}), json!({ "sla_days": 21, "name": "Passport renewal" })] {
        let response = app.patch_json(&path, &admin, Some("\"2\""), &same).await;
        assert_eq!(response.status(), StatusCode::OK);
        assert_eq!(header(response.headers(), "etag"), "\"2\"", "{same}");
    }
    // The code never changes.
    let (_, problem) = expect_problem(
        app.patch_json(&path, &admin, Some("\"2\""), &json!({ "code": "renewal" })).await,
        422,
        "validation_failed",
    )
    .await;
    assert_eq!(error_codes(&problem), [("/code".to_owned(), "unknown_field".to_owned())]);
    assert_eq!(app.get(&path, &admin).await.json::<Value>().await.unwrap()["code"], "passport_renewal");
}
both!(an_update_changes_only_the_given_fields);

async fn updates_need_a_current_if_match(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let admin = app.admin_token().await;
    let service = app.create_service(&admin, "passport_renewal").await;
    let path = path_of(&service);
    let change = json!({ "sla_days": 30 });
    expect_problem(app.patch_json(&path, &admin, None, &change).await, 428, "precondition_required").await;
    for stale in ["\"2\"", "\"0\"", "W/\"1\""] {
        expect_problem(app.patch_json(&path, &admin, Some(stale), &change).await, 412, "precondition_failed")
            .await;
    }
    let unchanged = app.get(&path, &admin).await;
    assert_eq!(header(unchanged.headers(), "etag"), "\"1\"");
    assert_eq!(unchanged.json::<Value>().await.unwrap()["sla_days"], 21, "a refused PATCH changes nothing");

    let updated = app.patch_json(&path, &admin, Some("\"1\""), &change).await;
    assert_eq!(updated.status(), StatusCode::OK);
    assert_eq!(header(updated.headers(), "etag"), "\"2\"");
    assert_eq!(updated.json::<Value>().await.unwrap()["sla_days"], 30);
    let stale = app.patch_json(&path, &admin, Some("\"1\""), &json!({ "sla_days": 40 })).await;
    expect_problem(stale, 412, "precondition_failed").await;
    let any = app.patch_json(&path, &admin, Some("*"), &json!({ "sla_days": 40 })).await;
    assert_eq!(any.status(), StatusCode::OK);
    assert_eq!(header(any.headers(), "etag"), "\"3\"");
}
both!(updates_need_a_current_if_match);

async fn toggling_active_hides_a_type_from_everyone_but_admins(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let world = app.world().await;
    let renewal = &world.service;
    let old_visa = &world.inactive_service;
    let path = path_of(old_visa);

    // The world deactivated `old_visa` with a PATCH of `active` alone.
    assert_eq!(old_visa["active"], false);
    let read = app.get(&path, &world.admin).await;
    assert_eq!(header(read.headers(), "etag"), "\"2\"");

    let admins = [&world.admin, &world.admin_x.token, &world.admin_y.token];
    for (who, token) in world.callers() {
        let is_admin = admins.iter().any(|admin| admin.as_str() == token);
        // By default, and with active=true: active types only.
        for query in ["", "?active=true"] {
            let ids = app.listed_ids(&format!("{SERVICES}{query}"), token).await;
            assert_eq!(ids, [text(renewal, "id")], "{who}{query}");
        }
        // active=false: the inactive ones, for admins; an empty list for anyone else.
        let inactive = app.listed_ids(&format!("{SERVICES}?active=false"), token).await;
        let expected = if is_admin { vec![text(old_visa, "id")] } else { vec![] };
        assert_eq!(inactive, expected, "{who}?active=false");
        // Reading an inactive type: admins only; others are told it does not exist.
        let expect = if is_admin { Expect::Ok } else { Expect::NotFound };
        expect.check(app.get(&path, token).await, &format!("{who} reads an inactive type")).await;
        Expect::Ok
            .check(app.get(&path_of(renewal), token).await, &format!("{who} reads an active type"))
            .await;
    }

    // Reactivating brings it back for everyone.
    let back = app.patch_json(&path, &world.admin, Some("\"2\""), &json!({ "active": true })).await;
    assert_eq!(back.status(), StatusCode::OK);
    assert_eq!(header(back.headers(), "etag"), "\"3\"");
    let ids = app.listed_ids(SERVICES, &world.citizen_a.token).await;
    assert_eq!(ids, [text(renewal, "id"), text(old_visa, "id")], "oldest first");
    Expect::Ok.check(app.get(&path, &world.staff_x.token).await, "staff reads a reactivated type").await;
    assert!(app.listed_ids(&format!("{SERVICES}?active=false"), &world.admin).await.is_empty());
}
both!(toggling_active_hides_a_type_from_everyone_but_admins);

/// Every caller against every catalog endpoint: reads are open to any bearer, changes
/// belong to global admins (a mission admin is `forbidden`, staff and citizens lack the
/// scope), and nothing is changed by a refused request.
async fn the_catalog_isolation_matrix(backend: Backend) {
    use Expect::*;
    let app = TestApp::spawn(backend).await;
    let world = app.world().await;
    let path = path_of(&world.service);
    let inactive = path_of(&world.inactive_service);
    // Reading is open to every caller (see the test above); this is who changes what.
    //                                                   create     update and toggle
    let table: [(&str, &str, Expect, Expect); 8] = [
        ("global admin", &world.admin, Created, Ok),
        ("admin of X", &world.admin_x.token, Forbidden, Forbidden),
        ("admin of Y", &world.admin_y.token, Forbidden, Forbidden),
        ("staff of X", &world.staff_x.token, Scope, Scope),
        ("staff of Y", &world.staff_y.token, Scope, Scope),
        ("citizen A of X", &world.citizen_a.token, Scope, Scope),
        ("citizen B of X", &world.citizen_b.token, Scope, Scope),
        ("citizen C of Y", &world.citizen_c.token, Scope, Scope),
    ];
    for (n, (who, token, create, update)) in table.into_iter().enumerate() {
        let body = service_body(&format!("service_{n}"));
        create.check(app.post_json(SERVICES, token, &body).await, &format!("{who} creates")).await;
        let change = json!({ "description": format!("changed by {who}") });
        update.check(app.patch_json(&path, token, Some("*"), &change).await, &format!("{who} updates")).await;
        let on = app.patch_json(&inactive, token, Some("*"), &json!({ "active": true })).await;
        update.check(on, &format!("{who} reactivates")).await;
        if update == Ok {
            // Put it back for the next callers.
            let off = app.patch_json(&inactive, token, Some("*"), &json!({ "active": false })).await;
            assert_eq!(off.status(), StatusCode::OK);
        }
        let listed = app.listed_ids(&format!("{SERVICES}?active=false"), &world.admin).await;
        assert_eq!(listed, [text(&world.inactive_service, "id")], "after {who}");
    }
    let ids = app.listed_ids(SERVICES, &world.admin).await;
    assert_eq!(ids.len(), 2, "only the global admin created one: {ids:?}");
    let read: Value = app.get(&path, &world.admin).await.json().await.unwrap();
    assert_eq!(read["description"], "changed by global admin");
    let anonymous = app.request(Method::GET, SERVICES).send().await.unwrap();
    expect_problem(anonymous, 401, "unauthorized").await;
}
both!(the_catalog_isolation_matrix);

async fn validation_errors_list_every_failing_field(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let admin = app.admin_token().await;
    let bad = json!({
        "code": "Passport Renewal",
        "name": " ",
        "description": "d".repeat(4001),
        "fee": { "amount_minor": -1, "currency": "EURO" },
        "sla_days": 0,
        "required_documents": ["passport_photo", "Passport Photo"],
        "stages": [{ "name": "Check" }, { "name": " ", "description": "x".repeat(1001) }],
    });
    let (_, problem) =
        expect_problem(app.post_json(SERVICES, &admin, &bad).await, 422, "validation_failed").await;
    assert_eq!(
        error_pointers(&problem),
        [
            "/code",
            "/description",
            "/fee/amount_minor",
            "/fee/currency",
            "/name",
            "/required_documents",
            "/sla_days",
            "/stages/1/description",
            "/stages/1/name",
        ],
        "{problem}"
    );

    // Lists: no stage, too many stages, repeated stage names and document kinds.
    let mut none = service_body("visa");
    none["stages"] = json!([]);
    let (_, problem) =
        expect_problem(app.post_json(SERVICES, &admin, &none).await, 422, "validation_failed").await;
    assert_eq!(error_pointers(&problem), ["/stages"]);
    let mut many = service_body("visa");
    many["stages"] = json!((0..31).map(|n| json!({ "name": format!("Stage {n}") })).collect::<Vec<_>>());
    many["sla_days"] = json!(366);
    let (_, problem) =
        expect_problem(app.post_json(SERVICES, &admin, &many).await, 422, "validation_failed").await;
    assert_eq!(error_pointers(&problem), ["/sla_days", "/stages"]);
    let mut repeated = service_body("visa");
    repeated["stages"] = json!([{ "name": "Check" }, { "name": "Check" }]);
    repeated["required_documents"] = json!(["photo", "photo"]);
    let (_, problem) =
        expect_problem(app.post_json(SERVICES, &admin, &repeated).await, 422, "validation_failed").await;
    assert_eq!(
        error_codes(&problem),
        [
            ("/required_documents".to_owned(), "duplicate".to_owned()),
            ("/stages".to_owned(), "duplicate".to_owned())
        ]
    );

    // Wrong shapes name the member.
    for (body, pointer) in [
        (json!({ "fee": { "amount_minor": "86", "currency": "EUR" } }), "/fee/amount_minor"),
        (json!({ "fee": { "amount_minor": 86 } }), "/fee/currency"),
        (json!({ "stages": [{ "description": "no name" }] }), "/stages/0/name"),
        (json!({ "stages": [{ "name": "A", "colour": "red" }] }), "/stages/0/colour"),
        (json!({ "sla_days": 1.5 }), "/sla_days"),
    ] {
        let mut wrong = service_body("visa");
        for (key, value) in body.as_object().unwrap() {
            wrong[key] = value.clone();
        }
        let (_, problem) =
            expect_problem(app.post_json(SERVICES, &admin, &wrong).await, 422, "validation_failed").await;
        assert_eq!(error_pointers(&problem), [pointer], "{body}: {problem}");
    }
    assert!(app.listed_ids(SERVICES, &admin).await.is_empty(), "nothing was created");

    // Updates are checked the same way, and an invalid one changes nothing.
    let service = app.create_service(&admin, "visa").await;
    let path = path_of(&service);
    let bad_update = json!({
        "name": " ",
        "fee": { "amount_minor": 100_000_000_001i64, "currency": "eur" },
        "stages": [{ "name": "Check" }, { "name": " Print" }],
        "sla_days": 10,
    });
    let (_, problem) = expect_problem(
        app.patch_json(&path, &admin, Some("\"1\""), &bad_update).await,
        422,
        "validation_failed",
    )
    .await;
    assert_eq!(
        error_pointers(&problem),
        ["/fee/amount_minor", "/fee/currency", "/name", "/stages/1/name"],
        "{problem}"
    );
    let read = app.get(&path, &admin).await;
    assert_eq!(header(read.headers(), "etag"), "\"1\"");
    assert_eq!(read.json::<Value>().await.unwrap(), service);
}
both!(validation_errors_list_every_failing_field);

async fn a_taken_code_is_a_conflict(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let admin = app.admin_token().await;
    app.create_service(&admin, "passport_renewal").await;
    let mut again = service_body("passport_renewal");
    again["name"] = json!("Another name");
    let (_, problem) =
        expect_problem(app.post_json(SERVICES, &admin, &again).await, 409, "service_code_taken").await;
    assert!(problem["detail"].as_str().unwrap().contains("passport_renewal"), "{problem}");
    let lower = problem.to_string().to_lowercase();
    for leak in ["unique", "constraint", "sqlite", "postgres", "duplicate key", "insert"] {
        assert!(!lower.contains(leak), "the problem leaks `{leak}`: {problem}");
    }
    // Inactive types keep their code too.
    let old = app.create_service(&admin, "old_visa").await;
    app.deactivate_service(&admin, &old).await;
    expect_problem(
        app.post_json(SERVICES, &admin, &service_body("old_visa")).await,
        409,
        "service_code_taken",
    )
    .await;
    assert_eq!(app.listed_ids(SERVICES, &admin).await.len(), 1);
}
both!(a_taken_code_is_a_conflict);

async fn an_idempotency_key_replays_a_creation(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let admin = app.admin_token().await;
    let send = |body: Value| {
        let request =
            app.authed(Method::POST, SERVICES, &admin).header("idempotency-key", "renewal-1").json(&body);
        async move { request.send().await.unwrap() }
    };
    let first = send(service_body("passport_renewal")).await;
    assert_eq!(first.status(), StatusCode::CREATED);
    let location = header(first.headers(), "location");
    let first: Value = first.json().await.unwrap();
    let again = send(service_body("passport_renewal")).await;
    assert_eq!(again.status(), StatusCode::CREATED);
    assert_eq!(header(again.headers(), "idempotent-replayed"), "true");
    assert_eq!(header(again.headers(), "location"), location);
    assert_eq!(header(again.headers(), "etag"), "\"1\"");
    assert_eq!(again.json::<Value>().await.unwrap(), first);
    expect_problem(send(service_body("visa")).await, 422, "idempotency_key_reused").await;
    assert_eq!(app.listed_ids(SERVICES, &admin).await, [text(&first, "id")]);
}
both!(an_idempotency_key_replays_a_creation);

async fn the_catalog_is_paginated(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let admin = app.admin_token().await;
    let mut active = Vec::new();
    let mut inactive = Vec::new();
    for n in 0..7 {
        let service = app.create_service(&admin, &format!("service_{n}")).await;
        if n % 3 == 0 {
            app.deactivate_service(&admin, &service).await;
            inactive.push(text(&service, "id"));
        } else {
            active.push(text(&service, "id"));
        }
    }
    for limit in [1, 2, 4, 100] {
        assert_eq!(
            app.listed_ids(&format!("{SERVICES}?limit={limit}"), &admin).await,
            active,
            "limit={limit}"
        );
        let path = format!("{SERVICES}?active=false&limit={limit}");
        assert_eq!(app.listed_ids(&path, &admin).await, inactive, "inactive, limit={limit}");
    }
    let first = app.get(&format!("{SERVICES}?active=false&limit=1"), &admin).await;
    let link = header(first.headers(), "link");
    let page: Value = first.json().await.unwrap();
    let cursor = text(&page, "next_cursor");
    assert_eq!(link, format!("<{SERVICES}?active=false&limit=1&cursor={cursor}>; rel=\"next\""));
    for bad in ["limit=0", "limit=101", "cursor=nope", "active=maybe", "code=visa"] {
        expect_problem(app.get(&format!("{SERVICES}?{bad}"), &admin).await, 400, "invalid_query").await;
    }
}
both!(the_catalog_is_paginated);

async fn unknown_service_types_are_404(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let admin = app.admin_token().await;
    for path in [format!("{SERVICES}/{}", uuid::Uuid::now_v7()), format!("{SERVICES}/passport_renewal")] {
        expect_problem(app.get(&path, &admin).await, 404, "not_found").await;
        let update = app.patch_json(&path, &admin, Some("*"), &json!({ "sla_days": 3 })).await;
        expect_problem(update, 404, "not_found").await;
    }
}
both!(unknown_service_types_are_404);

/// Concurrent creations of one code create one service type; the others are 409.
async fn concurrent_creations_of_one_code_create_once(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let admin = app.admin_token().await;
    let pending: Vec<_> = (0..8)
        .map(|n| {
            let mut body = service_body("passport_renewal");
            body["sla_days"] = json!(n + 1);
            tokio::spawn(app.authed(Method::POST, SERVICES, &admin).json(&body).send())
        })
        .collect();
    let mut statuses = Vec::new();
    for task in pending {
        let response = task.await.unwrap().unwrap();
        let status = response.status().as_u16();
        if status == 409 {
            expect_problem(response, 409, "service_code_taken").await;
        }
        statuses.push(status);
    }
    statuses.sort_unstable();
    assert_eq!(statuses, [201, 409, 409, 409, 409, 409, 409, 409]);
    assert_eq!(app.listed_ids(SERVICES, &admin).await.len(), 1);
}
both!(concurrent_creations_of_one_code_create_once);
