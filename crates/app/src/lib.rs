//! The `consular` service: configuration, dependency wiring and start-up.
//!
//! This crate is the only one that knows every adapter: it builds them from the
//! configuration, hands them to the use cases as ports, and serves the HTTP app. It holds
//! no business rule.

pub mod cli;
pub mod config;
pub mod telemetry;

use actix_web::dev::{Server, ServerHandle};
use actix_web::{HttpServer, web};
use consular_application::audit::AuditService;
use consular_application::auth::{KeySet, RevocationCache, TokenConfig, TokenService};
use consular_application::catalog::CatalogService;
use consular_application::citizens::CitizenService;
use consular_application::clients::{ClientService, ClientWithSecret};
use consular_application::health::HealthService;
use consular_application::missions::MissionService;
use consular_application::requests::RequestService;
use consular_application::staff::StaffService;
use consular_db::{Database, DbConfig};
use consular_http::{ApiSpec, AppState, Metrics, TokenRateLimits};
use consular_ports::{Clock, HealthCheck, SystemClock};
use consular_storage::ObjectBlobStore;
use std::net::TcpListener;
use std::num::NonZeroU32;
use std::sync::Arc;
use std::time::Duration;
use tokio::task::JoinHandle;

pub use config::{ConfigError, Settings};

#[derive(Debug, thiserror::Error)]
pub enum StartError {
    #[error("database: {0}")]
    Database(String),
    #[error("storage: {0}")]
    Storage(String),
    #[error("signing keys: {0}")]
    Keys(String),
    #[error("cannot listen on {addr}: {error}")]
    Bind { addr: String, error: std::io::Error },
    #[error("{0}")]
    Setup(String),
}

/// The use cases, wired to the adapters the configuration names.
#[derive(Clone)]
pub struct Services {
    pub database: Database,
    pub missions: MissionService,
    pub clients: ClientService,
    pub catalog: CatalogService,
    pub citizens: CitizenService,
    pub staff: StaffService,
    pub audit: AuditService,
    pub requests: RequestService,
    pub tokens: TokenService,
    pub health: HealthService,
}

impl Services {
    /// Connects and migrates the database, opens the blob store and loads the signing keys.
    pub async fn build(settings: &Settings) -> Result<Services, StartError> {
        let database = Database::connect(&DbConfig {
            url: settings.database_url.clone(),
            max_connections: settings.db_max_connections as usize,
            acquire_timeout: Duration::from_millis(settings.db_acquire_timeout_ms),
            statement_timeout: Duration::from_millis(settings.db_statement_timeout_ms),
        })
        .map_err(|e| StartError::Database(e.to_string()))?;
        database.migrate().await.map_err(|e| StartError::Database(e.to_string()))?;
        let storage = ObjectBlobStore::from_url(&settings.storage_url).map_err(StartError::Storage)?;

        let db = Arc::new(database.clone());
        let clock: Arc<dyn Clock> = Arc::new(SystemClock);
        let keys =
            KeySet::load_or_create(&*db, &*clock).await.map_err(|e| StartError::Keys(e.to_string()))?;
        let tokens = TokenService::new(
            db.clone(),
            db.clone(),
            clock.clone(),
            Arc::new(keys),
            Arc::new(RevocationCache::new()),
            TokenConfig {
                issuer: settings.issuer.clone(),
                audience: settings.audience.clone(),
                access_ttl: time::Duration::seconds(i64::from(settings.access_token_ttl_secs)),
                refresh_ttl: time::Duration::seconds(i64::from(settings.refresh_token_ttl_secs)),
                leeway_secs: 30,
            },
        );
        let checks: Vec<Arc<dyn HealthCheck>> = vec![db.clone(), Arc::new(storage)];
        Ok(Services {
            missions: MissionService::new(db.clone(), db.clone(), clock.clone()),
            clients: ClientService::new(
                db.clone(),
                db.clone(),
                db.clone(),
                db.clone(),
                db.clone(),
                clock.clone(),
            )
            .with_revocations(tokens.revocation_cache()),
            catalog: CatalogService::new(db.clone(), db.clone(), clock.clone()),
            citizens: CitizenService::new(db.clone(), db.clone(), db.clone(), clock.clone()),
            staff: StaffService::new(db.clone(), db.clone(), db.clone(), db.clone(), clock.clone()),
            audit: AuditService::new(db.clone()),
            requests: RequestService::new(
                db.clone(),
                db.clone(),
                db.clone(),
                db.clone(),
                db.clone(),
                clock.clone(),
            ),
            tokens,
            health: HealthService::new(checks),
            database,
        })
    }
}

