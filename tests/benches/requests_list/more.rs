//! The scenarios beside the list (docs/benchmarks.md, issue 11), each over HTTP and then
//! its database counterpart through pgbench:
//!
//! - `GET /api/v1/requests/{id}` of a request with a history, a thread and notes, as its
//!   mission's admin; pgbench runs the statements the adapter sends for it (taken from
//!   the adapter itself, `Database::request_detail_statements`) in the same read-only
//!   REPEATABLE READ transaction.
//! - `POST /api/v1/auth/token` (client credentials of a citizen's client); pgbench runs
//!   what the token endpoint asks of the database: the client by id and the refresh
//!   token's insert.
//! - `POST /api/v1/requests` (a citizen's submission with a new `Idempotency-Key` each
//!   time); pgbench runs the same inserts in one transaction: the idempotency record (with
//!   the delete of an expired one before it), the audit entry, the outbox event, the
//!   request and its first history entry, copied from a submission the server made, the
//!   request assigned to one of the members who may take it, at random (its insert moves
//!   that member's count in `staff_workloads`, as the server's does).

use crate::{Seeded, clients, print_http, print_pgbench};
use consular_domain::RequestId;
use consular_tests::TestApp;
use consular_tests::bench::{self, DbRun, HttpRun, MakeRequest, Result, load, psql};
use consular_tests::serde_json::{Value, json};
use std::sync::Arc;
use std::sync::atomic::AtomicUsize;
use std::time::Duration;

/// One scenario over HTTP and its counterpart through pgbench.
pub struct Pair {
    pub name: String,
    /// What pgbench runs, in a few words.
    pub counterpart: String,
    pub http: HttpRun,
    pub db: DbRun,
}

impl Pair {
    fn print(&self) {
        let (http, db) = (&self.http, &self.db);
        print_http(http, &format!("{} requests, {} clients", http.requests, http.clients));
        print_pgbench(db, &format!("{} transactions: {}", db.transactions, self.counterpart));
    }
}

/// Runs `make` for the warm-up and then for `seconds`, every answer `status`.
async fn over_http(make: MakeRequest, status: u16, warmup: u64, seconds: u64) -> Result<HttpRun> {
    let next = Arc::new(AtomicUsize::new(0));
    load(clients(), &make, &next, status, Duration::from_secs(warmup)).await?;
    load(clients(), &make, &next, status, Duration::from_secs(seconds)).await
}

// ------------------------------------------------------------------------------ detail

/// `GET /api/v1/requests/{id}` of the request the seeding gave a thread and notes.
pub async fn detail(app: &TestApp, url: &str, seeded: &Seeded, warmup: u64, seconds: u64) -> Result<Pair> {
    let id = &seeded.detail_id;
    let path = format!("/api/v1/requests/{id}");
    println!("\n== detail: GET {path} (mission admin: with notes)");
    let response = app.get(&path, &seeded.mission_admin_token).await;
    let status = response.status();
    let body: Value = response.json().await.map_err(|e| format!("GET {path}: {e}"))?;
    let timeline = body["timeline"].as_array().map_or(0, Vec::len);
    if status.as_u16() != 200 || timeline != DETAIL_TIMELINE {
        return Err(format!(
            "GET {path}: {status}, {timeline} timeline items (expected {DETAIL_TIMELINE}): {body}"
        ));
    }
    let (token, target) = (seeded.mission_admin_token.clone(), app.url(&path));
    let make: MakeRequest =
        Arc::new(move |http: &reqwest::Client, _| Ok(http.get(&target).bearer_auth(&token)));
    let http = over_http(make, 200, warmup, seconds).await?;

    let request: uuid::Uuid = id.parse().map_err(|e| format!("request id: {e}"))?;
    let db = consular_db::Database::connect(&consular_db::DbConfig::new(url.to_owned()))
        .map_err(|e| format!("database handle: {e}"))?;
    let statements = db.request_detail_statements(RequestId(request)).await;
    db.close();
    let statements = statements.map_err(|e| format!("the adapter's statements: {e}"))?;
    let mut script = "BEGIN ISOLATION LEVEL REPEATABLE READ, READ ONLY;\n".to_owned();
    for statement in &statements {
        script.push_str(&pgbench_statement(statement)?);
        script.push_str(";\n");
    }
    script.push_str("COMMIT;\n");
    let db = bench::pgbench(url, &script, &[("id", id.clone())], &[], clients(), seconds).await?;
    let pair = Pair {
        name: "GET /api/v1/requests/{id}".to_owned(),
        counterpart: format!("the adapter's {} statements in one read-only transaction", statements.len()),
        http,
        db,
    };
    pair.print();
    Ok(pair)
}

