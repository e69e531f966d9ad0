//! The connection pool, chosen at run time from the URL, and the migrations.

use crate::failure::{DbError, Failure};
use crate::replica::Replica;
use crate::shards::{PgPools, shard_sizes};
use crate::tls::{PgConnector, PgSettings, is_key_value};
use deadpool::managed::{Hook, HookError};
use diesel::connection::{Instrumentation, InstrumentationEvent, SimpleConnection};
use diesel::sql_types::Bool;
use diesel::sqlite::SqliteConnection;
use diesel::{Connection, ConnectionError, ConnectionResult, QueryableByName};
use diesel_async::async_connection_wrapper::AsyncConnectionWrapper;
use diesel_async::pooled_connection::deadpool::Pool;
use diesel_async::pooled_connection::{AsyncDieselConnectionManager, ManagerConfig, RecyclingMethod};
use diesel_async::sync_connection_wrapper::SyncConnectionWrapper;
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl, SimpleAsyncConnection};
use diesel_migrations::{EmbeddedMigrations, MigrationHarness, embed_migrations};
use std::fmt;
use std::future::Future;
use std::path::Path;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

const POSTGRES_MIGRATIONS: EmbeddedMigrations = embed_migrations!("../../../migrations/postgres");
const SQLITE_MIGRATIONS: EmbeddedMigrations = embed_migrations!("../../../migrations/sqlite");

/// Run on every new SQLite connection. WAL lets readers (other processes) work while one
/// connection writes; `busy_timeout` makes a writer wait for another process's lock
/// instead of failing at once; foreign keys are off by default in SQLite. `secure_delete`
/// overwrites what a deletion or an update frees with zeros, so that an erased citizen's
/// values do not linger in free pages of the file (docs/data-protection.md "Retention and
/// erasure").
const SQLITE_PRAGMAS: &str = "PRAGMA journal_mode = WAL; PRAGMA busy_timeout = 5000; PRAGMA foreign_keys = ON; PRAGMA synchronous = NORMAL; PRAGMA secure_delete = ON;";

/// A key for `pg_advisory_lock`, so that nodes starting together migrate one at a time.
const MIGRATION_LOCK: i64 = 0x636f_6e73_756c_6172; // "consular"

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    Postgres,
    Sqlite,
}

/// How to reach the database.
#[derive(Clone, PartialEq, Eq)]
pub struct DbConfig {
    /// `postgres://…`/`postgresql://…` or PostgreSQL's key/value form (`host=… dbname=…`),
    /// with one host or several (docs/operations.md "High availability"), or
    /// `sqlite://PATH`/`sqlite:PATH`.
    pub url: String,
    /// The pool size on PostgreSQL; SQLite always uses one connection (see [`Database::connect`]).
    pub max_connections: usize,
    /// How long a caller waits for a pooled connection (and for a new one to open).
    pub acquire_timeout: Duration,
    /// PostgreSQL `statement_timeout` of every pooled connection.
    pub statement_timeout: Duration,
    /// The HTTP worker threads that will each keep connections of their own
    /// ([`Database::pin_current_thread`]); 0 for one pool every thread shares. PostgreSQL
    /// only; `max_connections` stays the total.
    pub worker_threads: usize,
    /// A read replica (or several hosts, as `url`) for the reads ports mark tolerant
    /// (docs/operations.md "Read replicas"), with a pool of `max_connections` of its own.
    /// PostgreSQL only; `None`: every read goes to `url`.
    pub read_url: Option<String>,
}

impl DbConfig {
    /// `url` with a pool of 10, a 5 s acquire timeout and a 30 s statement timeout.
    pub fn new(url: impl Into<String>) -> Self {
        DbConfig {
            url: url.into(),
            max_connections: 10,
            acquire_timeout: Duration::from_secs(5),
            statement_timeout: Duration::from_secs(30),
            worker_threads: 0,
            read_url: None,
        }
    }
}

// The URL may carry a password: never print it.
impl fmt::Debug for DbConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DbConfig")
            .field("backend", &backend_of(&self.url).ok())
            .field("max_connections", &self.max_connections)
            .field("acquire_timeout", &self.acquire_timeout)
            .field("statement_timeout", &self.statement_timeout)
            .field("worker_threads", &self.worker_threads)
            .field("read_replica", &self.read_url.is_some())
            .finish_non_exhaustive()
    }
}

