//! What the measurements run on: the replicated pair, its seeded database, the plain and
//! the replicated node, the principals made through the API, the CPU of each server's
//! processes, and the citizens' steady submissions.

use crate::Knobs;
use consular_application::demo::{DemoPlan, DemoPorts, DemoService};
use consular_domain::{MissionId, Subject};
use consular_ports::{Clock, SystemClock};
use consular_testkit::replication::{ReplicatedPair, Role};
use consular_tests::bench::{Result, stat_ticks};
use consular_tests::consular_db::{Database, DbConfig};
use consular_tests::serde_json::{Value, json};
use consular_tests::{Backend, CITIZENS, STAFF, TestApp, citizen_body, staff_body, text, token_claims};
use futures_util::StreamExt;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};
use tokio::task::JoinHandle;

/// The API's database on the pair.
const DATABASE: &str = "consular";
/// How long the standby may take to replay what the primary has.
const CATCH_UP: Duration = Duration::from_secs(60);
const CITIZEN_COUNT: usize = 16;
const STAFF_COUNT: usize = 8;
const ADMIN_COUNT: usize = 8;

/// A principal of the bench: its token and subject.
#[derive(Clone)]
pub struct Caller {
    pub token: String,
    pub subject: Subject,
}

pub struct World {
    pub pair: Arc<ReplicatedPair>,
    /// No `database_read_url`: every read on the primary.
    pub plain: TestApp,
    /// The standby as `database_read_url`.
    pub replicated: TestApp,
    /// `database_url` and `database_read_url` of the replicated node.
    pub url: String,
    pub read_url: String,
    pub servers: Servers,
    pub mission: MissionId,
    pub service: String,
    pub citizens: Vec<Caller>,
    pub staff: Vec<Caller>,
    /// Admins of the mission.
    pub admins: Vec<Caller>,
    /// Requests of the mission the staff write notes on.
    pub requests: Vec<String>,
}

impl World {
    pub async fn start(knobs: Knobs) -> Result<World> {
        let started = Instant::now();
        let pair = Arc::new(
            tokio::task::spawn_blocking(ReplicatedPair::start)
                .await
                .map_err(|e| format!("the pair's thread: {e}"))??,
        );
        on_pair(&pair, |p| p.query(Role::Primary, "postgres", &format!("CREATE DATABASE {DATABASE}")))
            .await?;
        let (url, read_url) = (pair.url(DATABASE), pair.url_of(Role::Standby, DATABASE));
        let plain = TestApp::spawn_with(Backend::Postgres, |settings| {
            settings.database_url = url.clone();
            settings.workers = 2;
            settings.db_max_connections = 10;
            settings.log_level = "warn".to_owned();
        })
        .await;
        let mut settings = plain.settings.clone();
        settings.database_read_url = Some(read_url.clone());
        settings.validate().map_err(|e| format!("the replicated node's settings: {e}"))?;
        let replicated = plain.spawn_node_with(settings).await;
        let version = on_pair(&pair, |p| p.query(Role::Primary, "postgres", "SHOW server_version")).await?;
        println!(
            "servers: plain node {} and replicated node {} (2 HTTP workers, pool of 10 each, and 10 more \
             on the standby for the replicated one), PostgreSQL {}",
            plain.base_url,
            replicated.base_url,
            version.trim()
        );

        let db =
            Database::connect(&DbConfig::new(url.clone())).map_err(|e| format!("database handle: {e}"))?;
        let plan =
            DemoPlan { missions: 4, requests: knobs.requests, seed: 1, days: 90, now: SystemClock.now() };
        let service =
            DemoService::new(DemoPorts { demo: Arc::new(db.clone()), clock: Arc::new(SystemClock) });
        let counts = service.seed_plan(plan, |_| {}).await.map_err(|e| format!("seeding: {e:?}"));
        db.close();
        let counts = counts?;
        on_pair(&pair, |p| p.query(Role::Primary, DATABASE, "VACUUM ANALYZE")).await?;

        let admin = plain.admin_token().await;
        let mission = largest_mission(&plain, &admin).await?;
        let service = active_service(&plain, &admin).await?;
        let citizens = futures_util::stream::iter(0..CITIZEN_COUNT)
            .map(|i| {
                let mut body = citizen_body(&mission, &format!("RR{i:06}"));
                body["registration_status"] = json!("active");
                body["issue_client"] = json!(true);
                issue(&plain, &admin, CITIZENS, body)
            })
            .buffered(4)
            .collect::<Vec<_>>()
            .await
            .into_iter()
            .collect::<Result<Vec<_>>>()?;
        let staff = futures_util::stream::iter(0..STAFF_COUNT)
            .map(|i| {
                let mut body = staff_body(&mission, &format!("Bench Officer {i}"));
                body["email"] = json!(format!("officer{i}@mission.example"));
                body["service_type_ids"] = json!([service]);
                body["issue_client"] = json!(true);
                issue(&plain, &admin, STAFF, body)
            })
            .buffered(4)
            .collect::<Vec<_>>()
            .await
            .into_iter()
            .collect::<Result<Vec<_>>>()?;
        let mut admins = Vec::new();
        for _ in 0..ADMIN_COUNT {
            let token = plain.principal_by(&admin, &["admin"], Some(mission.as_str())).await.token;
            admins.push(caller(token)?);
        }
        // A staff member's list is their mission's requests.
        let page = get_json(&plain, &staff[0].token, "/api/v1/requests?limit=100").await?;
        let requests: Vec<String> =
            page["items"].as_array().cloned().unwrap_or_default().iter().map(|r| text(r, "id")).collect();
        if requests.is_empty() {
            return Err("the mission has no request to write notes on".to_owned());
        }
        let servers = on_pair(&pair, Servers::find).await?;
        let world = World {
            pair,
            plain,
            replicated,
            url,
            read_url,
            servers,
            mission: MissionId(mission.parse().map_err(|e| format!("mission id: {e}"))?),
            service,
            citizens,
            staff,
            admins,
            requests,
        };
        world.caught_up().await?;
        println!(
            "seeded: {} missions, {} requests ({} history entries) over 90 days; the largest mission's \
             {CITIZEN_COUNT} citizens, {STAFF_COUNT} staff members and {ADMIN_COUNT} admins through the API; \
             set up in {:.1?}",
            counts.missions,
            counts.requests,
            counts.history_entries,
            started.elapsed()
        );
        Ok(world)
    }

