//! TLS to PostgreSQL: the URL's `sslmode` and `sslrootcert`, read as libpq reads them, and
//! the connector that opens every PostgreSQL connection of the adapter (the pool's and the
//! migrations') with rustls. docs/operations.md ("TLS to PostgreSQL") is the operator's
//! side of the same rules.
//!
//! tokio-postgres knows only `disable`, `prefer` and `require`, never verifies anything by
//! itself, and refuses unknown URL parameters: both parameters are taken out of the URL
//! here, and the certificate checks are this module's verifier.

use diesel::{ConnectionError, ConnectionResult};
use diesel_async::AsyncPgConnection;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::client::{verify_server_cert_signed_by_trust_anchor, verify_server_name};
use rustls::crypto::{WebPkiSupportedAlgorithms, aws_lc_rs};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::server::ParsedCertificate;
use rustls::{CertificateError, ClientConfig, DigitallySignedStruct, RootCertStore, SignatureScheme};
use std::error::Error as _;
use std::fmt;
use std::net::IpAddr;
use std::path::PathBuf;
use std::sync::Arc;
use tokio_postgres::config::{Host, SslMode as WireMode};
use tokio_postgres_rustls::MakeRustlsConnect;

/// libpq's `sslmode`, less `allow` (a plain connection first, then TLS: tokio-postgres
/// cannot do it, and it protects nothing).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SslMode {
    Disable,
    Prefer,
    Require,
    VerifyCa,
    VerifyFull,
}

impl SslMode {
    fn parse(value: &str) -> Result<SslMode, String> {
        match value {
            "disable" => Ok(SslMode::Disable),
            "prefer" => Ok(SslMode::Prefer),
            "require" => Ok(SslMode::Require),
            "verify-ca" => Ok(SslMode::VerifyCa),
            "verify-full" => Ok(SslMode::VerifyFull),
            "allow" => Err("sslmode=allow is not supported (it tries a plain connection first): \
                 use disable, prefer, require, verify-ca or verify-full"
                .to_owned()),
            other => Err(format!(
                "unknown sslmode `{other}`: expected disable, prefer, require, verify-ca or verify-full"
            )),
        }
    }

    fn name(self) -> &'static str {
        match self {
            SslMode::Disable => "disable",
            SslMode::Prefer => "prefer",
            SslMode::Require => "require",
            SslMode::VerifyCa => "verify-ca",
            SslMode::VerifyFull => "verify-full",
        }
    }
}

/// Where the trusted CA certificates come from.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Roots {
    /// `sslrootcert=PATH`: the PEM certificates of that file, and only those.
    File(PathBuf),
    /// `sslrootcert=system`, or a verifying mode without `sslrootcert`: the system's store.
    System,
}

/// What the server's certificate is checked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Check {
    /// Encryption only (`prefer`/`require` without a root file): any certificate, though the
    /// handshake must still be signed by its key.
    Nothing,
    /// Signed by a trusted CA (`verify-ca`, or `prefer`/`require` with a root file).
    Chain,
    /// Signed by a trusted CA and issued for the host name connected to (`verify-full`).
    ChainAndName,
}

/// A PostgreSQL URL read for its TLS settings, without touching the network or a file.
#[derive(Debug, Clone)]
pub(crate) struct PgSettings {
    /// The URL less `sslmode` and `sslrootcert`, with tokio-postgres's own mode set.
    config: tokio_postgres::Config,
    /// The mode in force: the URL's, or the default for its hosts.
    mode: SslMode,
    /// Whether the URL named the mode.
    explicit: bool,
    roots: Option<Roots>,
    check: Check,
}