enum Target<'a> {
    Postgres(Box<PgSettings>),
    Sqlite(&'a str),
}

fn target(url: &str) -> Result<Target<'_>, String> {
    if url.starts_with("postgres://") || url.starts_with("postgresql://") {
        return PgSettings::parse(url).map(|settings| Target::Postgres(Box::new(settings)));
    }
    match url.strip_prefix("sqlite://").or_else(|| url.strip_prefix("sqlite:")) {
        Some("") => Err("a sqlite URL needs a file path (sqlite://PATH)".to_owned()),
        // Migrations run on their own connection, which would see another, empty database.
        Some(path) if path.contains(":memory:") || path.contains("mode=memory") => {
            Err("in-memory SQLite databases are not supported: use a file (sqlite://PATH)".to_owned())
        }
        Some(path) => Ok(Target::Sqlite(path)),
        None if is_key_value(url) => {
            PgSettings::parse(url).map(|settings| Target::Postgres(Box::new(settings)))
        }
        // Only the scheme is echoed: the rest may hold a password.
        None => Err(format!(
            "unsupported database URL scheme `{}`: expected postgres://, postgresql://, sqlite://PATH, \
             sqlite:PATH or PostgreSQL's key/value form (host=… dbname=…)",
            url.split(':').next().unwrap_or_default()
        )),
    }
}

/// Which database `url` names; for configuration checks. A PostgreSQL URL is also read
/// whole, `sslmode` and `sslrootcert` included (the file itself is read by
/// [`Database::connect`]).
pub fn backend_of(url: &str) -> Result<Backend, String> {
    target(url).map(|t| match t {
        Target::Postgres(_) => Backend::Postgres,
        Target::Sqlite(_) => Backend::Sqlite,
    })
}

pub(crate) type SqliteConn = SyncConnectionWrapper<SqliteConnection>;

pub(crate) enum Pools {
    Postgres { pool: PgPools, connector: Arc<PgConnector>, replica: Option<Replica> },
    Sqlite { pool: Pool<SqliteConn>, path: String },
}

/// The database behind every repository port. Cloning is cheap: clones share the pool.
#[derive(Clone)]
pub struct Database {
    pools: Arc<Pools>,
}

impl fmt::Debug for Database {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Database").field("backend", &self.backend()).finish_non_exhaustive()
    }
}

type SetupFuture<'a, C> = Pin<Box<dyn Future<Output = ConnectionResult<C>> + Send + 'a>>;

impl Database {
    /// Builds the pool for `config.url`. No connection is opened yet (connections open on
    /// first use; [`Database::migrate`] and the health check are the first uses), but the
    /// parent directory of a SQLite file is created.
    ///
    /// PostgreSQL: up to `max_connections` connections, each checked by its state before
    /// reuse (and dropped once its server stopped taking writes: `Demotion`) and set up
    /// with the statement timeout.
    ///
    /// SQLite: exactly one connection, whatever `max_connections` says. SQLite allows one
    /// writer at a time, and two deferred write transactions on two connections can
    /// deadlock (each holds a read lock the other needs: SQLITE_BUSY, which no busy
    /// timeout resolves). One connection serialises this process's queries; writes also
    /// start with `BEGIN IMMEDIATE` for other processes sharing the file.
    pub fn connect(config: &DbConfig) -> Result<Database, DbError> {
        let pools = match target(&config.url).map_err(DbError::InvalidUrl)? {
            Target::Postgres(settings) => {
                if let Some(warning) = settings.failover_warning() {
                    tracing::warn!("{warning}");
                }
                let connector = Arc::new(PgConnector::new(*settings).map_err(DbError::Setup)?);
                let replica = match &config.read_url {
                    Some(url) if backend_of(url).map_err(DbError::InvalidUrl)? == Backend::Postgres => {
                        Some(Replica::new(replica_pool(url, config)?))
                    }
                    Some(_) => {
                        return Err(DbError::InvalidUrl("the read URL must name PostgreSQL".to_owned()));
                    }
                    None => None,
                };
                Pools::Postgres {
                    pool: postgres_pool(&config.url, Arc::clone(&connector), config)?,
                    connector,
                    replica,
                }
            }
            Target::Sqlite(_) if config.read_url.is_some() => {
                return Err(DbError::InvalidUrl(
                    "a read URL needs PostgreSQL: SQLite has no replicas".to_owned(),
                ));
            }
            Target::Sqlite(path) => {
                if let Some(parent) = Path::new(path).parent()
                    && !parent.as_os_str().is_empty()
                {
                    std::fs::create_dir_all(parent)
                        .map_err(|e| DbError::Setup(format!("cannot create {}: {e}", parent.display())))?;
                }
                Pools::Sqlite { pool: sqlite_pool(path, config)?, path: path.to_owned() }
            }
        };
        Ok(Database { pools: Arc::new(pools) })
    }

