//! Internal notes (never shown to citizens) and the message thread.

use super::*;

async fn internal_notes_are_for_the_missions_staff_and_admins(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let cast = cast(&app).await;
    let admin_x = app.principal_by(&cast.admin, &["admin"], Some(&cast.mission)).await;
    let id = text(&submit_own(&app, &cast.citizen, &cast.service).await, "id");

    let first = post(&app, &cast.staff.token, &id, "notes", "Passport photo looks edited.").await;
    assert_eq!(first["request_id"], id.as_str());
    assert_eq!(first["author"], cast.staff.actor("staff"));
    assert_eq!(first["body"], "Passport photo looks edited.");
    instant(&first["created_at"]);
    let second = post(&app, &admin_x.token, &id, "notes", "Checked with the issuing office.").await;
    assert_eq!(second["author"]["kind"], "admin");
    let third = post(&app, &cast.admin, &id, "notes", "Global admin was here.").await;

    for token in [&cast.staff.token, &admin_x.token, &cast.admin] {
        let notes = list_all(&app, token, &with_query(&at(&id, "/notes"), &[("limit", "2")])).await;
        assert_eq!(notes, [first.clone(), second.clone(), third.clone()], "oldest first, every page");
        let (_, details) = read(&app, token, &id).await;
        let in_timeline: Vec<&Value> =
            details["timeline"].as_array().unwrap().iter().filter(|i| i["kind"] == "note").collect();
        let expected: Vec<Value> =
            [&first, &second, &third].into_iter().map(|n| post_item("note", n)).collect();
        let in_timeline: Vec<Value> = in_timeline
            .into_iter()
            .map(|i| {
                let mut i = i.clone();
                i.as_object_mut().unwrap().remove("at");
                i
            })
            .collect();
        assert_eq!(in_timeline, expected, "staff and admins see the notes in the timeline");
    }

    // The citizen owner may neither write nor read them.
    let path = at(&id, "/notes");
    let note = json!({ "body": "I am not staff" });
    expect_problem(app.post_json(&path, &cast.citizen.token, &note).await, 403, "insufficient_scope").await;
    expect_problem(app.get(&path, &cast.citizen.token).await, 403, "insufficient_scope").await;
    let (_, theirs) = read(&app, &cast.citizen.token, &id).await;
    assert!(theirs["timeline"].as_array().unwrap().iter().all(|i| i["kind"] != "note"), "{theirs}");

    // Body limits, and a retried note is written once.
    invalid(app.post_json(&path, &cast.staff.token, &json!({ "body": "" })).await, "/body").await;
    invalid(app.post_json(&path, &cast.staff.token, &json!({ "body": "a".repeat(4001) })).await, "/body")
        .await;
    let keyed = json!({ "body": "Retried note" });
    let once = expect(
        post_keyed(&app, &path, &cast.staff.token, "note-1", &keyed).await,
        StatusCode::CREATED,
        "note",
    )
    .await;
    let again = expect(
        post_keyed(&app, &path, &cast.staff.token, "note-1", &keyed).await,
        StatusCode::CREATED,
        "replay",
    )
    .await;
    assert_eq!(once, again);
    assert_eq!(list_all(&app, &cast.staff.token, &path).await.len(), 4);
}
both!(internal_notes_are_for_the_missions_staff_and_admins);

/// Every response a citizen can receive, as raw text (status, headers and body).
struct Seen(Vec<String>);

impl Seen {
    async fn record(&mut self, what: &str, response: reqwest::Response) -> Value {
        let status = response.status();
        let headers = format!("{:?}", response.headers());
        let raw = response.text().await.expect("a body");
        self.0.push(format!("{what} -> {status}\n{headers}\n{raw}"));
        serde_json::from_str(&raw).unwrap_or(Value::Null)
    }
}

