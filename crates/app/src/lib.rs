//! The `consular` service: configuration, dependency wiring and start-up.
//!
//! This crate is the only one that knows every adapter: it builds them from the
//! configuration, hands them to the use cases as ports ([`services::build`]), and serves
//! the HTTP app. It holds no business rule: the background tasks call use cases too.
//!
//! Stopping (docs/operations.md "Shutdown"): on SIGTERM or SIGINT the listeners close,
//! in-flight requests get `shutdown_grace_secs`, then the access-log entries still queued
//! are written, and the background tasks are told to stop through one
//! [`CancellationToken`] and finish the pass they are in, within what is left of the grace
//! period; then the database pool closes.

pub mod cli;
pub mod config;
pub mod error;
pub mod services;
pub mod telemetry;

use actix_web::dev::{Server, ServerHandle};
use actix_web::{HttpServer, web};
use consular_application::access_log::AccessRecorder;
use consular_application::auth::TokenService;
use consular_application::clients::ClientWithSecret;
use consular_application::documents::DocumentService;
use consular_application::erasure::ErasureService;
use consular_application::exports::{BuildOutcome, ExportService};
use consular_application::notifications::NotificationService;
use consular_application::reads::ReadService;
use consular_db::Database;
use consular_http::{AppState, TokenRateLimits};
use std::net::{SocketAddr, TcpListener};
use std::num::NonZeroU32;
use std::time::Duration;
use tokio::signal::unix::{Signal, SignalKind, signal};
use tokio::task::JoinHandle;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

pub use config::{ConfigError, Settings};
pub use error::StartError;

/// mimalloc instead of glibc's malloc: fewer cycles per allocation on the request path
/// (docs/benchmarks.md "The allocator"). Declared here, in the crate every process that
/// serves the API links (the binary, the end-to-end tests, the benchmarks), so that they
/// all run the server with the allocator it ships with.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// A running server, its metrics listener when configured, and its background tasks.
pub struct Application {
    server: Server,
    port: u16,
    metrics: Option<(Server, SocketAddr)>,
    tasks: Vec<JoinHandle<()>>,
    /// Cancelled once the server has stopped: each background loop ends after its pass.
    stop: CancellationToken,
    grace: Duration,
    signals: ShutdownSignals,
    database: Database,
    /// The node's access-log queue, written before the node stops.
    access: AccessRecorder,
    /// The first global admin client, when this start created it (first start on an
    /// empty database). Its secret exists nowhere else.
    pub bootstrap_admin: Option<ClientWithSecret>,
}

/// SIGTERM (what orchestrators send) and SIGINT (Ctrl-C), listened to from start-up so
/// that a signal arriving before the server runs still stops it gracefully.
pub struct ShutdownSignals {
    terminate: Signal,
    interrupt: Signal,
}

impl ShutdownSignals {
    pub fn listen() -> std::io::Result<ShutdownSignals> {
        Ok(ShutdownSignals {
            terminate: signal(SignalKind::terminate())?,
            interrupt: signal(SignalKind::interrupt())?,
        })
    }

    /// The name of the first of the two signals to arrive.
    pub async fn recv(&mut self) -> &'static str {
        tokio::select! {
            _ = self.terminate.recv() => "SIGTERM",
            _ = self.interrupt.recv() => "SIGINT",
        }
    }
}

/// Tells the background tasks to stop and waits for them until `deadline`: each finishes
/// the pass it is in (a batch it claimed, a sweep it started). One still running then is
/// aborted; what it had claimed is taken over when its lease expires (at-least-once,
/// docs/notifications.md).
pub async fn stop_tasks(stop: &CancellationToken, tasks: Vec<JoinHandle<()>>, deadline: Instant) {
    stop.cancel();
    let mut aborted = 0;
    for mut task in tasks {
        if tokio::time::timeout_at(deadline, &mut task).await.is_err() {
            task.abort();
            aborted += 1;
        }
    }
    if aborted > 0 {
        tracing::warn!(aborted, "background tasks still running at the end of the grace period were aborted");
    }
}

