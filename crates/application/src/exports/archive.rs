//! The zip archive, streamed into a blob upload: `zip`'s streaming writer (no seeking:
//! each entry's sizes and CRC follow it in a data descriptor) writes into a small spool,
//! and every entry's bytes are handed to the upload as they are produced. At most one
//! chunk of a document plus the spool's high-water mark is held at a time, never the
//! archive.

use bytes::Bytes;
use consular_ports::{BlobChunks, BlobError, BlobUpload};
use futures_util::StreamExt;
use std::io::Write;
use std::sync::{Arc, Mutex, PoisonError};
use zip::write::{SimpleFileOptions, StreamWriter};
use zip::{CompressionMethod, ZipWriter};

/// Past this many spooled bytes, a file's bytes are handed to the upload.
const SPOOL_FLUSH: usize = 256 * 1024;

/// Why writing the archive stopped.
#[derive(Debug, thiserror::Error)]
pub(super) enum ArchiveError {
    #[error("blob storage: {0}")]
    Blob(#[from] BlobError),
    #[error("zip: {0}")]
    Zip(#[from] zip::result::ZipError),
    #[error("{0}")]
    Io(#[from] std::io::Error),
    #[error("{0}")]
    Json(#[from] serde_json::Error),
}

/// The bytes the zip writer produced and the upload has not taken yet.
#[derive(Clone, Default)]
struct Spool(Arc<Mutex<Vec<u8>>>);

impl Spool {
    fn take(&self) -> Vec<u8> {
        std::mem::take(&mut *self.0.lock().unwrap_or_else(PoisonError::into_inner))
    }

    fn len(&self) -> usize {
        self.0.lock().unwrap_or_else(PoisonError::into_inner).len()
    }
}

impl Write for Spool {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner).extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// A zip archive being written into `upload`.
pub(super) struct ArchiveWriter {
    zip: ZipWriter<StreamWriter<Spool>>,
    spool: Spool,
    upload: Box<dyn BlobUpload>,
}

impl ArchiveWriter {
    pub(super) fn new(upload: Box<dyn BlobUpload>) -> ArchiveWriter {
        let spool = Spool::default();
        ArchiveWriter { zip: ZipWriter::new_stream(spool.clone()), spool, upload }
    }

    async fn drain(&mut self) -> Result<(), ArchiveError> {
        let bytes = self.spool.take();
        if !bytes.is_empty() {
            self.upload.write(Bytes::from(bytes)).await?;
        }
        Ok(())
    }

    /// A text entry (`README.txt`), compressed.
    pub(super) async fn text(&mut self, name: &str, text: &str) -> Result<(), ArchiveError> {
        self.zip.start_file(name, deflated())?;
        self.zip.write_all(text.as_bytes())?;
        self.drain().await
    }

    /// A JSON entry, pretty-printed and compressed.
    pub(super) async fn json(&mut self, name: &str, value: &serde_json::Value) -> Result<(), ArchiveError> {
        self.zip.start_file(name, deflated())?;
        serde_json::to_writer_pretty(&mut self.zip, value)?;
        self.drain().await
    }

    /// A file copied chunk by chunk from the blob store, stored as it is (documents are
    /// PDFs and images, already compressed).
    pub(super) async fn file(&mut self, name: &str, mut chunks: BlobChunks) -> Result<(), ArchiveError> {
        self.zip
            .start_file(name, SimpleFileOptions::default().compression_method(CompressionMethod::Stored))?;
        while let Some(chunk) = chunks.next().await {
            self.zip.write_all(&chunk?)?;
            if self.spool.len() >= SPOOL_FLUSH {
                self.drain().await?;
            }
        }
        self.drain().await
    }

    /// Writes the central directory and completes the upload; returns the archive's size.
    pub(super) async fn finish(self) -> Result<u64, ArchiveError> {
        let ArchiveWriter { zip, spool, mut upload } = self;
        zip.finish()?;
        let rest = spool.take();
        if !rest.is_empty() {
            upload.write(Bytes::from(rest)).await?;
        }
        Ok(upload.complete().await?)
    }

    /// Discards what was uploaded.
    pub(super) async fn abort(mut self) {
        if let Err(error) = self.upload.abort().await {
            tracing::warn!(%error, "aborting an export's upload failed; the blob sweep removes what is left");
        }
    }
}

fn deflated() -> SimpleFileOptions {
    SimpleFileOptions::default().compression_method(CompressionMethod::Deflated)
}
