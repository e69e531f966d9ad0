//! The edge towards browsers and proxies (docs/api.md "Browsers", docs/operations.md
//! "Proxies"): CORS for the configured origins only, checked by a real browser (headless
//! Chromium) running a page of another origin; the forwarding header believed only from
//! trusted proxies, for the token rate limits and for the address the audit log records.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use consular_tests::{
    AUDIT_EVENTS, Backend, TestApp, both, expect_problem, header, set_setting, text, with_query,
};
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};
use std::path::Path;
use std::process::Stdio;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

const REQUESTS: &str = "/api/v1/requests";

/// Serves `html` to every request on `listener` until the test ends; the page's URL.
fn serve_page(listener: TcpListener, html: String) -> String {
    let url = format!("http://{}/portal.html", listener.local_addr().unwrap());
    tokio::spawn(async move {
        loop {
            let Ok((mut stream, _)) = listener.accept().await else { return };
            let html = html.clone();
            tokio::spawn(async move {
                let mut request = [0u8; 4096];
                let _ = stream.read(&mut request).await;
                let response = format!(
                    "HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{html}",
                    html.len()
                );
                let _ = stream.write_all(response.as_bytes()).await;
            });
        }
    });
    url
}

/// A page that obtains a token from `api` with the client credentials and lists the
/// caller's service requests, all with `fetch`, and writes what it saw into `#result` as
/// JSON (or the error the browser gave it).
fn portal_page(api: &str, client_id: &str, secret: &str) -> String {
    format!(
        r#"<!doctype html><html><head><meta charset="utf-8"><title>portal</title></head><body>
<pre id="result">pending</pre>
<script>
(async () => {{
  const out = document.getElementById("result");
  try {{
    const token = await fetch("{api}/api/v1/auth/token", {{
      method: "POST",
      headers: {{ "Authorization": "Basic " + btoa("{client_id}:{secret}"),
                 "Content-Type": "application/x-www-form-urlencoded" }},
      body: "grant_type=client_credentials",
    }});
    const issued = await token.json();
    const list = await fetch("{api}/api/v1/requests?limit=5", {{
      headers: {{ "Authorization": "Bearer " + issued.access_token, "X-Request-Id": "browser-list-1" }},
    }});
    const body = await list.json();
    out.textContent = JSON.stringify({{
      token_status: token.status,
      list_status: list.status,
      request_id: list.headers.get("X-Request-Id"),
      items: body.items.map(r => r.id),
    }});
  }} catch (e) {{
    out.textContent = JSON.stringify({{ error: String(e) }});
  }}
}})();
</script></body></html>"#
    )
}

/// Loads `url` in headless Chromium (Debian's `chromium`), lets its scripts and their
/// requests run, and returns the text of `#result` from the page's final DOM.
async fn run_in_browser(url: &str, profile: &Path) -> Value {
    let chromium = ["/usr/bin/chromium", "/usr/bin/chromium-browser"]
        .into_iter()
        .find(|p| Path::new(p).exists())
        .expect("Debian's chromium (apt install chromium; .ci/run installs it)");
    let output = tokio::time::timeout(
        Duration::from_secs(90),
        tokio::process::Command::new(chromium)
            .args([
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-quic",
                "--no-first-run",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                // Virtual time waits for the page's pending requests before the dump.
                "--virtual-time-budget=20000",
                "--dump-dom",
            ])
            .arg(format!("--user-data-dir={}", profile.display()))
            .arg(url)
            .stdin(Stdio::null())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .output(),
    )
    .await
    .expect("chromium finished within 90 s")
    .expect("chromium runs");
    let dom = String::from_utf8_lossy(&output.stdout);
    let start = dom.find("<pre id=\"result\">").unwrap_or_else(|| panic!("no #result in the page: {dom}"));
    let rest = &dom[start + "<pre id=\"result\">".len()..];
    let text = &rest[..rest.find("</pre>").unwrap()];
    let text = text.replace("&quot;", "\"").replace("&amp;", "&").replace("&lt;", "<").replace("&gt;", ">");
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("#result is not JSON ({e}): {text}"))
}

