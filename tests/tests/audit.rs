//! `/api/v1/audit-events`: every create, update and state change of every resource
//! (missions and clients included) is recorded with its actor, client, time, action and
//! changed fields, in the same transaction as the change; global admins read the log,
//! newest first.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use consular_tests::{
    AUDIT_EVENTS, Backend, CITIZENS, Expect, Principal, SERVICES, STAFF, TestApp, World, both, citizen_body,
    error_pointers, expect_problem, instant, mission_body, service_body, staff_body, text, with_query,
};
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

const CLIENTS: &str = "/api/v1/auth/clients";
const MISSIONS: &str = "/api/v1/missions";
const CLIENT_FIELDS: [&str; 5] = ["name", "scopes", "mission_id", "principal_id", "secret"];

/// Who acted, as an audit event names it: `{kind, id}` and the client.
#[derive(Clone)]
struct Actor {
    actor: Value,
    client_id: Value,
}

impl Actor {
    fn of(principal: &Principal) -> Actor {
        Actor {
            actor: json!({ "kind": text(&principal.body, "principal_kind"), "id": principal.body["principal_id"] }),
            client_id: json!(principal.client_id),
        }
    }

    fn system() -> Actor {
        Actor { actor: Value::Null, client_id: Value::Null }
    }
}

/// The bootstrap global admin as an audit actor (its principal id is on its client).
async fn global_admin(app: &TestApp, token: &str) -> Principal {
    let body: Value = app.get(&format!("{CLIENTS}/{}", app.admin_id), token).await.json().await.unwrap();
    Principal {
        client_id: app.admin_id.clone(),
        secret: app.admin_secret.clone(),
        token: token.to_owned(),
        body,
    }
}

/// An expected audit event (everything but its `id` and `at`).
fn event(who: &Actor, action: &str, resource_type: &str, resource_id: &str, fields: &[&str]) -> Value {
    json!({
        "actor": who.actor,
        "client_id": who.client_id,
        // The tests call from loopback, with no proxy trusted; the system acts from nowhere.
        "client_address": if who.actor.is_null() { Value::Null } else { json!("127.0.0.1") },
        "action": action,
        "resource_type": resource_type,
        "resource_id": resource_id,
        "changed_fields": fields,
    })
}

/// Every event of the log (or of a filtered view), newest first, checked for shape and
/// order, without `id` and `at`.
async fn log(app: &TestApp, token: &str, path: &str) -> Vec<Value> {
    let events = app.list_all(path, token).await;
    for pair in events.windows(2) {
        assert!(text(&pair[0], "id") > text(&pair[1], "id"), "newest first: {pair:?}");
        assert!(instant(&pair[0]["at"]) >= instant(&pair[1]["at"]), "newest first: {pair:?}");
    }
    events
        .into_iter()
        .map(|mut e| {
            let id = uuid::Uuid::parse_str(&text(&e, "id")).unwrap();
            assert_eq!(id.get_version_num(), 7, "{e}");
            instant(&e["at"]);
            let object = e.as_object_mut().unwrap();
            object.remove("id");
            object.remove("at");
            e
        })
        .collect()
}

/// Query parameters.
type Query<'a> = Vec<(&'a str, &'a str)>;

/// Which events of the whole log a filtered view keeps.
type Keep<'a> = Box<dyn Fn(&Value) -> bool + 'a>;

fn newest_first(expected: &[Value]) -> Vec<Value> {
    expected.iter().rev().cloned().collect()
}

async fn send_ok(response: reqwest::Response, what: &str) -> Value {
    let status = response.status();
    let body: Value = response.json().await.unwrap();
    assert!(status.is_success(), "{what}: {status} {body}");
    body
}

