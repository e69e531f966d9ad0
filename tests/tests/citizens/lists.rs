//! Lists: every filter, and pagination.

use super::*;

/// Registers the filter test's citizens; returns their ids in registration order.
async fn register_population(app: &TestApp, admin: &str, x: &str, y: &str) -> Vec<Value> {
    let people = [
        (x, "Alice", "Martin", "FR", "pending", "alice.martin@example.org"),
        (x, "Bruno", "DUPONT", "BE", "active", "b.dupont@mail.example"),
        (x, "Camille", "Zidane", "FR", "deregistered", "camille_z@example.org"),
        (y, "Dana", "Martinez", "FR", "active", "dana@example.org"),
        (y, "Eve", "Smith", "US", "pending", "eve.smith@example.net"),
    ];
    let mut created = Vec::new();
    for (n, (mission, given, family, nationality, status, email)) in people.into_iter().enumerate() {
        let mut body = citizen_body(mission, &format!("19PP0000{n}"));
        body["given_name"] = json!(given);
        body["family_name"] = json!(family);
        body["nationality"] = json!(nationality);
        body["registration_status"] = json!(status);
        body["email"] = json!(email);
        created.push(app.create_at(CITIZENS, admin, &body).await);
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    created
}

async fn citizen_lists_filter_on_every_field(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let (admin, x) = admin_and_mission(&app).await;
    let y = text(&app.create_mission(&admin, "de-berlin").await, "id");
    let people = register_population(&app, &admin, &x, &y).await;
    let ids: Vec<String> = people.iter().map(|p| text(p, "id")).collect();
    let at = |n: usize| text(&people[n]["registration"], "registered_at");
    // The same instant as people[n]'s registration, written with a +02:00 offset.
    let shifted = |n: usize| {
        let instant =
            time::OffsetDateTime::parse(&at(n), &time::format_description::well_known::Rfc3339).unwrap();
        instant
            .to_offset(time::macros::offset!(+2))
            .format(&time::format_description::well_known::Rfc3339)
            .unwrap()
    };
    let (at1, at3, shifted1, shifted3) = (at(1), at(3), shifted(1), shifted(3));
    let cases: Vec<(Query, Vec<usize>)> = vec![
        (vec![], vec![0, 1, 2, 3, 4]),
        (vec![("mission_id", &x)], vec![0, 1, 2]),
        (vec![("mission_id", &y)], vec![3, 4]),
        (vec![("registration_status", "pending")], vec![0, 4]),
        (vec![("registration_status", "active")], vec![1, 3]),
        (vec![("registration_status", "deregistered")], vec![2]),
        (vec![("nationality", "FR")], vec![0, 2, 3]),
        (vec![("nationality", "US")], vec![4]),
        (vec![("nationality", "DE")], vec![]),
        // q: the given name, family name or email, containing the text, ignoring ASCII case.
        (vec![("q", "martin")], vec![0, 3]),
        (vec![("q", "MARTIN")], vec![0, 3]),
        (vec![("q", "mArTiNeZ")], vec![3]),
        (vec![("q", "dupont")], vec![1]),
        (vec![("q", "Bruno")], vec![1]),
        (vec![("q", "EXAMPLE.ORG")], vec![0, 2, 3]),
        (vec![("q", "@mail.")], vec![1]),
        (vec![("q", "zz")], vec![]),
        // LIKE wildcards match only themselves.
        (vec![("q", "_")], vec![2]),
        (vec![("q", "%")], vec![]),
        (vec![("q", "e_s")], vec![]),
        (vec![("q", "\\")], vec![]),
        // registered_from is inclusive, registered_to exclusive; offsets are honoured.
        (vec![("registered_from", &at1)], vec![1, 2, 3, 4]),
        (vec![("registered_to", &at3)], vec![0, 1, 2]),
        (vec![("registered_from", &at1), ("registered_to", &at3)], vec![1, 2]),
        (vec![("registered_from", &shifted1), ("registered_to", &shifted3)], vec![1, 2]),
        (
            vec![("registered_from", "2000-01-01T00:00:00Z"), ("registered_to", "2000-01-02T00:00:00Z")],
            vec![],
        ),
        // Filters combine.
        (vec![("mission_id", &x), ("nationality", "FR"), ("registration_status", "pending")], vec![0]),
        (vec![("q", "martin"), ("mission_id", &y)], vec![3]),
        (vec![("q", "example"), ("registration_status", "active"), ("registered_from", &at1)], vec![1, 3]),
    ];
    for (query, expected) in &cases {
        let expected: Vec<&String> = expected.iter().map(|n| &ids[*n]).collect();
        for limit in ["1", "100"] {
            let mut query = query.clone();
            query.push(("limit", limit));
            // Following the Link header keeps the filters.
            let listed = app.listed_ids(&with_query(CITIZENS, &query), &admin).await;
            assert_eq!(listed.iter().collect::<Vec<_>>(), expected, "{query:?}");
        }
    }

    // A mission admin's filters apply within their mission.
    let head = app.principal_by(&admin, &["admin"], Some(&x)).await;
    for (query, expected) in [
        (vec![], vec![0, 1, 2]),
        (vec![("q", "martin")], vec![0]),
        (vec![("nationality", "FR")], vec![0, 2]),
        (vec![("mission_id", x.as_str())], vec![0, 1, 2]),
        (vec![("mission_id", y.as_str())], vec![]),
        (vec![("mission_id", y.as_str()), ("q", "dana")], vec![]),
    ] {
        let expected: Vec<&String> = expected.iter().map(|n| &ids[*n]).collect();
        let listed = app.listed_ids(&with_query(CITIZENS, &query), &head.token).await;
        assert_eq!(listed.iter().collect::<Vec<_>>(), expected, "mission admin {query:?}");
    }

    // Malformed filters are 400, naming the parameter.
    let long = "q".repeat(101);
    for (query, pointer) in [
        (vec![("nationality", "fr")], "/query/nationality"),
        (vec![("nationality", "FRA")], "/query/nationality"),
        (vec![("registration_status", "archived")], "/query/registration_status"),
        (vec![("q", "")], "/query/q"),
        (vec![("q", long.as_str())], "/query/q"),
        (vec![("registered_from", "2026-01-01")], "/query/registered_from"),
        (vec![("registered_to", "yesterday")], "/query/registered_to"),
        (vec![("mission_id", "fr-paris")], "/query/mission_id"),
        (vec![("status", "active")], "/query/status"),
    ] {
        let response = app.get(&with_query(CITIZENS, &query), &admin).await;
        let (_, problem) = expect_problem(response, 400, "invalid_query").await;
        assert_eq!(error_pointers(&problem), [pointer], "{query:?}: {problem}");
    }
}
both!(citizen_lists_filter_on_every_field);

async fn citizen_lists_are_paginated(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let (admin, x) = admin_and_mission(&app).await;
    let mut expected = Vec::new();
    for n in 0..5 {
        expected.push(text(
            &app.create_at(CITIZENS, &admin, &citizen_body(&x, &format!("19AB0000{n}"))).await,
            "id",
        ));
    }
    for limit in [1, 2, 5, 100] {
        assert_eq!(
            app.listed_ids(&format!("{CITIZENS}?limit={limit}"), &admin).await,
            expected,
            "limit={limit}"
        );
    }
    let first = app.get(&format!("{CITIZENS}?limit=2&q=alice"), &admin).await;
    let link = header(first.headers(), "link");
    let page: Value = first.json().await.unwrap();
    assert_eq!(page["items"].as_array().unwrap().len(), 2);
    let cursor = text(&page, "next_cursor");
    assert_eq!(link, format!("<{CITIZENS}?limit=2&q=alice&cursor={cursor}>; rel=\"next\""));
    let last: Value = app.get(&format!("{CITIZENS}?limit=5"), &admin).await.json().await.unwrap();
    assert!(last["next_cursor"].is_null(), "an exact last page has no next page: {last}");
    for bad in ["limit=0", "limit=101", "cursor=abc"] {
        expect_problem(app.get(&format!("{CITIZENS}?{bad}"), &admin).await, 400, "invalid_query").await;
    }
}
both!(citizen_lists_are_paginated);
