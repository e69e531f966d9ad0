//! Seeding: a mission, its service types, staff and citizens through the API, then the
//! bulk of the requests with SQL.

use super::*;

/// `(code, name, sla_days, stage names)` of the service types.
const SERVICE_TYPES: [(&str, &str, i32, &[&str]); 5] = [
    ("bench_passport", "Passport renewal", 21, &["Document check", "Biometrics", "Printing"]),
    ("bench_visa", "Visa", 15, &["Document check", "Interview", "Decision", "Issuance"]),
    ("bench_birth", "Birth registration", 30, &["Document check", "Registration"]),
    ("bench_notarial", "Notarial act", 10, &["Signature"]),
    ("bench_etd", "Emergency travel document", 3, &["Identity check", "Issuance"]),
];

pub(crate) async fn seed(app: &TestApp, rows: usize) -> Result<Seeded> {
    let started = Instant::now();
    let admin_token = app.admin_token().await;
    let mission = app.create_mission(&admin_token, "fr-bench").await;
    let mission_id = text(&mission, "id")?;

    let mut type_ids = Vec::new();
    for (code, name, sla_days, stages) in SERVICE_TYPES {
        let stages: Vec<Value> = stages
            .iter()
            .map(|s| json!({ "name": s, "description": format!("{s} of the request") }))
            .collect();
        let body = json!({
            "code": code, "name": name, "description": format!("{name} at the consulate"),
            "fee": { "amount_minor": 8600, "currency": "EUR" }, "sla_days": sla_days,
            "required_documents": ["passport_photo", "old_passport"], "stages": stages,
        });
        type_ids.push(text(&created(app, "/api/v1/services", &admin_token, &body).await?, "id")?);
    }
    for n in 0..10 {
        let body = json!({
            "mission_id": mission_id, "name": format!("Officer {n}"), "email": format!("officer{n}@mission.example"),
            "job_title": "Consular officer", "service_type_ids": type_ids,
        });
        created(app, "/api/v1/staff", &admin_token, &body).await?;
    }
    let citizen = json!({
        "mission_id": mission_id, "given_name": "Alice", "family_name": "Martin", "date_of_birth": "1990-04-12",
        "place_of_birth": "Lyon", "nationality": "FR", "passport_number": "BENCH000000",
        "passport_expiry": "2031-04-11", "email": "alice.martin@example.org", "phone": "+33612345678",
        "address": { "line1": "1 Main Street", "city": "Ottawa", "country": "CA" }, "preferred_language": "fr",
        "registration_status": "active", "issue_client": true,
    });
    let citizen = created(app, "/api/v1/citizens", &admin_token, &citizen).await?;
    let (citizen_client_id, citizen_secret) =
        (text(&citizen["client"], "client_id")?, text(&citizen["client"], "client_secret")?);
    let citizen_token = app.token_for(&citizen_client_id, &citizen_secret, None).await.access_token;
    let mission_admin_token = app.principal_by(&admin_token, &["admin"], Some(&mission_id)).await.token;
    let api_done = started.elapsed();

    let sql = SEED_SQL
        .replace("{UUID7}", bench::SEED_UUID7)
        .replace("{MISSION}", &mission_id)
        .replace("{ROWS}", &rows.to_string());
    psql(&app.settings.database_url, &sql).await?;
    let count: usize = psql(&app.settings.database_url, "SELECT count(*) FROM service_requests")
        .await?
        .trim()
        .parse()
        .map_err(|e| format!("row count: {e}"))?;
    if count != rows {
        return Err(format!("seeded {count} service requests, expected {rows}"));
    }
    let summary = psql(
        &app.settings.database_url,
        "SELECT string_agg(status || ' ' || n, ', ' ORDER BY n DESC) FROM \
         (SELECT status, count(*) n FROM service_requests GROUP BY status) s",
    )
    .await?;
    let size =
        psql(&app.settings.database_url, "SELECT pg_size_pretty(pg_total_relation_size('service_requests'))")
            .await?;
    println!(
        "seeded: {count} service requests ({}), 1000 citizens, 5 service types, 10 staff, {count} history rows \
         in {:.1?} (API {:.1?})\n        statuses: {}",
        size.trim(),
        started.elapsed(),
        api_done,
        summary.trim()
    );
    psql(&app.settings.database_url, more::UUID7_FUNCTION).await?;
    let detail_id = psql(
        &app.settings.database_url,
        "SELECT id FROM service_requests WHERE status = 'in_review' ORDER BY id DESC LIMIT 1",
    )
    .await?
    .trim()
    .to_owned();
    more::thread(app, &admin_token, &detail_id).await?;
    Ok(Seeded {
        admin_token,
        mission_id,
        mission_admin_token,
        citizen_client_id,
        citizen_secret,
        citizen_token,
        citizen_id: text(&citizen, "id")?,
        service_type_id: type_ids[0].clone(),
        detail_id,
    })
}

/// The bulk of the data, in one psql session. `{UUID7}`, `{MISSION}` and `{ROWS}` are
/// replaced.
/// Ids are UUIDv7 built from the timestamp (48 bits of Unix milliseconds, version 7,
/// variant 10, the rest derived from the row number), so `ORDER BY id DESC` is newest
/// first as in production. Requests are spread over 90 days, one every 90 days / ROWS;
/// the last two weeks are mostly open, older requests mostly closed.
const SEED_SQL: &str = r#"
\set ON_ERROR_STOP 1
{UUID7}