async fn no_response_a_citizen_receives_contains_a_note(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let cast = cast(&app).await;
    let (staff, citizen) = (&cast.staff, &cast.citizen);
    let secret = format!("SECRET-NOTE-{}", uuid::Uuid::now_v7().simple());
    let first = text(&submit_own(&app, citizen, &cast.service).await, "id");
    let second = text(&submit_own(&app, citizen, &cast.service).await, "id");

    // Notes on both requests, around every kind of change and message.
    let mut note_ids = Vec::new();
    let mut note = async |id: &str, n: usize| {
        let body = json!({ "body": format!("{secret} #{n}: suspected fraud, do not tell the applicant") });
        let keyed =
            post_keyed(&app, &at(id, "/notes"), &staff.token, &format!("shared-key-{n}"), &body).await;
        note_ids.push(text(&expect(keyed, StatusCode::CREATED, "note").await, "id"));
    };
    note(&first, 1).await;
    post(&app, &citizen.token, &first, "messages", "When will it be ready?").await;
    note(&first, 2).await;
    change(&app, &staff.token, &first, &to("in_review", "We are checking your file")).await;
    post(&app, &staff.token, &first, "messages", "We are on it.").await;
    note(&first, 3).await;
    change(&app, &staff.token, &first, &json!({ "advance_stage": true })).await;
    note(&second, 4).await;

    // The notes exist and staff read them.
    let (_, staff_view) = read(&app, &staff.token, &first).await;
    assert!(staff_view.to_string().contains(&secret), "staff see the notes in the timeline");
    let raw_notes = app.get(&at(&first, "/notes"), &staff.token).await.text().await.unwrap();
    assert!(raw_notes.contains(&secret));

    let mut seen = Seen(Vec::new());
    let token = &citizen.token;
    seen.record("list", app.get(REQUESTS, token).await).await;
    seen.record(
        "list by status",
        app.get(&with_query(REQUESTS, &[("status", "submitted,in_review")]), token).await,
    )
    .await;
    let page =
        seen.record("list page 1", app.get(&with_query(REQUESTS, &[("limit", "1")]), token).await).await;
    let cursor = text(&page, "next_cursor");
    let next = with_query(REQUESTS, &[("limit", "1"), ("cursor", &cursor)]);
    seen.record("list page 2", app.get(&next, token).await).await;
    for id in [&first, &second] {
        seen.record("details", app.get(&at(id, ""), token).await).await;
        seen.record("messages", app.get(&at(id, "/messages"), token).await).await;
        seen.record(
            "messages page",
            app.get(&with_query(&at(id, "/messages"), &[("limit", "1")]), token).await,
        )
        .await;
        seen.record("notes list", app.get(&at(id, "/notes"), token).await).await;
        seen.record(
            "notes list, bad page",
            app.get(&with_query(&at(id, "/notes"), &[("limit", "0")]), token).await,
        )
        .await;
        seen.record("note post", app.post_json(&at(id, "/notes"), token, &json!({ "body": "hi" })).await)
            .await;
        seen.record(
            "note post, empty",
            app.post_json(&at(id, "/notes"), token, &json!({ "body": "" })).await,
        )
        .await;
        for n in 0..note_ids.len() {
            // The same Idempotency-Key as staff used for a note, on the citizen's own thread.
            let path = at(id, "/messages");
            let body = json!({ "body": format!("Question {n}") });
            seen.record(
                "keyed message",
                post_keyed(&app, &path, token, &format!("shared-key-{}", n + 1), &body).await,
            )
            .await;
            seen.record(
                "keyed note",
                post_keyed(&app, &at(id, "/notes"), token, &format!("shared-key-{}", n + 1), &body).await,
            )
            .await;
        }
        seen.record(
            "message",
            app.post_json(&at(id, "/messages"), token, &json!({ "body": "Thanks" })).await,
        )
        .await;
        seen.record("status change", patch(&app, token, id, Some("*"), &to("cancelled", "no")).await).await;
        seen.record("status change, no If-Match", patch(&app, token, id, None, &to("cancelled", "no")).await)
            .await;
    }
    seen.record(
        "cancel",
        app.post_json(&at(&second, "/cancel"), token, &json!({ "reason": "Not needed" })).await,
    )
    .await;
    seen.record("details after cancel", app.get(&at(&second, ""), token).await).await;
    seen.record("cancel again", app.post_json(&at(&second, "/cancel"), token, &json!({})).await).await;
    seen.record("submit", app.post_json(REQUESTS, token, &json!({ "service_type_id": cast.service })).await)
        .await;
    seen.record("profile", app.get(&format!("{CITIZENS}/{}", citizen.id), token).await).await;
    seen.record("citizens", app.get(CITIZENS, token).await).await;
    seen.record("queue", app.get(&format!("{STAFF}/{}/queue", staff.id), token).await).await;
    seen.record("staff", app.get(STAFF, token).await).await;
    seen.record("services", app.get(SERVICES, token).await).await;
    seen.record("audit", app.get("/api/v1/audit-events", token).await).await;
    seen.record(
        "audit of the request",
        app.get(&with_query("/api/v1/audit-events", &[("resource_id", &first)]), token).await,
    )
    .await;
    seen.record("unknown request", app.get(&at(&uuid::Uuid::now_v7().to_string(), ""), token).await).await;

    assert!(seen.0.len() > 40, "{} responses", seen.0.len());
    for response in &seen.0 {
        assert!(!response.contains(&secret), "a note reached the citizen:\n{response}");
        for id in &note_ids {
            assert!(!response.contains(id.as_str()), "a note id reached the citizen:\n{response}");
        }
    }
    // Nor does any domain event (what notifications to the citizen are made of).
    for event in outbox(&app).await {
        assert!(!event.payload.to_string().contains(&secret), "{event:?}");
        assert!(!event.kind.contains("note"), "{event:?}");
    }
}
both!(no_response_a_citizen_receives_contains_a_note);

// -------------------------------------------------------------------------- 7. messages