/// A statement as `debug_query` shows it (`SQL -- binds: [DbUuid(…), "deleted"]`) for
/// pgbench: `$1` (the request id) becomes the variable `:id`, the other binds (text
/// constants) literals; the highest placeholder first, so that `$1` does not match `$10`.
fn pgbench_statement(shown: &str) -> Result<String> {
    let (sql, binds) = shown.split_once(" -- binds: [").ok_or_else(|| format!("no binds in {shown}"))?;
    let binds: Vec<&str> = binds.trim_end_matches(']').split(", ").collect();
    let mut sql = sql.to_owned();
    for (n, bind) in binds.iter().enumerate().skip(1).rev() {
        let text = bind
            .strip_prefix('"')
            .and_then(|b| b.strip_suffix('"'))
            .ok_or_else(|| format!("bind ${} is not text: {shown}", n + 1))?;
        sql = sql.replace(&format!("${}", n + 1), &format!("'{}'", text.replace('\'', "''")));
    }
    Ok(sql.replace("$1", ":id"))
}

/// History entries, messages and notes the seeding gives the detail's request.
const DETAIL_MESSAGES: usize = 3;
const DETAIL_NOTES: usize = 2;
/// Its timeline: the submission, the messages and the notes.
const DETAIL_TIMELINE: usize = 1 + DETAIL_MESSAGES + DETAIL_NOTES;

/// Gives request `id` its thread and notes, through the API.
pub async fn thread(app: &TestApp, token: &str, id: &str) -> Result<()> {
    for (kind, count) in [("messages", DETAIL_MESSAGES), ("notes", DETAIL_NOTES)] {
        for n in 0..count {
            let path = format!("/api/v1/requests/{id}/{kind}");
            let body = json!({ "body": format!("{kind} {n}: the photo must be less than six months old") });
            let response = app.post_json(&path, token, &body).await;
            if response.status().as_u16() != 201 {
                return Err(format!("POST {path}: {}", response.status()));
            }
        }
    }
    Ok(())
}

// ------------------------------------------------------------------------------- token

/// `POST /api/v1/auth/token`, client credentials of the citizen's client.
pub async fn token(app: &TestApp, url: &str, seeded: &Seeded, warmup: u64, seconds: u64) -> Result<Pair> {
    println!("\n== token: POST /api/v1/auth/token (client_credentials)");
    let (client_id, secret, target) =
        (seeded.citizen_client_id.clone(), seeded.citizen_secret.clone(), app.url("/api/v1/auth/token"));
    let make: MakeRequest = Arc::new(move |http: &reqwest::Client, _| {
        let form =
            [("grant_type", "client_credentials"), ("client_id", &client_id), ("client_secret", &secret)];
        Ok(http.post(&target).form(&form))
    });
    let http = over_http(make, 200, warmup, seconds).await?;
    // The client's row as the server reads it, and a refresh token like the one it stores.
    let script = "SELECT id, name, principal_kind, principal_id, mission_id, scopes, secret_hash, status, version, \
         created_at, updated_at FROM api_clients WHERE id = :client;\n\
         INSERT INTO refresh_tokens (hash, client_id, family_id, scopes, access_jti, access_expires_at, issued_at, \
         expires_at) VALUES (sha256(convert_to(random()::text || clock_timestamp()::text, 'UTF8')), :client, \
         bench_uuid7(), 'citizen', bench_uuid7(), now() + interval '15 minutes', now(), now() + interval '30 days');\n";
    let db =
        bench::pgbench(url, script, &[("client", seeded.citizen_client_id.clone())], &[], clients(), seconds)
            .await?;
    let pair = Pair {
        name: "POST /api/v1/auth/token".to_owned(),
        counterpart: "the client by id, the refresh token's insert".to_owned(),
        http,
        db,
    };
    pair.print();
    Ok(pair)
}

