//! `GET /api/v1/requests/{id}` read by its owner's representative naming them in
//! `On-Behalf-Of`, beside the same read by the owner (docs/benchmarks.md "Acting"): what
//! resolving the mandate at each call costs (the representations between the two, the
//! dependant and the mission read from the primary, docs/representation.md "Acting"),
//! with the access-log entry the representative's read writes.

use crate::{Seeded, print_http, text};
use consular_tests::TestApp;
use consular_tests::bench::{HttpRun, MakeRequest, Result, load, psql};
use consular_tests::serde_json::json;
use std::sync::Arc;
use std::sync::atomic::AtomicUsize;
use std::time::Duration;

/// The owner's read and the representative's, each for the warm-up and then `seconds`.
pub async fn acting(
    app: &TestApp,
    url: &str,
    seeded: &Seeded,
    warmup: u64,
    seconds: u64,
) -> Result<(HttpRun, HttpRun)> {
    let id = &seeded.detail_id;
    let path = format!("/api/v1/requests/{id}");
    let sql = format!("SELECT citizen_id FROM service_requests WHERE id = '{id}'");
    let owner = psql(url, &sql).await?.trim().to_owned();
    if owner == seeded.citizen_id {
        return Err(format!("the detail's request {id} is the guardian's own: no one to act for"));
    }
    println!("\n== acting: GET {path} as its owner, then as their guardian naming them in On-Behalf-Of");

    // The owner's own client; the evidence; the API's citizen made the owner's guardian.
    let admin = &seeded.mission_admin_token;
    let client = json!({
        "name": "Owner", "scopes": ["citizen"], "mission_id": seeded.mission_id, "principal_id": owner,
    });
    let client = app.create_client(admin, &client).await;
    let (client_id, secret) = (text(&client, "client_id")?, text(&client, "client_secret")?);
    let owner_token = app.token_for(&client_id, &secret, None).await.access_token;
    let fields = [("kind", "old_passport"), ("citizen_id", owner.as_str())];
    let pdf = consular_tests::files::pdf(400, 1);
    let evidence = app.upload_ok(admin, &fields, pdf, "order.pdf", "application/pdf").await;
    let guardianship = json!({
        "representative_id": seeded.citizen_id, "kind": "guardian", "valid_from": "2020-01-01",
        "evidence_document_id": text(&evidence, "id")?,
    });
    app.create_at(&format!("/api/v1/citizens/{owner}/representatives"), admin, &guardianship).await;

    let target = app.url(&path);
    let own: MakeRequest = {
        let (target, token) = (target.clone(), owner_token);
        Arc::new(move |http: &reqwest::Client, _| Ok(http.get(&target).bearer_auth(&token)))
    };
    let acting: MakeRequest = {
        let token = seeded.citizen_token.clone();
        Arc::new(move |http: &reqwest::Client, _| {
            Ok(http.get(&target).bearer_auth(&token).header("on-behalf-of", &owner))
        })
    };
    let own = over_http(own, warmup, seconds).await?;
    print_http(&own, &format!("{} requests as the owner", own.requests));
    let acting = over_http(acting, warmup, seconds).await?;
    print_http(&acting, &format!("{} requests as their guardian, On-Behalf-Of", acting.requests));
    Ok((own, acting))
}

async fn over_http(make: MakeRequest, warmup: u64, seconds: u64) -> Result<HttpRun> {
    let next = Arc::new(AtomicUsize::new(0));
    load(crate::clients(), &make, &next, 200, Duration::from_secs(warmup)).await?;
    load(crate::clients(), &make, &next, 200, Duration::from_secs(seconds)).await
}