/// A running server and its background tasks.
pub struct Application {
    server: Server,
    port: u16,
    tasks: Vec<JoinHandle<()>>,
    /// The first global admin client, when this start created it (first start on an
    /// empty database). Its secret exists nowhere else.
    pub bootstrap_admin: Option<ClientWithSecret>,
}

/// Runs `task` every `period`, the first time one period from now (a tick missed while
/// the task ran is not made up for).
fn spawn_every<F, Fut>(period: Duration, mut task: F) -> JoinHandle<()>
where
    F: FnMut() -> Fut + Send + 'static,
    Fut: std::future::Future<Output = ()> + Send,
{
    tokio::spawn(async move {
        let mut ticker = tokio::time::interval_at(tokio::time::Instant::now() + period, period);
        ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            ticker.tick().await;
            task().await;
        }
    })
}

/// Pulls revocations into this node's cache every
/// [`SYNC_INTERVAL`](consular_application::auth::revocation::SYNC_INTERVAL) (the first
/// pull happens in [`Application::build`]).
fn spawn_revocation_sync(tokens: TokenService) -> JoinHandle<()> {
    spawn_every(consular_application::auth::revocation::SYNC_INTERVAL, move || {
        let tokens = tokens.clone();
        async move {
            if let Err(error) = tokens.revocations().sync(tokens.token_repository(), SystemClock.now()).await
            {
                tracing::warn!(%error, "revocation sync failed; bearer checks fall back to the database");
            }
        }
    })
}

/// Deletes expired refresh tokens, revocations and idempotency records hourly.
fn spawn_housekeeping(tokens: TokenService) -> JoinHandle<()> {
    spawn_every(Duration::from_secs(3600), move || {
        let tokens = tokens.clone();
        async move {
            match tokens.token_repository().purge_expired(SystemClock.now()).await {
                Ok(count) if count > 0 => tracing::info!(count, "expired tokens purged"),
                Ok(_) => {}
                Err(error) => tracing::warn!(%error, "purging expired tokens failed"),
            }
        }
    })
}

impl Application {
    /// Builds everything and binds `settings.bind` (port 0 picks a free port). The server
    /// runs once [`Application::run`] is awaited or spawned.
    pub async fn build(settings: &Settings) -> Result<Application, StartError> {
        let services = Services::build(settings).await?;
        let bootstrap_admin =
            services.clients.bootstrap_admin().await.map_err(|e| StartError::Setup(e.to_string()))?;
        let first_sync =
            services.tokens.revocations().sync(services.tokens.token_repository(), SystemClock.now()).await;
        if let Err(error) = first_sync {
            return Err(StartError::Database(error.to_string()));
        }

        let per_minute = NonZeroU32::new(settings.token_rate_limit_per_minute).unwrap_or(NonZeroU32::MIN);
        let state = web::Data::new(AppState {
            missions: services.missions.clone(),
            clients: services.clients.clone(),
            catalog: services.catalog.clone(),
            citizens: services.citizens.clone(),
            staff: services.staff.clone(),
            audit: services.audit.clone(),
            requests: services.requests.clone(),
            tokens: services.tokens.clone(),
            health: services.health.clone(),
            metrics: Arc::new(Metrics::default()),
            spec: Arc::new(ApiSpec::build()),
            token_limits: TokenRateLimits::new(per_minute),
        });
        let limits = state.clone();
        let listener = TcpListener::bind(settings.bind)
            .map_err(|error| StartError::Bind { addr: settings.bind.to_string(), error })?;
        let port = listener.local_addr().map_err(|e| StartError::Setup(e.to_string()))?.port();
        let workers = if settings.workers == 0 {
            std::thread::available_parallelism().map_or(2, |n| n.get())
        } else {
            settings.workers as usize
        };
        let server = HttpServer::new(move || consular_http::app(state.clone()))
            .workers(workers)
            .shutdown_timeout(30)
            .listen(listener)
            .map_err(|error| StartError::Bind { addr: settings.bind.to_string(), error })?
            .run();
        let tasks = vec![
            spawn_revocation_sync(services.tokens.clone()),
            spawn_housekeeping(services.tokens.clone()),
            // The token rate limiters forget idle keys every minute (bounded memory).
            spawn_every(Duration::from_secs(60), move || {
                limits.token_limits.forget_idle();
                std::future::ready(())
            }),
        ];
        Ok(Application { server, port, tasks, bootstrap_admin })
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    pub fn handle(&self) -> ServerHandle {
        self.server.handle()
    }

    /// Serves until the server is stopped (SIGINT/SIGTERM, or its handle); then the
    /// background tasks end too.
    pub async fn run(self) -> std::io::Result<()> {
        let result = self.server.await;
        for task in &self.tasks {
            task.abort();
        }
        result
    }
}
