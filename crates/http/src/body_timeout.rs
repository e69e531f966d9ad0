//! Read deadlines for request bodies (docs/operations.md "Slow clients"). actix answers a
//! request head that stalls with 408 by itself (`client_request_timeout`, 5 s), but once
//! the head has arrived it waits for the body as long as the client likes: a body sent
//! short of its `Content-Length` would hold a connection (and the handler reading it)
//! forever, before any authentication. The conventions middleware wraps every request's
//! payload in a [`TimedPayload`]:
//!
//! - **idle**: while the server waits for the next bytes, at most `idle` may pass (the
//!   clock runs only while the handler asks for bytes that have not come, so a handler
//!   busy with the chunk it has is never the client's fault);
//! - **total**: a body that is read whole (JSON, forms) must have arrived `total` after
//!   the request head; a streamed body (document uploads, the operations whose body is
//!   `multipart/form-data` in the OpenAPI document) has no total and streams for as long
//!   as its bytes keep coming.
//!
//! Past either, the stream yields an error to whatever reads it, and the middleware
//! answers 408 `request_timeout` and closes the connection (what is left of the body
//! would otherwise be read as the next request).

use actix_web::dev::Payload;
use actix_web::error::PayloadError;
use actix_web::rt::time::{Instant, Sleep, sleep_until};
use actix_web::web::Bytes;
use futures_util::Stream;
use std::cell::Cell;
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll};
use std::time::Duration;

/// The two read deadlines of request bodies; from the configuration
/// (`request_body_idle_timeout_secs`, `request_body_timeout_secs`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BodyTimeouts {
    /// The longest wait for the next bytes of any body.
    pub idle: Duration,
    /// The longest a body read whole may take to arrive, from the end of the request head.
    pub total: Duration,
}

impl Default for BodyTimeouts {
    fn default() -> Self {
        BodyTimeouts { idle: Duration::from_secs(10), total: Duration::from_secs(30) }
    }
}

/// How a request's body is read, which decides the deadlines that apply.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BodyKind {
    /// Read whole before the handler runs (JSON, forms): idle and total.
    Whole,
    /// Streamed through to storage (uploads): idle only.
    Streamed,
}

/// Whether a request's body ran out of time: set by its [`TimedPayload`], read by the
/// middleware once the request is answered.
#[derive(Debug, Clone, Default)]
pub struct Expired(Rc<Cell<bool>>);

impl Expired {
    pub fn is_set(&self) -> bool {
        self.0.get()
    }
}

/// A request payload with read deadlines (the module documentation says which).
pub struct TimedPayload {
    inner: Payload,
    idle_for: Duration,
    idle: Pin<Box<Sleep>>,
    /// Set while the reader waits for bytes that have not come: the idle clock runs.
    waiting: bool,
    deadline: Option<Pin<Box<Sleep>>>,
    expired: Expired,
    done: bool,
}

impl TimedPayload {
    /// Puts `payload` under `timeouts`, from now (the end of the request head). A request
    /// without a body keeps its empty payload and never expires.
    pub fn wrap(payload: Payload, timeouts: BodyTimeouts, kind: BodyKind) -> (Payload, Expired) {
        let expired = Expired::default();
        if matches!(payload, Payload::None) {
            return (payload, expired);
        }
        let now = Instant::now();
        let timed = TimedPayload {
            inner: payload,
            idle_for: timeouts.idle,
            idle: Box::pin(sleep_until(now + timeouts.idle)),
            waiting: false,
            deadline: match kind {
                BodyKind::Whole => Some(Box::pin(sleep_until(now + timeouts.total))),
                BodyKind::Streamed => None,
            },
            expired: expired.clone(),
            done: false,
        };
        let boxed: Pin<Box<dyn Stream<Item = Result<Bytes, PayloadError>>>> = Box::pin(timed);
        (Payload::from(boxed), expired)
    }
}