impl PgSettings {
    /// Reads `url`: a URL (`postgres://…`) or libpq's key/value form (`host=… dbname=…`,
    /// [`is_key_value`]), each with one host or several (`h1:5432,h2:5432`, `host=h1,h2
    /// port=5432,5433`) and tokio-postgres's other parameters (`target_session_attrs`,
    /// `connect_timeout`, …). Errors name the parameter at fault and never echo the URL,
    /// which may hold a password.
    pub(crate) fn parse(url: &str) -> Result<PgSettings, String> {
        let mut mode = None;
        let mut root_file = None;
        let rest = if is_key_value(url) {
            // libpq does not percent-decode this form; quotes and `\` escape instead.
            let mut kept = Vec::new();
            for (key, value) in key_values(url)? {
                match key.as_str() {
                    "sslmode" => mode = Some(SslMode::parse(&value)?),
                    "sslrootcert" => root_file = Some(value),
                    _ => kept.push(format!("{key}='{}'", value.replace('\\', "\\\\").replace('\'', "\\'"))),
                }
            }
            kept.join(" ")
        } else {
            let (base, query) = url.split_once('?').unwrap_or((url, ""));
            let mut kept = Vec::new();
            for pair in query.split('&').filter(|pair| !pair.is_empty()) {
                let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
                match key {
                    "sslmode" => mode = Some(SslMode::parse(&decode("sslmode", value)?)?),
                    "sslrootcert" => root_file = Some(decode("sslrootcert", value)?),
                    _ => kept.push(pair),
                }
            }
            if kept.is_empty() { base.to_owned() } else { format!("{base}?{}", kept.join("&")) }
        };
        let mut config: tokio_postgres::Config = rest.parse().map_err(|e: tokio_postgres::Error| {
            // The display alone says "invalid connection string"; the source names the option.
            e.source().map_or_else(|| e.to_string(), |cause| format!("{e}: {cause}"))
        })?;

        let roots = match root_file.as_deref() {
            None | Some("") => None,
            Some("system") => Some(Roots::System),
            Some(path) => Some(Roots::File(PathBuf::from(path))),
        };
        let endpoints = endpoints(&config);
        let explicit = mode.is_some();
        let mode = match mode {
            // As libpq 16: the system store holds every public CA, so any certificate one
            // of them issued would pass without the host name check.
            Some(mode) if roots == Some(Roots::System) && mode != SslMode::VerifyFull => {
                return Err(format!(
                    "sslmode={} may not be used with sslrootcert=system: use sslmode=verify-full",
                    mode.name()
                ));
            }
            Some(mode) => mode,
            None if roots == Some(Roots::System) => SslMode::VerifyFull,
            None if !endpoints.is_empty() && endpoints.iter().all(|e| e.loopback) => SslMode::Prefer,
            None => SslMode::VerifyFull,
        };

        // PostgreSQL has no TLS on unix sockets, and libpq ignores sslmode there. One
        // tokio-postgres mode covers every host of the URL, so a socket cannot be mixed
        // with TCP hosts that must use TLS.
        let sockets = endpoints.iter().filter(|e| e.socket).count();
        let wire = if sockets > 0 && sockets == endpoints.len() {
            WireMode::Disable
        } else {
            match mode {
                SslMode::Disable => WireMode::Disable,
                SslMode::Prefer => WireMode::Prefer,
                SslMode::Require | SslMode::VerifyCa | SslMode::VerifyFull if sockets > 0 => {
                    return Err(format!(
                        "sslmode={} cannot be met on a unix socket host (PostgreSQL has no TLS there): \
                         list TCP hosts only, or connect through the socket alone",
                        mode.name()
                    ));
                }
                SslMode::Require | SslMode::VerifyCa | SslMode::VerifyFull => WireMode::Require,
            }
        };
        config.ssl_mode(wire);

        let check = match mode {
            SslMode::VerifyFull => Check::ChainAndName,
            SslMode::VerifyCa => Check::Chain,
            // libpq verifies the chain whenever it has a root file, whatever the mode.
            SslMode::Disable | SslMode::Prefer | SslMode::Require if roots.is_some() => Check::Chain,
            SslMode::Disable | SslMode::Prefer | SslMode::Require => Check::Nothing,
        };
        let roots = match check {
            Check::Nothing => None,
            Check::Chain | Check::ChainAndName => Some(roots.unwrap_or(Roots::System)),
        };
        Ok(PgSettings { config, mode, explicit, roots, check })
    }