    pub fn backend(&self) -> Backend {
        match *self.pools {
            Pools::Postgres { .. } => Backend::Postgres,
            Pools::Sqlite { .. } => Backend::Sqlite,
        }
    }

    pub(crate) fn pools(&self) -> &Pools {
        &self.pools
    }

    /// Applies the pending migrations of this database's tree (`migrations/postgres` or
    /// `migrations/sqlite`). Safe to call from several nodes at once on PostgreSQL.
    pub async fn migrate(&self) -> Result<(), DbError> {
        // diesel's migration harness is synchronous: run it on a blocking thread, where it
        // may block on the runtime without stalling a worker (and without the
        // current-thread runtime panic of `AsyncMigrationHarness`).
        let job = match &*self.pools {
            Pools::Postgres { connector, .. } => {
                let connector = Arc::clone(connector);
                tokio::task::spawn_blocking(move || migrate_postgres(connector))
            }
            Pools::Sqlite { path, .. } => {
                let path = path.clone();
                tokio::task::spawn_blocking(move || migrate_sqlite(&path))
            }
        };
        job.await.map_err(|e| DbError::Migration(format!("migration task failed: {e}")))?
    }

    /// Whether a pooled connection to PostgreSQL is encrypted (`pg_stat_ssl`); `None` on
    /// SQLite. For tests and diagnostics.
    #[doc(hidden)]
    pub async fn session_encrypted(&self) -> Result<Option<bool>, consular_ports::RepoError> {
        #[derive(QueryableByName)]
        struct Session {
            #[diesel(sql_type = Bool)]
            ssl: bool,
        }
        let Pools::Postgres { pool, .. } = &*self.pools else {
            return Ok(None);
        };
        let session: Result<Session, Failure> = async {
            let mut conn = pool.get().await?;
            Ok(diesel::sql_query("SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()")
                .get_result::<Session>(&mut conn)
                .await?)
        }
        .await;
        Ok(Some(session?.ssl))
    }

    /// The PostgreSQL backend process of a pooled connection (`pg_backend_pid()`), checked
    /// out as every repository method does; `None` on SQLite. For tests: which connections
    /// the pool keeps and which it replaces.
    #[doc(hidden)]
    pub async fn backend_pid(&self) -> Result<Option<i32>, consular_ports::RepoError> {
        #[derive(QueryableByName)]
        struct Pid {
            #[diesel(sql_type = diesel::sql_types::Integer)]
            pid: i32,
        }
        let Pools::Postgres { pool, .. } = &*self.pools else {
            return Ok(None);
        };
        let backend: Result<Pid, Failure> = async {
            let mut conn = pool.get().await?;
            Ok(diesel::sql_query("SELECT pg_backend_pid() AS pid").get_result::<Pid>(&mut conn).await?)
        }
        .await;
        Ok(Some(backend?.pid))
    }

    /// Makes the calling thread, an HTTP worker, use connections of its own (opened on it,
    /// so that its queries never wait for another thread): one shard of the pool per
    /// worker when [`DbConfig::worker_threads`] asked for them; nothing otherwise, and
    /// nothing on SQLite. Called once on each worker thread as it starts.
    pub fn pin_current_thread(&self) {
        if let Pools::Postgres { pool, .. } = &*self.pools {
            pool.pin_current_thread();
        }
    }

    /// Closes the pool: idle connections are dropped, later calls fail as unavailable.
    pub fn close(&self) {
        match &*self.pools {
            Pools::Postgres { pool, replica, .. } => {
                pool.close();
                if let Some(replica) = replica {
                    replica.close();
                }
            }
            Pools::Sqlite { pool, .. } => pool.close(),
        }
    }
}

