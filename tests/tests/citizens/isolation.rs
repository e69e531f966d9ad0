//! Who reaches which citizen: the isolation matrix, unknown citizens, and a client minted
//! for another mission's citizen.

use super::*;

/// Every caller against every citizen endpoint (docs/api.md "Who sees what"): objects the
/// caller may not see are 404, endpoints their scope does not reach are 403, and lists
/// hold only what they may see.
async fn the_citizen_isolation_matrix(backend: Backend) {
    use Expect::*;
    let app = TestApp::spawn(backend).await;
    let w = app.world().await;
    let (a, b, c) = (&w.citizen_a.id, &w.citizen_b.id, &w.citizen_c.id);
    let path_a = format!("{CITIZENS}/{a}");
    /// What a list answers: these citizens, or a refusal.
    enum Listed<'a> {
        Only(Vec<&'a String>),
        Refused(Expect),
    }
    use Listed::*;
    let table: [(&str, &str, Expect, Expect, Listed, Listed, Expect); 8] = [
        //                                       get A      patch A    list              list ?mission_id=X  register in X
        ("global admin", &w.admin, Ok, Ok, Only(vec![a, b, c]), Only(vec![a, b]), Created),
        ("admin of X", &w.admin_x.token, Ok, Ok, Only(vec![a, b]), Only(vec![a, b]), Created),
        ("admin of Y", &w.admin_y.token, NotFound, NotFound, Only(vec![c]), Only(vec![]), Forbidden),
        ("staff of X", &w.staff_x.token, Ok, Scope, Refused(Scope), Refused(Scope), Scope),
        ("staff of Y", &w.staff_y.token, NotFound, NotFound, Refused(Scope), Refused(Scope), Scope),
        ("citizen A of X", &w.citizen_a.token, Ok, Ok, Refused(Scope), Refused(Scope), Scope),
        ("citizen B of X", &w.citizen_b.token, NotFound, NotFound, Refused(Scope), Refused(Scope), Scope),
        ("citizen C of Y", &w.citizen_c.token, NotFound, NotFound, Refused(Scope), Refused(Scope), Scope),
    ];
    let mut phones = 0;
    for (who, token, get, patch, list, own_mission, _) in &table {
        let body = get.check(app.get(&path_a, token).await, &format!("{who}: GET A")).await;
        if *get == Ok {
            assert_eq!(&text(&body, "id"), a);
        }
        phones += 1;
        let change = json!({ "phone": format!("+3370000000{phones}") });
        patch
            .check(app.patch_json(&path_a, token, Some("*"), &change).await, &format!("{who}: PATCH A"))
            .await;
        for (query, expected) in [("", list), (&*format!("?mission_id={}", w.x), own_mission)] {
            let path = format!("{CITIZENS}{query}");
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
        let unknown = format!("{CITIZENS}/{}", uuid::Uuid::now_v7());
        NotFound.check(app.get(&unknown, token).await, &format!("{who}: GET unknown")).await;
    }
    // Exactly the allowed updates happened: the global admin, the admin of X, A.
    let read = app.get(&path_a, &w.admin).await;
    assert_eq!(header(read.headers(), "etag"), "\"4\"");
    assert_eq!(read.json::<Value>().await.unwrap()["phone"], "+33700000006", "A's own change was the last");

    for (n, (who, token, .., register)) in table.iter().enumerate() {
        let body = citizen_body(&w.x, &format!("19XX0000{n}"));
        register.check(app.post_json(CITIZENS, token, &body).await, &format!("{who}: register in X")).await;
    }
    let registered = app.listed_ids(&format!("{CITIZENS}?mission_id={}", w.x), &w.admin).await;
    assert_eq!(registered.len(), 4, "A, B and two registrations: {registered:?}");
    // A mission admin registers in their own mission, not elsewhere.
    let own = citizen_body(&w.y, "19YY00001");
    Created.check(app.post_json(CITIZENS, &w.admin_y.token, &own).await, "admin of Y registers in Y").await;
    assert_eq!(app.listed_ids(CITIZENS, &w.admin_y.token).await.len(), 2);
}
both!(the_citizen_isolation_matrix);

async fn unknown_citizens_are_404(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let admin = app.admin_token().await;
    for path in [format!("{CITIZENS}/{}", uuid::Uuid::now_v7()), format!("{CITIZENS}/alice")] {
        expect_problem(app.get(&path, &admin).await, 404, "not_found").await;
        let update = app.patch_json(&path, &admin, Some("*"), &json!({ "phone": "+33700000001" })).await;
        expect_problem(update, 404, "not_found").await;
    }
    let anonymous = app.request(Method::GET, CITIZENS).send().await.unwrap();
    expect_problem(anonymous, 401, "unauthorized").await;
}
both!(unknown_citizens_are_404);

/// A mission admin may create clients for their own mission, but a client naming
/// another mission's citizen as its principal must not open that citizen to them.
async fn a_minted_client_does_not_reach_another_missions_citizen(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let w = app.world().await;
    let path_a = format!("{CITIZENS}/{}", w.citizen_a.id);
    let body =
        json!({ "name": "not A", "scopes": ["citizen"], "mission_id": w.y, "principal_id": w.citizen_a.id });
    // Refused outright since issue 23 (tests/tests/clients.rs has every combination).
    let minted = app.post_json(CLIENTS, &w.admin_y.token, &body).await;
    let (_, problem) = expect_problem(minted, 422, "validation_failed").await;
    assert_eq!(problem["errors"][0]["pointer"], "/principal_id", "{problem}");
    let email = app.get(&path_a, &w.admin).await.json::<Value>().await.unwrap()["email"].clone();
    assert_eq!(email, json!("alice.martin@example.org"));
}
both!(a_minted_client_does_not_reach_another_missions_citizen);
