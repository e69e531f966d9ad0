//! The [`Mailer`] port over SMTP (lettre, async on tokio, rustls on aws-lc-rs with the
//! webpki roots), with the emails rendered from embedded minijinja templates
//! ([`render`]; docs/notifications.md).
//!
//! The server is a URL: `smtp://[user:pass@]host[:port]` (plain, port 25),
//! `smtp://…?tls=required` or `?tls=opportunistic` (STARTTLS, port 587),
//! `smtps://…` (TLS from the start, port 465). A path names this host in `EHLO`
//! (`smtp://relay:587/mail.example.org?tls=required`; 127.0.0.1 otherwise). User and
//! password are percent-decoded.
//!
//! Each email is one SMTP conversation on its own connection, under one deadline
//! ([`DEFAULT_TIMEOUT`], or the `smtp_timeout_secs` setting: the senders' leases are
//! sized on it, docs/notifications.md): nothing is kept between sends, so a server that
//! restarts, or drops a connection, costs at most the attempt that was under way.
//! Failures are sorted for the retry policy: a 5xx reply or an address that cannot be a
//! recipient is [`MailError::Permanent`]; a 4xx reply, a refused or dropped connection, a
//! timeout, a TLS failure and anything else is [`MailError::Temporary`]. The error text
//! is the server's reply (`550 5.1.1 no such mailbox`) when there is one.

mod templates;

pub use templates::{Rendered, render};

use async_trait::async_trait;
use consular_domain::notification::Email;
use consular_ports::{MailError, Mailer};
use lettre::message::header::{HeaderName, HeaderValue};
use lettre::message::{Mailbox, Message, MultiPart};
use lettre::transport::smtp;
use lettre::{AsyncSmtpTransport, AsyncTransport, Tokio1Executor};
use std::error::Error as _;
use std::fmt;
use std::time::Duration;
use url::Url;

/// How long one email may take, connection and every command included, before the
/// attempt is abandoned as a temporary failure.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);

/// Sends emails through one SMTP server, from one sender.
pub struct SmtpMailer {
    transport: AsyncSmtpTransport<Tokio1Executor>,
    from: Mailbox,
    /// The domain of `from`: the right-hand side of every `Message-ID`.
    domain: String,
    timeout: Duration,
    /// `scheme://host:port`, without credentials: for `Debug`.
    server: String,
}

impl fmt::Debug for SmtpMailer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SmtpMailer")
            .field("server", &self.server)
            .field("from", &self.from.to_string())
            .field("timeout", &self.timeout)
            .finish_non_exhaustive()
    }
}

impl SmtpMailer {
    /// A mailer for the server at `url` ([`check_url`]), sending as `from` (a mailbox:
    /// `no-reply@example.org` or `Consular Services <no-reply@example.org>`), with the
    /// [`DEFAULT_TIMEOUT`]. Connects to nothing: the first send does.
    pub fn new(url: &str, from: &str) -> Result<SmtpMailer, String> {
        SmtpMailer::with_timeout(url, from, DEFAULT_TIMEOUT)
    }

    /// [`SmtpMailer::new`] with another deadline per email.
    pub fn with_timeout(url: &str, from: &str, timeout: Duration) -> Result<SmtpMailer, String> {
        let server = server(url)?;
        let from = sender(from)?;
        if timeout.is_zero() {
            return Err("the SMTP timeout must be positive".to_owned());
        }
        let transport = AsyncSmtpTransport::<Tokio1Executor>::from_url(url)
            .map_err(|e| format!("invalid SMTP URL: {e}"))?
            .timeout(Some(timeout))
            .build();
        let domain = from.email.domain().to_owned();
        Ok(SmtpMailer { transport, from, domain, timeout, server })
    }

    /// The message for `email`: rendered in its language, `multipart/alternative`
    /// (text then HTML), with a `Message-ID` made of the email's id, the same at every
    /// attempt, so a receiver can drop a resend after a crash.
    fn message(&self, email: &Email) -> Result<Message, MailError> {
        let to: Mailbox =
            email.to.trim().parse().map_err(|e| {
                MailError::Permanent(format!("invalid recipient address `{}`: {e}", email.to))
            })?;
        let rendered = render(email).map_err(MailError::Temporary)?;
        let mut message = Message::builder()
            .from(self.from.clone())
            .to(to)
            .subject(rendered.subject)
            .message_id(Some(format!("<{}@{}>", email.id, self.domain)))
            .multipart(MultiPart::alternative_plain_html(rendered.text, rendered.html))
            .map_err(|e| MailError::Temporary(format!("cannot build the message: {e}")))?;
        // RFC 3834: no vacation auto-replies to an automated message.
        message.headers_mut().insert_raw(HeaderValue::new(
            HeaderName::new_from_ascii_str("Auto-Submitted"),
            "auto-generated".into(),
        ));
        Ok(message)
    }
}

#[async_trait]
impl Mailer for SmtpMailer {
    async fn send(&self, email: &Email) -> Result<(), MailError> {
        let message = self.message(email)?;
        match tokio::time::timeout(self.timeout, self.transport.send(message)).await {
            Ok(Ok(_)) => Ok(()),
            Ok(Err(error)) => Err(classify(&error)),
            Err(_) => Err(MailError::Temporary(format!(
                "the SMTP server at {} did not finish within {:?}",
                self.server, self.timeout
            ))),
        }
    }
}