/// Applies the pending migrations to the database at `url`, from a thread that may block
/// (a plain thread, or `spawn_blocking`). Test harnesses use it to prepare template
/// databases.
pub fn migrate_blocking(url: &str) -> Result<(), DbError> {
    match target(url).map_err(DbError::InvalidUrl)? {
        Target::Postgres(settings) => {
            migrate_postgres(Arc::new(PgConnector::new(*settings).map_err(DbError::Setup)?))
        }
        Target::Sqlite(path) => migrate_sqlite(path),
    }
}

/// The migrations on a connection opened like the pool's (same TLS), driven from this
/// blocking thread: on the caller's runtime when there is one, else on a private one.
fn migrate_postgres(connector: Arc<PgConnector>) -> Result<(), DbError> {
    if let Ok(runtime) = tokio::runtime::Handle::try_current() {
        return migrate_postgres_on(&runtime, &connector);
    }
    // A plain thread (a test harness preparing a template). The connection's I/O task
    // must live on a runtime that outlasts it and is driven while this thread blocks:
    // the private runtime's own thread drives it, the migrations run on its blocking pool.
    let private = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| DbError::Setup(format!("cannot start a runtime for the migrations: {e}")))?;
    let runtime = private.handle().clone();
    let task = private.spawn_blocking(move || migrate_postgres_on(&runtime, &connector));
    private.block_on(task).map_err(|e| DbError::Migration(format!("migration task failed: {e}")))?
}

fn migrate_postgres_on(runtime: &tokio::runtime::Handle, connector: &PgConnector) -> Result<(), DbError> {
    let conn = runtime.block_on(connector.connect()).map_err(|e| DbError::Connect(e.to_string()))?;
    // The wrapper finds the same runtime from this thread and blocks on it per statement.
    let mut conn = AsyncConnectionWrapper::<AsyncPgConnection>::from(conn);
    // Released when the connection closes, at the end of this function.
    SimpleConnection::batch_execute(&mut conn, &format!("SELECT pg_advisory_lock({MIGRATION_LOCK})"))
        .map_err(|e| DbError::Migration(e.to_string()))?;
    let applied =
        conn.run_pending_migrations(POSTGRES_MIGRATIONS).map_err(|e| DbError::Migration(e.to_string()))?;
    tracing::info!(applied = applied.len(), "database migrations are up to date (postgres)");
    Ok(())
}

fn migrate_sqlite(path: &str) -> Result<(), DbError> {
    let mut conn = SqliteConnection::establish(path).map_err(|e| DbError::Connect(e.to_string()))?;
    conn.batch_execute(SQLITE_PRAGMAS).map_err(|e| DbError::Setup(e.to_string()))?;
    let applied =
        conn.run_pending_migrations(SQLITE_MIGRATIONS).map_err(|e| DbError::Migration(e.to_string()))?;
    tracing::info!(applied = applied.len(), "database migrations are up to date (sqlite)");
    Ok(())
}

/// A pool of `size` connections whose waits (for a free connection, a new one, a reuse
/// check) all end after `acquire_timeout`: an exhausted pool or an unreachable database
/// is an error the caller turns into 503, never a hang.
fn pool_builder<M: deadpool::managed::Manager>(
    manager: M,
    size: usize,
    config: &DbConfig,
) -> deadpool::managed::PoolBuilder<M> {
    deadpool::managed::Pool::builder(manager)
        .max_size(size)
        .runtime(deadpool::Runtime::Tokio1)
        .wait_timeout(Some(config.acquire_timeout))
        .create_timeout(Some(config.acquire_timeout))
        .recycle_timeout(Some(config.acquire_timeout))
}

