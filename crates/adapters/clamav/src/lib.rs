//! Malware scanning adapter: implements `consular_ports::MalwareScanner` (and
//! `HealthCheck`) with clamd's `INSTREAM` command over TCP, through the `clamav-client`
//! crate. Chunks are forwarded as they come through a small bounded channel, so a scan holds
//! a few chunks at most whatever the file size; every step is bounded by a timeout.
//!
//! This crate owns the clamd protocol details: connecting, streaming, reading clamd's
//! answer into a verdict. It must not touch configuration loading (it takes an address
//! and a timeout), storage, the database, HTTP or domain rules
//! (docs/operations.md, "Document storage and malware scanning").

mod verdict;

use std::io;
use std::sync::Mutex;
use std::time::Duration;

use async_trait::async_trait;
use bytes::Bytes;
use clamav_client::tokio::TransportProtocol;
use consular_ports::{HealthCheck, MalwareScanner, ScanError, ScanSession, ScanVerdict};
use futures_util::StreamExt;
use tokio::net::TcpStream;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

pub use verdict::parse_verdict;

/// Timeout of each step (connecting, accepting a chunk, answering) when none is given.
/// clamd answers only once the whole file is scanned, which takes seconds for a large
/// file with a full signature database.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);

/// Chunks waiting for the connection, per scan: the only data a scan holds.
const CHANNEL_CHUNKS: usize = 4;

/// Largest INSTREAM chunk sent to clamd; larger chunks are split.
const INSTREAM_CHUNK: usize = 256 * 1024;

/// A [`MalwareScanner`] over a clamd listening on TCP.
#[derive(Debug, Clone)]
pub struct ClamdScanner {
    addr: String,
    timeout: Duration,
}

impl ClamdScanner {
    /// A scanner for the clamd at `addr` (`host:port`), with [`DEFAULT_TIMEOUT`]. Nothing
    /// is contacted here.
    pub fn new(addr: impl Into<String>) -> Self {
        Self { addr: addr.into(), timeout: DEFAULT_TIMEOUT }
    }

    /// Sets the timeout of each step: connecting, each chunk, and clamd's answer.
    pub fn with_timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    pub fn addr(&self) -> &str {
        &self.addr
    }

    fn unavailable(&self, what: impl std::fmt::Display) -> ScanError {
        ScanError::Unavailable(format!("clamd at {}: {what}", self.addr))
    }

    async fn connect(&self) -> Result<TcpStream, ScanError> {
        match tokio::time::timeout(self.timeout, TcpStream::connect(self.addr.as_str())).await {
            Ok(Ok(stream)) => Ok(stream),
            Ok(Err(e)) => Err(self.unavailable(format_args!("cannot connect: {e}"))),
            Err(_) => Err(self.unavailable(format_args!("no connection within {:?}", self.timeout))),
        }
    }
}

/// A connection opened before the scan starts, so that an unreachable clamd is reported
/// by [`MalwareScanner::start`] before any byte is sent; clamav-client connects through
/// this and takes the stream once.
struct Connected(Mutex<Option<TcpStream>>);

impl TransportProtocol for Connected {
    type Stream = TcpStream;

    fn connect(&self) -> impl Future<Output = io::Result<TcpStream>> {
        let stream = self.0.lock().ok().and_then(|mut slot| slot.take());
        std::future::ready(stream.ok_or_else(|| io::Error::other("connection already used")))
    }
}

#[async_trait]
impl MalwareScanner for ClamdScanner {
    async fn start(&self) -> Result<Box<dyn ScanSession>, ScanError> {
        let stream = self.connect().await?;
        let (sender, receiver) = mpsc::channel::<Bytes>(CHANNEL_CHUNKS);
        let chunks = futures_util::stream::unfold(receiver, |mut receiver| async move {
            receiver.recv().await.map(|chunk| (Ok(chunk), receiver))
        });
        let connection = Connected(Mutex::new(Some(stream)));
        let task = tokio::spawn(async move {
            clamav_client::tokio::scan_stream(chunks.boxed(), connection, Some(INSTREAM_CHUNK)).await
        });
        Ok(Box::new(ClamdSession { scanner: self.clone(), sender: Some(sender), task: Some(task) }))
    }
}

