//! The authorization matrix (issue 23): every operation of the OpenAPI document, called
//! by every kind of principal — no token, the citizen who owns the objects, another
//! citizen of their mission, a citizen of another mission, staff and an admin of each
//! mission, a global admin, and two tokens of mission 2 that carry the ids of mission 1's
//! owner and staff member (what a client bound to a person of another mission holds) —
//! on both databases, each call judged against the access rule its row in `rules.rs`
//! gives it (the policy tables of crates/domain/src/policy).
//!
//! It fails on any 2xx that should be a refusal, any refusal with the wrong status or
//! code, any refusal of a call that should pass, any 5xx, and any response carrying an
//! id of the other mission's objects (or, without a token, of any object); and on an
//! operation of the document without a row, or a row without an operation, so that a
//! new endpoint cannot ship unclassified. Every problem of a run is listed at once.
//! It fails too on an operation whose declared `security` names other scopes than those
//! its calls showed the server accepting (`scopes.rs`).
//!
//! How a call is filled is in `calls.rs`; the world it is made on, in `fixtures.rs`.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod calls;
mod fixtures;
mod rules;
mod scopes;

use calls::{Call, Headers};
use consular_tests::reqwest::{Method, StatusCode};
use consular_tests::{Backend, TestApp, both, set_setting, token_claims};
use fixtures::Fixtures;
use rules::{OPERATIONS, Operation, Outcome, Rule, Who, call_order};
use scopes::Seen;
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::time::Instant;

/// An operation as the OpenAPI document declares it.
struct Documented {
    method: String,
    path: String,
    headers: Headers,
    /// The operation object, for its `security`.
    operation: Value,
}

/// Every operation of the document, by `operationId`.
fn documented_operations(spec: &Value) -> BTreeMap<String, Documented> {
    let mut operations = BTreeMap::new();
    for (path, item) in spec["paths"].as_object().expect("paths in the OpenAPI document") {
        for (method, operation) in item.as_object().expect("a path item") {
            let Some(id) = operation["operationId"].as_str() else { continue };
            let header = |name: &str| {
                operation["parameters"].as_array().into_iter().flatten().find(|p| {
                    p["in"] == "header" && p["name"].as_str().is_some_and(|n| n.eq_ignore_ascii_case(name))
                })
            };
            let headers = Headers {
                if_match_required: header("If-Match").is_some_and(|p| p["required"] == true),
                idempotency_key: header("Idempotency-Key").is_some(),
            };
            let documented = Documented {
                method: method.to_uppercase(),
                path: path.clone(),
                headers,
                operation: operation.clone(),
            };
            assert!(operations.insert(id.to_owned(), documented).is_none(), "operationId `{id}` twice");
        }
    }
    operations
}

/// A response: its status, the headers that may name resources, and its body.
struct Answer {
    status: u16,
    headers: String,
    body: String,
}

/// One thing the matrix found wrong.
struct Violation {
    operation: String,
    who: &'static str,
    status: String,
    expected: String,
    detail: String,
}

#[derive(Default)]
struct Report {
    violations: Vec<Violation>,
    calls: usize,
    allowed: usize,
    /// Allowed calls answered with a tolerated status (a refusal by state).
    tolerated: BTreeMap<String, usize>,
    denied: usize,
    ignored: usize,
    /// Every answer, by operation id, for `scopes::check`.
    seen: BTreeMap<&'static str, Vec<Seen>>,
}

impl Report {
    fn violation(&mut self, op: &Operation, who: Who, status: &str, expected: &str, detail: String) {
        self.violations.push(Violation {
            operation: format!("{} {} ({})", op.method, op.path, op.id),
            who: who.name(),
            status: status.to_owned(),
            expected: expected.to_owned(),
            detail,
        });
    }

