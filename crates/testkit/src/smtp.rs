//! A real SMTP server on loopback for tests: aiosmtpd, installed into a venv under the
//! target directory the first time (`target/tmp/venv-aiosmtpd`, pip, a few seconds;
//! installs serialised across test processes by `flock`), one server process per
//! [`SmtpServer`], killed when dropped.
//!
//! It accepts every recipient but two kinds, by local part: `reject…` gets
//! `550 5.1.1 no such mailbox`, `busy…` gets `451 4.3.0 try again later`. Every accepted
//! message is stored raw as `<dir>/<n>.eml` (numbered in arrival order, written under a
//! temporary name then renamed, so a reader never sees half of one); [`parse`] decodes
//! one for assertions.
//!
//! To take the server down and bring it back, [`SmtpServer::stop`] it and
//! [`SmtpServer::start_on`] the same port and directory: numbering carries on.
//!
//! A slow server ([`SmtpServer::start_slow`]) takes a set time over each message's DATA
//! before it stores and accepts it (each conversation apart: several messages sent at
//! once take that time together, not one after another).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::HashSet;
use std::io::{BufRead, BufReader};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Mutex;
use std::sync::mpsc;
use std::time::{Duration, Instant};

const AIOSMTPD: &str = "aiosmtpd==1.4.*";

/// The server: arguments `PORT DIR [DATA_DELAY_SECONDS]`; prints `ready` once listening.
const SERVER_PY: &str = r#"
import asyncio, os, sys
from aiosmtpd.smtp import SMTP

port, directory = int(sys.argv[1]), sys.argv[2]
data_delay = float(sys.argv[3]) if len(sys.argv) > 3 else 0.0


def numbers():
    for name in os.listdir(directory):
        if name.endswith(".eml") and name[:-4].isdigit():
            yield int(name[:-4])


class Handler:
    def __init__(self):
        self.count = max(numbers(), default=0)

    async def handle_RCPT(self, server, session, envelope, address, rcpt_options):
        local = address.split("@", 1)[0].lower()
        if local.startswith("reject"):
            return "550 5.1.1 no such mailbox"
        if local.startswith("busy"):
            return "451 4.3.0 try again later"
        envelope.rcpt_tos.append(address)
        return "250 2.1.5 OK"

    async def handle_DATA(self, server, session, envelope):
        if data_delay > 0:
            await asyncio.sleep(data_delay)
        self.count += 1
        final = os.path.join(directory, "%06d.eml" % self.count)
        partial = os.path.join(directory, ".%06d.part" % self.count)
        with open(partial, "wb") as f:
            f.write(envelope.original_content)
            f.flush()
            os.fsync(f.fileno())
        os.replace(partial, final)
        return "250 2.0.0 queued as %d" % self.count


async def main():
    handler = Handler()
    loop = asyncio.get_running_loop()
    server = await loop.create_server(
        lambda: SMTP(handler, hostname="smtp.test", enable_SMTPUTF8=True),
        host="127.0.0.1",
        port=port,
        reuse_address=True,
    )
    print("ready", flush=True)
    async with server:
        await server.serve_forever()


asyncio.run(main())
"#;

/// The target directory: the test binary is `target/<profile>/deps/<binary>`.
fn target_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("CARGO_TARGET_DIR") {
        return PathBuf::from(dir);
    }
    let exe = std::env::current_exe().expect("the test binary's path");
    exe.ancestors().nth(3).expect("target/<profile>/deps/<binary>").to_path_buf()
}

fn venv() -> PathBuf {
    target_dir().join("tmp").join("venv-aiosmtpd")
}

/// The venv's python with aiosmtpd, installing it first when missing.
fn ensure_aiosmtpd() -> PathBuf {
    let venv = venv();
    let python = venv.join("bin/python");
    let marker = venv.join("aiosmtpd-installed");
    if marker.exists() {
        return python;
    }
    std::fs::create_dir_all(venv.parent().expect("the venv has a parent")).expect("target/tmp");
    let status = Command::new("flock")
        .arg(venv.with_extension("lock"))
        .arg("sh")
        .arg("-c")
        .arg(format!(
            "test -e {marker} || {{ python3 -m venv {venv} && {python} -m pip install --quiet \
             --disable-pip-version-check '{AIOSMTPD}' && touch {marker}; }}",
            marker = marker.display(),
            venv = venv.display(),
            python = python.display(),
        ))
        .status()
        .expect("flock and sh");
    assert!(status.success() && marker.exists(), "installing {AIOSMTPD} into {} failed", venv.display());
    python
}