    /// Why this URL may not fail over in time, if it may not: several hosts and no
    /// `connect_timeout`, so that a host that died without refusing connections (a machine
    /// off, packets dropped) holds every new connection until TCP gives up, past the pool's
    /// wait, and the next host is never tried (docs/operations.md "High availability").
    pub(crate) fn failover_warning(&self) -> Option<String> {
        let hosts = endpoints(&self.config).len();
        (hosts > 1 && self.config.get_connect_timeout().is_none()).then(|| {
            format!(
                "database_url lists {hosts} hosts without connect_timeout: a host that stops \
                 answering holds new connections until TCP gives up, and the next host is not \
                 tried in time; set connect_timeout (seconds per host) so that hosts x \
                 connect_timeout stays below db_acquire_timeout_ms"
            )
        })
    }

    #[cfg(test)]
    fn mode(&self) -> SslMode {
        self.mode
    }
}

/// Whether `text` is libpq's key/value form (`host=db1,db2 port=5432 dbname=consular`):
/// it starts with a keyword and `=`, where a URL has its scheme and `:`.
pub(crate) fn is_key_value(text: &str) -> bool {
    let text = text.trim_start();
    let key = text.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).unwrap_or(text.len());
    key > 0 && text[key..].trim_start().starts_with('=')
}

/// The `key=value` pairs of the key/value form, read as tokio-postgres and libpq read them:
/// whitespace between pairs (and around `=`), a value in single quotes or up to the next
/// whitespace, `\` escaping the character after it. Errors name keys, never values.
fn key_values(text: &str) -> Result<Vec<(String, String)>, String> {
    let mut pairs = Vec::new();
    let mut chars = text.chars().peekable();
    let skip_blanks = |chars: &mut std::iter::Peekable<std::str::Chars<'_>>| {
        while chars.next_if(|c| c.is_whitespace()).is_some() {}
    };
    loop {
        skip_blanks(&mut chars);
        let mut key = String::new();
        while let Some(c) = chars.next_if(|c| !c.is_whitespace() && *c != '=') {
            key.push(c);
        }
        if key.is_empty() {
            return match chars.peek() {
                None => Ok(pairs),
                Some(_) => Err("the connection string has a value without a key (`=` alone)".to_owned()),
            };
        }
        skip_blanks(&mut chars);
        if chars.next() != Some('=') {
            return Err(format!("`{key}` in the connection string has no `=` and value"));
        }
        skip_blanks(&mut chars);
        let mut value = String::new();
        if chars.next_if_eq(&'\'').is_some() {
            loop {
                match chars.next() {
                    Some('\'') => break,
                    Some('\\') => value.extend(chars.next()),
                    Some(c) => value.push(c),
                    None => return Err(format!("the value of `{key}` has no closing quote")),
                }
            }
        } else {
            while let Some(c) = chars.next_if(|c| !c.is_whitespace()) {
                if c == '\\' {
                    value.extend(chars.next());
                } else {
                    value.push(c);
                }
            }
            if value.is_empty() {
                return Err(format!("`{key}` in the connection string has no value"));
            }
        }
        pairs.push((key, value));
    }
}

fn decode(key: &str, value: &str) -> Result<String, String> {
    percent_encoding::percent_decode_str(value)
        .decode_utf8()
        .map(|value| value.into_owned())
        .map_err(|_| format!("{key} is not valid UTF-8 once percent-decoded"))
}

/// One place the URL connects to, as tokio-postgres pairs `host` and `hostaddr`.
struct Endpoint {
    loopback: bool,
    socket: bool,
}

