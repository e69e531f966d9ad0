//! The streaming upload handle: object_store's multipart upload with bounded buffering.

use async_trait::async_trait;
use bytes::Bytes;
use consular_ports::{BlobError, BlobUpload};
use object_store::WriteMultipart;

/// Size of one multipart part, in bytes: the S3 minimum for every part but the last
/// (5 MiB). An upload holds at most one part being filled plus one part in flight, so about
/// 10 MiB per upload whatever the file size (docs/operations.md). At S3's limit of 10,000
/// parts this allows blobs of 48 GiB, far above any document limit.
pub const PART_SIZE: usize = 5 * 1024 * 1024;

enum State {
    Open(WriteMultipart),
    /// Aborted, or failed and therefore aborted: nothing is left behind.
    Discarded,
    Completed,
}

pub(crate) struct StoreUpload {
    key: String,
    state: State,
    /// Bytes accepted so far.
    written: u64,
    /// Bytes in the part being filled (always below [`PART_SIZE`]).
    filled: usize,
}

impl StoreUpload {
    pub(crate) fn new(key: &str, writer: WriteMultipart) -> Self {
        Self { key: key.to_owned(), state: State::Open(writer), written: 0, filled: 0 }
    }

    fn error(&self, op: &str, err: &object_store::Error) -> BlobError {
        BlobError::Unavailable(format!("{op} {}: {err}", self.key))
    }

    fn closed(&self) -> BlobError {
        let what = match self.state {
            State::Completed => "completed",
            _ => "aborted",
        };
        BlobError::Unavailable(format!("upload of {} was already {what}", self.key))
    }

    /// Discards the upload after a failure and returns the failure.
    async fn fail(&mut self, op: &str, err: &object_store::Error) -> BlobError {
        if let State::Open(writer) = std::mem::replace(&mut self.state, State::Discarded) {
            // The original error is what the caller needs; a failing abort adds nothing
            // it could act on (S3's lifecycle rule removes what is left, docs/operations.md).
            let _ = writer.abort().await;
        }
        self.error(op, err)
    }
}

#[async_trait]
impl BlobUpload for StoreUpload {
    async fn write(&mut self, mut chunk: Bytes) -> Result<(), BlobError> {
        while !chunk.is_empty() {
            let State::Open(writer) = &mut self.state else {
                return Err(self.closed());
            };
            let room = PART_SIZE - self.filled;
            let piece = chunk.split_to(chunk.len().min(room));
            if piece.len() == room {
                // This piece completes a part, which starts uploading at once: first wait
                // for the previous part, so that at most one is in flight.
                if let Err(e) = writer.wait_for_capacity(1).await {
                    return Err(self.fail("upload", &e).await);
                }
            }
            self.written += piece.len() as u64;
            self.filled = (self.filled + piece.len()) % PART_SIZE;
            writer.put(piece);
        }
        Ok(())
    }

    async fn complete(&mut self) -> Result<u64, BlobError> {
        match std::mem::replace(&mut self.state, State::Discarded) {
            // On error `finish` has already aborted the upload.
            State::Open(writer) => match writer.finish().await {
                Ok(_) => {
                    self.state = State::Completed;
                    Ok(self.written)
                }
                Err(e) => Err(self.error("complete upload", &e)),
            },
            other => {
                self.state = other;
                Err(self.closed())
            }
        }
    }

    async fn abort(&mut self) -> Result<(), BlobError> {
        match std::mem::replace(&mut self.state, State::Discarded) {
            State::Open(writer) => writer.abort().await.map_err(|e| self.error("abort upload", &e)),
            State::Discarded => Ok(()),
            State::Completed => {
                self.state = State::Completed;
                Err(self.closed())
            }
        }
    }
}

impl Drop for StoreUpload {
    fn drop(&mut self) {
        // An upload abandoned mid-way (its request was cancelled) must not leave parts or
        // a temporary file behind: abort it in the background when a runtime is there.
        if let State::Open(writer) = std::mem::replace(&mut self.state, State::Discarded)
            && let Ok(runtime) = tokio::runtime::Handle::try_current()
        {
            runtime.spawn(async move {
                let _ = writer.abort().await;
            });
        }
    }
}