    /// Returns once the standby has replayed everything the primary had written.
    pub async fn caught_up(&self) -> Result<()> {
        on_pair(&self.pair, |p| p.wait_replayed(CATCH_UP)).await
    }

    /// A `Database` on the pair reading tolerant reads from the standby (its own pools of
    /// `connections` on each server, its own counts of who served).
    pub fn replicated_database(&self, connections: usize) -> Result<Database> {
        let config = DbConfig {
            max_connections: connections,
            read_url: Some(self.read_url.clone()),
            ..DbConfig::new(self.url.clone())
        };
        Database::connect(&config).map_err(|e| format!("database handle: {e}"))
    }

    /// Stops both nodes, then the pair (its drop runs pg_ctl).
    pub async fn stop(self) {
        self.replicated.stop().await;
        self.plain.stop().await;
        let pair = self.pair;
        let _ = tokio::task::spawn_blocking(move || drop(pair)).await;
    }
}

/// Runs `f` on the pair outside the runtime (each call runs psql or pg_ctl).
pub async fn on_pair<T: Send + 'static>(
    pair: &Arc<ReplicatedPair>,
    f: impl FnOnce(&ReplicatedPair) -> Result<T> + Send + 'static,
) -> Result<T> {
    let pair = Arc::clone(pair);
    tokio::task::spawn_blocking(move || f(&pair)).await.map_err(|e| format!("the pair's thread: {e}"))?
}

/// A caller from its access token (the subject is its `sub` claim).
fn caller(token: String) -> Result<Caller> {
    let sub = text(&token_claims(&token), "sub");
    let subject = sub.parse().map_err(|()| format!("a token subject that is not one: {sub}"))?;
    Ok(Caller { token, subject })
}

/// Creates a citizen or a staff member (`issue_client: true`) at `path` and gets its token.
async fn issue(app: &TestApp, admin: &str, path: &str, body: Value) -> Result<Caller> {
    let response = app.post_json(path, admin, &body).await;
    let status = response.status();
    let created: Value = response.json().await.map_err(|e| format!("{path}: {e}"))?;
    if status != 201 {
        return Err(format!("POST {path}: {status} {created}"));
    }
    caller(app.issued(created).await.token)
}

async fn get_json(app: &TestApp, token: &str, path: &str) -> Result<Value> {
    let response = app.get(path, token).await;
    let status = response.status();
    let body: Value = response.json().await.map_err(|e| format!("{path}: {e}"))?;
    if status != 200 {
        return Err(format!("GET {path}: {status} {body}"));
    }
    Ok(body)
}

/// The mission with the most requests submitted in the overview's default 30 days.
async fn largest_mission(app: &TestApp, admin: &str) -> Result<String> {
    let missions = get_json(app, admin, "/api/v1/missions?limit=100").await?;
    let mut largest: Option<(u64, String)> = None;
    for mission in missions["items"].as_array().cloned().unwrap_or_default() {
        let id = text(&mission, "id");
        let overview = get_json(app, admin, &format!("/api/v1/analytics/overview?mission_id={id}")).await?;
        let submitted = overview["totals"]["submitted"].as_u64().unwrap_or_default();
        if largest.as_ref().is_none_or(|(most, _)| submitted > *most) {
            largest = Some((submitted, id));
        }
    }
    largest.map(|(_, id)| id).ok_or_else(|| "no mission".to_owned())
}