/// A citizen portal in a browser, served from another origin, obtains a token and lists
/// the citizen's requests when its origin is allowed; the same page from an origin that
/// is not allowed gets nothing (the browser withholds the answers).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_browser_page_of_an_allowed_origin_calls_the_api() {
    let profile = tempfile::tempdir().unwrap();
    // The pages' origins must be known before the API starts (its configuration names
    // one), and the pages' content after (it names the API and a client).
    let allowed = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let other = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let allowed_origin = format!("http://{}", allowed.local_addr().unwrap());

    let origin = allowed_origin.clone();
    let app = TestApp::spawn_with(Backend::Sqlite, |s| {
        set_setting(s, "cors_allowed_origins", json!([origin]));
    })
    .await;
    let world = app.world().await;
    let submitted = app
        .post_json(
            REQUESTS,
            &world.citizen_a.token,
            &json!({ "service_type_id": text(&world.service, "id") }),
        )
        .await;
    assert_eq!(submitted.status(), StatusCode::CREATED);
    let submitted: Value = submitted.json().await.unwrap();
    let secret = world.citizen_a.body["client"]["client_secret"].as_str().unwrap().to_owned();
    let html = portal_page(&app.base_url, &world.citizen_a.client_id, &secret);

    let allowed_url = serve_page(allowed, html.clone());
    let seen = run_in_browser(&allowed_url, &profile.path().join("a")).await;
    assert_eq!(
        seen,
        json!({
            "token_status": 200,
            "list_status": 200,
            "request_id": "browser-list-1",
            "items": [submitted["id"]],
        }),
        "the page of the allowed origin"
    );

    let other_url = serve_page(other, html);
    let seen = run_in_browser(&other_url, &profile.path().join("b")).await;
    let error = seen["error"].as_str().unwrap_or_else(|| panic!("the other origin was answered: {seen}"));
    assert!(error.contains("TypeError"), "{seen}");
}

/// `OPTIONS` with `Origin` and `Access-Control-Request-Method` (and headers).
async fn preflight(app: &TestApp, origin: &str, method: &str, headers: &str) -> reqwest::Response {
    app.request(Method::OPTIONS, REQUESTS)
        .header("origin", origin)
        .header("access-control-request-method", method)
        .header("access-control-request-headers", headers)
        .send()
        .await
        .unwrap()
}

/// Preflights of the allowed origin are answered for the API's methods and headers, and
/// the headers a client reads are exposed; other origins' preflights are refused with a
/// problem, their requests served without CORS headers; no origin is allowed by default.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cors_allows_the_configured_origins_only() {
    const PORTAL: &str = "https://portal.example.org";
    let app = TestApp::spawn_with(Backend::Sqlite, |s| {
        set_setting(s, "cors_allowed_origins", json!([PORTAL, "http://127.0.0.1:5173"]));
    })
    .await;
    let wanted = "authorization, content-type, if-match, idempotency-key";
    for method in ["GET", "POST", "PATCH", "PUT", "DELETE"] {
        let response = preflight(&app, PORTAL, method, wanted).await;
        assert_eq!(response.status(), StatusCode::OK, "{method}");
        let headers = response.headers();
        assert_eq!(header(headers, "access-control-allow-origin"), PORTAL);
        assert!(header(headers, "access-control-allow-methods").contains(method), "{headers:?}");
        let allowed = header(headers, "access-control-allow-headers").to_ascii_lowercase();
        for name in ["authorization", "content-type", "if-match", "idempotency-key"] {
            assert!(allowed.contains(name), "{name} not in {allowed}");
        }
        assert_eq!(header(headers, "access-control-max-age"), "3600");
        assert!(headers.get("access-control-allow-credentials").is_none(), "bearer tokens, no cookies");
    }

    // A request of the allowed origin: its answer carries the origin and what a page may read.
    let admin = app.admin_token().await;
    let response = app.authed(Method::GET, REQUESTS, &admin).header("origin", PORTAL).send().await.unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(header(response.headers(), "access-control-allow-origin"), PORTAL);
    let exposed = header(response.headers(), "access-control-expose-headers").to_ascii_lowercase();
    for name in ["etag", "location", "link", "retry-after", "x-request-id"] {
        assert!(exposed.contains(name), "{name} not exposed: {exposed}");
    }
    assert!(header(response.headers(), "vary").to_ascii_lowercase().contains("origin"));

    // Another origin: its preflight is a problem, its request is served without CORS
    // headers (non-browser clients that send an Origin are not refused).
    let refused = preflight(&app, "https://evil.example", "POST", "authorization").await;
    let (headers, problem) = expect_problem(refused, 400, "cors_refused").await;
    assert!(headers.get("access-control-allow-origin").is_none());
    assert!(text(&problem, "detail").contains("origin"), "{problem}");
    let response = app
        .authed(Method::GET, REQUESTS, &admin)
        .header("origin", "https://evil.example")
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    assert!(response.headers().get("access-control-allow-origin").is_none());
    // A header the API does not take is refused in the preflight.
    let refused = preflight(&app, PORTAL, "GET", "x-custom-thing").await;
    expect_problem(refused, 400, "cors_refused").await;

    // By default, no origin at all.
    let plain = TestApp::spawn(Backend::Sqlite).await;
    let refused = preflight(&plain, PORTAL, "GET", "authorization").await;
    expect_problem(refused, 400, "cors_refused").await;
}