async fn the_trail_records_every_change(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let token = app.admin_token().await;
    let global = global_admin(&app, &token).await;
    let g = Actor::of(&global);
    // The first start created the global admin's client, as the system.
    let mut expected = vec![event(&Actor::system(), "created", "api_client", &app.admin_id, &CLIENT_FIELDS)];

    // Missions.
    let mission = app.create_mission(&token, "fr-paris").await;
    let m = text(&mission, "id");
    expected.push(event(&g, "created", "mission", &m, &["code", "name", "country", "city", "timezone"]));
    let path = format!("{MISSIONS}/{m}");
    send_ok(
        app.patch_json(&path, &token, Some("\"1\""), &json!({ "city": "Lyon", "name": "Embassy fr-paris" }))
            .await,
        "mission",
    )
    .await;
    expected.push(event(&g, "updated", "mission", &m, &["city"]));

    // Clients: creation, secret rotation, disabling.
    let head = app.principal_by(&token, &["admin"], Some(&m)).await;
    let h = Actor::of(&head);
    expected.push(event(&g, "created", "api_client", &head.client_id, &CLIENT_FIELDS));
    let desk =
        app.create_client(&token, &json!({ "name": "desk", "scopes": ["staff"], "mission_id": m })).await;
    let desk = text(&desk, "client_id");
    expected.push(event(&g, "created", "api_client", &desk, &CLIENT_FIELDS));
    send_ok(app.post_empty(&format!("{CLIENTS}/{desk}/rotate-secret"), &head.token).await, "rotate").await;
    expected.push(event(&h, "secret_rotated", "api_client", &desk, &["secret"]));
    send_ok(app.post_empty(&format!("{CLIENTS}/{desk}/disable"), &head.token).await, "disable").await;
    expected.push(event(&h, "disabled", "api_client", &desk, &["status"]));

    // The catalog: creation, an update, a status change (the toggle alone), an update with
    // the toggle.
    let service = app.create_service(&token, "visa").await;
    let s = text(&service, "id");
    expected.push(event(
        &g,
        "created",
        "service_type",
        &s,
        &[
            "code",
            "name",
            "description",
            "fee",
            "sla_days",
            "retention_days",
            "required_documents",
            "stages",
            "active",
        ],
    ));
    let path = format!("{SERVICES}/{s}");
    send_ok(
        app.patch_json(&path, &token, Some("\"1\""), &json!({ "sla_days": 5, "name": "Visa" })).await,
        "service",
    )
    .await;
    expected.push(event(&g, "updated", "service_type", &s, &["name", "sla_days"]));
    send_ok(app.patch_json(&path, &token, Some("\"2\""), &json!({ "active": false })).await, "toggle").await;
    expected.push(event(&g, "status_changed", "service_type", &s, &["active"]));
    let both_changes =
        json!({ "active": true, "description": "Short stay", "stages": [{ "name": "Interview" }] });
    send_ok(app.patch_json(&path, &token, Some("\"3\""), &both_changes).await, "service").await;
    expected.push(event(&g, "updated", "service_type", &s, &["description", "stages", "active"]));

    // A citizen registered with their client by the mission admin; the citizen changes
    // their email; the registration status changes alone, then with another field.
    let citizen = app.citizen_with_client(&head.token, citizen_body(&m, "19AB12345")).await;
    let c = citizen.id.clone();
    let registration = expected.len();
    expected.push(event(&h, "created", "citizen", &c, &[]));
    expected.push(event(&h, "created", "api_client", &citizen.client_id, &CLIENT_FIELDS));
    let me = Actor { actor: json!({ "kind": "citizen", "id": c }), client_id: json!(citizen.client_id) };
    let path = format!("{CITIZENS}/{c}");
    send_ok(
        app.patch_json(&path, &citizen.token, Some("\"1\""), &json!({ "email": "alice@new.example" })).await,
        "email",
    )
    .await;
    expected.push(event(&me, "updated", "citizen", &c, &["email"]));
    let activated = send_ok(
        app.patch_json(&path, &head.token, Some("\"2\""), &json!({ "registration_status": "active" })).await,
        "status",
    )
    .await;
    expected.push(event(&h, "status_changed", "citizen", &c, &["registration_status"]));
    let change = json!({ "registration_status": "deregistered", "given_name": "Alicia" });
    send_ok(app.patch_json(&path, &token, Some("\"3\""), &change).await, "citizen").await;
    expected.push(event(&g, "updated", "citizen", &c, &["given_name", "registration_status"]));

    // A staff member created with their client, then reassigned.
    let mut body = staff_body(&m, "Bob Lee");
    body["service_type_ids"] = json!([s]);
    let member = app.staff_with_client(&token, body).await;
    expected.push(event(
        &g,
        "created",
        "staff_member",
        &member.id,
        &["name", "email", "job_title", "mission_id", "service_type_ids"],
    ));
    expected.push(event(&g, "created", "api_client", &member.client_id, &CLIENT_FIELDS));
    let path = format!("{STAFF}/{}/assignments", member.id);
    send_ok(
        app.patch_json(&path, &head.token, Some("\"1\""), &json!({ "service_type_ids": [] })).await,
        "assign",
    )
    .await;
    expected.push(event(&h, "reassigned", "staff_member", &member.id, &["service_type_ids"]));

    // The whole log, newest first.
    let mut all = log(&app, &token, AUDIT_EVENTS).await;
    assert_eq!(all.len(), expected.len(), "{all:#?}");
    // (The citizen's creation lists its fields; which ones is checked on its own below.)
    let created = all.len() - 1 - registration;
    assert!(!all[created]["changed_fields"].as_array().unwrap().is_empty(), "{}", all[created]);
    all[created]["changed_fields"] = json!([]);
    for (n, (actual, wanted)) in all.iter().zip(newest_first(&expected)).enumerate() {
        assert_eq!(actual, &wanted, "event {n} (newest first)");
    }

    // Events carry the instant of the change.
    let status_event = app
        .list_all(&format!("{AUDIT_EVENTS}?resource_id={c}&limit=100"), &token)
        .await
        .into_iter()
        .nth(1)
        .unwrap();
    assert_eq!(status_event["action"], "status_changed");
    assert_eq!(instant(&status_event["at"]), instant(&activated["updated_at"]));

    // Filtered views are the same events.
    let filtered = |keep: &dyn Fn(&Value) -> bool| -> Vec<Value> {
        let mut events: Vec<Value> = newest_first(&expected).into_iter().filter(|e| keep(e)).collect();
        for e in &mut events {
            if e["resource_type"] == "citizen" && e["action"] == "created" {
                e["changed_fields"] = Value::Null;
            }
        }
        events
    };
    let fetch = |query: Vec<(&'static str, String)>| {
        let pairs: Vec<(&str, &str)> = query.iter().map(|(k, v)| (*k, v.as_str())).collect();
        let path = with_query(AUDIT_EVENTS, &pairs);
        let token = token.clone();
        let app = &app;
        async move {
            let mut events = log(app, &token, &path).await;
            for e in &mut events {
                if e["resource_type"] == "citizen" && e["action"] == "created" {
                    e["changed_fields"] = Value::Null;
                }
            }
            events
        }
    };
    assert_eq!(fetch(vec![("resource_id", c.clone())]).await, filtered(&|e| e["resource_id"] == c.as_str()));
    assert_eq!(
        fetch(vec![("resource_type", "citizen".into())]).await,
        filtered(&|e| e["resource_type"] == "citizen")
    );
    let head_id = text(&head.body, "principal_id");
    assert_eq!(
        fetch(vec![("actor_id", head_id.clone()), ("limit", "2".into())]).await,
        filtered(&|e| e["actor"]["id"] == head_id.as_str())
    );
    assert_eq!(
        fetch(vec![("resource_type", "api_client".into()), ("actor_id", text(&global.body, "principal_id"))])
            .await,
        filtered(&|e| e["resource_type"] == "api_client" && e["actor"] == g.actor)
    );
    assert_eq!(fetch(vec![("actor_id", c.clone())]).await, filtered(&|e| e["actor"] == me.actor));
}
both!(the_trail_records_every_change);

