//! Wiring: the adapters the configuration names and the settings the use cases take
//! ([`ServiceConfig`]), handed to [`Services::new`], which builds every use case on them
//! (so a new area adds nothing here). The one place that builds [`Services`]; the server,
//! the command line and the background tasks all use what it returns.

use crate::config::Settings;
use crate::error::StartError;
use consular_application::access_log::AccessRecorder;
use consular_application::auth::{KeyPolicy, SigningKeys, TokenConfig};
use consular_application::demo::{DemoPorts, DemoService};
use consular_application::documents::accept::AcceptedTypes;
use consular_application::documents::{DocumentConfig, load_url_signer};
use consular_application::notifications::WorkerConfig;
use consular_application::{Adapters, ServiceConfig, Services};
use consular_clamav::ClamdScanner;
use consular_db::{Database, DbConfig};
use consular_domain::notification::RetryPolicy;
use consular_domain::rate::BookingCaps;
use consular_ports::{Clock, HealthCheck, Mailer, MalwareScanner, SystemClock};
use consular_storage::ObjectBlobStore;
use std::sync::Arc;
use std::time::Duration;

/// Connects and migrates the database, opens the blob store (and clamd, when
/// configured), loads the signing keys and the download-URL key, and builds every use
/// case on them, all with the same clock.
pub async fn build(settings: &Settings) -> Result<Services, StartError> {
    Ok(build_with_database(settings).await?.0)
}

/// [`build`], with the database the services share, for the server to close its pool
/// when it stops (docs/operations.md "Shutdown").
pub async fn build_with_database(settings: &Settings) -> Result<(Services, Database), StartError> {
    let database = database(settings).await?;
    let services = on_database(settings, database.clone()).await?;
    Ok((services, database))
}

async fn on_database(settings: &Settings, database: Database) -> Result<Services, StartError> {
    let storage = Arc::new(ObjectBlobStore::from_url(&settings.storage_url).map_err(StartError::Storage)?);

    let db = Arc::new(database);
    let clock: Arc<dyn Clock> = Arc::new(SystemClock);
    let token_config = TokenConfig {
        issuer: settings.issuer.clone(),
        audience: settings.audience.clone(),
        access_ttl: time::Duration::seconds(i64::from(settings.access_token_ttl_secs)),
        refresh_ttl: time::Duration::seconds(i64::from(settings.refresh_token_ttl_secs)),
        leeway_secs: 30,
    };
    // Read once: it seals the signing keys and the download-URL key.
    let kek = settings.key_encryption_key().map_err(|e| StartError::Keys(e.to_string()))?;
    let keys = SigningKeys::load(db.clone(), clock.clone(), kek.clone(), key_policy(settings, &token_config))
        .await
        .map_err(|e| StartError::Keys(e.to_string()))?;
    let mut checks: Vec<Arc<dyn HealthCheck>> = vec![db.clone(), storage.clone()];
    let scanner = match &settings.clamav_addr {
        Some(addr) => {
            tracing::info!(%addr, "uploads are scanned by clamd");
            let scanner = Arc::new(ClamdScanner::new(addr.clone()));
            checks.push(scanner.clone());
            Some(scanner as Arc<dyn MalwareScanner>)
        }
        None => {
            tracing::warn!("no malware scanner configured (clamav_addr): uploads are kept unscanned");
            None
        }
    };
    let signer =
        load_url_signer(&*db, kek.as_ref(), &*clock).await.map_err(|e| StartError::Keys(e.to_string()))?;
    let documents = DocumentConfig {
        max_upload_bytes: settings.max_upload_bytes,
        accepted: AcceptedTypes::new(settings.accepted_media_types.clone()).map_err(StartError::Setup)?,
        download_url_ttl: Duration::from_secs(u64::from(settings.download_url_ttl_secs)),
        public_base_url: settings.public_base_url.clone(),
    };
    // One access log queue per node, whichever use case reads (docs/data-protection.md
    // "Access log").
    let access = AccessRecorder::new(db.clone());
    let adapters =
        Adapters { database: db, blobs: storage, scanner, mailer: mailer(settings)?, clock, access };
    Ok(Services::new(
        &adapters,
        ServiceConfig {
            signing_keys: keys,
            tokens: token_config,
            url_signer: signer,
            documents,
            max_active_bookings: settings.max_active_bookings_per_citizen,
            availability_cache: Duration::from_millis(settings.availability_cache_ms),
            booking_caps: BookingCaps {
                per_citizen: settings.booking_attempts_per_citizen_per_minute,
                per_client: settings.booking_attempts_per_client_per_minute,
            },
            worker: worker_config(settings),
            health_checks: checks,
        },
    ))
}

