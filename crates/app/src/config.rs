//! Configuration: built-in defaults (the service runs locally with nothing configured),
//! then an optional TOML file, then `CONSULAR_*` environment variables. A bad value
//! stops the start with one line naming the setting.

use consular_application::appointments::DEFAULT_MAX_ACTIVE_BOOKINGS;
use consular_application::auth::KeyEncryptionKey;
use consular_application::documents::accept::{AcceptedTypes, DEFAULT_MEDIA_TYPES};
use consular_domain::rate::BookingCaps;
use consular_http::{BodyTimeouts, EdgePolicy, ProxyHeader};
use figment::Figment;
use figment::providers::{Env, Format, Serialized, Toml};
use ipnet::IpNet;
use serde::{Deserialize, Serialize};
use std::net::{IpAddr, SocketAddr};
use std::path::Path;
use std::time::Duration;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LogFormat {
    Text,
    Json,
}

/// A setting that is a secret: written out as itself (the environment of a child process),
/// but never in a `Debug` view.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Secret(pub String);

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Secret(…)")
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Settings {
    /// `sqlite://PATH` (default, embedded) or `postgres://...` (production).
    pub database_url: String,
    /// A PostgreSQL read replica (one host or several, as `database_url`) for the
    /// tolerant reads (docs/operations.md "Read replicas"); unset: every read goes to
    /// `database_url`. Set it on every node or on none.
    pub database_read_url: Option<String>,
    /// `file://PATH` (default) or `s3://bucket/prefix`.
    pub storage_url: String,
    pub bind: SocketAddr,
    /// Where `/metrics` (and the health probes) are served, apart from the API
    /// (docs/operations.md "Metrics"); unset: no metrics listener.
    pub metrics_bind: Option<SocketAddr>,
    /// On SIGTERM or SIGINT, how long in-flight requests and then the background tasks
    /// may take to finish before the node exits anyway (docs/operations.md "Shutdown").
    pub shutdown_grace_secs: u32,
    /// `iss` of access tokens; all nodes of one deployment share it.
    pub issuer: String,
    /// `aud` of access tokens.
    pub audience: String,
    pub access_token_ttl_secs: u32,
    pub refresh_token_ttl_secs: u32,
    pub token_rate_limit_per_minute: u32,
    pub db_max_connections: u32,
    pub db_acquire_timeout_ms: u64,
    pub db_statement_timeout_ms: u64,
    /// HTTP worker threads; the number of cores when 0.
    pub workers: u32,
    pub log_format: LogFormat,
    /// A tracing filter such as `info` or `consular=debug,info`.
    pub log_level: String,
    /// The key-encryption key that seals the private signing keys in the database: base64
    /// of 32 random bytes (docs/operations.md "Signing keys").
    pub key_encryption_key: Option<Secret>,
    /// A file holding `key_encryption_key` (a mounted secret); not both.
    pub key_encryption_key_file: Option<String>,
    /// Lets a node on PostgreSQL start without a key-encryption key, storing the signing
    /// keys in clear (SQLite starts without one anyway, with a warning).
    pub allow_plaintext_keys: bool,
    /// A new signing key once the newest is this many days old; 0: only `consular keys
    /// rotate`.
    pub signing_key_rotation_days: u32,
    /// The largest document accepted, in bytes (checked while the upload streams).
    pub max_upload_bytes: u64,
    /// The media types documents may be, decided from their bytes.
    pub accepted_media_types: Vec<String>,
    /// How long a document download URL stays valid.
    pub download_url_ttl_secs: u32,
    /// clamd's `host:port`; unset: uploads are not scanned (`scan: not_configured`).
    pub clamav_addr: Option<String>,
    /// The service's public address (`https://api.example.org`), to make its own
    /// download URLs absolute and to name the server of the OpenAPI document; unset:
    /// both are relative.
    pub public_base_url: Option<String>,
    /// `smtp://[user:pass@]host[:port]` (STARTTLS with `?tls=required`) or `smtps://...`;
    /// unset: notifications are in-app only (said once at start).
    pub smtp_url: Option<String>,
    /// The From of notification emails.
    pub mail_from: String,
    /// How long one email may take over SMTP (connection and every command) before the
    /// attempt is a temporary failure; `outbox_lease_secs` must exceed it by a second
    /// (docs/notifications.md "Senders").
    pub smtp_timeout_secs: u32,
    /// This node's name, recorded on the events and emails it handles; unset: a random
    /// one per start.
    pub node_id: Option<String>,
    /// Whether `serve` also runs the outbox worker and email sender (`consular worker`
    /// runs them alone).
    pub run_worker: bool,
    /// How often an idle worker looks for new events and due emails, in milliseconds.
    pub outbox_poll_ms: u64,
    /// Events claimed per batch.
    pub outbox_batch: u32,
    /// How long a claim holds its events or emails before another node takes them over.
    pub outbox_lease_secs: u32,
    /// The first retry of a temporary email failure waits this long, doubling after each.
    pub email_retry_base_secs: u32,
    /// The longest wait between two attempts.
    pub email_retry_max_delay_secs: u32,
    /// No attempt later than this after the email was made: it fails for good.
    pub email_retry_horizon_secs: u32,
    /// Web origins whose pages may call the API from a browser (CORS); none by default.
    pub cors_allowed_origins: Vec<String>,
    /// Proxies (CIDRs or addresses) whose forwarding header names the client, for rate
    /// limits and the audit log; none by default.
    pub trusted_proxies: Vec<String>,
    /// The header those proxies set: `x-forwarded-for` or `forwarded` (RFC 7239).
    pub proxy_header: String,
    /// How long the server waits for the next bytes of a request body before 408
    /// (docs/operations.md "Slow clients").
    pub request_body_idle_timeout_secs: u32,
    /// How long a body read whole (JSON, forms: not uploads) may take to arrive in all.
    pub request_body_timeout_secs: u32,
    /// The most upcoming bookings a citizen may hold when booking themself, 1..=100
    /// (docs/appointments.md "Bookings per citizen"); staff and admins book beyond it.
    pub max_active_bookings_per_citizen: u32,
    /// How long a node serves an availability page from memory, in milliseconds, 0..=10000
    /// (0: never); the most a node lags behind a booking made on another node
    /// (docs/appointments.md "Release morning").
    pub availability_cache_ms: u64,
    /// Booking attempts (books and reschedules) a citizen booking themself may make per
    /// minute, counted across nodes; 0: no cap (docs/appointments.md "Attempt caps").
    pub booking_attempts_per_citizen_per_minute: u32,
    /// Booking attempts per minute through one API client, whoever they are for; 0: no cap.
    pub booking_attempts_per_client_per_minute: u32,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            database_url: "sqlite://./data/consular.db".into(),
            database_read_url: None,
            storage_url: "file://./data/blobs".into(),
            bind: SocketAddr::from(([127, 0, 0, 1], 8080)),
            metrics_bind: None,
            shutdown_grace_secs: 30,
            issuer: "consular".into(),
            audience: "consular-api".into(),
            access_token_ttl_secs: 900,
            refresh_token_ttl_secs: 30 * 24 * 3600,
            token_rate_limit_per_minute: 60,
            db_max_connections: 10,
            db_acquire_timeout_ms: 5_000,
            db_statement_timeout_ms: 30_000,
            workers: 0,
            log_format: LogFormat::Text,
            log_level: "info".into(),
            key_encryption_key: None,
            key_encryption_key_file: None,
            allow_plaintext_keys: false,
            signing_key_rotation_days: 0,
            max_upload_bytes: 20 * 1024 * 1024,
            accepted_media_types: DEFAULT_MEDIA_TYPES.map(str::to_owned).to_vec(),
            download_url_ttl_secs: 300,
            clamav_addr: None,
            public_base_url: None,
            smtp_url: None,
            mail_from: "Consular Services <no-reply@consular.invalid>".into(),
            smtp_timeout_secs: 30,
            node_id: None,
            run_worker: true,
            outbox_poll_ms: 200,
            outbox_batch: 100,
            outbox_lease_secs: 60,
            email_retry_base_secs: 30,
            email_retry_max_delay_secs: 3600,
            email_retry_horizon_secs: 72 * 3600,
            cors_allowed_origins: Vec::new(),
            trusted_proxies: Vec::new(),
            proxy_header: "x-forwarded-for".into(),
            request_body_idle_timeout_secs: 10,
            request_body_timeout_secs: 30,
            max_active_bookings_per_citizen: DEFAULT_MAX_ACTIVE_BOOKINGS,
            availability_cache_ms: 1_000,
            booking_attempts_per_citizen_per_minute: BookingCaps::DEFAULT.per_citizen,
            booking_attempts_per_client_per_minute: BookingCaps::DEFAULT.per_client,
        }
    }
}