fn endpoints(config: &tokio_postgres::Config) -> Vec<Endpoint> {
    let hosts = config.get_hosts();
    let addresses = config.get_hostaddrs();
    (0..hosts.len().max(addresses.len()))
        .map(|i| match (hosts.get(i), addresses.get(i)) {
            // tokio-postgres connects to `hostaddr` when there is one.
            (_, Some(address)) => Endpoint { loopback: address.is_loopback(), socket: false },
            (Some(Host::Tcp(name)), None) => Endpoint { loopback: is_loopback_name(name), socket: false },
            (Some(Host::Unix(_)), None) => Endpoint { loopback: true, socket: true },
            (None, None) => Endpoint { loopback: false, socket: false },
        })
        .collect()
}

fn is_loopback_name(name: &str) -> bool {
    let bare = name.trim_start_matches('[').trim_end_matches(']');
    bare.eq_ignore_ascii_case("localhost") || bare.parse::<IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

/// Opens PostgreSQL connections with the settings of one URL; built once per pool, so the
/// root certificates are read at start-up.
pub(crate) struct PgConnector {
    settings: PgSettings,
    tls: MakeRustlsConnect,
}

impl fmt::Debug for PgConnector {
    // The config holds the password.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PgConnector").field("sslmode", &self.settings.mode).finish_non_exhaustive()
    }
}

impl PgConnector {
    /// Loads the root certificates the settings need; errors name `sslrootcert` or the
    /// system store.
    pub(crate) fn new(settings: PgSettings) -> Result<PgConnector, String> {
        let provider = Arc::new(aws_lc_rs::default_provider());
        let roots = match &settings.roots {
            None => None,
            Some(roots) => Some(Arc::new(load_roots(roots)?)),
        };
        let verifier = Arc::new(Verifier {
            roots,
            check: settings.check,
            algorithms: provider.signature_verification_algorithms,
        });
        let config = ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .map_err(|e| format!("cannot set up TLS: {e}"))?
            .dangerous()
            .with_custom_certificate_verifier(verifier)
            .with_no_client_auth();
        Ok(PgConnector { settings, tls: MakeRustlsConnect::new(config) })
    }

    /// A new connection, TLS as the URL says. A refusal names its cause (unknown CA, host
    /// name mismatch, no TLS on the server) and the server, never the password.
    pub(crate) async fn connect(&self) -> ConnectionResult<AsyncPgConnection> {
        let (client, connection) = self
            .settings
            .config
            .connect(self.tls.clone())
            .await
            .map_err(|e| ConnectionError::BadConnection(self.explain(&e)))?;
        AsyncPgConnection::try_from_client_and_connection(client, connection).await
    }