/// The creation of a citizen names the fields it set, like every other creation.
async fn a_citizen_registration_lists_its_field_names(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let token = app.admin_token().await;
    let m = text(&app.create_mission(&token, "fr-paris").await, "id");
    let citizen = app.create_at(CITIZENS, &token, &citizen_body(&m, "19AB12345")).await;
    let events = log(&app, &token, &format!("{AUDIT_EVENTS}?resource_id={}", text(&citizen, "id"))).await;
    let fields: Vec<&str> =
        events[0]["changed_fields"].as_array().unwrap().iter().map(|f| f.as_str().unwrap()).collect();
    for field in [
        "mission_id",
        "given_name",
        "family_name",
        "date_of_birth",
        "passport_number",
        "email",
        "phone",
        "address",
        "registration_status",
    ] {
        assert!(fields.contains(&field), "`{field}` missing from {fields:?}");
    }
    assert!(!fields.contains(&"profile"), "`profile` is not a field of a citizen: {fields:?}");
}
both!(a_citizen_registration_lists_its_field_names);

/// Refused, failed and empty changes, and idempotent replays, leave the log as it was:
/// the audit row is written in the transaction of the change, or not at all.
async fn a_failed_change_leaves_no_audit_row(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let w: World = app.world().await;
    let a = format!("{CITIZENS}/{}", w.citizen_a.id);
    let sx = format!("{STAFF}/{}/assignments", w.staff_x.id);
    let service = format!("{SERVICES}/{}", text(&w.service, "id"));
    let mission = format!("{MISSIONS}/{}", w.x);
    let retired = text(&w.inactive_service, "id");
    // Changes made before the snapshot: a disabled client, a keyed creation.
    let gone = app.create_client(&w.admin, &json!({ "name": "gone", "scopes": ["admin"] })).await;
    let gone = text(&gone, "client_id");
    send_ok(app.post_empty(&format!("{CLIENTS}/{gone}/disable"), &w.admin).await, "disable").await;
    let keyed = || {
        app.authed(Method::POST, SERVICES, &w.admin)
            .header("idempotency-key", "svc-1")
            .json(&service_body("keyed"))
            .send()
    };
    assert_eq!(keyed().await.unwrap().status(), StatusCode::CREATED);

    let before = log(&app, &w.admin, AUDIT_EVENTS).await;
    let duplicate = {
        let mut body = citizen_body(&w.x, "X0000A");
        body["issue_client"] = json!(true);
        body
    };
    let cases: Vec<(&str, reqwest::Response, u16)> = vec![
        ("stale mission", app.patch_json(&mission, &w.admin, Some("\"9\""), &json!({ "city": "Nice" })).await, 412),
        ("invalid mission", app.patch_json(&mission, &w.admin, Some("*"), &json!({ "country": "XX" })).await, 422),
        ("mission by a mission admin", app.patch_json(&mission, &w.admin_x.token, Some("*"), &json!({ "city": "Nice" })).await, 403),
        ("taken mission code", app.post_json(MISSIONS, &w.admin, &mission_body("fr-paris")).await, 409),
        ("stale service", app.patch_json(&service, &w.admin, Some("\"9\""), &json!({ "sla_days": 3 })).await, 412),
        ("invalid service", app.patch_json(&service, &w.admin, Some("*"), &json!({ "sla_days": 0 })).await, 422),
        ("service by a mission admin", app.patch_json(&service, &w.admin_x.token, Some("*"), &json!({ "sla_days": 3 })).await, 403),
        ("service by staff", app.patch_json(&service, &w.staff_x.token, Some("*"), &json!({ "sla_days": 3 })).await, 403),
        ("taken service code", app.post_json(SERVICES, &w.admin, &service_body("passport_renewal")).await, 409),
        ("invalid service creation", app.post_json(SERVICES, &w.admin, &json!({ "code": "x" })).await, 422),
        ("duplicate passport with a client", app.post_json(CITIZENS, &w.admin, &duplicate).await, 409),
        ("invalid registration", app.post_json(CITIZENS, &w.admin, &citizen_body(&w.x, "no")).await, 422),
        ("registration elsewhere", app.post_json(CITIZENS, &w.admin_y.token, &citizen_body(&w.x, "19ZZ1")).await, 403),
        ("stale citizen", app.patch_json(&a, &w.admin, Some("\"9\""), &json!({ "phone": "+33700000009" })).await, 412),
        ("citizen's identity", app.patch_json(&a, &w.citizen_a.token, Some("*"), &json!({ "given_name": "Eve" })).await, 422),
        ("citizen by staff", app.patch_json(&a, &w.staff_x.token, Some("*"), &json!({ "phone": "+33700000009" })).await, 403),
        ("citizen by another", app.patch_json(&a, &w.citizen_b.token, Some("*"), &json!({ "phone": "+33700000009" })).await, 404),
        ("taken passport", app.patch_json(&a, &w.admin, Some("*"), &json!({ "passport_number": "X0000B" })).await, 409),
        // pending → active is legal: the one real change here.
        ("activation", app.patch_json(&a, &w.admin, Some("*"), &json!({ "registration_status": "active" })).await, 200),
        ("illegal transition", app.patch_json(&a, &w.admin, Some("*"), &json!({ "registration_status": "pending" })).await, 422),
        ("inactive assignment", app.patch_json(&sx, &w.admin, Some("*"), &json!({ "service_type_ids": [retired] })).await, 422),
        ("stale assignment", app.patch_json(&sx, &w.admin, Some("\"9\""), &json!({ "service_type_ids": [] })).await, 412),
        ("assignment elsewhere", app.patch_json(&sx, &w.admin_y.token, Some("*"), &json!({ "service_type_ids": [] })).await, 404),
        ("staff with an inactive type", app.post_json(STAFF, &w.admin, &json!({ "mission_id": w.x, "name": "Z", "email": "z@x.example", "job_title": "Clerk", "service_type_ids": [retired] })).await, 422),
        ("invalid client", app.post_json(CLIENTS, &w.admin, &json!({ "name": "x", "scopes": ["citizen"] })).await, 422),
        ("rotating a disabled client", app.post_empty(&format!("{CLIENTS}/{gone}/rotate-secret"), &w.admin).await, 409),
        // Empty changes and replays answer 200/201 but record nothing.
        ("disabling again", app.post_empty(&format!("{CLIENTS}/{gone}/disable"), &w.admin).await, 200),
        ("same mission", app.patch_json(&mission, &w.admin, Some("*"), &json!({ "city": "Paris" })).await, 200),
        ("same service", app.patch_json(&service, &w.admin, Some("*"), &json!({ "sla_days": 21 })).await, 200),
        ("same phone", app.patch_json(&a, &w.citizen_a.token, Some("*"), &json!({ "phone": "+33612345678" })).await, 200),
        ("same assignments", app.patch_json(&sx, &w.admin, Some("*"), &json!({ "service_type_ids": [] })).await, 200),
        ("a replay", keyed().await.unwrap(), 201),
    ];
    for (what, response, status) in cases {
        let actual = response.status().as_u16();
        assert_eq!(actual, status, "{what}: {:?}", response.text().await);
    }
    let allowed = 1;
    let after = log(&app, &w.admin, AUDIT_EVENTS).await;
    assert_eq!(after.len(), before.len() + allowed, "{:#?}", &after[..after.len() - before.len()]);
    assert_eq!(after[0]["action"], "status_changed");
    assert_eq!(after[allowed..], before[..], "nothing else was recorded");
    // And the failed registration left neither a citizen nor a client behind.
    assert_eq!(app.listed_ids(&format!("{CITIZENS}?mission_id={}", w.x), &w.admin).await.len(), 2);
}
both!(a_failed_change_leaves_no_audit_row);

