//! Request bodies that stop arriving, or arrive too slowly, are answered 408
//! `request_timeout` (a problem) on a connection that then closes; uploads stream for as
//! long as their bytes keep coming (docs/operations.md "Slow clients"). The stalled
//! clients are raw TCP sockets that send a request head and part of its body.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use consular_tests::files::{UPLOAD, form, pdf, slow_part};
use consular_tests::reqwest::Method;
use consular_tests::serde_json::{self, Value};
use consular_tests::{Backend, TestApp, both, text};
use std::time::{Duration, Instant};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// The read deadlines of these tests' servers, in seconds: idle, total.
const IDLE: u32 = 2;
const TOTAL: u32 = 3;
/// Stalled connections held at once.
const STALLED: usize = 500;

fn with_short_body_timeouts(settings: &mut consular_tests::consular_app::Settings) {
    settings.request_body_idle_timeout_secs = IDLE;
    settings.request_body_timeout_secs = TOTAL;
}

/// This process's limit of open files, soft and hard, from `/proc/self/limits`.
fn open_files_limit() -> (u64, u64) {
    let limits = std::fs::read_to_string("/proc/self/limits").expect("/proc/self/limits");
    let line = limits.lines().find(|l| l.starts_with("Max open files")).expect("the open files line");
    let number = |text: &str| if text == "unlimited" { u64::MAX } else { text.parse().expect("a limit") };
    let fields: Vec<&str> = line.split_whitespace().collect();
    (number(fields[3]), number(fields[4]))
}

/// Raises this process's soft limit of open files to `needed` when it is lower: the
/// stalled sockets are open twice here, once on each side, since the server runs in this
/// process. Done by `prlimit` (util-linux) on this process, without a dependency; the
/// hard limit caps it, except as root (CI).
fn ensure_open_files(needed: u64) {
    let (soft, hard) = open_files_limit();
    if soft >= needed {
        return;
    }
    let limits =
        if hard >= needed { format!("--nofile={needed}:") } else { format!("--nofile={needed}:{needed}") };
    let raised = std::process::Command::new("prlimit")
        .args(["--pid", &std::process::id().to_string(), &limits])
        .status();
    let (soft, _) = open_files_limit();
    assert!(
        soft >= needed,
        "this test needs {needed} open files and the limit is {soft} (prlimit: {raised:?}); raise it with `ulimit -n {needed}`"
    );
}

/// A connection that sent a request head and part of its body, and when.
struct Stalled {
    stream: TcpStream,
    sent_at: Instant,
}

/// Opens a connection and sends `head` (the request line and headers, without the blank
/// line) and then `body`, which may be shorter than the `Content-Length` in `head`.
async fn send_partial(app: &TestApp, head: &str, body: &[u8]) -> Stalled {
    let mut stream = TcpStream::connect(("127.0.0.1", app.port)).await.expect("a connection");
    let mut request = format!("{head}\r\nHost: 127.0.0.1\r\n\r\n").into_bytes();
    request.extend_from_slice(body);
    stream.write_all(&request).await.expect("the head and part of the body");
    Stalled { stream, sent_at: Instant::now() }
}

/// A token request announcing a 100-byte form and sending 30 bytes of it.
async fn stalled_token_request(app: &TestApp) -> Stalled {
    let head = "POST /api/v1/auth/token HTTP/1.1\r\n\
                Content-Type: application/x-www-form-urlencoded\r\n\
                Content-Length: 100";
    send_partial(app, head, b"grant_type=client_credentials&").await
}

/// What the server answered on a connection: status, headers (lower-case names), body,
/// when the answer was complete, and whether the server closed the connection.
struct Answer {
    status: u16,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
    at: Instant,
    closed: bool,
}

impl Answer {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_str())
    }

    /// Checks a 408 `request_timeout` problem on a connection the server closed.
    fn expect_timeout(&self) -> Value {
        let body = String::from_utf8_lossy(&self.body);
        assert_eq!(self.status, 408, "{body}");
        assert_eq!(self.header("content-type"), Some("application/problem+json"), "{body}");
        assert_eq!(self.header("connection"), Some("close"), "{:?}", self.headers);
        assert!(self.closed, "the server closed the connection after the 408");
        let problem: Value = serde_json::from_str(&body).unwrap_or_else(|e| panic!("not JSON ({e}): {body}"));
        assert_eq!(problem["code"], "request_timeout", "{problem}");
        assert_eq!(problem["status"], 408, "{problem}");
        problem
    }
}