    fn explain(&self, error: &tokio_postgres::Error) -> String {
        let text = full_text(error);
        let cause = match rustls_error(error) {
            Some(rustls::Error::InvalidCertificate(problem)) => {
                let why = match problem {
                    CertificateError::UnknownIssuer => {
                        format!(
                            "the server's certificate is not signed by a trusted CA ({})",
                            self.roots_text()
                        )
                    }
                    CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. } => {
                        "the server's certificate is not valid for the host name connected to \
                         (sslmode=verify-full checks it; verify-ca does not)"
                            .to_owned()
                    }
                    CertificateError::Expired | CertificateError::ExpiredContext { .. } => {
                        "the server's certificate has expired".to_owned()
                    }
                    CertificateError::NotValidYet | CertificateError::NotValidYetContext { .. } => {
                        "the server's certificate is not valid yet".to_owned()
                    }
                    _ => "the server's certificate is refused".to_owned(),
                };
                format!("{why}: {problem}")
            }
            Some(other) => format!("the TLS handshake failed: {other}"),
            None if text.contains("server does not support TLS") => {
                "the server does not support TLS (its `ssl` setting is off)".to_owned()
            }
            None if self.settings.mode == SslMode::Disable && text.contains("no encryption") => {
                format!("{text} (the server accepts TLS connections only, which sslmode=disable rules out)")
            }
            None => return text,
        };
        format!(
            "the connection to PostgreSQL at {} is refused: {cause}; {}",
            self.targets(),
            self.mode_text()
        )
    }

    /// `host:port` of every endpoint, for messages.
    fn targets(&self) -> String {
        let config = &self.settings.config;
        let ports = config.get_ports();
        let names: Vec<String> = if config.get_hosts().is_empty() {
            config.get_hostaddrs().iter().map(IpAddr::to_string).collect()
        } else {
            config
                .get_hosts()
                .iter()
                .map(|host| match host {
                    Host::Tcp(name) => name.clone(),
                    Host::Unix(path) => path.display().to_string(),
                })
                .collect()
        };
        names
            .iter()
            .enumerate()
            .map(|(i, name)| {
                let port = ports.get(i).or_else(|| ports.first()).copied().unwrap_or(5432);
                format!("{name}:{port}")
            })
            .collect::<Vec<_>>()
            .join(",")
    }

    fn mode_text(&self) -> String {
        let source = if self.settings.explicit { "from the URL" } else { "the default for this host" };
        format!("sslmode={} ({source})", self.settings.mode.name())
    }

    fn roots_text(&self) -> String {
        match &self.settings.roots {
            Some(Roots::File(path)) => format!("trusted: the certificates of sslrootcert={}", path.display()),
            Some(Roots::System) => {
                "trusted: the system's certificate store; name the server's CA with sslrootcert=FILE"
                    .to_owned()
            }
            None => "no CA is trusted".to_owned(),
        }
    }
}

/// The error and its causes: a tokio-postgres error's own text is only its kind ("db
/// error", "error performing TLS handshake"); the cause says what happened.
fn full_text(error: &tokio_postgres::Error) -> String {
    let mut text = error.to_string();
    let mut next = error.source();
    while let Some(cause) = next {
        let cause_text = cause.to_string();
        if !text.ends_with(&cause_text) {
            text.push_str(": ");
            text.push_str(&cause_text);
        }
        next = cause.source();
    }
    text
}

/// The rustls error under a tokio-postgres error: tokio-postgres keeps the connector's
/// `io::Error` as its source, and tokio-rustls puts the rustls error inside that.
fn rustls_error(error: &tokio_postgres::Error) -> Option<&rustls::Error> {
    let mut next = error.source();
    while let Some(current) = next {
        if let Some(found) = current.downcast_ref::<rustls::Error>() {
            return Some(found);
        }
        if let Some(found) = current
            .downcast_ref::<std::io::Error>()
            .and_then(|io| io.get_ref())
            .and_then(|inner| inner.downcast_ref::<rustls::Error>())
        {
            return Some(found);
        }
        next = current.source();
    }
    None
}

fn load_roots(roots: &Roots) -> Result<RootCertStore, String> {
    let mut store = RootCertStore::empty();
    match roots {
        Roots::File(path) => {
            let shown = path.display();
            let certificates = CertificateDer::pem_file_iter(path)
                .map_err(|e| format!("sslrootcert {shown} cannot be read: {e}"))?
                .collect::<Result<Vec<_>, _>>()
                .map_err(|e| format!("sslrootcert {shown} is not a PEM certificate file: {e}"))?;
            if certificates.is_empty() {
                return Err(format!("sslrootcert {shown} holds no PEM certificate"));
            }
            for (i, certificate) in certificates.into_iter().enumerate() {
                store
                    .add(certificate)
                    .map_err(|e| format!("sslrootcert {shown}: certificate {} is unusable: {e}", i + 1))?;
            }
        }
        Roots::System => {
            let found = rustls_native_certs::load_native_certs();
            let (added, _) = store.add_parsable_certificates(found.certs);
            if added == 0 {
                let errors: Vec<String> = found.errors.iter().map(ToString::to_string).collect();
                return Err(format!(
                    "the system's certificate store has no usable certificate ({}): install the \
                     CA certificates, or name the server's CA with sslrootcert=FILE",
                    if errors.is_empty() { "it is empty".to_owned() } else { errors.join("; ") }
                ));
            }
        }
    }
    Ok(store)
}