async fn the_log_filters_and_paginates_newest_first(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let w = app.world().await;
    // A few changes by other actors.
    let a = format!("{CITIZENS}/{}", w.citizen_a.id);
    send_ok(
        app.patch_json(&a, &w.citizen_a.token, Some("*"), &json!({ "phone": "+33700000001" })).await,
        "A",
    )
    .await;
    send_ok(
        app.patch_json(&a, &w.admin_x.token, Some("*"), &json!({ "registration_status": "active" })).await,
        "X",
    )
    .await;
    let all = log(&app, &w.admin, &format!("{AUDIT_EVENTS}?limit=100")).await;
    // The world: the first admin client, 2 missions, 2 mission admin clients, 2 service
    // types and a toggle, 2 staff members and 3 citizens with their clients; then 2 changes.
    assert_eq!(all.len(), 1 + 2 + 2 + 3 + 2 * 2 + 3 * 2 + 2, "{all:#?}");
    for limit in [1, 3, 7] {
        assert_eq!(log(&app, &w.admin, &format!("{AUDIT_EVENTS}?limit={limit}")).await, all, "limit={limit}");
    }
    let admin_x = text(&w.admin_x.body, "principal_id");
    let unknown = uuid::Uuid::now_v7().to_string();
    let cases: Vec<(Query, Keep)> = vec![
        (vec![("resource_type", "citizen")], Box::new(|e| e["resource_type"] == "citizen")),
        (vec![("resource_type", "staff_member")], Box::new(|e| e["resource_type"] == "staff_member")),
        (vec![("resource_type", "service_type")], Box::new(|e| e["resource_type"] == "service_type")),
        (vec![("resource_type", "mission")], Box::new(|e| e["resource_type"] == "mission")),
        (vec![("resource_type", "api_client")], Box::new(|e| e["resource_type"] == "api_client")),
        (vec![("resource_type", "nothing")], Box::new(|_| false)),
        (vec![("resource_id", &w.citizen_a.id)], Box::new(|e| e["resource_id"] == w.citizen_a.id.as_str())),
        (vec![("resource_id", &w.x)], Box::new(|e| e["resource_id"] == w.x.as_str())),
        (vec![("resource_id", &unknown)], Box::new(|_| false)),
        (vec![("actor_id", &admin_x)], Box::new(|e| e["actor"]["id"] == admin_x.as_str())),
        (vec![("actor_id", &w.citizen_a.id)], Box::new(|e| e["actor"]["id"] == w.citizen_a.id.as_str())),
        (
            vec![("resource_type", "citizen"), ("actor_id", &admin_x)],
            Box::new(|e| e["resource_type"] == "citizen" && e["actor"]["id"] == admin_x.as_str()),
        ),
        (
            vec![("resource_type", "api_client"), ("resource_id", &w.citizen_a.client_id)],
            Box::new(|e| e["resource_id"] == w.citizen_a.client_id.as_str()),
        ),
    ];
    for (query, keep) in &cases {
        let expected: Vec<Value> = all.iter().filter(|e| keep(e)).cloned().collect();
        for limit in ["1", "100"] {
            let mut query = query.clone();
            query.push(("limit", limit));
            assert_eq!(log(&app, &w.admin, &with_query(AUDIT_EVENTS, &query)).await, expected, "{query:?}");
        }
    }
    let mine = log(&app, &w.admin, &format!("{AUDIT_EVENTS}?actor_id={admin_x}")).await;
    assert_eq!(mine.len(), 1, "{mine:?}");
    assert_eq!(mine[0]["changed_fields"], json!(["registration_status"]));
    assert_eq!(mine[0]["client_id"], w.admin_x.client_id.as_str());

    let long = "t".repeat(65);
    for (query, pointer) in [
        (vec![("resource_id", "citizen-a")], "/query/resource_id"),
        (vec![("actor_id", "me")], "/query/actor_id"),
        (vec![("resource_type", "")], "/query/resource_type"),
        (vec![("resource_type", long.as_str())], "/query/resource_type"),
        (vec![("action", "created")], "/query/action"),
        (vec![("limit", "101")], "/query/limit"),
    ] {
        let response = app.get(&with_query(AUDIT_EVENTS, &query), &w.admin).await;
        let (_, problem) = expect_problem(response, 400, "invalid_query").await;
        assert_eq!(error_pointers(&problem), [pointer], "{query:?}: {problem}");
    }
}
both!(the_log_filters_and_paginates_newest_first);

