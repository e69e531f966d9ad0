//! The population: a mission, a service type, one citizen with their own API client and
//! one request through the API, then thousands of copies of the three with SQL (5 000
//! registrations, clients and requests over HTTP would take minutes), and a token each.

use super::Knobs;
use consular_tests::bench::{Result, SEED_UUID7, psql};
use consular_tests::serde_json::{Value, json};
use consular_tests::{TestApp, citizen_body, sign_raw, text};
use std::time::Instant;

/// One citizen (or bot) as the crowd drives them: their request and their token.
pub(crate) struct Person {
    pub(crate) citizen: String,
    pub(crate) request: String,
    pub(crate) token: String,
}

/// What the population needs to run and be checked.
pub(crate) struct World {
    pub(crate) mission: String,
    pub(crate) service: String,
    /// The global admin's token: submits the slots.
    pub(crate) admin: String,
    /// `rush_people.n` 0..citizens.
    pub(crate) citizens: Vec<Person>,
    /// `rush_people.n` citizens..citizens+bots.
    pub(crate) bots: Vec<Person>,
}

/// Access tokens live this long: longer than any run.
const TOKEN_SECONDS: i64 = 3_600;

pub(crate) async fn populate(app: &TestApp, url: &str, knobs: &Knobs) -> Result<World> {
    let started = Instant::now();
    let admin = app.admin_token().await;
    let mission = text(&app.create_mission(&admin, "fr-rush").await, "id");
    let service = text(&app.create_service(&admin, "rush_passport").await, "id");
    let mut body = citizen_body(&mission, "RUSH000000");
    body["registration_status"] = json!("active");
    let template = app.citizen_with_client(&admin, body).await;
    let request =
        app.create_at("/api/v1/requests", &template.token, &json!({ "service_type_id": service })).await;
    let request = text(&request, "id");

    let people = knobs.citizens + knobs.bots;
    let sql = SEED_SQL
        .replace("{UUID7}", SEED_UUID7)
        .replace("{PEOPLE}", &people.to_string())
        .replace("{CITIZEN}", &template.id)
        .replace("{CLIENT}", &template.client_id)
        .replace("{REQUEST}", &request);
    psql(url, &sql).await?;
    let rows = psql(url, "SELECT n, citizen_id, client_id, request_id FROM rush_people ORDER BY n").await?;

    // The claims the token endpoint gives a citizen's client (TokenService::sign), signed
    // with the server's current key.
    let (kid, pkcs8) = app.signing_keys().await.into_iter().next().ok_or("no signing key")?;
    let key = jsonwebtoken::EncodingKey::from_ed_der(&pkcs8);
    let header = json!({ "alg": "EdDSA", "typ": "at+jwt", "kid": kid });
    let now = time::OffsetDateTime::now_utc().unix_timestamp();
    let mut everyone = Vec::with_capacity(people);
    for (expected, line) in rows.lines().enumerate() {
        let fields: Vec<&str> = line.split('|').collect();
        let [n, citizen, client, request] = fields[..] else {
            return Err(format!("rush_people row: {line}"));
        };
        if n != expected.to_string() {
            return Err(format!("rush_people row {expected} is {line}"));
        }
        let claims = app.claims(json!({
            "sub": format!("citizen:{citizen}"),
            "client_id": client,
            "scope": "citizen",
            "mission": mission,
            "exp": now + TOKEN_SECONDS,
        }));
        let token = sign_raw(&header, &claims, &key);
        everyone.push(Person { citizen: citizen.to_owned(), request: request.to_owned(), token });
    }
    if everyone.len() != people {
        return Err(format!("{} people seeded, expected {people}", everyone.len()));
    }
    // A copy's token must be read as the citizen it names, and the copy's request as theirs.
    check_token(app, &everyone[1]).await?;
    let bots = everyone.split_off(knobs.citizens);
    println!(
        "population: {} citizens and {} bots, each with their own API client, request and token, in {:.1?}",
        knobs.citizens,
        knobs.bots,
        started.elapsed()
    );
    Ok(World { mission, service, admin, citizens: everyone, bots })
}

/// A forged token is accepted as the citizen it names: their request reads 200.
async fn check_token(app: &TestApp, person: &Person) -> Result<()> {
    let response = app.get(&format!("/api/v1/requests/{}", person.request), &person.token).await;
    let status = response.status();
    let body: Value = response.json().await.map_err(|e| format!("GET request: {e}"))?;
    if status != 200 || body["citizen_id"] != person.citizen.as_str() {
        return Err(format!("a seeded citizen's token reads their request as {status}: {body}"));
    }
    Ok(())
}

/// The copies, in one psql session; `{NAME}`s are replaced. `rush_people` numbers everyone
/// (0 is the template registered through the API), with UUIDv7 ids in that order; each
/// copy of the citizen, client and request takes its own id, passport number and
/// references. The request's history is copied with it, so each request reads as submitted
/// by its citizen.
const SEED_SQL: &str = r#"
\set ON_ERROR_STOP 1
{UUID7}

BEGIN;
CREATE TABLE rush_people AS
    SELECT n, pg_temp.uuid7(now() - interval '1 day' + n * interval '1 millisecond', n) AS citizen_id,
        pg_temp.uuid7(now() - interval '1 day' + n * interval '1 millisecond', n + {PEOPLE}) AS client_id,
        pg_temp.uuid7(now() - interval '1 day' + n * interval '1 millisecond', n + 2 * {PEOPLE}) AS request_id
    FROM generate_series(1, {PEOPLE} - 1) n;

INSERT INTO citizens
SELECT (jsonb_populate_record(c, jsonb_build_object(
    'id', p.citizen_id,
    'passport_number', 'RUSH' || lpad(p.n::text, 6, '0'),
    'given_name', 'Citizen',
    'family_name', 'No ' || p.n))).*
FROM citizens c CROSS JOIN rush_people p
WHERE c.id = '{CITIZEN}';

INSERT INTO api_clients
SELECT (jsonb_populate_record(k, jsonb_build_object(
    'id', p.client_id,
    'principal_id', p.citizen_id,
    'name', 'Citizen No ' || p.n))).*
FROM api_clients k CROSS JOIN rush_people p
WHERE k.id = '{CLIENT}';

INSERT INTO service_requests
SELECT (jsonb_populate_record(r, jsonb_build_object('id', p.request_id, 'citizen_id', p.citizen_id))).*
FROM service_requests r CROSS JOIN rush_people p
WHERE r.id = '{REQUEST}';

INSERT INTO request_history (request_id, at, actor_kind, actor_id, from_status, to_status, from_stage, to_stage, reason)
SELECT p.request_id, h.at, h.actor_kind, CASE WHEN h.actor_id = '{CITIZEN}' THEN p.citizen_id ELSE h.actor_id END,
    h.from_status, h.to_status, h.from_stage, h.to_stage, h.reason
FROM request_history h CROSS JOIN rush_people p
WHERE h.request_id = '{REQUEST}';

INSERT INTO rush_people VALUES (0, '{CITIZEN}', '{CLIENT}', '{REQUEST}');
ALTER TABLE rush_people ADD PRIMARY KEY (n);
CREATE UNIQUE INDEX rush_people_citizen ON rush_people (citizen_id);
COMMIT;

VACUUM (ANALYZE) citizens;
VACUUM (ANALYZE) api_clients;
VACUUM (ANALYZE) service_requests;
VACUUM (ANALYZE) rush_people;
"#;