/// One line naming the setting and what is wrong with it.
#[derive(Debug, thiserror::Error)]
#[error("invalid configuration: {0}")]
pub struct ConfigError(pub String);

fn describe(error: figment::Error) -> ConfigError {
    let key = error.path.join(".");
    let source = match &error.metadata {
        Some(metadata) if metadata.name.contains("environment") && !key.is_empty() => {
            format!(" (from environment variable CONSULAR_{})", key.to_uppercase())
        }
        Some(metadata) => match &metadata.source {
            Some(source) => format!(" (from {source})"),
            None => format!(" (from {})", metadata.name),
        },
        None => String::new(),
    };
    let setting = if key.is_empty() { String::new() } else { format!("setting `{key}`{source}: ") };
    ConfigError(format!("{setting}{}", error.kind))
}

impl Settings {
    /// Every setting's key (its environment variable is `CONSULAR_` + the key in capitals).
    pub const KEYS: [&'static str; 46] = [
        "database_url",
        "database_read_url",
        "storage_url",
        "bind",
        "metrics_bind",
        "shutdown_grace_secs",
        "issuer",
        "audience",
        "access_token_ttl_secs",
        "refresh_token_ttl_secs",
        "token_rate_limit_per_minute",
        "db_max_connections",
        "db_acquire_timeout_ms",
        "db_statement_timeout_ms",
        "workers",
        "log_format",
        "log_level",
        "key_encryption_key",
        "key_encryption_key_file",
        "allow_plaintext_keys",
        "signing_key_rotation_days",
        "max_upload_bytes",
        "accepted_media_types",
        "download_url_ttl_secs",
        "clamav_addr",
        "public_base_url",
        "smtp_url",
        "mail_from",
        "smtp_timeout_secs",
        "node_id",
        "run_worker",
        "outbox_poll_ms",
        "outbox_batch",
        "outbox_lease_secs",
        "email_retry_base_secs",
        "email_retry_max_delay_secs",
        "email_retry_horizon_secs",
        "cors_allowed_origins",
        "trusted_proxies",
        "proxy_header",
        "request_body_idle_timeout_secs",
        "request_body_timeout_secs",
        "max_active_bookings_per_citizen",
        "availability_cache_ms",
        "booking_attempts_per_citizen_per_minute",
        "booking_attempts_per_client_per_minute",
    ];