async fn active_service(app: &TestApp, admin: &str) -> Result<String> {
    let services = get_json(app, admin, "/api/v1/services?limit=100").await?;
    services["items"]
        .as_array()
        .cloned()
        .unwrap_or_default()
        .iter()
        .find(|s| s["active"] == true)
        .map(|s| text(s, "id"))
        .ok_or_else(|| "no active service type".to_owned())
}

// ---------------------------------------------------------------------- CPU per server

/// The postmaster of each server of the pair: the CPU of a server is its postmaster's and
/// its children's (backends, walsender or startup and walreceiver, background workers).
pub struct Servers {
    primary: u32,
    standby: u32,
}

/// Clock ticks of each server's processes at an instant.
pub struct ServerTicks {
    at: Instant,
    primary: u64,
    standby: u64,
}

/// Cores each server used over a window, and its length.
#[derive(Clone, Copy)]
pub struct ServerCpu {
    pub seconds: f64,
    pub primary: f64,
    pub standby: f64,
}

impl Servers {
    fn find(pair: &ReplicatedPair) -> Result<Servers> {
        let postmaster = |role| -> Result<u32> {
            let dir = pair.query(role, "postgres", "SHOW data_directory")?;
            let file = std::path::Path::new(dir.trim()).join("postmaster.pid");
            let pid = std::fs::read_to_string(&file).map_err(|e| format!("{}: {e}", file.display()))?;
            pid.lines()
                .next()
                .and_then(|l| l.trim().parse().ok())
                .ok_or_else(|| format!("{}: no pid", file.display()))
        };
        Ok(Servers { primary: postmaster(Role::Primary)?, standby: postmaster(Role::Standby)? })
    }

    pub fn sample(&self) -> ServerTicks {
        let (mut primary, mut standby) = (0, 0);
        for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
            let Some(pid) = entry.file_name().to_str().and_then(|n| n.parse::<u32>().ok()) else { continue };
            let stat = std::fs::read_to_string(entry.path().join("stat")).unwrap_or_default();
            // After the name: state, then the parent's pid.
            let parent = stat
                .rsplit_once(')')
                .and_then(|(_, rest)| rest.split_whitespace().nth(1))
                .and_then(|p| p.parse::<u32>().ok());
            let ticks = stat_ticks(&stat).map_or(0, |(_, ticks)| ticks);
            if pid == self.primary || parent == Some(self.primary) {
                primary += ticks;
            } else if pid == self.standby || parent == Some(self.standby) {
                standby += ticks;
            }
        }
        ServerTicks { at: Instant::now(), primary, standby }
    }
}

impl ServerTicks {
    pub fn since(&self, before: &ServerTicks) -> ServerCpu {
        let seconds = self.at.duration_since(before.at).as_secs_f64().max(1e-9);
        let cores = |now: u64, then: u64| {
            now.saturating_sub(then) as f64 / consular_tests::bench::TICKS_PER_SECOND / seconds
        };
        ServerCpu {
            seconds,
            primary: cores(self.primary, before.primary),
            standby: cores(self.standby, before.standby),
        }
    }
}

impl ServerCpu {
    /// Microseconds of (primary, standby) CPU per unit of work over the window.
    pub fn per(&self, units: u64) -> (f64, f64) {
        let per = |cores: f64| cores * self.seconds / (units.max(1) as f64) * 1e6;
        (per(self.primary), per(self.standby))
    }
}

// ---------------------------------------------------------------- steady write load

/// The citizens' submissions at `rate` a second on `app`, round robin, until it is
/// stopped (then how many were made).
pub struct Submissions {
    stop: Arc<AtomicBool>,
    task: JoinHandle<Result<u64>>,
}

impl Submissions {
    pub fn start(app: &TestApp, citizens: &[Caller], service: &str, rate: usize) -> Submissions {
        let stop = Arc::new(AtomicBool::new(false));
        let url = app.url("/api/v1/requests");
        let tokens: Vec<String> = citizens.iter().map(|c| c.token.clone()).collect();
        let body = json!({ "service_type_id": service });
        let flag = Arc::clone(&stop);
        let task = tokio::spawn(async move {
            let http = consular_tests::http_client();
            let mut ticker = tokio::time::interval(Duration::from_secs_f64(1.0 / rate.max(1) as f64));
            ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            let mut made = 0u64;
            while !flag.load(Ordering::Relaxed) {
                ticker.tick().await;
                let token = &tokens[made as usize % tokens.len()];
                let response = http
                    .post(&url)
                    .bearer_auth(token)
                    .json(&body)
                    .send()
                    .await
                    .map_err(|e| format!("submission: {e}"))?;
                if response.status() != 201 {
                    let status = response.status();
                    return Err(format!(
                        "submission: {status} {}",
                        response.text().await.unwrap_or_default()
                    ));
                }
                made += 1;
            }
            Ok(made)
        });
        Submissions { stop, task }
    }

    pub async fn stop(self) -> Result<u64> {
        self.stop.store(true, Ordering::Relaxed);
        self.task.await.map_err(|e| format!("the submissions: {e}"))?
    }
}