impl Stream for TimedPayload {
    type Item = Result<Bytes, PayloadError>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = self.get_mut();
        if this.done {
            return Poll::Ready(None);
        }
        match Pin::new(&mut this.inner).poll_next(cx) {
            Poll::Ready(Some(Ok(chunk))) => {
                this.waiting = false;
                return Poll::Ready(Some(Ok(chunk)));
            }
            Poll::Ready(end) => {
                this.done = true;
                return Poll::Ready(end);
            }
            Poll::Pending => {}
        }
        // The reader waits from now; the idle clock starts unless it already runs.
        if !this.waiting {
            this.waiting = true;
            let at = Instant::now() + this.idle_for;
            this.idle.as_mut().reset(at);
        }
        let idle = this.idle.as_mut().poll(cx).is_ready();
        let total = this.deadline.as_mut().is_some_and(|deadline| deadline.as_mut().poll(cx).is_ready());
        if idle || total {
            this.done = true;
            this.expired.0.set(true);
            let what = if total { "the body did not arrive in time" } else { "the body stopped arriving" };
            return Poll::Ready(Some(Err(PayloadError::Io(std::io::Error::new(
                std::io::ErrorKind::TimedOut,
                what,
            )))));
        }
        Poll::Pending
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures_util::{StreamExt, stream};

    type Chunk = Result<Bytes, PayloadError>;

    fn payload(stream: impl Stream<Item = Chunk> + 'static) -> Payload {
        let boxed: Pin<Box<dyn Stream<Item = Chunk>>> = Box::pin(stream);
        Payload::from(boxed)
    }

    /// `count` one-byte chunks, one every `every`.
    fn steady(count: usize, every: Duration) -> Payload {
        payload(stream::iter(0..count).then(move |_| async move {
            actix_web::rt::time::sleep(every).await;
            Ok(Bytes::from_static(b"x"))
        }))
    }

    fn timeouts(idle_ms: u64, total_ms: u64) -> BodyTimeouts {
        BodyTimeouts { idle: Duration::from_millis(idle_ms), total: Duration::from_millis(total_ms) }
    }

    #[actix_web::test]
    async fn a_body_that_stops_arriving_expires_after_the_idle_time() {
        let stalled =
            payload(stream::once(async { Ok(Bytes::from_static(b"half")) }).chain(stream::pending()));
        let (mut timed, expired) = TimedPayload::wrap(stalled, timeouts(100, 10_000), BodyKind::Streamed);
        assert_eq!(timed.next().await.unwrap().unwrap(), Bytes::from_static(b"half"));
        let started = Instant::now();
        let error = timed.next().await.unwrap().unwrap_err();
        assert!(matches!(error, PayloadError::Io(ref e) if e.kind() == std::io::ErrorKind::TimedOut));
        assert!(started.elapsed() >= Duration::from_millis(100), "{:?}", started.elapsed());
        assert!(expired.is_set());
        assert!(timed.next().await.is_none(), "nothing after the timeout");
    }

    #[actix_web::test]
    async fn a_steady_stream_is_never_cut_but_a_whole_body_has_a_total() {
        for (kind, cut) in [(BodyKind::Streamed, false), (BodyKind::Whole, true)] {
            // 8 × 80 ms: within the idle time each, past the total in all.
            let (mut timed, expired) =
                TimedPayload::wrap(steady(8, Duration::from_millis(80)), timeouts(200, 300), kind);
            let (mut received, mut failed) = (0, false);
            while let Some(chunk) = timed.next().await {
                match chunk {
                    Ok(bytes) => received += bytes.len(),
                    Err(_) => failed = true,
                }
            }
            assert_eq!(failed, cut, "{kind:?}");
            assert_eq!(expired.is_set(), cut, "{kind:?}");
            if !cut {
                assert_eq!(received, 8, "every byte of the steady stream arrived");
            }
        }
    }

    #[actix_web::test]
    async fn a_reader_slower_than_the_idle_time_is_not_the_clients_fault() {
        // Each chunk comes 20 ms after it is asked for, as from a client held back by the
        // server's own backpressure.
        let chunks = steady(3, Duration::from_millis(20));
        let (mut timed, expired) = TimedPayload::wrap(chunks, timeouts(100, 10_000), BodyKind::Streamed);
        let mut received = 0;
        while let Some(chunk) = timed.next().await {
            received += chunk.unwrap().len();
            // The handler spends longer than the idle time on each chunk.
            actix_web::rt::time::sleep(Duration::from_millis(150)).await;
        }
        assert_eq!(received, 3);
        assert!(!expired.is_set());
    }

    #[actix_web::test]
    async fn no_body_is_left_as_it_is() {
        let (payload, expired) = TimedPayload::wrap(Payload::None, timeouts(1, 1), BodyKind::Whole);
        assert!(matches!(payload, Payload::None));
        assert!(!expired.is_set());
    }
}