    /// The HTTP worker threads: `workers`, or the number of cores when 0.
    pub fn http_workers(&self) -> usize {
        match self.workers {
            0 => std::thread::available_parallelism().map_or(2, |n| n.get()),
            n => n as usize,
        }
    }

    /// Defaults, then `file` (or `consular.toml` in the working directory when it exists),
    /// then the environment.
    pub fn load(file: Option<&Path>) -> Result<Settings, ConfigError> {
        let mut figment = Figment::from(Serialized::defaults(Settings::default()));
        match file {
            Some(path) if !path.exists() => {
                return Err(ConfigError(format!("configuration file {} does not exist", path.display())));
            }
            Some(path) => figment = figment.merge(Toml::file(path)),
            None if Path::new("consular.toml").exists() => {
                figment = figment.merge(Toml::file("consular.toml"))
            }
            None => {}
        }
        // Only the settings' own variables: other CONSULAR_* variables (CONSULAR_CONFIG, or
        // those of scripts around the service) are not settings.
        let settings: Settings =
            figment.merge(Env::prefixed("CONSULAR_").only(&Settings::KEYS)).extract().map_err(describe)?;
        settings.validate()?;
        Ok(settings)
    }

    /// Checks what types alone cannot.
    pub fn validate(&self) -> Result<(), ConfigError> {
        let bad = |key: &str, why: String| Err(ConfigError(format!("setting `{key}`: {why}")));
        if let Err(why) = consular_db::backend_of(&self.database_url) {
            return bad("database_url", why);
        }
        if let Some(url) = &self.database_read_url {
            match (consular_db::backend_of(url), consular_db::backend_of(&self.database_url)) {
                (Err(why), _) => return bad("database_read_url", why),
                (Ok(consular_db::Backend::Postgres), Ok(consular_db::Backend::Postgres)) => {}
                _ => {
                    return bad(
                        "database_read_url",
                        "a read replica needs PostgreSQL, for it and for database_url".to_owned(),
                    );
                }
            }
        }
        if let Err(why) = consular_storage::backend_of(&self.storage_url) {
            return bad("storage_url", why);
        }
        // The same address twice cannot be bound; port 0 twice picks two free ports.
        if self.metrics_bind.is_some_and(|addr| addr == self.bind && addr.port() != 0) {
            return bad("metrics_bind", format!("must differ from bind ({})", self.bind));
        }
        if !(1..=3600).contains(&self.shutdown_grace_secs) {
            return bad("shutdown_grace_secs", "must be between 1 and 3600".into());
        }
        if !(60..=86_400).contains(&self.access_token_ttl_secs) {
            return bad("access_token_ttl_secs", "must be between 60 and 86400".into());
        }
        if self.refresh_token_ttl_secs < self.access_token_ttl_secs {
            return bad("refresh_token_ttl_secs", "must not be shorter than access_token_ttl_secs".into());
        }
        if self.token_rate_limit_per_minute == 0 {
            return bad("token_rate_limit_per_minute", "must be at least 1".into());
        }
        if !(1..=1000).contains(&self.db_max_connections) {
            return bad("db_max_connections", "must be between 1 and 1000".into());
        }
        if self.db_acquire_timeout_ms == 0 {
            return bad("db_acquire_timeout_ms", "must be positive".into());
        }
        if self.db_statement_timeout_ms == 0 {
            return bad("db_statement_timeout_ms", "must be positive".into());
        }
        if self.issuer.trim().is_empty() {
            return bad("issuer", "must not be empty".into());
        }
        if self.audience.trim().is_empty() {
            return bad("audience", "must not be empty".into());
        }
        self.validate_keys()?;
        if self.max_upload_bytes == 0 {
            return bad("max_upload_bytes", "must be positive".into());
        }
        if let Err(why) = AcceptedTypes::new(self.accepted_media_types.clone()) {
            return bad("accepted_media_types", why);
        }
        if !(1..=86_400).contains(&self.download_url_ttl_secs) {
            return bad("download_url_ttl_secs", "must be between 1 and 86400".into());
        }
        if !(1..=100).contains(&self.max_active_bookings_per_citizen) {
            return bad("max_active_bookings_per_citizen", "must be between 1 and 100".into());
        }
        if self.availability_cache_ms > 10_000 {
            return bad("availability_cache_ms", "must be between 0 and 10000".into());
        }
        if let Some(addr) = &self.clamav_addr
            && !addr
                .rsplit_once(':')
                .is_some_and(|(host, port)| !host.is_empty() && port.parse::<u16>().is_ok())
        {
            return bad("clamav_addr", format!("`{addr}` is not host:port"));
        }
        if let Some(url) = &self.public_base_url
            && !(url.starts_with("http://") || url.starts_with("https://"))
        {
            return bad("public_base_url", "must be an http:// or https:// URL".into());
        }
        if let Some(url) = &self.smtp_url
            && let Err(why) = consular_mail::check_url(url)
        {
            return bad("smtp_url", why);
        }
        if let Err(why) = consular_mail::check_from(&self.mail_from) {
            return bad("mail_from", why);
        }
        if self.node_id.as_deref().is_some_and(|n| n.trim().is_empty() || n.len() > 100) {
            return bad("node_id", "must be 1 to 100 characters".into());
        }
        if !(10..=60_000).contains(&self.outbox_poll_ms) {
            return bad("outbox_poll_ms", "must be between 10 and 60000".into());
        }
        if !(1..=1000).contains(&self.outbox_batch) {
            return bad("outbox_batch", "must be between 1 and 1000".into());
        }
        if !(1..=3600).contains(&self.outbox_lease_secs) {
            return bad("outbox_lease_secs", "must be between 1 and 3600".into());
        }
        if !(1..=600).contains(&self.smtp_timeout_secs) {
            return bad("smtp_timeout_secs", "must be between 1 and 600".into());
        }
        if self.smtp_url.is_some()
            && let Err(why) = consular_application::notifications::check_send_lease(
                time::Duration::seconds(i64::from(self.outbox_lease_secs)),
                time::Duration::seconds(i64::from(self.smtp_timeout_secs)),
            )
        {
            return bad("outbox_lease_secs", format!("{why}; raise it or lower smtp_timeout_secs"));
        }
        if self.email_retry_base_secs == 0 {
            return bad("email_retry_base_secs", "must be positive".into());
        }
        if self.email_retry_max_delay_secs < self.email_retry_base_secs {
            return bad(
                "email_retry_max_delay_secs",
                "must not be shorter than email_retry_base_secs".into(),
            );
        }
        if self.email_retry_horizon_secs < self.email_retry_base_secs {
            return bad("email_retry_horizon_secs", "must not be shorter than email_retry_base_secs".into());
        }
        self.edge_policy()?;
        if tracing_subscriber::EnvFilter::try_new(&self.log_level).is_err() {
            return bad("log_level", format!("`{}` is not a log filter", self.log_level));
        }
        Ok(())
    }