// ------------------------------------------------------------------------------ submit

/// `POST /api/v1/requests` by the citizen, a new `Idempotency-Key` each time.
pub async fn submit(app: &TestApp, url: &str, seeded: &Seeded, warmup: u64, seconds: u64) -> Result<Pair> {
    println!("\n== submit: POST /api/v1/requests (citizen, Idempotency-Key)");
    let body = json!({ "service_type_id": seeded.service_type_id });
    // One submission first: its rows are the pgbench transaction's template.
    let key = format!("bench-template-{}", uuid::Uuid::now_v7());
    let response = app
        .http
        .post(app.url("/api/v1/requests"))
        .bearer_auth(&seeded.citizen_token)
        .header("Idempotency-Key", &key)
        .json(&body)
        .send()
        .await
        .map_err(|e| format!("POST /api/v1/requests: {e}"))?;
    let status = response.status();
    let created: Value = response.json().await.map_err(|e| format!("POST /api/v1/requests: {e}"))?;
    let template =
        created["id"].as_str().ok_or_else(|| format!("POST /api/v1/requests: {status}: {created}"))?;
    let (script, writes) = submit_script(url, template, &key).await?;

    let (token, target) = (seeded.citizen_token.clone(), app.url("/api/v1/requests"));
    let run = uuid::Uuid::now_v7();
    let make: MakeRequest = Arc::new(move |http: &reqwest::Client, n| {
        Ok(http
            .post(&target)
            .bearer_auth(&token)
            .header("Idempotency-Key", format!("bench-{run}-{n}"))
            .json(&body))
    });
    let http = over_http(make, 201, warmup, seconds).await?;
    let db = bench::pgbench(url, &script, &[], &[], clients(), seconds).await?;
    let pair = Pair {
        name: "POST /api/v1/requests".to_owned(),
        counterpart: format!("the same {writes} writes in one transaction"),
        http,
        db,
    };
    pair.print();
    Ok(pair)
}