/// The directories [`SmtpServer::start`] made: removed by whichever server last runs on
/// them, when it is dropped (not when it is stopped for a restart).
static OWNED_DIRS: Mutex<Option<HashSet<PathBuf>>> = Mutex::new(None);

/// A running aiosmtpd on `127.0.0.1:port`; killed when dropped.
pub struct SmtpServer {
    pub port: u16,
    /// Where the messages arrive (`<n>.eml`).
    pub dir: PathBuf,
    child: Child,
    keep_dir: bool,
}

impl std::fmt::Debug for SmtpServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SmtpServer").field("port", &self.port).field("dir", &self.dir).finish_non_exhaustive()
    }
}

/// A port nothing listens on now (the OS's pick; free until someone takes it).
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").expect("a free port").local_addr().expect("an address").port()
}

impl SmtpServer {
    /// A server on a free port, with a fresh directory.
    pub fn start() -> SmtpServer {
        SmtpServer::start_slow(Duration::ZERO)
    }

    /// A server on a free port, with a fresh directory, that takes `data_delay` over each
    /// message's DATA before it accepts it (a slow relay).
    pub fn start_slow(data_delay: Duration) -> SmtpServer {
        let dir = std::env::temp_dir().join(format!("consular-smtp-{}", uuid::Uuid::now_v7().simple()));
        std::fs::create_dir_all(&dir).expect("the message directory");
        OWNED_DIRS
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get_or_insert_with(HashSet::new)
            .insert(dir.clone());
        SmtpServer::launch(free_port(), &dir, data_delay)
    }

    /// A server on `port` storing into `dir` (which it creates if needed), as a server
    /// stopped there before left them: messages already in `dir` stay, numbering goes on.
    pub fn start_on(port: u16, dir: &Path) -> SmtpServer {
        SmtpServer::launch(port, dir, Duration::ZERO)
    }

    fn launch(port: u16, dir: &Path, data_delay: Duration) -> SmtpServer {
        let python = ensure_aiosmtpd();
        std::fs::create_dir_all(dir).expect("the message directory");
        let script = dir.join("server.py");
        std::fs::write(&script, SERVER_PY).expect("the server script");
        let log = std::fs::File::create(dir.join("server.log")).expect("the server log");
        let mut child = Command::new(python)
            .arg(&script)
            .arg(port.to_string())
            .arg(dir)
            .arg(data_delay.as_secs_f64().to_string())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(log)
            .spawn()
            .expect("python starts");
        let stdout = child.stdout.take().expect("the server's stdout");
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let mut line = String::new();
            let _ = BufReader::new(stdout).read_line(&mut line);
            let _ = tx.send(line);
        });
        let server = SmtpServer { port, dir: dir.to_path_buf(), child, keep_dir: false };
        match rx.recv_timeout(Duration::from_secs(30)) {
            Ok(line) if line.trim() == "ready" => server,
            outcome => {
                let log = std::fs::read_to_string(dir.join("server.log")).unwrap_or_default();
                panic!("aiosmtpd did not start on port {port} ({outcome:?}):\n{log}");
            }
        }
    }

    /// `smtp://127.0.0.1:PORT`
    pub fn url(&self) -> String {
        format!("smtp://127.0.0.1:{}", self.port)
    }

    /// Kills the server and waits for it: the port is free after, `dir` is kept for
    /// [`SmtpServer::start_on`].
    pub fn stop(mut self) {
        self.keep_dir = true;
    }

    /// The raw messages received so far, in arrival order.
    pub fn messages(&self) -> Vec<Vec<u8>> {
        let mut numbered: Vec<(u64, PathBuf)> = std::fs::read_dir(&self.dir)
            .expect("the message directory")
            .filter_map(|entry| {
                let path = entry.ok()?.path();
                let number = path.file_name()?.to_str()?.strip_suffix(".eml")?.parse().ok()?;
                Some((number, path))
            })
            .collect();
        numbered.sort();
        numbered.into_iter().map(|(_, path)| std::fs::read(path).expect("a stored message")).collect()
    }

    /// The messages once at least `n` have arrived; panics after `timeout`.
    pub fn wait_for(&self, n: usize, timeout: Duration) -> Vec<Vec<u8>> {
        let started = Instant::now();
        loop {
            let messages = self.messages();
            if messages.len() >= n {
                return messages;
            }
            assert!(
                started.elapsed() < timeout,
                "{} message(s) on the SMTP server after {timeout:?}, not {n}",
                messages.len()
            );
            std::thread::sleep(Duration::from_millis(25));
        }
    }
}