/// The demo data set's loader (`consular demo seed`) on the configured database, migrated
/// first; nothing else is opened (no blob store, no keys).
pub async fn demo(settings: &Settings) -> Result<DemoService, StartError> {
    let database = Arc::new(database(settings).await?);
    Ok(DemoService::new(DemoPorts { demo: database, clock: Arc::new(SystemClock) }))
}

/// The configured database, connected and migrated.
async fn database(settings: &Settings) -> Result<Database, StartError> {
    let database = Database::connect(&DbConfig {
        url: settings.database_url.clone(),
        max_connections: settings.db_max_connections as usize,
        acquire_timeout: Duration::from_millis(settings.db_acquire_timeout_ms),
        statement_timeout: Duration::from_millis(settings.db_statement_timeout_ms),
        worker_threads: settings.http_workers(),
        read_url: settings.database_read_url.clone(),
    })
    .map_err(|e| StartError::Database(e.to_string()))?;
    database.migrate().await.map_err(|e| StartError::Database(e.to_string()))?;
    Ok(database)
}

/// When keys retire (after the access tokens they signed) and rotate.
fn key_policy(settings: &Settings, tokens: &TokenConfig) -> KeyPolicy {
    let days = settings.signing_key_rotation_days;
    KeyPolicy {
        access_ttl: tokens.access_ttl,
        leeway: time::Duration::seconds(tokens.leeway_secs.min(30) as i64),
        rotation_period: (days > 0).then(|| time::Duration::days(i64::from(days))),
    }
}

/// The SMTP mailer the settings name; none (in-app notifications only) without
/// `smtp_url`, said once here.
fn mailer(settings: &Settings) -> Result<Option<Arc<dyn Mailer>>, StartError> {
    match &settings.smtp_url {
        Some(url) => {
            let timeout = std::time::Duration::from_secs(u64::from(settings.smtp_timeout_secs));
            let mailer = consular_mail::SmtpMailer::with_timeout(url, &settings.mail_from, timeout)
                .map_err(StartError::Setup)?;
            tracing::info!(from = %settings.mail_from, "notification emails are sent over SMTP");
            Ok(Some(Arc::new(mailer)))
        }
        None => {
            tracing::warn!("no SMTP server configured (smtp_url): notifications are in-app only");
            Ok(None)
        }
    }
}

/// How this node's outbox worker and email sender run.
fn worker_config(settings: &Settings) -> WorkerConfig {
    let seconds = |s: u32| time::Duration::seconds(i64::from(s));
    WorkerConfig {
        node: settings
            .node_id
            .clone()
            .unwrap_or_else(|| format!("node-{}", &uuid::Uuid::now_v7().simple().to_string()[20..])),
        batch: settings.outbox_batch,
        lease: seconds(settings.outbox_lease_secs),
        send_timeout: seconds(settings.smtp_timeout_secs),
        retry: RetryPolicy {
            base: seconds(settings.email_retry_base_secs),
            max_delay: seconds(settings.email_retry_max_delay_secs),
            horizon: seconds(settings.email_retry_horizon_secs),
            ..RetryPolicy::default()
        },
        ..WorkerConfig::default()
    }
}