/// The checks of [`Check`], on rustls's own verification functions. Not
/// `WebPkiServerVerifier`, which always checks the host name (`verify-ca` must not).
#[derive(Debug)]
struct Verifier {
    /// `None` for [`Check::Nothing`].
    roots: Option<Arc<RootCertStore>>,
    check: Check,
    algorithms: WebPkiSupportedAlgorithms,
}

impl ServerCertVerifier for Verifier {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        if let (Some(roots), Check::Chain | Check::ChainAndName) = (&self.roots, self.check) {
            let certificate = ParsedCertificate::try_from(end_entity)?;
            verify_server_cert_signed_by_trust_anchor(
                &certificate,
                roots,
                intermediates,
                now,
                self.algorithms.all,
            )?;
            if self.check == Check::ChainAndName {
                verify_server_name(&certificate, server_name)?;
            }
        }
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(message, cert, dss, &self.algorithms)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(message, cert, dss, &self.algorithms)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.algorithms.supported_schemes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings(url: &str) -> PgSettings {
        PgSettings::parse(url).unwrap()
    }

    #[test]
    fn the_default_verifies_remote_hosts_and_prefers_tls_on_loopback() {
        let remote = settings("postgres://u:secret@db.internal:5432/consular");
        assert_eq!((remote.mode(), remote.check), (SslMode::VerifyFull, Check::ChainAndName));
        assert_eq!(remote.roots, Some(Roots::System));
        assert_eq!(remote.config.get_ssl_mode(), WireMode::Require);
        for url in [
            "postgres://u@localhost/consular",
            "postgres://u@127.0.0.1:5433/consular",
            "postgres://u@[::1]/consular",
            "postgres://u@db.internal/consular?hostaddr=127.0.0.1",
        ] {
            let local = settings(url);
            assert_eq!((local.mode(), local.check), (SslMode::Prefer, Check::Nothing), "{url}");
            assert_eq!(local.config.get_ssl_mode(), WireMode::Prefer, "{url}");
        }
        let socket = settings("postgres://u@%2Fvar%2Frun%2Fpostgresql/consular");
        assert_eq!(socket.mode(), SslMode::Prefer);
        assert_eq!(socket.config.get_ssl_mode(), WireMode::Disable);
        // One remote host is enough to require verification.
        assert_eq!(settings("postgres://u@localhost,db.internal/consular").mode(), SslMode::VerifyFull);
    }

    #[test]
    fn each_mode_checks_what_libpq_checks() {
        let cases = [
            ("disable", None, SslMode::Disable, WireMode::Disable, Check::Nothing),
            ("prefer", None, SslMode::Prefer, WireMode::Prefer, Check::Nothing),
            ("require", None, SslMode::Require, WireMode::Require, Check::Nothing),
            // libpq: `require` with a root file is `verify-ca`.
            ("require", Some("/etc/ca.pem"), SslMode::Require, WireMode::Require, Check::Chain),
            ("verify-ca", Some("/etc/ca.pem"), SslMode::VerifyCa, WireMode::Require, Check::Chain),
            ("verify-full", Some("/etc/ca.pem"), SslMode::VerifyFull, WireMode::Require, Check::ChainAndName),
            ("verify-ca", None, SslMode::VerifyCa, WireMode::Require, Check::Chain),
        ];
        for (mode, root, expected, wire, check) in cases {
            let root = root.map_or(String::new(), |path| format!("&sslrootcert={path}"));
            let url = format!("postgres://u:secret@db.internal/consular?sslmode={mode}{root}");
            let parsed = settings(&url);
            assert_eq!(
                (parsed.mode(), parsed.config.get_ssl_mode(), parsed.check),
                (expected, wire, check),
                "{url}"
            );
        }
        let verified =
            settings("postgres://db.internal/x?sslmode=verify-full&sslrootcert=%2Fetc%2Fmy%20ca.pem");
        assert_eq!(verified.roots, Some(Roots::File(PathBuf::from("/etc/my ca.pem"))));
        assert_eq!(settings("postgres://db.internal/x?sslmode=verify-ca").roots, Some(Roots::System));
        assert_eq!(settings("postgres://db.internal/x?sslrootcert=system").mode(), SslMode::VerifyFull);
    }