/// When a connection of the pool last heard that its server no longer takes writes
/// (`failure::refuses_writes`: 25006 `read_only_sql_transaction`, or a server in recovery):
/// the primary was demoted, replaced by a standby, or turned read-only. Every connection
/// opened until then, the one that heard it and its idle siblings alike, is dropped at its
/// next checkout instead of being reused, so that the pool opens new ones, which a
/// multi-host URL with `target_session_attrs=read-write` sends to the new primary
/// (docs/operations.md "High availability").
///
/// Why this way: the recycling stays `Fast` (no round trip per checkout, such as `SHOW
/// transaction_read_only`, paid by every request for an event as rare as a failover); the
/// error is seen where it happens, by each connection's diesel instrumentation
/// ([`WatchWrites`]), whatever query function or transaction it came through; and a
/// deadpool `pre_recycle` hook compares a connection's creation time with it (one atomic
/// load). Not `Object::take` where the error is returned: that is in every checkout of
/// every area (`run!`, `view!`), and some query functions turn errors into outcomes on
/// the way. All the connections
/// opened before go, not only the one that heard it: they reach the same server, which
/// also serves their reads, stale ones once it follows a new primary.
struct Demotion {
    base: Instant,
    /// Nanoseconds from `base` to the last such error, plus one; 0 before any.
    last: AtomicU64,
}

impl Demotion {
    fn new() -> Self {
        Demotion { base: Instant::now(), last: AtomicU64::new(0) }
    }

    fn since_base(&self, at: Instant) -> u64 {
        u64::try_from(at.saturating_duration_since(self.base).as_nanos()).unwrap_or(u64::MAX)
    }

    fn record(&self) {
        let now = self.since_base(Instant::now()).saturating_add(1);
        self.last.fetch_max(now, Ordering::AcqRel);
    }

    /// Whether a connection opened at `created` was opened before the last such error.
    fn predates(&self, created: Instant) -> bool {
        let last = AtomicU64::load(&self.last, Ordering::Acquire);
        last != 0 && self.since_base(created) < last
    }
}

/// Each pooled connection's instrumentation: reports every error that says its server
/// no longer takes writes to the pool's [`Demotion`].
struct WatchWrites(Arc<Demotion>);

impl Instrumentation for WatchWrites {
    fn on_connection_event(&mut self, event: InstrumentationEvent<'_>) {
        if let InstrumentationEvent::FinishQuery { error: Some(error), .. } = event
            && crate::failure::refuses_writes(error)
        {
            self.0.record();
        }
    }
}

/// What every new PostgreSQL connection runs first: the statement timeout.
fn postgres_setup(config: &DbConfig) -> Arc<str> {
    format!("SET statement_timeout = {}", config.statement_timeout.as_millis()).into()
}

fn postgres_pool(url: &str, connector: Arc<PgConnector>, config: &DbConfig) -> Result<PgPools, DbError> {
    let setup = postgres_setup(config);
    let sizes = shard_sizes(config.max_connections, config.worker_threads);
    // One for all the shards: they all reach the same servers.
    let demotion = Arc::new(Demotion::new());
    PgPools::new(&sizes, |size| {
        let (connector, setup) = (Arc::clone(&connector), Arc::clone(&setup));
        let (watched, checked) = (Arc::clone(&demotion), Arc::clone(&demotion));
        let mut manager_config = ManagerConfig::<AsyncPgConnection>::default();
        // No round trip per checkout: a pooled connection is checked by its state only (a
        // transaction left open, or the connection closed, which tokio-postgres notices as
        // soon as PostgreSQL ends it: a terminated backend, a restart). `Verified` sent
        // `SELECT 1` first, a second round trip per request for the same guarantee
        // (docs/benchmarks.md measures both; tests/tests/unavailable.rs cuts the pool's
        // connections under it).
        manager_config.recycling_method = RecyclingMethod::Fast;
        // The manager's URL is not used: every connection is opened by `connector`, with TLS.
        manager_config.custom_setup = Box::new(move |_: &str| {
            postgres_connection(Arc::clone(&connector), Arc::clone(&setup), Arc::clone(&watched))
        });
        let manager = AsyncDieselConnectionManager::new_with_config(url, manager_config);
        pool_builder(manager, size, config)
            .pre_recycle(Hook::sync_fn(move |_, metrics| {
                if checked.predates(metrics.created) {
                    tracing::info!("a connection opened before its server stopped taking writes is closed");
                    return Err(HookError::message("its server stopped taking writes"));
                }
                Ok(())
            }))
            .build()
            .map_err(|e| DbError::Setup(e.to_string()))
    })
}