    /// The signing-key settings: one KEK at most, readable and well-formed, and one at all on
    /// PostgreSQL unless `allow_plaintext_keys`.
    fn validate_keys(&self) -> Result<(), ConfigError> {
        let bad = |key: &str, why: &str| Err(ConfigError(format!("setting `{key}`: {why}")));
        if self.key_encryption_key.is_some() && self.key_encryption_key_file.is_some() {
            return bad(
                "key_encryption_key_file",
                "set either key_encryption_key or key_encryption_key_file, not both",
            );
        }
        let kek = self.key_encryption_key()?;
        if kek.is_none()
            && !self.allow_plaintext_keys
            && consular_db::backend_of(&self.database_url) == Ok(consular_db::Backend::Postgres)
        {
            return bad(
                "key_encryption_key",
                "required on PostgreSQL (or key_encryption_key_file), so that the private signing keys are not \
                 stored in clear; set allow_plaintext_keys = true to store them in clear anyway",
            );
        }
        if self.signing_key_rotation_days > 3650 {
            return bad("signing_key_rotation_days", "must be between 0 (off) and 3650");
        }
        Ok(())
    }

    /// The configured key-encryption key, from `key_encryption_key` or the file
    /// `key_encryption_key_file`; `None` when neither is set.
    pub fn key_encryption_key(&self) -> Result<Option<KeyEncryptionKey>, ConfigError> {
        if let Some(Secret(text)) = &self.key_encryption_key {
            return KeyEncryptionKey::from_base64(text)
                .map(Some)
                .map_err(|e| ConfigError(format!("setting `key_encryption_key`: {e}")));
        }
        let Some(path) = &self.key_encryption_key_file else { return Ok(None) };
        let text = std::fs::read_to_string(path).map_err(|e| {
            ConfigError(format!("setting `key_encryption_key_file`: cannot read {path}: {e}"))
        })?;
        KeyEncryptionKey::from_base64(&text)
            .map(Some)
            .map_err(|e| ConfigError(format!("setting `key_encryption_key_file`: {path}: {e}")))
    }
}