impl Drop for SmtpServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        if !self.keep_dir {
            let owned = OWNED_DIRS
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .as_mut()
                .is_some_and(|d| d.remove(&self.dir));
            if owned {
                let _ = std::fs::remove_dir_all(&self.dir);
            }
        }
    }
}

/// A received message, decoded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReceivedMail {
    /// The `To` addresses.
    pub to: Vec<String>,
    /// The `From` address.
    pub from: Option<String>,
    pub subject: Option<String>,
    /// Without the angle brackets.
    pub message_id: Option<String>,
    /// The top-level `Content-Type` (`multipart/alternative`).
    pub content_type: Option<String>,
    /// The `Content-Type`s of the leaf parts, in order (`text/plain`, `text/html`).
    pub part_types: Vec<String>,
    /// The first `text/plain` part, decoded.
    pub text: Option<String>,
    /// The first `text/html` part, decoded.
    pub html: Option<String>,
    /// Every header, name and raw value, in order.
    pub headers: Vec<(String, String)>,
}

/// Decodes a raw message (MIME, quoted-printable, base64, encoded words); panics when
/// it is not one.
pub fn parse(raw: &[u8]) -> ReceivedMail {
    use mail_parser::{MessageParser, MimeHeaders};

    let message = MessageParser::default().parse(raw).expect("a MIME message");
    let addresses = |value: Option<&mail_parser::Address<'_>>| -> Vec<String> {
        value.map(|a| a.iter().filter_map(|m| m.address().map(str::to_owned)).collect()).unwrap_or_default()
    };
    let type_of = |ct: Option<&mail_parser::ContentType<'_>>| {
        ct.map(|ct| match ct.subtype() {
            Some(sub) => format!("{}/{}", ct.ctype(), sub).to_lowercase(),
            None => ct.ctype().to_lowercase(),
        })
    };
    let leaves: Vec<_> = message.parts.iter().filter(|part| !part.is_multipart()).collect();
    let part_types = leaves.iter().filter_map(|part| type_of(part.content_type())).collect();
    let first = |wanted: &str| {
        leaves
            .iter()
            .find(|part| type_of(part.content_type()).as_deref() == Some(wanted))
            .and_then(|part| part.text_contents())
            .map(str::to_owned)
    };
    let headers = message
        .headers()
        .iter()
        .map(|h| {
            let value = raw.get(h.offset_start() as usize..h.offset_end() as usize).unwrap_or_default();
            (h.name().to_owned(), String::from_utf8_lossy(value).trim().to_owned())
        })
        .collect();
    ReceivedMail {
        to: addresses(message.to()),
        from: addresses(message.from()).into_iter().next(),
        subject: message.subject().map(str::to_owned),
        message_id: message.message_id().map(str::to_owned),
        content_type: type_of(message.content_type()),
        part_types,
        text: first("text/plain"),
        html: first("text/html"),
        headers,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_an_alternative_message() {
        let raw = b"From: A <a@example.org>\r\nTo: b@example.org\r\nSubject: =?utf-8?q?Re=C3=A7u?=\r\n\
Message-ID: <1@example.org>\r\nMIME-Version: 1.0\r\n\
Content-Type: multipart/alternative; boundary=\"x\"\r\n\r\n\
--x\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Transfer-Encoding: quoted-printable\r\n\r\n\
Re=C3=A7u =\r\nlong\r\n\
--x\r\nContent-Type: text/html; charset=utf-8\r\nContent-Transfer-Encoding: base64\r\n\r\n\
PHA+UmXDp3U8L3A+\r\n--x--\r\n";
        let mail = parse(raw);
        assert_eq!(mail.to, ["b@example.org"]);
        assert_eq!(mail.from.as_deref(), Some("a@example.org"));
        assert_eq!(mail.subject.as_deref(), Some("Reçu"));
        assert_eq!(mail.message_id.as_deref(), Some("1@example.org"));
        assert_eq!(mail.content_type.as_deref(), Some("multipart/alternative"));
        assert_eq!(mail.part_types, ["text/plain", "text/html"]);
        assert_eq!(mail.text.as_deref(), Some("Reçu long"));
        assert_eq!(mail.html.as_deref(), Some("<p>Reçu</p>"));
        assert!(mail.headers.iter().any(|(name, value)| name == "Message-ID" && value == "<1@example.org>"));
    }
}