/// The read replica's pool for `url`: `config.max_connections` connections, opened and
/// set up like the primary's (TLS, statement timeout), without the primary's demotion
/// check (a replica refuses writes by design, and is never written to).
fn replica_pool(url: &str, config: &DbConfig) -> Result<Pool<AsyncPgConnection>, DbError> {
    let settings = PgSettings::parse(url).map_err(DbError::InvalidUrl)?;
    if let Some(warning) = settings.failover_warning() {
        tracing::warn!("read URL: {warning}");
    }
    let connector = Arc::new(PgConnector::new(settings).map_err(DbError::Setup)?);
    let setup = postgres_setup(config);
    let mut manager_config = ManagerConfig::<AsyncPgConnection>::default();
    manager_config.recycling_method = RecyclingMethod::Fast;
    manager_config.custom_setup = Box::new(move |_: &str| {
        let (connector, setup) = (Arc::clone(&connector), Arc::clone(&setup));
        Box::pin(async move {
            let mut conn = connector.connect().await?;
            conn.batch_execute(&setup).await.map_err(ConnectionError::CouldntSetupConfiguration)?;
            Ok(conn)
        })
    });
    let manager = AsyncDieselConnectionManager::new_with_config(url, manager_config);
    pool_builder(manager, config.max_connections, config).build().map_err(|e| DbError::Setup(e.to_string()))
}

fn postgres_connection(
    connector: Arc<PgConnector>,
    setup: Arc<str>,
    demotion: Arc<Demotion>,
) -> SetupFuture<'static, AsyncPgConnection> {
    Box::pin(async move {
        let mut conn = connector.connect().await?;
        conn.set_instrumentation(WatchWrites(demotion));
        conn.batch_execute(&setup).await.map_err(ConnectionError::CouldntSetupConfiguration)?;
        Ok(conn)
    })
}

fn sqlite_pool(path: &str, config: &DbConfig) -> Result<Pool<SqliteConn>, DbError> {
    let mut manager_config = ManagerConfig::<SqliteConn>::default();
    // A local file does not drop connections: no ping before reuse.
    manager_config.recycling_method = RecyclingMethod::Fast;
    manager_config.custom_setup = Box::new(sqlite_connection);
    let manager = AsyncDieselConnectionManager::new_with_config(path, manager_config);
    pool_builder(manager, 1, config).build().map_err(|e| DbError::Setup(e.to_string()))
}

fn sqlite_connection(path: &str) -> SetupFuture<'_, SqliteConn> {
    Box::pin(async move {
        let mut conn = SqliteConn::establish(path).await?;
        conn.batch_execute(SQLITE_PRAGMAS).await.map_err(ConnectionError::CouldntSetupConfiguration)?;
        Ok(conn)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_url_scheme_chooses_the_backend() {
        assert_eq!(backend_of("postgres://u:p@db/consular"), Ok(Backend::Postgres));
        assert_eq!(backend_of("postgresql://db/consular"), Ok(Backend::Postgres));
        assert_eq!(backend_of("sqlite:///var/lib/consular/db.sqlite"), Ok(Backend::Sqlite));
        assert_eq!(backend_of("sqlite:data/db.sqlite"), Ok(Backend::Sqlite));
        assert!(backend_of("sqlite://").is_err());
        assert!(backend_of("sqlite::memory:").is_err());
        // libpq's key/value form is PostgreSQL, read whole too.
        assert_eq!(backend_of("host=db1,db2 port=5432 dbname=consular"), Ok(Backend::Postgres));
        let error = backend_of("host=db password=secret sslmode=verify").unwrap_err();
        assert!(error.contains("unknown sslmode `verify`") && !error.contains("secret"), "{error}");
        let error = backend_of("mysql://root:secret@db/x").unwrap_err();
        assert!(error.contains("`mysql`") && !error.contains("secret"), "{error}");
        // PostgreSQL URLs are read whole: their TLS settings too.
        let error = backend_of("postgres://root:secret@db/x?sslmode=verify").unwrap_err();
        assert!(error.contains("unknown sslmode `verify`") && !error.contains("secret"), "{error}");
    }

    #[test]
    fn sqlite_urls_name_a_file() {
        assert!(matches!(target("sqlite:///tmp/x.db"), Ok(Target::Sqlite("/tmp/x.db"))));
        assert!(matches!(target("sqlite:x.db"), Ok(Target::Sqlite("x.db"))));
    }
}