impl Settings {
    /// The CORS origins, trusted proxies and body read deadlines, checked
    /// (docs/operations.md "Proxies" and "Slow clients").
    pub fn edge_policy(&self) -> Result<EdgePolicy, ConfigError> {
        let bad = |key: &str, why: String| ConfigError(format!("setting `{key}`: {why}"));
        for origin in &self.cors_allowed_origins {
            consular_http::edge::check_origin(origin).map_err(|why| bad("cors_allowed_origins", why))?;
        }
        let trusted_proxies = self
            .trusted_proxies
            .iter()
            .map(|text| {
                text.parse::<IpNet>().or_else(|_| text.parse::<IpAddr>().map(IpNet::from)).map_err(|_| {
                    bad("trusted_proxies", format!("`{text}` is not an address or a CIDR (10.0.0.0/8)"))
                })
            })
            .collect::<Result<Vec<_>, _>>()?;
        let proxy_header = ProxyHeader::parse(&self.proxy_header).map_err(|why| bad("proxy_header", why))?;
        if !(1..=3600).contains(&self.request_body_idle_timeout_secs) {
            return Err(bad("request_body_idle_timeout_secs", "must be between 1 and 3600".into()));
        }
        if !(self.request_body_idle_timeout_secs..=3600).contains(&self.request_body_timeout_secs) {
            return Err(bad(
                "request_body_timeout_secs",
                "must be between request_body_idle_timeout_secs and 3600".into(),
            ));
        }
        let body_timeouts = BodyTimeouts {
            idle: Duration::from_secs(u64::from(self.request_body_idle_timeout_secs)),
            total: Duration::from_secs(u64::from(self.request_body_timeout_secs)),
        };
        Ok(EdgePolicy {
            cors_origins: self.cors_allowed_origins.clone(),
            trusted_proxies,
            proxy_header,
            body_timeouts,
        })
    }
}

#[cfg(test)]
#[allow(clippy::result_large_err)] // figment::Jail's closures return figment::Error
mod tests {
    use super::*;

    #[test]
    fn defaults_run_locally() {
        let settings = Settings::default();
        assert!(settings.validate().is_ok());
        assert_eq!(settings.bind.to_string(), "127.0.0.1:8080");
        assert!(settings.database_url.starts_with("sqlite://"));
    }

    #[test]
    fn environment_overrides_and_errors_name_the_setting() {
        figment::Jail::expect_with(|jail| {
            jail.set_env("CONSULAR_BIND", "0.0.0.0:9000");
            jail.set_env("CONSULAR_DATABASE_URL", "postgres://db/consular");
            jail.set_env("CONSULAR_KEY_ENCRYPTION_KEY", KeyEncryptionKey::generate_base64().unwrap());
            let settings = Settings::load(None).unwrap();
            assert_eq!(settings.bind.port(), 9000);
            assert_eq!(settings.database_url, "postgres://db/consular");
            jail.set_env("CONSULAR_BIND", "nowhere");
            let error = Settings::load(None).unwrap_err().to_string();
            assert!(error.contains("bind") && error.contains("CONSULAR_BIND"), "{error}");
            jail.set_env("CONSULAR_BIND", "127.0.0.1:1");
            jail.set_env("CONSULAR_CLAMAV_ADDR", "127.0.0.1:3310");
            jail.set_env("CONSULAR_ACCEPTED_MEDIA_TYPES", "[\"application/pdf\"]");
            let settings = Settings::load(None).unwrap();
            assert_eq!(settings.clamav_addr.as_deref(), Some("127.0.0.1:3310"));
            assert_eq!(settings.accepted_media_types, ["application/pdf"]);
            jail.set_env("CONSULAR_ACCEPTED_MEDIA_TYPES", "[\"text/html\"]");
            let error = Settings::load(None).unwrap_err().to_string();
            assert!(error.contains("accepted_media_types"), "{error}");
            jail.set_env("CONSULAR_ACCEPTED_MEDIA_TYPES", "[\"application/pdf\"]");
            jail.set_env("CONSULAR_CLAMAV_ADDR", "nowhere");
            assert!(Settings::load(None).unwrap_err().to_string().contains("clamav_addr"));
            jail.set_env("CONSULAR_CLAMAV_ADDR", "127.0.0.1:3310");
            jail.set_env("CONSULAR_TRUSTED_PROXIES", "[\"10.0.0.0/8\", \"192.0.2.7\"]");
            jail.set_env("CONSULAR_CORS_ALLOWED_ORIGINS", "[\"https://portal.example.org\"]");
            let edge = Settings::load(None).unwrap().edge_policy().unwrap();
            assert_eq!(edge.trusted_proxies.len(), 2);
            assert_eq!(edge.cors_origins, ["https://portal.example.org"]);
            jail.set_env("CONSULAR_TRUSTED_PROXIES", "[\"10.0.0.0/33\"]");
            let error = Settings::load(None).unwrap_err().to_string();
            assert!(error.contains("trusted_proxies") && error.contains("10.0.0.0/33"), "{error}");
            jail.set_env("CONSULAR_TRUSTED_PROXIES", "[]");
            jail.set_env("CONSULAR_CORS_ALLOWED_ORIGINS", "[\"https://portal.example.org/\"]");
            let error = Settings::load(None).unwrap_err().to_string();
            assert!(error.contains("cors_allowed_origins"), "{error}");
            jail.set_env("CONSULAR_CORS_ALLOWED_ORIGINS", "[]");
            jail.set_env("CONSULAR_PROXY_HEADER", "x-real-ip");
            assert!(Settings::load(None).unwrap_err().to_string().contains("proxy_header"));
            jail.set_env("CONSULAR_PROXY_HEADER", "forwarded");
            jail.set_env("CONSULAR_STORAGE_URL", "ftp://x");
            let error = Settings::load(None).unwrap_err().to_string();
            assert!(error.contains("storage_url"), "{error}");
            Ok(())
        });
    }

