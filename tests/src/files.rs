//! Files to upload and how to send them (docs/documents.md): sample PDF and PNG bytes,
//! the `multipart/form-data` of `POST /api/v1/documents/upload` (text parts first, the
//! file part last), bodies streamed from a generator or slowly (to kill a server in the
//! middle of an upload), and SHA-256 as the API shows it.

use bytes::Bytes;
use futures_util::StreamExt;
use reqwest::multipart::{Form, Part};
use sha2::{Digest, Sha256};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

pub const MIB: usize = 1024 * 1024;

/// The upload path.
pub const UPLOAD: &str = "/api/v1/documents/upload";
/// The documents collection (`GET` lists, `/{id}` is one document).
pub const DOCUMENTS: &str = "/api/v1/documents";

/// Lower-case hex SHA-256 of `bytes`, as `DocumentBody.sha256` and the `ETag` show it.
pub fn sha256_hex(bytes: &[u8]) -> String {
    hex(&Sha256::digest(bytes))
}

fn hex(digest: &[u8]) -> String {
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

/// A SHA-256 fed piece by piece (for bodies that are never whole in memory).
#[derive(Default, Clone)]
pub struct Sha256Hex(Sha256);

impl Sha256Hex {
    pub fn update(&mut self, bytes: &[u8]) {
        self.0.update(bytes);
    }

    pub fn finish(self) -> String {
        hex(&self.0.finalize())
    }
}

/// Deterministic noise (xorshift) so that files differ by `seed` and do not compress.
fn noise(seed: u32, len: usize) -> impl Iterator<Item = u8> {
    let mut x = seed | 1;
    (0..len).map(move |_| {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        x as u8
    })
}

/// A file of `len` bytes (at least 16) that sniffs as a PDF: a PDF header, then noise.
pub fn pdf(len: usize, seed: u32) -> Vec<u8> {
    let mut bytes = b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n".to_vec();
    let rest = len.saturating_sub(bytes.len());
    bytes.extend(noise(seed, rest));
    bytes
}

/// A file of `len` bytes (at least 16) that sniffs as a PNG: the PNG signature and the
/// start of an IHDR chunk, then noise.
pub fn png(len: usize, seed: u32) -> Vec<u8> {
    let mut bytes = b"\x89PNG\r\n\x1a\n\x00\x00\x00\x0dIHDR".to_vec();
    let rest = len.saturating_sub(bytes.len());
    bytes.extend(noise(seed, rest));
    bytes
}

/// The upload form: `fields` as text parts (in order), then `file` as the last part.
pub fn form(fields: &[(&str, &str)], file: Part) -> Form {
    let mut form = Form::new();
    for (name, value) in fields {
        form = form.text(name.to_string(), value.to_string());
    }
    form.part("file", file)
}

/// A file part holding `bytes`, named `file_name`, declared as `media_type`.
pub fn file_part(bytes: Vec<u8>, file_name: &str, media_type: &str) -> Part {
    Part::bytes(bytes).file_name(file_name.to_owned()).mime_str(media_type).expect("a media type")
}

/// The pieces (256 KiB) of a `total`-byte file that sniffs as a PDF, made on demand from
/// `seed`: the same bytes every time, never all in memory.
pub fn generated_pdf_pieces(total: usize, seed: u32) -> impl Iterator<Item = Vec<u8>> {
    let chunk = 256 * 1024;
    let mut header = pdf(16, seed);
    header.truncate(total.min(16));
    let mut rest = noise(seed ^ 0x9e37_79b9, total.saturating_sub(header.len()));
    let mut first = Some(header).filter(|h| !h.is_empty());
    std::iter::from_fn(move || {
        if let Some(header) = first.take() {
            return Some(header);
        }
        let piece: Vec<u8> = rest.by_ref().take(chunk).collect();
        (!piece.is_empty()).then_some(piece)
    })
}

/// A file part of `total` bytes ([`generated_pdf_pieces`]) generated while it is sent,
/// so that neither side needs it whole in memory, and its SHA-256 (computed ahead from
/// the same generator).
pub fn generated_pdf_part(total: usize, seed: u32, file_name: &str) -> (Part, String) {
    let mut sha = Sha256Hex::default();
    for piece in generated_pdf_pieces(total, seed) {
        sha.update(&piece);
    }
    let stream = futures_util::stream::iter(
        generated_pdf_pieces(total, seed).map(|p| Ok::<_, std::io::Error>(Bytes::from(p))),
    );
    let part = Part::stream_with_length(reqwest::Body::wrap_stream(stream), total as u64)
        .file_name(file_name.to_owned())
        .mime_str("application/pdf")
        .expect("a media type");
    (part, sha.finish())
}

/// A file part that sends `head` at once, then `chunk`-byte pieces of noise every `pause`
/// until `total` bytes, or forever when `total` is `None`: an upload that is still
/// running when the test kills the server. `sent` counts the bytes handed to the client.
pub fn slow_part(
    head: Vec<u8>,
    chunk: usize,
    pause: Duration,
    total: Option<usize>,
) -> (Part, Arc<AtomicU64>) {
    let sent = Arc::new(AtomicU64::new(0));
    let counter = sent.clone();
    let limit = total.unwrap_or(usize::MAX);
    let first = futures_util::stream::once(async move { head });
    let rest = futures_util::stream::unfold(0u32, move |n| async move {
        tokio::time::sleep(pause).await;
        Some((noise(n.wrapping_mul(2_654_435_761), chunk).collect::<Vec<u8>>(), n + 1))
    });
    let mut total_sent = 0usize;
    let stream = first
        .chain(rest)
        .map(move |mut piece| {
            piece.truncate(limit.saturating_sub(total_sent));
            total_sent += piece.len();
            piece
        })
        .take_while(|piece| std::future::ready(!piece.is_empty()))
        .map(move |piece| {
            counter.fetch_add(piece.len() as u64, Ordering::SeqCst);
            Ok::<_, std::io::Error>(Bytes::from(piece))
        });
    let part = Part::stream(reqwest::Body::wrap_stream(stream))
        .file_name("slow.pdf")
        .mime_str("application/pdf")
        .expect("a media type");
    (part, sent)
}

impl crate::app::TestApp {
    /// `POST /api/v1/documents/upload` with `form` as `token`.
    pub async fn upload(&self, token: &str, form: Form) -> reqwest::Response {
        self.authed(reqwest::Method::POST, UPLOAD, token).multipart(form).send().await.expect("POST upload")
    }

    /// Uploads `bytes` as `file_name` declared `media_type` with the text `fields`;
    /// panics unless 201. The `DocumentBody`.
    pub async fn upload_ok(
        &self,
        token: &str,
        fields: &[(&str, &str)],
        bytes: Vec<u8>,
        file_name: &str,
        media_type: &str,
    ) -> serde_json::Value {
        let response = self.upload(token, form(fields, file_part(bytes, file_name, media_type))).await;
        let status = response.status();
        let text = response.text().await.expect("a body");
        assert_eq!(status, 201, "upload of {file_name} failed: {text}");
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("not JSON ({e}): {text}"))
    }
}