    /// Judges `answer`, the response of `op` to `who`.
    fn judge(&mut self, op: &Operation, who: Who, call: &Call, f: &Fixtures, answer: &Answer) {
        let (status, headers, body) = (answer.status, &answer.headers, &answer.body);
        self.calls += 1;
        let parsed: Value = serde_json::from_str(body).unwrap_or(Value::Null);
        let code = parsed["code"].as_str().or(parsed["error"].as_str()).unwrap_or_default().to_owned();
        let got = format!("{status} {code}");
        self.seen.entry(op.id).or_default().push(Seen { who, status, code: code.clone() });
        let excerpt: String = body.chars().take(240).collect();
        match op.rule.outcome(who) {
            _ if status >= 500 => self.violation(op, who, &got, "never 5xx", excerpt.clone()),
            Outcome::Allowed if (200..300).contains(&status) => self.allowed += 1,
            Outcome::Allowed if op.tolerated.contains(&status) => {
                *self.tolerated.entry(format!("{} {got}", op.id)).or_default() += 1;
            }
            Outcome::Allowed => {
                let tolerated: String = op.tolerated.iter().map(|s| format!("|{s}")).collect();
                self.violation(op, who, &got, &format!("2xx{tolerated}"), excerpt.clone());
            }
            Outcome::Denied(refusal) => {
                let (statuses, want) = refusal.expected();
                if statuses.contains(&status) && want.is_none_or(|w| w == code) {
                    self.denied += 1;
                } else {
                    let what = if (200..300).contains(&status) { "ALLOWED: " } else { "" };
                    self.violation(op, who, &got, &refusal.describe(), format!("{what}{excerpt}"));
                }
            }
            Outcome::Ignored if status == 200 => self.ignored += 1,
            Outcome::Ignored => self.violation(op, who, &got, "200 (ignored)", excerpt.clone()),
        }
        // Ids of the other mission's objects (mission ids are public to every bearer in
        // the list of missions); ids the caller sent itself may come back. A signed URL is
        // the credential: whoever holds it reads what it grants (an export's archive names
        // the owner's objects), so its body is not scanned.
        let seen = format!("{headers} {body}").to_lowercase();
        let sent = call.sent();
        let offending: Vec<String> = f
            .foreign_ids(who)
            .into_iter()
            .filter(|_| op.rule != Rule::SignedUrl)
            .filter(|(id, _)| !(op.id == "list_missions" && f.mission_ids().contains(id)))
            .filter(|(id, _)| seen.contains(&id.to_lowercase()) && !sent.contains(&id.to_lowercase()))
            .map(|(id, what)| format!("{what} {id}"))
            .collect();
        if !offending.is_empty() {
            let detail = format!("another mission's ids {offending:?} in: {excerpt}");
            self.violation(op, who, &got, "no foreign ids", detail);
        }
    }

    fn table(&self) -> String {
        let mut out = String::new();
        for v in &self.violations {
            let _ = writeln!(
                out,
                "{:<62} | {:<20} | got {:<28} | expected {:<24} | {}",
                v.operation, v.who, v.status, v.expected, v.detail
            );
        }
        out
    }
}

/// Whether `token` still authenticates a request.
async fn authenticates(app: &TestApp, token: &str) -> bool {
    app.get("/api/v1/missions", token).await.status() == StatusCode::OK
}