/// The pgbench transaction of a submission: the rows the server wrote for request
/// `template` (submitted with idempotency key `key`), as literal inserts with new ids,
/// and the number of its writes.
async fn submit_script(url: &str, template: &str, key: &str) -> Result<(String, usize)> {
    // The members the server may assign a submission of this type to: the transaction
    // assigns one of them at random, as the server's choice spreads its submissions, and
    // its insert moves that member's count in `staff_workloads` as the server's does.
    let members = psql(
        url,
        &format!(
            "SELECT count(*), string_agg(m.id::text, ',') FROM staff_members m \
             JOIN staff_assignments a ON a.staff_id = m.id JOIN service_requests r ON r.id = '{template}' \
             WHERE m.active AND m.mission_id = r.mission_id AND a.service_type_id = r.service_type_id"
        ),
    )
    .await?;
    let (count, members) = members
        .trim()
        .split_once('|')
        .filter(|(count, _)| *count != "0")
        .ok_or_else(|| format!("no staff member may take the template submission: {members}"))?;
    let assignee = format!("('{{{members}}}'::uuid[])[:bench_assignee]");
    // (table, the template's rows, the columns that get a new value: column -> the SQL put
    // in its place). The variables have names no literal contains: pgbench would replace
    // `:name` inside a quoted JSON text too.
    type Fresh = Vec<(&'static str, String)>;
    let new = "bench_uuid7()".to_owned();
    let tables: [(&str, String, Fresh); 5] = [
        ("idempotency_keys", format!("key = '{key}'"), vec![("key", ":bench_key".to_owned())]),
        (
            "audit_events",
            format!("resource_id = '{template}'"),
            vec![("id", new.clone()), ("resource_id", ":bench_request".to_owned())],
        ),
        (
            "outbox_events",
            format!("aggregate_id = '{template}'"),
            vec![("id", new), ("aggregate_id", ":bench_request".to_owned())],
        ),
        (
            "service_requests",
            format!("id = '{template}'"),
            vec![("id", ":bench_request".to_owned()), ("assignee_id", assignee)],
        ),
        (
            "request_history",
            format!("request_id = '{template}'"),
            vec![("request_id", ":bench_request".to_owned())],
        ),
    ];
    let mut inserts = String::new();
    for (table, row, fresh) in tables {
        // Every column but generated identities, the template's value as a literal.
        let sql = format!(
            "SELECT count(*) OVER (), 'INSERT INTO {table} (' || string_agg(quote_ident(a.attname), ', ' ORDER BY a.attnum) \
             || ') VALUES (' || string_agg(CASE a.attname {cases} ELSE {literal} END, ', ' \
             ORDER BY a.attnum) || ');' FROM {table} r JOIN pg_attribute a ON a.attrelid = '{table}'::regclass \
             AND a.attnum > 0 AND NOT a.attisdropped AND a.attidentity = '' WHERE r.{row} GROUP BY r.ctid",
            literal = LITERAL.replace("{value}", "(to_jsonb(r) ->> a.attname)"),
            cases = fresh
                .iter()
                .map(|(column, sql)| format!("WHEN '{column}' THEN '{}' ", sql.replace('\'', "''")))
                .collect::<String>(),
        );
        let out = psql(url, &sql).await?;
        let rows: Vec<&str> =
            out.lines().filter_map(|line| line.split_once('|').map(|(_, insert)| insert)).collect();
        if rows.is_empty() || out.lines().count() != rows.len() {
            return Err(format!("no {table} row for the template submission: {out}"));
        }
        if table == "idempotency_keys" {
            // As `write_meta::store` does first: an expired record of the same key goes.
            let delete = psql(
                url,
                &format!(
                    "SELECT 'DELETE FROM idempotency_keys WHERE owner = ' || quote_literal(owner) \
                     || ' AND key = :bench_key AND expires_at <= ' || quote_literal(created_at) || ';' \
                     FROM idempotency_keys WHERE {row}"
                ),
            )
            .await?;
            inserts.push_str(delete.trim());
            inserts.push('\n');
        }
        for insert in rows {
            inserts.push_str(insert);
            inserts.push('\n');
        }
    }
    let script = format!(
        "\\set bench_assignee random(1, {count})\n\
         SELECT bench_uuid7() AS bench_request, 'bench-' || bench_uuid7() AS bench_key \\gset\nBEGIN;\n{inserts}COMMIT;\n"
    );
    Ok((script, inserts.lines().count()))
}

/// SQL that writes a value as a literal for pgbench: `NULL`, or an `E''` string whose
/// colons are escaped (`\x3a`). pgbench in prepared mode takes every `:name` of a command
/// for a variable, even inside a quoted text such as the idempotency record's JSON body
/// (`"assignee_id":null`); the escape is resolved once, when the statement is prepared.
const LITERAL: &str = r"CASE WHEN {value} IS NULL THEN 'NULL' ELSE 'E''' || replace(replace(replace({value}, '\', '\\'), '''', ''''''), ':', '\x3a') || '''' END";

/// A UUIDv7 of the current instant with a random rest, as the server makes them (ids in
/// time order); pgbench's transactions call it for the rows they insert.
pub const UUID7_FUNCTION: &str = "CREATE FUNCTION bench_uuid7() RETURNS uuid LANGUAGE sql VOLATILE AS $$ \
    SELECT (lpad(to_hex(floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint), 12, '0') || '7' \
    || substr(md5(random()::text), 1, 3) || '8' || substr(md5(random()::text), 1, 15))::uuid $$;";
