//! The `consular` service: configuration, dependency wiring and start-up.
//!
//! This crate is the only one that knows every adapter: it builds them from the
//! configuration, hands them to the use cases as ports ([`services::build`]), and serves
//! the HTTP app. It holds no business rule: the background tasks call use cases too.

pub mod cli;
pub mod config;
pub mod error;
pub mod services;
pub mod telemetry;

use actix_web::dev::{Server, ServerHandle};
use actix_web::{HttpServer, web};
use consular_application::auth::TokenService;
use consular_application::clients::ClientWithSecret;
use consular_application::documents::DocumentService;
use consular_application::notifications::NotificationService;
use consular_http::{AppState, TokenRateLimits};
use std::net::TcpListener;
use std::num::NonZeroU32;
use std::time::Duration;
use tokio::task::JoinHandle;

pub use config::{ConfigError, Settings};
pub use error::StartError;

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

/// Pulls revocations into this node's cache, and picks up signing-key changes, every
/// [`SYNC_INTERVAL`](consular_application::auth::revocation::SYNC_INTERVAL) (the first
/// pull happens in [`Application::build`]).
fn spawn_revocation_sync(tokens: TokenService) -> JoinHandle<()> {
    spawn_every(consular_application::auth::revocation::SYNC_INTERVAL, move || {
        let tokens = tokens.clone();
        async move {
            if let Err(error) = tokens.sync_revocations().await {
                tracing::warn!(%error, "revocation sync failed; bearer checks fall back to the database");
            }
            // Key rotations and retirements reach this node on the same period.
            if let Err(error) = tokens.refresh_keys().await {
                tracing::warn!(%error, "signing key refresh failed; this node keeps its current keys");
            }
        }
    })
}

/// Hourly: deletes expired refresh tokens, revocations and idempotency records, and
/// sweeps document blobs no live document references (docs/documents.md "Crash
/// consistency").
fn spawn_housekeeping(tokens: TokenService, documents: DocumentService) -> JoinHandle<()> {
    spawn_every(Duration::from_secs(3600), move || {
        let (tokens, documents) = (tokens.clone(), documents.clone());
        async move {
            match tokens.purge_expired().await {
                Ok(count) if count > 0 => tracing::info!(count, "expired tokens purged"),
                Ok(_) => {}
                Err(error) => tracing::warn!(%error, "purging expired tokens failed"),
            }
            match documents.sweep().await {
                Ok(report) if report.orphans + report.abandoned_uploads > 0 => tracing::info!(
                    orphans = report.orphans,
                    abandoned_uploads = report.abandoned_uploads,
                    "document blobs swept"
                ),
                Ok(_) => {}
                Err(error) => tracing::warn!(%error, "sweeping document blobs failed"),
            }
        }
    })
}

/// Runs `pass` again at once while it reports a full batch (a backlog drains at full
/// speed), else every `poll`; a failure is logged and retried after `poll`.
fn spawn_loop<F, Fut>(what: &'static str, poll: Duration, mut pass: F) -> JoinHandle<()>
where
    F: FnMut() -> Fut + Send + 'static,
    Fut: std::future::Future<Output = Result<bool, consular_application::ServiceError>> + Send,
{
    tokio::spawn(async move {
        loop {
            match pass().await {
                Ok(true) => continue,
                Ok(false) => {}
                Err(error) => tracing::warn!(%error, "{what} failed; retrying"),
            }
            tokio::time::sleep(poll).await;
        }
    })
}

/// Notification delivery (docs/notifications.md): the outbox worker, the email sender
/// (when SMTP is configured) and the reminder sweep, every five minutes.
pub fn spawn_notification_tasks(notifications: &NotificationService, poll: Duration) -> Vec<JoinHandle<()>> {
    let batch = notifications.config().batch as usize;
    let email_batch = notifications.config().email_batch as usize;
    let worker = notifications.clone();
    let mut tasks = vec![spawn_loop("the outbox worker", poll, move || {
        let worker = worker.clone();
        async move { worker.dispatch().await.map(|done| done.events >= batch) }
    })];
    if notifications.sends_email() {
        let sender = notifications.clone();
        tasks.push(spawn_loop("sending emails", poll, move || {
            let sender = sender.clone();
            async move { sender.send_emails().await.map(|sent| sent.claimed >= email_batch) }
        }));
    }
    let sweeper = notifications.clone();
    tasks.push(spawn_every(Duration::from_secs(300), move || {
        let sweeper = sweeper.clone();
        async move {
            match sweeper.schedule_reminders().await {
                Ok(count) if count > 0 => tracing::info!(count, "appointment reminders scheduled"),
                Ok(_) => {}
                Err(error) => tracing::warn!(%error, "scheduling appointment reminders failed"),
            }
        }
    }));
    tracing::info!(node = %notifications.config().node, "notification worker started");
    tasks
}

impl Application {
    /// Builds everything and binds `settings.bind` (port 0 picks a free port). The server
    /// runs once [`Application::run`] is awaited or spawned.
    pub async fn build(settings: &Settings) -> Result<Application, StartError> {
        let services = services::build(settings).await?;
        let bootstrap_admin =
            services.clients.bootstrap_admin().await.map_err(|e| StartError::Setup(e.to_string()))?;
        if let Err(error) = services.tokens.sync_revocations().await {
            return Err(StartError::Database(error.to_string()));
        }

        let per_minute = NonZeroU32::new(settings.token_rate_limit_per_minute).unwrap_or(NonZeroU32::MIN);
        let tokens = services.tokens.clone();
        let documents = services.documents.clone();
        let notifications = services.notifications.clone();
        let state = web::Data::new(AppState::new(
            services,
            consular_http::api_spec(),
            TokenRateLimits::new(per_minute),
        ));
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
        let mut tasks = vec![
            spawn_revocation_sync(tokens.clone()),
            spawn_housekeeping(tokens, documents),
            // The token rate limiters forget idle keys every minute (bounded memory).
            spawn_every(Duration::from_secs(60), move || {
                limits.token_limits.forget_idle();
                std::future::ready(())
            }),
        ];
        if settings.run_worker {
            tasks.extend(spawn_notification_tasks(
                &notifications,
                Duration::from_millis(settings.outbox_poll_ms),
            ));
        }
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