/// The audit entries of a mission created by the global admin with `forwarded_for` in
/// `X-Forwarded-For`: the address recorded.
async fn audited_address(app: &TestApp, admin: &str, code: &str, forwarded_for: &str) -> Value {
    let created = app
        .authed(Method::POST, "/api/v1/missions", admin)
        .header("x-forwarded-for", forwarded_for)
        .json(&consular_tests::mission_body(code))
        .send()
        .await
        .unwrap();
    assert_eq!(created.status(), StatusCode::CREATED);
    let mission: Value = created.json().await.unwrap();
    let path =
        with_query(AUDIT_EVENTS, &[("resource_type", "mission"), ("resource_id", &text(&mission, "id"))]);
    let events: Value = app.get(&path, admin).await.json().await.unwrap();
    assert_eq!(events["items"].as_array().unwrap().len(), 1, "{events}");
    events["items"][0]["client_address"].clone()
}

/// Behind a trusted proxy the audit log records the client the proxy forwarded for;
/// without one, the peer (a forged `X-Forwarded-For` changes nothing). On both databases:
/// the address is stored with the entry.
async fn the_audit_log_records_the_client_behind_trusted_proxies(backend: Backend) {
    let direct = TestApp::spawn(backend).await;
    let admin = direct.admin_token().await;
    assert_eq!(audited_address(&direct, &admin, "fr-paris", "203.0.113.9").await, json!("127.0.0.1"));

    // The test's own connections come from 127.0.0.1: it plays the load balancer.
    let proxied =
        TestApp::spawn_with(backend, |s| set_setting(s, "trusted_proxies", json!(["127.0.0.1/32"]))).await;
    let admin = proxied.admin_token().await;
    assert_eq!(audited_address(&proxied, &admin, "fr-paris", "203.0.113.9").await, json!("203.0.113.9"));
    // A client's forged entry on the left is not believed: the proxy's append is.
    assert_eq!(
        audited_address(&proxied, &admin, "de-berlin", "198.51.100.1, 2001:db8::7").await,
        json!("2001:db8::7")
    );
    // Changes made by the command line or the system have no address.
    let path =
        with_query(AUDIT_EVENTS, &[("resource_type", "api_client"), ("resource_id", &proxied.admin_id)]);
    let events: Value = proxied.get(&path, &admin).await.json().await.unwrap();
    let bootstrap = events["items"][0].clone();
    assert_eq!(bootstrap["action"], "created", "{events}");
    assert_eq!(bootstrap["actor"], Value::Null, "{bootstrap}");
    assert_eq!(bootstrap["client_address"], Value::Null, "{bootstrap}");
}
both!(the_audit_log_records_the_client_behind_trusted_proxies);

/// `POST /auth/token` for a client id that does not exist, from `forwarded_for`.
async fn token_attempt(app: &TestApp, forwarded_for: &str) -> StatusCode {
    app.request(Method::POST, "/api/v1/auth/token")
        .header("x-forwarded-for", forwarded_for)
        .basic_auth(uuid::Uuid::now_v7().to_string(), Some("wrong"))
        .form(&[("grant_type", "client_credentials")])
        .send()
        .await
        .unwrap()
        .status()
}

/// The token endpoints' per-address limit counts the client behind a trusted proxy, so
/// that clients behind one load balancer do not share one limit; without trust, every
/// forwarded address is the peer's.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn token_rate_limits_see_the_client_behind_trusted_proxies() {
    let limit = |s: &mut consular_tests::consular_app::Settings| {
        set_setting(s, "token_rate_limit_per_minute", json!(2))
    };
    let proxied = TestApp::spawn_with(Backend::Sqlite, |s| {
        limit(s);
        set_setting(s, "trusted_proxies", json!(["127.0.0.0/8"]));
    })
    .await;
    for _ in 0..2 {
        assert_eq!(token_attempt(&proxied, "203.0.113.9").await, StatusCode::UNAUTHORIZED);
    }
    assert_eq!(token_attempt(&proxied, "203.0.113.9").await, StatusCode::TOO_MANY_REQUESTS);
    // Another client behind the same proxy has its own limit.
    assert_eq!(token_attempt(&proxied, "203.0.113.10").await, StatusCode::UNAUTHORIZED);

    let direct = TestApp::spawn_with(Backend::Sqlite, limit).await;
    for n in 0..2 {
        assert_eq!(token_attempt(&direct, &format!("203.0.113.{n}")).await, StatusCode::UNAUTHORIZED);
    }
    assert_eq!(token_attempt(&direct, "203.0.113.99").await, StatusCode::TOO_MANY_REQUESTS);
}