BEGIN;
-- 999 more citizens, copies of the one registered through the API.
INSERT INTO citizens
SELECT (jsonb_populate_record(c, jsonb_build_object(
    'id', pg_temp.uuid7(c.created_at - n * interval '1 hour', n),
    'passport_number', 'BENCH' || lpad(n::text, 6, '0'),
    'given_name', 'Citizen',
    'family_name', 'No ' || n))).*
FROM citizens c CROSS JOIN generate_series(1, 999) n
WHERE c.mission_id = '{MISSION}';

CREATE TEMP TABLE bench_types ON COMMIT DROP AS
    SELECT (row_number() OVER (ORDER BY id) - 1)::int AS k, id, stages, jsonb_array_length(stages) AS stage_count, sla_days
    FROM service_types WHERE code LIKE 'bench\_%';
CREATE TEMP TABLE bench_staff ON COMMIT DROP AS
    SELECT (row_number() OVER (ORDER BY id) - 1)::int AS k, id FROM staff_members WHERE mission_id = '{MISSION}';
CREATE TEMP TABLE bench_citizens ON COMMIT DROP AS
    SELECT (row_number() OVER (ORDER BY id) - 1)::int AS k, id FROM citizens WHERE mission_id = '{MISSION}';

INSERT INTO service_requests (id, mission_id, citizen_id, service_type_id, status, stages, current_stage,
    assignee_id, submitted_at, sla_due_at, closed_at, version, updated_at)
SELECT pg_temp.uuid7(g.at, g.i), '{MISSION}', c.id, t.id, g.status, t.stages,
    CASE WHEN g.status = 'completed' THEN t.stage_count - 1
         WHEN g.status IN ('submitted', 'rejected', 'cancelled') THEN 0
         ELSE (g.h / 7) % t.stage_count END,
    CASE WHEN g.status = 'submitted' AND g.h % 3 = 0 THEN NULL ELSE s.id END,
    g.at,
    g.at + make_interval(days => t.sla_days),
    CASE WHEN g.status IN ('completed', 'rejected', 'cancelled')
         THEN least(g.at + make_interval(hours => (1 + (g.h / 11) % (24 * t.sla_days))::int), now()) END,
    CASE WHEN g.status = 'submitted' THEN 1 ELSE 2 + (g.h / 13) % 4 END,
    least(g.at + make_interval(hours => (1 + (g.h / 11) % (24 * t.sla_days))::int), now())
FROM (
    SELECT i, at, h,
        CASE WHEN at > now() - interval '14 days' THEN
            CASE WHEN h % 100 < 25 THEN 'submitted' WHEN h % 100 < 60 THEN 'in_review'
                 WHEN h % 100 < 70 THEN 'action_required' WHEN h % 100 < 85 THEN 'approved'
                 WHEN h % 100 < 95 THEN 'completed' WHEN h % 100 < 98 THEN 'rejected' ELSE 'cancelled' END
        ELSE
            CASE WHEN h % 100 < 70 THEN 'completed' WHEN h % 100 < 82 THEN 'rejected'
                 WHEN h % 100 < 90 THEN 'cancelled' WHEN h % 100 < 94 THEN 'in_review'
                 WHEN h % 100 < 97 THEN 'approved' WHEN h % 100 < 99 THEN 'action_required'
                 ELSE 'submitted' END
        END AS status
    FROM (
        SELECT i, now() - (({ROWS} - i) * (7776000.0 / {ROWS})) * interval '1 second' AS at,
            (i * 2654435761) % 4294967291 AS h
        FROM generate_series(1::bigint, {ROWS}) i
    ) numbered
) g
JOIN bench_types t ON t.k = (g.h / 100) % 5
JOIN bench_citizens c ON c.k = (g.h / 500) % 1000
JOIN bench_staff s ON s.k = (g.h / 500000) % 10;

-- The submission entry of each request (the list does not read it).
INSERT INTO request_history (request_id, at, actor_kind, actor_id, from_status, to_status, from_stage, to_stage)
SELECT id, submitted_at, 'citizen', citizen_id, NULL, 'submitted', NULL, 0 FROM service_requests;
COMMIT;

VACUUM (ANALYZE) citizens;
VACUUM (ANALYZE) service_requests;
VACUUM (ANALYZE) request_history;
"#;

/// POSTs `body` as `token`; the 201 body.
pub(crate) async fn created(app: &TestApp, path: &str, token: &str, body: &Value) -> Result<Value> {
    let response = app.post_json(path, token, body).await;
    let status = response.status();
    let text = response.text().await.map_err(|e| format!("POST {path}: {e}"))?;
    if status.as_u16() != 201 {
        return Err(format!("POST {path}: {status}: {text}"));
    }
    consular_tests::serde_json::from_str(&text).map_err(|e| format!("POST {path}: {e}: {text}"))
}

pub(crate) fn text(value: &Value, name: &str) -> Result<String> {
    value[name].as_str().map(str::to_owned).ok_or_else(|| format!("no `{name}` in {value}"))
}