/// Reads what the server sends on `stream` until it closes it, or until the end of the
/// body its `Content-Length` announces, for at most `within`.
async fn answer(stream: &mut (impl AsyncRead + Unpin), within: Duration) -> Answer {
    let deadline = tokio::time::Instant::now() + within;
    let mut received = Vec::new();
    let mut buffer = [0u8; 4096];
    let closed = loop {
        let read = tokio::time::timeout_at(deadline, stream.read(&mut buffer)).await.unwrap_or_else(|_| {
            panic!("no answer within {within:?}: {}", String::from_utf8_lossy(&received))
        });
        match read {
            Ok(0) | Err(_) => break true,
            Ok(n) => received.extend_from_slice(&buffer[..n]),
        }
        if let Some(end) = received.windows(4).position(|w| w == b"\r\n\r\n") {
            let head = String::from_utf8_lossy(&received[..end]).to_lowercase();
            let length = head
                .lines()
                .find_map(|l| l.strip_prefix("content-length:"))
                .and_then(|v| v.trim().parse::<usize>().ok());
            if length.is_some_and(|length| received.len() >= end + 4 + length) {
                // The whole answer: does the server close the connection now?
                break matches!(
                    tokio::time::timeout(Duration::from_secs(2), stream.read(&mut buffer)).await,
                    Ok(Ok(0) | Err(_))
                );
            }
        }
    };
    let at = Instant::now();
    let end = received.windows(4).position(|w| w == b"\r\n\r\n").expect("a complete response head");
    let head = String::from_utf8_lossy(&received[..end]).into_owned();
    let mut lines = head.lines();
    let status = lines.next().and_then(|l| l.split_whitespace().nth(1)).and_then(|s| s.parse().ok()).unwrap();
    let headers = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_lowercase(), v.trim().to_owned()))
        .collect();
    Answer { status, headers, body: received[end + 4..].to_vec(), at, closed }
}

both!(stalled_bodies_get_408_and_other_clients_are_served_meanwhile);
async fn stalled_bodies_get_408_and_other_clients_are_served_meanwhile(backend: Backend) {
    ensure_open_files(4 * STALLED as u64);
    let app = TestApp::spawn_with(backend, with_short_body_timeouts).await;
    let token = app.admin_token().await;

    // 500 unauthenticated token requests, each 70 bytes short of its body.
    let mut stalled = Vec::with_capacity(STALLED);
    let first_sent = Instant::now();
    for _ in 0..STALLED / 50 {
        stalled.extend(futures_util::future::join_all((0..50).map(|_| stalled_token_request(&app))).await);
    }

    // Meanwhile, ordinary clients are served at once: tokens, reads, probes.
    let mut slowest = Duration::ZERO;
    for round in 0..10 {
        let started = Instant::now();
        let status = if round % 3 == 0 {
            let form = [("grant_type", "client_credentials")];
            app.token_request("/api/v1/auth/token", Some((&app.admin_id, &app.admin_secret)), &form)
                .await
                .status()
        } else {
            app.get("/api/v1/missions", &token).await.status()
        };
        assert_eq!(status, 200, "round {round}");
        let live = app.request(Method::GET, "/health/live").send().await.unwrap();
        assert_eq!(live.status(), 200);
        slowest = slowest.max(started.elapsed());
    }
    let served_at = Instant::now();
    assert!(slowest < Duration::from_secs(1), "an ordinary request took {slowest:?} beside the stalled ones");
    // All of that within the idle time of the first stalled connection: every one was
    // still held, unanswered, while the ordinary clients were served.
    assert!(served_at.duration_since(first_sent) < Duration::from_secs(u64::from(IDLE)), "too slow to tell");
    for s in &stalled {
        let mut byte = [0u8; 1];
        let read = s.stream.try_read(&mut byte);
        assert!(
            matches!(&read, Err(e) if e.kind() == std::io::ErrorKind::WouldBlock),
            "a stalled connection was answered before its idle time: {read:?}"
        );
    }

    // Every stalled one gets its 408 once the idle time has passed, and is closed.
    let bound = Duration::from_secs(u64::from(IDLE) + 10);
    let answers = futures_util::future::join_all(stalled.iter_mut().map(|s| async {
        let answer = answer(&mut s.stream, bound).await;
        (answer, s.sent_at)
    }))
    .await;
    for (answer, sent_at) in &answers {
        let problem = answer.expect_timeout();
        assert_eq!(problem["instance"], "/api/v1/auth/token");
        let waited = answer.at.duration_since(*sent_at);
        assert!(waited >= Duration::from_secs(u64::from(IDLE)), "408 after {waited:?}, before the idle time");
    }
    // The server is as it was: the 408s freed their connections.
    assert_eq!(app.get("/api/v1/missions", &token).await.status(), 200);
}