#[async_trait]
impl HealthCheck for ClamdScanner {
    fn name(&self) -> &'static str {
        "clamav"
    }

    /// clamd answers `PING` with `PONG` within the timeout.
    async fn check(&self) -> Result<(), String> {
        let stream = self.connect().await.map_err(|e| e.to_string())?;
        let ping = clamav_client::tokio::ping(Connected(Mutex::new(Some(stream))));
        match tokio::time::timeout(self.timeout, ping).await {
            Ok(Ok(answer)) if answer == clamav_client::PONG => Ok(()),
            Ok(Ok(answer)) => Err(self.unavailable(format_args!("PING answered {answer:?}")).to_string()),
            Ok(Err(e)) => Err(self.unavailable(e).to_string()),
            Err(_) => Err(self.unavailable("no answer to PING").to_string()),
        }
    }
}

/// One INSTREAM scan: chunks go through the channel to the task that writes them to clamd.
struct ClamdSession {
    scanner: ClamdScanner,
    /// `None` once finished.
    sender: Option<mpsc::Sender<Bytes>>,
    task: Option<JoinHandle<io::Result<Vec<u8>>>>,
}

impl ClamdSession {
    /// Waits (bounded) for the scan task and turns what it returned into a verdict.
    async fn outcome(&mut self) -> Result<ScanVerdict, ScanError> {
        self.sender = None;
        let Some(mut task) = self.task.take() else {
            return Err(self.scanner.unavailable("scan already finished"));
        };
        match tokio::time::timeout(self.scanner.timeout, &mut task).await {
            Ok(Ok(Ok(answer))) => parse_verdict(&answer).map_err(|e| self.scanner.unavailable(e)),
            Ok(Ok(Err(e))) => Err(self.scanner.unavailable(e)),
            Ok(Err(e)) => Err(self.scanner.unavailable(format_args!("scan task failed: {e}"))),
            Err(_) => {
                task.abort();
                Err(self.scanner.unavailable(format_args!("no answer within {:?}", self.scanner.timeout)))
            }
        }
    }
}

#[async_trait]
impl ScanSession for ClamdSession {
    async fn write(&mut self, chunk: Bytes) -> Result<(), ScanError> {
        let Some(sender) = &self.sender else {
            return Err(self.scanner.unavailable("scan already finished"));
        };
        if chunk.is_empty() {
            // An empty INSTREAM chunk would end the stream early.
            return Ok(());
        }
        match tokio::time::timeout(self.scanner.timeout, sender.send(chunk)).await {
            Ok(Ok(())) => Ok(()),
            // The task stopped reading: clamd closed the connection or failed. What it said
            // (an error, or an early answer) explains why; never a verdict here.
            Ok(Err(_)) => match self.outcome().await {
                Err(e) => Err(e),
                Ok(verdict) => Err(self.scanner.unavailable(format_args!("answered early: {verdict:?}"))),
            },
            Err(_) => {
                self.sender = None;
                if let Some(task) = self.task.take() {
                    task.abort();
                }
                Err(self.scanner.unavailable(format_args!("took no data for {:?}", self.scanner.timeout)))
            }
        }
    }

    async fn finish(&mut self) -> Result<ScanVerdict, ScanError> {
        // Closing the channel ends the stream: the task sends INSTREAM's end marker and
        // reads clamd's answer.
        self.outcome().await
    }
}

impl Drop for ClamdSession {
    fn drop(&mut self) {
        // Abandoned scan: close the connection instead of leaving clamd waiting.
        if let Some(task) = self.task.take() {
            task.abort();
        }
    }
}