async fn both_sides_write_on_the_thread_oldest_first(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let cast = cast(&app).await;
    let admin_x = app.principal_by(&cast.admin, &["admin"], Some(&cast.mission)).await;
    let id = text(&submit_own(&app, &cast.citizen, &cast.service).await, "id");
    let path = at(&id, "/messages");
    let writers = [
        (&cast.citizen.token, "Hello, is my file complete?"),
        (&cast.staff.token, "One photo is missing."),
        (&cast.citizen.token, "Here it is."),
        (&admin_x.token, "Thank you, we have it."),
        (&cast.staff.token, "Your passport is being printed."),
    ];
    let mut posted = Vec::new();
    for (token, body) in writers {
        let message = post(&app, token, &id, "messages", body).await;
        assert_eq!(message["request_id"], id.as_str());
        assert_eq!(message["body"], body);
        instant(&message["created_at"]);
        posted.push(message);
    }
    let kinds: Vec<&str> = posted.iter().map(|m| m["author"]["kind"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["citizen", "staff", "citizen", "admin", "staff"]);
    assert_eq!(posted[0]["author"], cast.citizen.actor("citizen"));
    assert_eq!(posted[1]["author"], cast.staff.actor("staff"));

    for token in [&cast.citizen.token, &cast.staff.token, &admin_x.token, &cast.admin] {
        let first = app.get(&with_query(&path, &[("limit", "2")]), token).await;
        assert!(next_link(&first).is_some(), "a Link to the next page");
        let thread = list_all(&app, token, &with_query(&path, &[("limit", "2")])).await;
        assert_eq!(thread, posted, "oldest first, every page");
        assert_eq!(list_all(&app, token, &path).await, posted);
    }
    let (_, details) = read(&app, &cast.citizen.token, &id).await;
    let in_timeline: Vec<&Value> =
        details["timeline"].as_array().unwrap().iter().filter(|i| i["kind"] == "message").collect();
    assert_eq!(in_timeline.len(), 5, "{details}");
    for (item, message) in in_timeline.iter().zip(&posted) {
        assert_eq!(item["item_id"], message["id"]);
        assert_eq!(item["text"], message["body"]);
    }
}
both!(both_sides_write_on_the_thread_oldest_first);

async fn message_bodies_are_checked_and_retries_are_replayed(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let cast = cast(&app).await;
    let bruno = citizen(&app, &cast.admin, &cast.mission, "X0000B").await;
    let id = text(&submit_own(&app, &cast.citizen, &cast.service).await, "id");
    let path = at(&id, "/messages");
    let events = event_count(&app).await;
    for token in [&cast.citizen.token, &cast.staff.token] {
        invalid(app.post_json(&path, token, &json!({ "body": "" })).await, "/body").await;
        invalid(app.post_json(&path, token, &json!({ "body": " \n\t " })).await, "/body").await;
        invalid(app.post_json(&path, token, &json!({ "body": "a".repeat(4001) })).await, "/body").await;
        for body in [json!({}), json!({ "body": 42 }), json!({ "body": "hi", "subject": "x" })] {
            let response = app.post_json(&path, token, &body).await;
            assert_eq!(response.status(), StatusCode::UNPROCESSABLE_ENTITY, "{body}");
        }
    }
    assert_eq!(event_count(&app).await, events, "a refused message writes no event");
    // 4000 characters (not bytes) is the limit.
    let longest = post(&app, &cast.citizen.token, &id, "messages", &"é".repeat(4000)).await;
    assert_eq!(longest["body"].as_str().unwrap().chars().count(), 4000);

    let body = json!({ "body": "Sent twice over a bad network" });
    let first = post_keyed(&app, &path, &cast.citizen.token, "msg-0001", &body).await;
    let first = expect(first, StatusCode::CREATED, "keyed message").await;
    let events = event_count(&app).await;
    let again = post_keyed(&app, &path, &cast.citizen.token, "msg-0001", &body).await;
    assert_eq!(expect(again, StatusCode::CREATED, "replay").await, first);
    assert_eq!(event_count(&app).await, events, "a replay writes no event");
    let other = json!({ "body": "Something else" });
    let reused = post_keyed(&app, &path, &cast.citizen.token, "msg-0001", &other).await;
    expect_problem(reused, 422, "idempotency_key_reused").await;
    let thread = list_all(&app, &cast.citizen.token, &path).await;
    assert_eq!(ids(&thread), [text(&longest, "id"), text(&first, "id")], "one message per key");

    // Another citizen has no such thread.
    expect_problem(app.get(&path, &bruno.token).await, 404, "not_found").await;
    let intrusion = app.post_json(&path, &bruno.token, &json!({ "body": "Hi, I am Bruno" })).await;
    expect_problem(intrusion, 404, "not_found").await;
    assert_eq!(list_all(&app, &cast.citizen.token, &path).await.len(), 2);
}
both!(message_bodies_are_checked_and_retries_are_replayed);
