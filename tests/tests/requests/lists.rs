//! Lists: newest first, every filter, pagination, and what each principal sees.

use super::*;

async fn lists_are_newest_first_and_filtered(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let admin = app.admin_token().await;
    let x = mission(&app, &admin, "fr-paris").await;
    let service = text(&service_type(&app, &admin, "passport_renewal", &STAGES, 21).await, "id");
    let other = text(&service_type(&app, &admin, "notary_act", &["Check"], 10).await, "id");
    let first = staff(&app, &admin, &x, "First Officer", &[service.as_str()]).await;
    let second = staff(&app, &admin, &x, "Second Officer", &[service.as_str()]).await;
    let (low, high) = if first.id < second.id { (first, second) } else { (second, first) };
    let alice = citizen(&app, &admin, &x, "X0000A").await;
    let bruno = citizen(&app, &admin, &x, "X0000B").await;

    let r1 = submit_own(&app, &alice, &service).await; // low
    let r2 = submit_own(&app, &bruno, &service).await; // high
    let r3 = submit_own(&app, &alice, &other).await; // nobody
    let r4 = submit_own(&app, &alice, &service).await; // low
    let r5 = submit_own(&app, &bruno, &service).await; // high
    let [r1, r2, r3, r4, r5] = [&r1, &r2, &r3, &r4, &r5].map(|r| text(r, "id"));
    let [r1, r2, r3, r4, r5] = [r1.as_str(), r2.as_str(), r3.as_str(), r4.as_str(), r5.as_str()];
    let (other, service, low_id, high_id) =
        (other.as_str(), service.as_str(), low.id.as_str(), high.id.as_str());
    let (alice_id, bruno_id) = (alice.id.as_str(), bruno.id.as_str());
    change(&app, &low.token, r1, &to("in_review", "r")).await;
    let cancel = app.post_json(&at(r4, "/cancel"), &alice.token, &json!({})).await;
    expect(cancel, StatusCode::OK, "cancel").await;

    let all = list_all(&app, &low.token, REQUESTS).await;
    assert_eq!(ids(&all), [r5, r4, r3, r2, r1], "newest first");
    let times: Vec<_> = all.iter().map(|r| instant(&r["submitted_at"])).collect();
    assert!(times.windows(2).all(|w| w[0] >= w[1]), "{times:?}");
    let at_of = |id: &str| all.iter().find(|r| r["id"] == id).map(|r| text(r, "submitted_at")).unwrap();
    let (t2, t4) = (at_of(r2), at_of(r4));

    let (t2, t4) = (t2.as_str(), t4.as_str());
    let cases: Vec<(Query, Vec<&str>)> = vec![
        (vec![("status", "submitted")], vec![r5, r3, r2]),
        (vec![("status", "submitted,in_review")], vec![r5, r3, r2, r1]),
        (vec![("status", "in_review,cancelled")], vec![r4, r1]),
        (vec![("status", "cancelled")], vec![r4]),
        (vec![("status", "approved,completed")], vec![]),
        (vec![("service_type_id", other)], vec![r3]),
        (vec![("service_type_id", service)], vec![r5, r4, r2, r1]),
        (vec![("assignee_id", low_id)], vec![r4, r1]),
        (vec![("assignee_id", high_id)], vec![r5, r2]),
        (vec![("citizen_id", bruno_id)], vec![r5, r2]),
        (vec![("citizen_id", alice_id)], vec![r4, r3, r1]),
        (vec![("submitted_from", t2), ("submitted_to", t4)], vec![r3, r2]),
        (vec![("submitted_from", t4)], vec![r5, r4]),
        (vec![("submitted_to", t2)], vec![r1]),
        (vec![("overdue", "false")], vec![r5, r4, r3, r2, r1]),
        (vec![("overdue", "true")], vec![]),
        (vec![("status", "submitted"), ("citizen_id", alice_id)], vec![r3]),
        (vec![("status", "submitted"), ("assignee_id", high_id), ("overdue", "false")], vec![r5, r2]),
    ];
    for (query, expected) in cases {
        assert_eq!(listed(&app, &low.token, &query).await, expected, "{query:?}");
    }
    assert!(all.iter().all(|r| r["overdue"] == false), "fresh requests are not overdue");

    for query in [
        [("status", "archived")],
        [("status", "submitted,")],
        [("overdue", "maybe")],
        [("submitted_from", "yesterday")],
        [("assignee_id", "not-a-uuid")],
        [("color", "blue")],
    ] {
        let response = app.get(&with_query(REQUESTS, &query), &low.token).await;
        expect_problem(response, 400, "invalid_query").await;
    }
    // `status=` is the empty list: no filter.
    let unfiltered = app.get(&with_query(REQUESTS, &[("status", "")]), &low.token).await;
    assert_eq!(unfiltered.status(), 200);
}
both!(lists_are_newest_first_and_filtered);