    #[test]
    fn a_read_replica_needs_postgresql_on_both_sides() {
        assert_eq!(Settings::default().database_read_url, None, "every read on the primary unless asked");
        figment::Jail::expect_with(|jail| {
            jail.set_env("CONSULAR_DATABASE_URL", "postgres://primary,standby/consular");
            jail.set_env("CONSULAR_ALLOW_PLAINTEXT_KEYS", "true");
            jail.set_env("CONSULAR_DATABASE_READ_URL", "postgres://replica1,replica2/consular");
            let settings = Settings::load(None).unwrap();
            assert_eq!(settings.database_read_url.as_deref(), Some("postgres://replica1,replica2/consular"));
            jail.set_env("CONSULAR_DATABASE_READ_URL", "sqlite://replica.db");
            let error = Settings::load(None).unwrap_err().to_string();
            assert!(error.contains("`database_read_url`") && error.contains("PostgreSQL"), "{error}");
            jail.set_env("CONSULAR_DATABASE_READ_URL", "mysql://secret@replica/x");
            let error = Settings::load(None).unwrap_err().to_string();
            assert!(error.contains("`database_read_url`") && !error.contains("secret"), "{error}");
            jail.set_env("CONSULAR_DATABASE_URL", "sqlite://data/consular.db");
            jail.set_env("CONSULAR_DATABASE_READ_URL", "postgres://replica/consular");
            let error = Settings::load(None).unwrap_err().to_string();
            assert!(error.contains("`database_read_url`") && error.contains("PostgreSQL"), "{error}");
            Ok(())
        });
    }

    #[test]
    fn the_metrics_listener_and_the_shutdown_grace_are_checked() {
        let defaults = Settings::default();
        assert_eq!(defaults.metrics_bind, None, "no metrics listener unless asked for");
        assert_eq!(defaults.shutdown_grace_secs, 30);
        figment::Jail::expect_with(|jail| {
            jail.set_env("CONSULAR_METRICS_BIND", "127.0.0.1:9100");
            jail.set_env("CONSULAR_SHUTDOWN_GRACE_SECS", "5");
            let settings = Settings::load(None).unwrap();
            assert_eq!(settings.metrics_bind, Some(SocketAddr::from(([127, 0, 0, 1], 9100))));
            assert_eq!(settings.shutdown_grace_secs, 5);
            jail.set_env("CONSULAR_METRICS_BIND", "127.0.0.1:8080");
            let error = Settings::load(None).unwrap_err().to_string();
            assert!(error.contains("`metrics_bind`") && error.contains("differ from bind"), "{error}");
            jail.set_env("CONSULAR_BIND", "127.0.0.1:0");
            jail.set_env("CONSULAR_METRICS_BIND", "127.0.0.1:0");
            assert!(Settings::load(None).is_ok(), "port 0 twice is two free ports");
            jail.set_env("CONSULAR_METRICS_BIND", "somewhere");
            let error = Settings::load(None).unwrap_err().to_string();
            assert!(error.contains("metrics_bind") && error.contains("CONSULAR_METRICS_BIND"), "{error}");
            jail.set_env("CONSULAR_METRICS_BIND", "127.0.0.1:0");
            for bad in ["0", "3601"] {
                jail.set_env("CONSULAR_SHUTDOWN_GRACE_SECS", bad);
                let error = Settings::load(None).unwrap_err().to_string();
                assert!(error.contains("`shutdown_grace_secs`: must be between 1 and 3600"), "{error}");
            }
            Ok(())
        });
    }