both!(every_operation_answers_every_principal_as_the_policy_says);
async fn every_operation_answers_every_principal_as_the_policy_says(backend: Backend) {
    let started = Instant::now();
    let app = TestApp::spawn_with(backend, |s| {
        // The owners' notifications are made by the outbox worker (in-app only: no SMTP).
        set_setting(s, "run_worker", json!(true));
        set_setting(s, "outbox_poll_ms", json!(50));
        // Every principal asks for tokens from the one test address.
        set_setting(s, "token_rate_limit_per_minute", json!(100_000));
        // The owner holds a booking per fresh object: more than a citizen may book alone.
        set_setting(s, "max_active_bookings_per_citizen", json!(100));
    })
    .await;
    let spec: Value =
        app.request(Method::GET, "/api/v1/openapi.json").send().await.unwrap().json().await.unwrap();
    let documented = documented_operations(&spec);
    let mut report = Report::default();

    // Every operation of the document has a row, and every row an operation.
    let mut unclassified = Vec::new();
    for (id, d) in &documented {
        match OPERATIONS.iter().find(|op| op.id == id) {
            None => unclassified.push(format!("{} {} ({id})", d.method, d.path)),
            Some(op) if op.method != d.method || op.path != d.path => unclassified.push(format!(
                "{id}: the table says {} {}, the document {} {}",
                op.method, op.path, d.method, d.path
            )),
            Some(_) => {}
        }
    }
    let stale: Vec<&str> =
        OPERATIONS.iter().map(|op| op.id).filter(|id| !documented.contains_key(*id)).collect();
    assert!(
        unclassified.is_empty() && stale.is_empty(),
        "the matrix's table (tests/tests/authorization_matrix/rules.rs) and the OpenAPI document \
         disagree.\nOperations without a row (classify them: docs/architecture.md, \"Adding an area\", step 8): \
         {unclassified:#?}\nRows without an operation: {stale:#?}"
    );

    let f = Fixtures::build(&app).await;
    let setup = started.elapsed();
    let wrong_tokens = scopes::check_tokens(|who| {
        (who != Who::Anonymous)
            .then(|| token_claims(&f.caller(who).token)["scope"].as_str().unwrap_or_default().to_owned())
    });
    assert!(wrong_tokens.is_empty(), "{wrong_tokens:#?}");

    // Everything that ends its object runs last.
    let mut ordered: Vec<&Operation> = OPERATIONS.iter().collect();
    ordered.sort_by_key(|op| op.destructive);
    let mut n = 0;
    for op in ordered {
        let headers = documented[op.id].headers;
        for who in call_order(op.rule) {
            if op.id == "revoke_token"
                && who == Who::Owner
                && !authenticates(&app, &f.owner_spare_access).await
            {
                let detail = "another client's revocation of the owner's token took effect".to_owned();
                report.violation(op, who, "-", "token still valid", detail);
            }
            n += 1;
            let call = calls::call(op, headers, who, &f, n);
            let mut request = call.build(&app, &f.caller(who).token);
            if who.acts_for_owner() {
                request = request.header("on-behalf-of", &f.owner);
            }
            let response = request.send().await.expect("a response");
            let status = response.status().as_u16();
            let mut headers = String::new();
            for name in ["location", "link", "content-disposition"] {
                headers.push_str(&consular_tests::header(response.headers(), name));
                headers.push(' ');
            }
            let body = String::from_utf8_lossy(&response.bytes().await.expect("a body")).into_owned();
            report.judge(op, who, &call, &f, &Answer { status, headers, body });
        }
        if op.id == "revoke_token" && authenticates(&app, &f.owner_spare_access).await {
            let detail = "the owner's own revocation did not take effect".to_owned();
            report.violation(op, Who::Owner, "-", "token refused", detail);
        }
    }

    // The scopes each operation declares are those its calls showed the server accepting.
    for (id, d) in &documented {
        let seen = report.seen.get(id.as_str()).map(Vec::as_slice).unwrap_or_default();
        for detail in scopes::check(&d.operation, seen) {
            report.violations.push(Violation {
                operation: format!("{} {} ({id})", d.method, d.path),
                who: "callers by scope",
                status: "-".to_owned(),
                expected: "declared security".to_owned(),
                detail,
            });
        }
    }

    let summary = format!(
        "authorization matrix on {backend:?}: {} operations x {} principals = {} calls \
         ({} allowed, {} refused as expected, {} ignored as RFC 7009 says, tolerated by state: {:?}; \
         bodies scanned for {:?} ids of missions 1 and 2); setup {:.1?}, calls {:.1?}",
        OPERATIONS.len(),
        Who::ALL.len(),
        report.calls,
        report.allowed,
        report.denied,
        report.ignored,
        report.tolerated,
        f.id_counts(),
        setup,
        started.elapsed() - setup,
    );
    eprintln!("{summary}");
    assert!(
        report.violations.is_empty(),
        "{summary}\n{} violations:\n{}",
        report.violations.len(),
        report.table()
    );
}