both!(a_trickled_form_is_cut_at_the_total_but_a_steady_upload_is_not);
async fn a_trickled_form_is_cut_at_the_total_but_a_steady_upload_is_not(backend: Backend) {
    let app = TestApp::spawn_with(backend, with_short_body_timeouts).await;
    let world = app.world().await;

    // A form at one byte every 250 ms: never idle for long, but past the total.
    let head = "POST /api/v1/auth/token HTTP/1.1\r\n\
                Content-Type: application/x-www-form-urlencoded\r\n\
                Content-Length: 100";
    let Stalled { mut stream, sent_at } = send_partial(&app, head, b"g").await;
    let (mut reader, mut writer) = stream.split();
    let trickle = async {
        for _ in 0..60 {
            tokio::time::sleep(Duration::from_millis(250)).await;
            if writer.write_all(b"x").await.is_err() {
                break;
            }
        }
    };
    let answered = answer(&mut reader, Duration::from_secs(u64::from(TOTAL) + 10));
    let answer = tokio::select! {
        answer = answered => answer,
        () = trickle => panic!("the form trickled for 15 s without an answer"),
    };
    answer.expect_timeout();
    let waited = answer.at.duration_since(sent_at);
    assert!(waited >= Duration::from_secs(u64::from(TOTAL)), "408 after {waited:?}, before the total time");

    // An upload at 4 KiB every 400 ms for about 5 s: longer than the total, never idle.
    let (part, _) = slow_part(pdf(1024, 7), 4 * 1024, Duration::from_millis(400), Some(1024 + 12 * 4 * 1024));
    let started = Instant::now();
    let response = app
        .authed(Method::POST, UPLOAD, &world.citizen_a.token)
        .multipart(form(&[("kind", "passport_photo")], part))
        .send()
        .await
        .unwrap();
    let took = started.elapsed();
    let status = response.status();
    let body: Value = response.json().await.unwrap();
    assert_eq!(status, 201, "{body}");
    assert!(took > Duration::from_secs(u64::from(TOTAL)), "the upload lasted {took:?}, not past the total");
    assert_eq!(body["size_bytes"], 1024 + 12 * 4 * 1024, "{body}");
    assert!(!text(&body, "id").is_empty());
}

both!(an_upload_that_stops_arriving_gets_408_and_leaves_nothing);
async fn an_upload_that_stops_arriving_gets_408_and_leaves_nothing(backend: Backend) {
    let app = TestApp::spawn_with(backend, with_short_body_timeouts).await;
    let world = app.world().await;
    let boundary = "slowbodyboundary";
    let mut body = format!(
        "--{boundary}\r\nContent-Disposition: form-data; name=\"kind\"\r\n\r\npassport_photo\r\n\
         --{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"scan.pdf\"\r\n\
         Content-Type: application/pdf\r\n\r\n"
    )
    .into_bytes();
    body.extend_from_slice(&pdf(8 * 1024, 3));
    let head = format!(
        "POST {UPLOAD} HTTP/1.1\r\nAuthorization: Bearer {}\r\n\
         Content-Type: multipart/form-data; boundary={boundary}\r\nContent-Length: {}",
        world.citizen_a.token,
        body.len() + 64 * 1024
    );
    let Stalled { mut stream, sent_at } = send_partial(&app, &head, &body).await;
    let answer = answer(&mut stream, Duration::from_secs(u64::from(IDLE) + 10)).await;
    let problem = answer.expect_timeout();
    assert_eq!(problem["instance"], UPLOAD);
    let waited = answer.at.duration_since(sent_at);
    assert!(waited >= Duration::from_secs(u64::from(IDLE)), "408 after {waited:?}, before the idle time");
    assert!(app.live_documents().await.is_empty(), "no document was kept");
    app.assert_storage_empty("the stalled upload").await;
}