/// Runs `task` every `period`, the first time one period from now (a tick missed while
/// the task ran is not made up for), until `stop` is cancelled.
fn spawn_every<F, Fut>(stop: &CancellationToken, period: Duration, task: F) -> JoinHandle<()>
where
    F: FnMut() -> Fut + Send + 'static,
    Fut: std::future::Future<Output = ()> + Send,
{
    spawn_every_from(stop, period, period, task)
}

/// [`spawn_every`], the first time `first` from now.
fn spawn_every_from<F, Fut>(
    stop: &CancellationToken,
    first: Duration,
    period: Duration,
    mut task: F,
) -> JoinHandle<()>
where
    F: FnMut() -> Fut + Send + 'static,
    Fut: std::future::Future<Output = ()> + Send,
{
    let stop = stop.clone();
    tokio::spawn(async move {
        let mut ticker = tokio::time::interval_at(Instant::now() + first, period);
        ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tokio::select! {
                biased;
                () = stop.cancelled() => break,
                _ = ticker.tick() => task().await,
            }
        }
    })
}

/// Pulls revocations into this node's cache, and picks up signing-key changes, every
/// [`SYNC_INTERVAL`](consular_application::auth::revocation::SYNC_INTERVAL) (the first
/// pull happens in [`Application::build`]).
fn spawn_revocation_sync(stop: &CancellationToken, tokens: TokenService) -> JoinHandle<()> {
    spawn_every(stop, consular_application::auth::revocation::SYNC_INTERVAL, move || {
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

/// Hourly: deletes expired refresh tokens, revocations and idempotency records, sweeps
/// document blobs no live document references (docs/documents.md "Crash consistency"),
/// and folds write marks older than an hour into their floor (docs/operations.md "Read
/// replicas").
fn spawn_housekeeping(
    stop: &CancellationToken,
    tokens: TokenService,
    documents: DocumentService,
    reads: ReadService,
) -> JoinHandle<()> {
    spawn_every(stop, Duration::from_secs(3600), move || {
        let (tokens, documents, reads) = (tokens.clone(), documents.clone(), reads.clone());
        async move {
            match reads.sweep().await {
                Ok(count) if count > 0 => tracing::info!(count, "write marks swept"),
                Ok(_) => {}
                Err(error) => tracing::warn!(%error, "sweeping write marks failed"),
            }
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

/// Daily, the first time an hour after start-up (so that nodes restarted more often than
/// daily still run it): deletes the requests whose retention period ran out, with
/// everything attached (docs/data-protection.md "Retention and erasure").
fn spawn_retention_sweep(stop: &CancellationToken, erasure: ErasureService) -> JoinHandle<()> {
    spawn_every_from(stop, Duration::from_secs(3600), Duration::from_secs(24 * 3600), move || {
        let erasure = erasure.clone();
        async move {
            match erasure.sweep_retention().await {
                Ok(count) if count > 0 => tracing::info!(count, "requests past their retention deleted"),
                Ok(_) => {}
                Err(error) => tracing::warn!(%error, "the retention sweep failed; it runs again tomorrow"),
            }
        }
    })
}

/// Runs `pass` again at once while it reports a full batch (a backlog drains at full
/// speed), else every `poll`; a failure is logged and retried after `poll`. Ends between
/// two passes once `stop` is cancelled.
fn spawn_loop<F, Fut>(
    stop: &CancellationToken,
    what: &'static str,
    poll: Duration,
    mut pass: F,
) -> JoinHandle<()>
where
    F: FnMut() -> Fut + Send + 'static,
    Fut: std::future::Future<Output = Result<bool, consular_application::ServiceError>> + Send,
{
    let stop = stop.clone();
    tokio::spawn(async move {
        while !stop.is_cancelled() {
            match pass().await {
                Ok(true) => continue,
                Ok(false) => {}
                Err(error) => tracing::warn!(%error, "{what} failed; retrying"),
            }
            tokio::select! {
                () = stop.cancelled() => break,
                () = tokio::time::sleep(poll) => {}
            }
        }
    })
}

/// Notification delivery (docs/notifications.md): the outbox worker, the email sender
/// (when SMTP is configured) and the reminder sweep, every five minutes; they end once
/// `stop` is cancelled (see [`stop_tasks`]).
pub fn spawn_notification_tasks(
    stop: &CancellationToken,
    notifications: &NotificationService,
    poll: Duration,
) -> Vec<JoinHandle<()>> {
    let batch = notifications.config().batch as usize;
    let email_claim = notifications.config().email_claim() as usize;
    let worker = notifications.clone();
    let mut tasks = vec![spawn_loop(stop, "the outbox worker", poll, move || {
        let worker = worker.clone();
        async move { worker.dispatch().await.map(|done| done.events >= batch) }
    })];
    if notifications.sends_email() {
        let sender = notifications.clone();
        tasks.push(spawn_loop(stop, "sending emails", poll, move || {
            let sender = sender.clone();
            async move { sender.send_emails().await.map(|sent| sent.claimed >= email_claim) }
        }));
    }
    let sweeper = notifications.clone();
    tasks.push(spawn_every(stop, Duration::from_secs(300), move || {
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

/// Exports of citizens' data (docs/data-protection.md "Export"): the builder takes one
/// export at a time under a lease (again at once after one, else every second), and the
/// hourly sweep expires archives whose time is up; they end once `stop` is cancelled.
pub fn spawn_export_tasks(stop: &CancellationToken, exports: &ExportService) -> Vec<JoinHandle<()>> {
    let builder = exports.clone();
    let build = spawn_loop(stop, "building an export", Duration::from_secs(1), move || {
        let builder = builder.clone();
        async move { builder.build_next().await.map(|outcome| outcome != BuildOutcome::Idle) }
    });
    let sweeper = exports.clone();
    let sweep = spawn_every(stop, Duration::from_secs(3600), move || {
        let sweeper = sweeper.clone();
        async move {
            match sweeper.sweep().await {
                Ok(report) if report.expired + report.orphans > 0 => tracing::info!(
                    expired = report.expired,
                    orphans = report.orphans,
                    "export archives swept"
                ),
                Ok(_) => {}
                Err(error) => tracing::warn!(%error, "sweeping export archives failed"),
            }
        }
    });
    vec![build, sweep]
}

impl Application {
    /// Builds everything and binds `settings.bind` and, when set, `settings.metrics_bind`
    /// (port 0 picks a free port). The servers run once [`Application::run`] is awaited or
    /// spawned.
    pub async fn build(settings: &Settings) -> Result<Application, StartError> {
        // Before anything slow, so that a SIGTERM during start-up is not fatal to the
        // process but stops it once it serves.
        let signals = ShutdownSignals::listen()
            .map_err(|e| StartError::Setup(format!("cannot listen for SIGTERM and SIGINT: {e}")))?;
        let (services, database) = services::build_with_database(settings).await?;
        let bootstrap_admin =
            services.clients.bootstrap_admin().await.map_err(|e| StartError::Setup(e.to_string()))?;
        if let Err(error) = services.tokens.sync_revocations().await {
            return Err(StartError::Database(error.to_string()));
        }

        let per_minute = NonZeroU32::new(settings.token_rate_limit_per_minute).unwrap_or(NonZeroU32::MIN);
        let tokens = services.tokens.clone();
        let documents = services.documents.clone();
        let erasure = services.erasure.clone();
        let reads = services.reads.clone();
        let notifications = services.notifications.clone();
        let exports = services.exports.clone();
        let access = services.access_log.recorder();
        let state = web::Data::new(AppState::new(
            services,
            consular_http::api_spec_at(settings.public_base_url.as_deref()),
            TokenRateLimits::new(per_minute),
            settings.edge_policy().map_err(|e| StartError::Setup(e.to_string()))?,
        ));
        let limits = state.clone();
        let grace = Duration::from_secs(u64::from(settings.shutdown_grace_secs));
        let (listener, bound) = bind(settings.bind)?;
        let api_state = state.clone();
        let pinned = database.clone();
        // actix's own signal handling would stop at once on SIGINT; `run` stops both
        // servers gracefully on either signal instead. The factory runs once on each worker
        // thread as it starts: that thread then keeps its own share of the database
        // connections (`Database::pin_current_thread`, docs/operations.md "Database
        // connections").
        let server = HttpServer::new(move || {
            pinned.pin_current_thread();
            consular_http::app(api_state.clone())
        })
        .workers(settings.http_workers())
        .shutdown_timeout(grace.as_secs())
        .disable_signals()
        .listen(listener)
        .map_err(|error| StartError::Bind { addr: settings.bind.to_string(), error })?
        .run();
        let metrics = match settings.metrics_bind {
            Some(addr) => {
                let (listener, bound) = bind(addr)?;
                let server = HttpServer::new(move || consular_http::metrics_app(state.clone()))
                    .workers(1)
                    .shutdown_timeout(grace.as_secs())
                    .disable_signals()
                    .listen(listener)
                    .map_err(|error| StartError::Bind { addr: addr.to_string(), error })?
                    .run();
                Some((server, bound))
            }
            None => None,
        };
        let stop = CancellationToken::new();
        let mut tasks = vec![
            spawn_revocation_sync(&stop, tokens.clone()),
            spawn_housekeeping(&stop, tokens, documents, reads),
            spawn_retention_sweep(&stop, erasure),
            // The token rate limiters forget idle keys every minute (bounded memory).
            spawn_every(&stop, Duration::from_secs(60), move || {
                limits.token_limits.forget_idle();
                std::future::ready(())
            }),
        ];
        if settings.run_worker {
            tasks.extend(spawn_notification_tasks(
                &stop,
                &notifications,
                Duration::from_millis(settings.outbox_poll_ms),
            ));
            tasks.extend(spawn_export_tasks(&stop, &exports));
        }
        Ok(Application {
            server,
            port: bound.port(),
            metrics,
            tasks,
            stop,
            grace,
            signals,
            database,
            access,
            bootstrap_admin,
        })
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    /// The address the metrics listener bound, when `metrics_bind` is set.
    pub fn metrics_addr(&self) -> Option<SocketAddr> {
        self.metrics.as_ref().map(|(_, addr)| *addr)
    }

    pub fn handle(&self) -> ServerHandle {
        self.server.handle()
    }

    /// Serves until SIGTERM or SIGINT, or until the server is stopped through its
    /// handle; then stops as the module documentation says, and logs `stopped`.
    pub async fn run(self) -> std::io::Result<()> {
        let Application { mut server, metrics, tasks, stop, grace, mut signals, database, access, .. } = self;
        let handle = server.handle();
        let (metrics_handle, metrics_server) = match metrics {
            Some((server, _)) => (Some(server.handle()), Some(tokio::spawn(server))),
            None => (None, None),
        };
        // The grace period runs from the signal (or, stopped through the handle, from
        // the end of the server, the moment this learns of it).
        let (result, since) = tokio::select! {
            result = &mut server => (result, Instant::now()),
            name = signals.recv() => {
                let since = Instant::now();
                tracing::info!(
                    signal = name,
                    grace_secs = grace.as_secs(),
                    "shutting down: no new connections; in-flight requests may finish within the grace period"
                );
                // Sent at once (the futures only wait for completion): both listeners
                // close together, and the scraper sees the node go with its API.
                drop(handle.stop(true));
                if let Some(metrics) = &metrics_handle {
                    drop(metrics.stop(true));
                }
                (server.await, since)
            }
        };
        let deadline = since + grace;
        // Stopped through its handle, the API takes the metrics listener with it (after a
        // signal this second stop is ignored).
        if let Some(metrics) = &metrics_handle {
            drop(metrics.stop(true));
        }
        if let Some(mut serving) = metrics_server {
            match tokio::time::timeout_at(deadline, &mut serving).await {
                Ok(Ok(Err(error))) => tracing::warn!(%error, "the metrics listener failed"),
                Ok(_) => {}
                Err(_) => serving.abort(),
            }
        }
        // Every read answered has its access-log entry written before the pool closes.
        access.drain(deadline).await;
        stop_tasks(&stop, tasks, deadline).await;
        database.close();
        tracing::info!("stopped");
        result
    }
}

/// A listener on `addr` and the address it got (its port when `addr` asks for port 0).
fn bind(addr: SocketAddr) -> Result<(TcpListener, SocketAddr), StartError> {
    let listener =
        TcpListener::bind(addr).map_err(|error| StartError::Bind { addr: addr.to_string(), error })?;
    let bound = listener.local_addr().map_err(|e| StartError::Setup(e.to_string()))?;
    Ok((listener, bound))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};

    /// Sets its flag when dropped: tells whether an aborted task's future is gone.
    struct Dropped(Arc<AtomicBool>);

    impl Drop for Dropped {
        fn drop(&mut self) {
            self.0.store(true, Ordering::SeqCst);
        }
    }

    #[tokio::test]
    async fn a_loop_finishes_the_pass_it_is_in_then_ends() {
        let stop = CancellationToken::new();
        let (started, finished) = (Arc::new(AtomicU32::new(0)), Arc::new(AtomicU32::new(0)));
        let (s, f) = (started.clone(), finished.clone());
        let task = spawn_loop(&stop, "a test pass", Duration::from_millis(10), move || {
            let (s, f) = (s.clone(), f.clone());
            async move {
                s.fetch_add(1, Ordering::SeqCst);
                tokio::time::sleep(Duration::from_millis(200)).await;
                f.fetch_add(1, Ordering::SeqCst);
                // A full batch: the next pass would start at once.
                Ok(true)
            }
        });
        while started.load(Ordering::SeqCst) == 0 {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        let began = Instant::now();
        stop_tasks(&stop, vec![task], Instant::now() + Duration::from_secs(5)).await;
        assert!(began.elapsed() < Duration::from_secs(1), "it ended after its pass: {:?}", began.elapsed());
        assert_eq!(started.load(Ordering::SeqCst), 1, "no pass began after the stop");
        assert_eq!(finished.load(Ordering::SeqCst), 1, "the pass in progress was not cut");
    }

    #[tokio::test]
    async fn an_idle_periodic_task_ends_at_once_and_a_late_one_is_aborted_at_the_deadline() {
        let stop = CancellationToken::new();
        let ran = Arc::new(AtomicU32::new(0));
        let counter = ran.clone();
        let idle = spawn_every(&stop, Duration::from_secs(3600), move || {
            counter.fetch_add(1, Ordering::SeqCst);
            std::future::ready(())
        });
        let began = Instant::now();
        stop_tasks(&stop, vec![idle], Instant::now() + Duration::from_secs(5)).await;
        assert!(began.elapsed() < Duration::from_secs(1), "{:?}", began.elapsed());
        assert_eq!(ran.load(Ordering::SeqCst), 0, "the task did not run on the way out");

        let stop = CancellationToken::new();
        let dropped = Arc::new(AtomicBool::new(false));
        let guard = Dropped(dropped.clone());
        let late = tokio::spawn(async move {
            let _guard = guard;
            tokio::time::sleep(Duration::from_secs(3600)).await;
        });
        let began = Instant::now();
        stop_tasks(&stop, vec![late], Instant::now() + Duration::from_millis(100)).await;
        let took = began.elapsed();
        assert!(took >= Duration::from_millis(100) && took < Duration::from_secs(2), "{took:?}");
        tokio::time::sleep(Duration::from_millis(50)).await;
        assert!(dropped.load(Ordering::SeqCst), "the task still running at the deadline was aborted");
    }
}