async fn only_global_admins_read_the_log(backend: Backend) {
    use Expect::*;
    let app = TestApp::spawn(backend).await;
    let w = app.world().await;
    let own_mission = format!("{AUDIT_EVENTS}?resource_id={}", w.x);
    let table = [
        ("global admin", &w.admin, Ok),
        ("admin of X", &w.admin_x.token, Forbidden),
        ("admin of Y", &w.admin_y.token, Forbidden),
        ("staff of X", &w.staff_x.token, Scope),
        ("staff of Y", &w.staff_y.token, Scope),
        ("citizen A of X", &w.citizen_a.token, Scope),
        ("citizen B of X", &w.citizen_b.token, Scope),
        ("citizen C of Y", &w.citizen_c.token, Scope),
    ];
    for (who, token, expect) in table {
        for path in [AUDIT_EVENTS, own_mission.as_str()] {
            let body = expect.check(app.get(path, token).await, &format!("{who}: GET {path}")).await;
            if expect == Ok {
                assert!(!body["items"].as_array().unwrap().is_empty(), "{body}");
            }
        }
    }
    let anonymous = app.request(Method::GET, AUDIT_EVENTS).send().await.unwrap();
    expect_problem(anonymous, 401, "unauthorized").await;
    for method in [Method::POST, Method::DELETE] {
        let response = app.authed(method, AUDIT_EVENTS, &w.admin).send().await.unwrap();
        expect_problem(response, 405, "method_not_allowed").await;
    }
}
both!(only_global_admins_read_the_log);