    #[test]
    fn the_outbox_lease_must_outlast_an_smtp_send() {
        let defaults = Settings::default();
        assert_eq!((defaults.outbox_lease_secs, defaults.smtp_timeout_secs), (60, 30));
        figment::Jail::expect_with(|jail| {
            // Without SMTP nothing is sent: any lease will do.
            jail.set_env("CONSULAR_OUTBOX_LEASE_SECS", "10");
            assert!(Settings::load(None).is_ok());
            jail.set_env("CONSULAR_SMTP_URL", "smtp://127.0.0.1:2525");
            let error = Settings::load(None).unwrap_err().to_string();
            let expected = "setting `outbox_lease_secs`: an email's lease (10 s) must outlast its send: at least \
                            the SMTP timeout (30 s) + 1 s; raise it or lower smtp_timeout_secs";
            assert!(error.contains(expected), "{error}");
            jail.set_env("CONSULAR_SMTP_TIMEOUT_SECS", "9");
            assert_eq!(Settings::load(None).unwrap().smtp_timeout_secs, 9);
            jail.set_env("CONSULAR_SMTP_TIMEOUT_SECS", "10");
            assert!(Settings::load(None).is_err(), "the lease must exceed the timeout by the margin");
            jail.set_env("CONSULAR_SMTP_TIMEOUT_SECS", "0");
            let error = Settings::load(None).unwrap_err().to_string();
            assert!(error.contains("`smtp_timeout_secs`: must be between 1 and 600"), "{error}");
            Ok(())
        });
    }

    #[test]
    fn the_body_read_timeouts_are_checked() {
        let defaults = Settings::default();
        assert_eq!((defaults.request_body_idle_timeout_secs, defaults.request_body_timeout_secs), (10, 30));
        let timeouts = defaults.edge_policy().unwrap().body_timeouts;
        assert_eq!((timeouts.idle, timeouts.total), (Duration::from_secs(10), Duration::from_secs(30)));
        figment::Jail::expect_with(|jail| {
            jail.set_env("CONSULAR_REQUEST_BODY_IDLE_TIMEOUT_SECS", "2");
            jail.set_env("CONSULAR_REQUEST_BODY_TIMEOUT_SECS", "5");
            let timeouts = Settings::load(None).unwrap().edge_policy().unwrap().body_timeouts;
            assert_eq!((timeouts.idle, timeouts.total), (Duration::from_secs(2), Duration::from_secs(5)));
            for bad in ["0", "3601"] {
                jail.set_env("CONSULAR_REQUEST_BODY_IDLE_TIMEOUT_SECS", bad);
                let error = Settings::load(None).unwrap_err().to_string();
                assert!(
                    error.contains("`request_body_idle_timeout_secs`: must be between 1 and 3600"),
                    "{error}"
                );
            }
            jail.set_env("CONSULAR_REQUEST_BODY_IDLE_TIMEOUT_SECS", "10");
            let error = Settings::load(None).unwrap_err().to_string();
            assert!(
                error.contains("`request_body_timeout_secs`: must be between request_body_idle_timeout_secs"),
                "{error}"
            );
            Ok(())
        });
    }

    #[test]
    fn the_booking_limit_is_checked() {
        assert_eq!(Settings::default().max_active_bookings_per_citizen, 3);
        figment::Jail::expect_with(|jail| {
            jail.set_env("CONSULAR_MAX_ACTIVE_BOOKINGS_PER_CITIZEN", "10");
            assert_eq!(Settings::load(None).unwrap().max_active_bookings_per_citizen, 10);
            for bad in ["0", "101"] {
                jail.set_env("CONSULAR_MAX_ACTIVE_BOOKINGS_PER_CITIZEN", bad);
                let error = Settings::load(None).unwrap_err().to_string();
                assert!(
                    error.contains("`max_active_bookings_per_citizen`: must be between 1 and 100"),
                    "{error}"
                );
            }
            Ok(())
        });
    }

    #[test]
    fn the_availability_cache_is_checked() {
        assert_eq!(Settings::default().availability_cache_ms, 1_000);
        figment::Jail::expect_with(|jail| {
            for good in ["0", "10000"] {
                jail.set_env("CONSULAR_AVAILABILITY_CACHE_MS", good);
                assert_eq!(Settings::load(None).unwrap().availability_cache_ms.to_string(), good);
            }
            jail.set_env("CONSULAR_AVAILABILITY_CACHE_MS", "10001");
            let error = Settings::load(None).unwrap_err().to_string();
            assert!(error.contains("`availability_cache_ms`: must be between 0 and 10000"), "{error}");
            Ok(())
        });
    }