    #[test]
    fn other_parameters_still_reach_tokio_postgres() {
        let parsed = settings(
            "postgres://u:secret@db.internal:6432/consular?application_name=consular&sslmode=require",
        );
        assert_eq!(parsed.config.get_application_name(), Some("consular"));
        assert_eq!(parsed.config.get_ports(), &[6432]);
        assert_eq!(parsed.config.get_dbname(), Some("consular"));
    }

    #[test]
    fn several_hosts_and_target_session_attrs_reach_tokio_postgres() {
        use tokio_postgres::config::{LoadBalanceHosts, TargetSessionAttrs};
        let tcp = |name: &str| Host::Tcp(name.to_owned());
        let url = settings(
            "postgres://u:secret@pg1.internal:5432,pg2.internal:5433/consular\
             ?target_session_attrs=read-write&connect_timeout=2&sslmode=verify-full&sslrootcert=%2Fetc%2Fca.pem",
        );
        let key_value = settings(
            "host=pg1.internal,pg2.internal port=5432,5433 user=u password='se cr\\'et' dbname=consular \
             target_session_attrs=read-write connect_timeout = 2 sslmode=verify-full sslrootcert=/etc/ca.pem",
        );
        for parsed in [&url, &key_value] {
            assert_eq!(parsed.config.get_hosts(), &[tcp("pg1.internal"), tcp("pg2.internal")]);
            assert_eq!(parsed.config.get_ports(), &[5432, 5433]);
            assert_eq!(parsed.config.get_dbname(), Some("consular"));
            assert_eq!(parsed.config.get_target_session_attrs(), TargetSessionAttrs::ReadWrite);
            assert_eq!(parsed.config.get_connect_timeout(), Some(&std::time::Duration::from_secs(2)));
            assert_eq!((parsed.mode(), parsed.check), (SslMode::VerifyFull, Check::ChainAndName));
            assert_eq!(parsed.roots, Some(Roots::File(PathBuf::from("/etc/ca.pem"))));
        }
        assert_eq!(key_value.config.get_password(), Some(&b"se cr'et"[..]));
        // In a URL a host without a port has 5432, as in libpq; the key/value form may give
        // one port for every host. The default is `any`; hosts tried in a random order.
        let default_port = settings("postgres://u@127.0.0.1,localhost:6432/x");
        assert_eq!(default_port.config.get_ports(), &[5432, 6432]);
        let shared_port = settings("host=127.0.0.1,localhost port=6432 load_balance_hosts=random");
        assert_eq!(shared_port.config.get_hosts(), &[tcp("127.0.0.1"), tcp("localhost")]);
        assert_eq!(shared_port.config.get_ports(), &[6432]);
        assert_eq!(shared_port.config.get_target_session_attrs(), TargetSessionAttrs::Any);
        assert_eq!(shared_port.config.get_load_balance_hosts(), LoadBalanceHosts::Random);
        assert_eq!(shared_port.mode(), SslMode::Prefer, "every host is on loopback");
        assert_eq!(url.failover_warning(), None, "connect_timeout is set");
        let warning = default_port.failover_warning().unwrap();
        assert!(warning.contains("2 hosts without connect_timeout"), "{warning}");
        assert_eq!(settings("postgres://u@db.internal/x").failover_warning(), None, "one host");
        let read_only = settings("host=localhost target_session_attrs=read-only");
        assert_eq!(read_only.config.get_target_session_attrs(), TargetSessionAttrs::ReadOnly);
        let connector =
            PgConnector::new(settings("host=pg1.internal,pg2.internal port=5432,5433 sslmode=require"))
                .unwrap();
        assert_eq!(connector.targets(), "pg1.internal:5432,pg2.internal:5433");
    }