async fn lists_are_paginated_with_link(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let cast = cast(&app).await;
    let mut submitted = Vec::new();
    for _ in 0..5 {
        submitted.push(text(&submit_own(&app, &cast.citizen, &cast.service).await, "id"));
    }
    submitted.reverse();
    for token in [&cast.staff.token, &cast.citizen.token] {
        let first = app.get(&with_query(REQUESTS, &[("limit", "2"), ("status", "submitted")]), token).await;
        let link = next_link(&first).expect("a Link to the second page");
        let first = expect(first, StatusCode::OK, "first page").await;
        assert_eq!(ids(first["items"].as_array().unwrap()), submitted[..2]);
        assert!(link.starts_with(&format!("{REQUESTS}?")), "{link}");
        assert!(link.contains("limit=2") && link.contains("status=submitted"), "filters are kept: {link}");
        assert!(link.ends_with(&format!("cursor={}", text(&first, "next_cursor"))), "{link}");
        let paged = list_all(&app, token, &with_query(REQUESTS, &[("limit", "2")])).await;
        assert_eq!(ids(&paged), submitted);
        let exact = list_all(&app, token, &with_query(REQUESTS, &[("limit", "5")])).await;
        assert_eq!(ids(&exact), submitted);
    }
    for query in [[("limit", "0")], [("limit", "101")], [("cursor", "not-a-cursor")]] {
        let response = app.get(&with_query(REQUESTS, &query), &cast.staff.token).await;
        expect_problem(response, 400, "invalid_query").await;
    }
}
both!(lists_are_paginated_with_link);

async fn citizens_list_their_own_and_staff_their_missions(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let cast = cast(&app).await;
    let y = mission(&app, &cast.admin, "de-berlin").await;
    let staff_y = staff(&app, &cast.admin, &y, "Yann Staff", &[cast.service.as_str()]).await;
    let bruno = citizen(&app, &cast.admin, &cast.mission, "X0000B").await;
    let clara = citizen(&app, &cast.admin, &y, "Y0000C").await;
    let admin_x = app.principal_by(&cast.admin, &["admin"], Some(&cast.mission)).await;
    let admin_y = app.principal_by(&cast.admin, &["admin"], Some(&y)).await;
    let ra = text(&submit_own(&app, &cast.citizen, &cast.service).await, "id");
    let rb = text(&submit_own(&app, &bruno, &cast.service).await, "id");
    let rc = text(&submit_own(&app, &clara, &cast.service).await, "id");
    let (ra, rb, rc) = (ra.as_str(), rb.as_str(), rc.as_str());
    let (alice, bruno, clara, staff_y) = (&cast.citizen, &bruno, &clara, &staff_y);

    let cases: Vec<(&str, &str, Query, Vec<&str>)> = vec![
        ("citizen A", &alice.token, vec![], vec![ra]),
        ("citizen A asking for B's", &alice.token, vec![("citizen_id", &bruno.id)], vec![]),
        ("citizen A asking for C's", &alice.token, vec![("citizen_id", &clara.id)], vec![]),
        ("citizen A asking for their own", &alice.token, vec![("citizen_id", &alice.id)], vec![ra]),
        ("citizen B", &bruno.token, vec![], vec![rb]),
        ("citizen C", &clara.token, vec![], vec![rc]),
        ("staff of X", &cast.staff.token, vec![], vec![rb, ra]),
        ("staff of X asking for C's", &cast.staff.token, vec![("citizen_id", &clara.id)], vec![]),
        ("staff of X asking for Y's staff", &cast.staff.token, vec![("assignee_id", &staff_y.id)], vec![]),
        ("staff of Y", &staff_y.token, vec![], vec![rc]),
        ("admin of X", &admin_x.token, vec![], vec![rb, ra]),
        ("admin of Y", &admin_y.token, vec![], vec![rc]),
        ("global admin", &cast.admin, vec![], vec![rc, rb, ra]),
    ];
    for (who, token, query, expected) in cases {
        assert_eq!(listed(&app, token, &query).await, expected, "{who}");
    }
}
both!(citizens_list_their_own_and_staff_their_missions);
