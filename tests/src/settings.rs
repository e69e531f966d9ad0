//! The settings of a test server: a fresh database (a SQLite file in the test's directory
//! or a PostgreSQL database cloned from the migrated template), blobs in the test's
//! directory, sealed signing keys; and a setting changed by its configuration key.

use crate::backend::Backend;
use consular_app::Settings;
use serde_json::Value;
use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;
use tempfile::TempDir;

/// Where the PostgreSQL migrations are, to name the template database by their content.
fn postgres_migrations() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../migrations/postgres"))
}

/// A fresh, migrated PostgreSQL database cloned from the shared template.
async fn fresh_postgres_url() -> String {
    tokio::task::spawn_blocking(|| {
        let key = consular_testkit::fingerprint(postgres_migrations())?;
        consular_testkit::postgres::fresh_database(&key, |url| {
            consular_db::migrate_blocking(url).map_err(|e| e.to_string())
        })
    })
    .await
    .expect("the PostgreSQL setup thread panicked")
    .unwrap_or_else(|e| panic!("no PostgreSQL test database: {e}"))
}

/// A temporary directory and the test settings for it, with `tweak` applied and checked.
pub(crate) async fn prepare(backend: Backend, tweak: impl FnOnce(&mut Settings)) -> (Arc<TempDir>, Settings) {
    let dir = Arc::new(tempfile::tempdir().expect("a temporary directory"));
    let mut settings = test_settings(backend, dir.path()).await;
    tweak(&mut settings);
    settings.validate().unwrap_or_else(|e| panic!("test settings: {e}"));
    (dir, settings)
}

/// The test settings on `backend`, with the database and blobs in `dir`.
async fn test_settings(backend: Backend, dir: &Path) -> Settings {
    let database_url = match backend {
        Backend::Sqlite => consular_testkit::sqlite_url(dir),
        Backend::Postgres => fresh_postgres_url().await,
    };
    Settings {
        database_url,
        storage_url: format!("file://{}", dir.join("blobs").display()),
        bind: SocketAddr::from(([127, 0, 0, 1], 0)),
        issuer: "https://consular.test".to_owned(),
        audience: "consular-api".to_owned(),
        workers: 1,
        db_max_connections: 4,
        log_level: "warn".to_owned(),
        // The notification tests turn the worker on; elsewhere it would only add queries.
        run_worker: false,
        // Tests book many times a minute through one client (and some as one citizen):
        // caps this high count every attempt (the statement runs in every booking test)
        // without refusing one. tests/tests/appointments_caps.rs sets its own.
        booking_attempts_per_citizen_per_minute: 10_000,
        booking_attempts_per_client_per_minute: 10_000,
        // Sealed signing keys, as in production (PostgreSQL refuses to start without a
        // KEK); a second node of the test reuses the settings, and so the KEK.
        key_encryption_key: Some(consular_app::config::Secret(
            consular_application::auth::KeyEncryptionKey::generate_base64().expect("a random KEK"),
        )),
        ..Settings::default()
    }
}

/// Sets the setting `key` to `value` through serde, so that a test can name a setting
/// by its configuration key (`max_upload_bytes`, `clamav_addr`); panics when there is no
/// such setting or the value does not fit.
pub fn set_setting(settings: &mut Settings, key: &str, value: Value) {
    let mut members = serde_json::to_value(&*settings).expect("settings serialize");
    members[key] = value;
    *settings = serde_json::from_value(members).unwrap_or_else(|e| panic!("setting `{key}`: {e}"));
}