    #[test]
    fn the_key_value_form_is_told_from_a_url() {
        for text in ["host=db dbname=x", "  dbname = x", "application_name=a=b"] {
            assert!(is_key_value(text), "{text}");
        }
        for text in ["postgres://db/x", "postgresql://h=1/x", "sqlite:x=y.db", "sqlite://a=b", "", "=x"] {
            assert!(!is_key_value(text), "{text}");
        }
        assert_eq!(
            key_values(r"a=1  b = 'two words' c=\'q d=''").unwrap(),
            [("a", "1"), ("b", "two words"), ("c", "'q"), ("d", "")]
                .map(|(k, v)| (k.to_owned(), v.to_owned()))
                .to_vec()
        );
    }

    #[test]
    fn bad_settings_are_named_without_the_password() {
        let cases = [
            ("sslmode=verify_full", "unknown sslmode `verify_full`"),
            ("sslmode=allow", "sslmode=allow is not supported"),
            ("sslmode=require&sslrootcert=system", "may not be used with sslrootcert=system"),
            ("sslmode=%FF", "sslmode is not valid UTF-8"),
            ("sslcert=/x", "sslcert"),
        ];
        for (query, expected) in cases {
            let error = PgSettings::parse(&format!("postgres://u:secret@db.internal/x?{query}")).unwrap_err();
            assert!(error.contains(expected) && !error.contains("secret"), "{query}: {error}");
        }
        let error =
            PgSettings::parse("postgres://u:secret@db.internal,%2Ftmp/x?sslmode=verify-full").unwrap_err();
        assert!(error.contains("unix socket") && !error.contains("secret"), "{error}");
        // libpq's `primary`, `standby` and `prefer-standby` are not tokio-postgres's.
        let error =
            PgSettings::parse("postgres://u:secret@h1,h2/x?target_session_attrs=primary").unwrap_err();
        assert!(error.contains("target_session_attrs") && !error.contains("secret"), "{error}");
        for text in ["host=db password='secret", "host=db password", "host=db password= ", "host=db =secret"]
        {
            let error = PgSettings::parse(text).unwrap_err();
            assert!(!error.contains("secret") && !error.is_empty(), "{text}: {error}");
        }
    }

    #[test]
    fn root_files_are_checked_when_the_connector_is_built() {
        let missing =
            settings("postgres://db.internal/x?sslmode=verify-full&sslrootcert=/nonexistent/ca.pem");
        let error = PgConnector::new(missing).unwrap_err();
        assert!(error.contains("sslrootcert /nonexistent/ca.pem cannot be read"), "{error}");

        let dir = tempfile::tempdir().unwrap();
        let empty = dir.path().join("empty.pem");
        std::fs::write(&empty, "not a certificate\n").unwrap();
        let url = format!("postgres://db.internal/x?sslmode=verify-ca&sslrootcert={}", empty.display());
        let error = PgConnector::new(settings(&url)).unwrap_err();
        assert!(error.contains("holds no PEM certificate"), "{error}");

        // No root needed: nothing is read.
        assert!(PgConnector::new(settings("postgres://db.internal/x?sslmode=require")).is_ok());
    }

    #[test]
    fn the_connector_does_not_print_the_password() {
        let connector =
            PgConnector::new(settings("postgres://u:secret@db.internal/x?sslmode=require")).unwrap();
        let shown = format!("{connector:?}");
        assert!(!shown.contains("secret"), "{shown}");
        assert_eq!(connector.targets(), "db.internal:5432");
        assert_eq!(connector.mode_text(), "sslmode=require (from the URL)");
    }
}