/// Sorts a lettre error for the retry policy: only a 5xx reply is permanent.
fn classify(error: &smtp::Error) -> MailError {
    let text = match (error.status(), error.source()) {
        (Some(code), Some(reply)) => format!("{code} {reply}"),
        (Some(code), None) => code.to_string(),
        (None, _) if error.is_timeout() => format!("timed out: {error}"),
        (None, _) => error.to_string(),
    };
    if error.is_permanent() { MailError::Permanent(text) } else { MailError::Temporary(text) }
}

/// The From mailbox `from` names (`no-reply@example.org` or `Name <address>`).
fn sender(from: &str) -> Result<Mailbox, String> {
    from.trim().parse().map_err(|e| format!("invalid sender address `{from}`: {e}"))
}

/// Checks a From setting without building a mailer (configuration checks).
pub fn check_from(from: &str) -> Result<(), String> {
    sender(from).map(|_| ())
}

/// Checks an SMTP server URL without connecting (for configuration): scheme `smtp` or
/// `smtps`, a host, `tls` only as `required` or `opportunistic` and only with `smtp`, no
/// other parameter, no user without a password. An error never repeats the credentials.
pub fn check_url(url: &str) -> Result<(), String> {
    server(url).map(drop)
}

/// [`check_url`], giving `scheme://host:port` (no credentials).
fn server(url: &str) -> Result<String, String> {
    let parsed = Url::parse(url).map_err(|e| format!("invalid SMTP URL: {e}"))?;
    let scheme = parsed.scheme();
    let host = parsed.host_str().filter(|h| !h.is_empty()).ok_or("the SMTP URL has no host")?;
    let mut tls = None;
    for (key, value) in parsed.query_pairs() {
        match (scheme, key.as_ref(), value.as_ref()) {
            ("smtp", "tls", "required" | "opportunistic") if tls.is_none() => tls = Some(value.into_owned()),
            ("smtp", "tls", other) => {
                return Err(format!(
                    "the SMTP URL's tls is `{other}`: use required or opportunistic, or none"
                ));
            }
            ("smtps", "tls", _) => {
                return Err("smtps is TLS from the start: drop the tls parameter".to_owned());
            }
            (_, other, _) => return Err(format!("the SMTP URL has an unknown parameter `{other}`")),
        }
    }
    let default_port = match (scheme, &tls) {
        ("smtp", None) => 25,
        ("smtp", Some(_)) => 587,
        ("smtps", _) => 465,
        (other, _) => return Err(format!("the SMTP URL's scheme is `{other}`: use smtp or smtps")),
    };
    if !parsed.username().is_empty() && parsed.password().is_none() {
        return Err("the SMTP URL names a user without a password".to_owned());
    }
    if parsed.fragment().is_some() {
        return Err("the SMTP URL has a fragment".to_owned());
    }
    // lettre's own reading (TLS settings, credential decoding) must accept it too.
    AsyncSmtpTransport::<Tokio1Executor>::from_url(url).map_err(|e| format!("invalid SMTP URL: {e}"))?;
    Ok(format!("{scheme}://{host}:{}", parsed.port().unwrap_or(default_port)))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

    use super::*;

    #[test]
    fn urls_are_checked_without_connecting() {
        assert_eq!(server("smtp://localhost").unwrap(), "smtp://localhost:25");
        assert_eq!(server("smtp://127.0.0.1:2525").unwrap(), "smtp://127.0.0.1:2525");
        assert_eq!(
            server("smtp://u:p%40ss@relay.example.org?tls=required").unwrap(),
            "smtp://relay.example.org:587"
        );
        assert_eq!(
            server("smtp://relay.example.org:2587/me.example.org?tls=opportunistic").unwrap(),
            "smtp://relay.example.org:2587"
        );
        assert_eq!(server("smtps://u:secret@relay.example.org").unwrap(), "smtps://relay.example.org:465");
        assert!(check_url("smtps://u:secret@relay.example.org").is_ok());
        for bad in [
            "",
            "relay.example.org",
            "http://relay.example.org",
            "smtp://",
            "smtp:///path",
            "smtp://relay.example.org?tls=none",
            "smtp://relay.example.org?tls=required&tls=opportunistic",
            "smtps://relay.example.org?tls=required",
            "smtp://relay.example.org?timeout=3",
            "smtp://user@relay.example.org",
            "smtp://relay.example.org#x",
        ] {
            assert!(check_url(bad).is_err(), "{bad} was accepted");
        }
        let error = check_url("smtp://user:hunter2@relay.example.org?tls=bogus").unwrap_err();
        assert!(!error.contains("hunter2"), "{error}");
    }

    #[test]
    fn the_sender_must_be_a_mailbox() {
        let mailer =
            SmtpMailer::new("smtp://127.0.0.1:2525", "Consular Services <no-reply@example.org>").unwrap();
        assert_eq!(mailer.domain, "example.org");
        assert_eq!(
            SmtpMailer::new("smtp://127.0.0.1:2525", "no-reply@consulate.example").unwrap().domain,
            "consulate.example"
        );
        for bad in ["", "no-reply", "Consular Services", "a@b@c", "<>"] {
            assert!(SmtpMailer::new("smtp://127.0.0.1:2525", bad).is_err(), "{bad:?} was accepted");
        }
        assert!(SmtpMailer::with_timeout("smtp://127.0.0.1:2525", "a@example.org", Duration::ZERO).is_err());
    }

    #[test]
    fn debug_shows_no_credentials() {
        let mailer = SmtpMailer::new("smtps://user:hunter2@relay.example.org", "a@example.org").unwrap();
        let debug = format!("{mailer:?}");
        assert!(debug.contains("smtps://relay.example.org:465") && !debug.contains("hunter2"), "{debug}");
    }
}