    #[test]
    fn the_booking_attempt_caps_default_to_10_and_120_and_0_turns_one_off() {
        let defaults = Settings::default();
        assert_eq!(defaults.booking_attempts_per_citizen_per_minute, 10);
        assert_eq!(defaults.booking_attempts_per_client_per_minute, 120);
        figment::Jail::expect_with(|jail| {
            jail.set_env("CONSULAR_BOOKING_ATTEMPTS_PER_CITIZEN_PER_MINUTE", "0");
            jail.set_env("CONSULAR_BOOKING_ATTEMPTS_PER_CLIENT_PER_MINUTE", "600");
            let settings = Settings::load(None).unwrap();
            assert_eq!(settings.booking_attempts_per_citizen_per_minute, 0);
            assert_eq!(settings.booking_attempts_per_client_per_minute, 600);
            jail.set_env("CONSULAR_BOOKING_ATTEMPTS_PER_CLIENT_PER_MINUTE", "-1");
            let error = Settings::load(None).unwrap_err().to_string();
            assert!(error.contains("booking_attempts_per_client_per_minute"), "{error}");
            Ok(())
        });
    }

    #[test]
    fn a_toml_file_sits_between_defaults_and_environment() {
        figment::Jail::expect_with(|jail| {
            jail.create_file("custom.toml", "bind = \"127.0.0.1:7000\"\nlog_format = \"json\"\n")?;
            jail.set_env("CONSULAR_LOG_FORMAT", "text");
            let settings = Settings::load(Some(Path::new("custom.toml"))).unwrap();
            assert_eq!(settings.bind.port(), 7000);
            assert_eq!(settings.log_format, LogFormat::Text);
            jail.create_file("typo.toml", "bnid = \"x\"\n")?;
            assert!(Settings::load(Some(Path::new("typo.toml"))).unwrap_err().to_string().contains("bnid"));
            Ok(())
        });
    }

    #[test]
    fn the_key_encryption_key_is_checked_and_required_on_postgres() {
        figment::Jail::expect_with(|jail| {
            let kek = KeyEncryptionKey::generate_base64().unwrap();
            // SQLite starts without one (with a warning at start).
            assert!(Settings::load(None).unwrap().key_encryption_key().unwrap().is_none());
            jail.set_env("CONSULAR_DATABASE_URL", "postgres://db/consular");
            let error = Settings::load(None).unwrap_err().to_string();
            assert!(error.contains("setting `key_encryption_key`: required on PostgreSQL"), "{error}");
            assert!(error.contains("allow_plaintext_keys"), "{error}");
            jail.set_env("CONSULAR_ALLOW_PLAINTEXT_KEYS", "true");
            assert!(Settings::load(None).unwrap().allow_plaintext_keys);
            jail.set_env("CONSULAR_ALLOW_PLAINTEXT_KEYS", "false");
            jail.set_env("CONSULAR_KEY_ENCRYPTION_KEY", &kek);
            let settings = Settings::load(None).unwrap();
            assert!(settings.key_encryption_key().unwrap().is_some());
            assert!(!format!("{settings:?}").contains(&kek), "the KEK is in the Debug view");
            jail.set_env("CONSULAR_KEY_ENCRYPTION_KEY", "c2hvcnQ=");
            let error = Settings::load(None).unwrap_err().to_string();
            assert!(
                error.contains("`key_encryption_key`: must be the base64 of 32 bytes, not of 5 bytes"),
                "{error}"
            );

            // From a file (with its final newline); not both.
            jail.create_file("kek.txt", &format!("{kek}\n"))?;
            jail.set_env("CONSULAR_KEY_ENCRYPTION_KEY_FILE", "kek.txt");
            let error = Settings::load(None).unwrap_err().to_string();
            assert!(error.contains("not both"), "{error}");
            Ok(())
        });
        figment::Jail::expect_with(|jail| {
            jail.set_env("CONSULAR_DATABASE_URL", "postgres://db/consular");
            jail.create_file("kek.txt", &format!("{}\n", KeyEncryptionKey::generate_base64().unwrap()))?;
            jail.set_env("CONSULAR_KEY_ENCRYPTION_KEY_FILE", "kek.txt");
            assert!(Settings::load(None).unwrap().key_encryption_key().unwrap().is_some());
            jail.set_env("CONSULAR_KEY_ENCRYPTION_KEY_FILE", "missing.txt");
            let error = Settings::load(None).unwrap_err().to_string();
            assert!(error.contains("setting `key_encryption_key_file`: cannot read missing.txt"), "{error}");
            jail.set_env("CONSULAR_KEY_ENCRYPTION_KEY_FILE", "kek.txt");
            jail.set_env("CONSULAR_SIGNING_KEY_ROTATION_DAYS", "4000");
            let error = Settings::load(None).unwrap_err().to_string();
            assert!(error.contains("signing_key_rotation_days"), "{error}");
            jail.set_env("CONSULAR_SIGNING_KEY_ROTATION_DAYS", "90");
            assert_eq!(Settings::load(None).unwrap().signing_key_rotation_days, 90);
            Ok(())
        });
    }
}
