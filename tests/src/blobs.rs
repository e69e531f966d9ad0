//! Looking behind the API of a document test (docs/documents.md, "Crash consistency"):
//! the live document rows of the database, the blobs of the store, what an interrupted
//! upload leaves (staging files, pending S3 multipart uploads), and downloads through a
//! signed URL with an ordinary HTTP client.

use crate::app::{Storage, TestApp};
use crate::http::http_client;
use crate::wait::eventually;
use consular_domain::{Document, DocumentId, PageRequest};
use consular_ports::{BlobStore, DocumentFilter, DocumentRepository};
use futures_util::TryStreamExt;
use std::path::Path;

/// Where document blobs live in the store (`consular_domain::new_blob_key`).
pub const BLOB_PREFIX: &str = "documents";

impl TestApp {
    /// Every live (not deleted) document row, whatever its owner, read from the database.
    pub async fn live_documents(&self) -> Vec<Document> {
        let db = self.database();
        let mut items = Vec::new();
        let mut page = PageRequest { limit: 100, after: None };
        loop {
            let listed = db.list(DocumentFilter::default(), page).await.expect("the documents");
            items.extend(listed.items);
            match listed.next_after {
                Some(after) => page.after = Some(after),
                None => break,
            }
        }
        db.close();
        items
    }

    /// The row of document `id` (tombstones included), read from the database.
    pub async fn document_row(&self, id: &str) -> Option<Document> {
        let db = self.database();
        let id = DocumentId(id.parse().unwrap_or_else(|e| panic!("not a document id ({e}): {id}")));
        let row = db.get(id).await.expect("the document");
        db.close();
        row
    }

    /// The keys of every complete blob under [`BLOB_PREFIX`], sorted.
    pub async fn blob_keys(&self) -> Vec<String> {
        let listing = self.blob_store().list(BLOB_PREFIX).await.expect("the blob listing");
        let mut keys: Vec<String> =
            listing.map_ok(|meta| meta.key).try_collect().await.expect("the blob listing");
        keys.sort();
        keys
    }

    /// Whether a complete blob is stored under `key`.
    pub async fn blob_exists(&self, key: &str) -> bool {
        self.blob_store().head(key).await.expect("a blob's metadata").is_some()
    }

    /// Everything an upload may have left in storage besides complete blobs: staging
    /// files of the local store (any file that is not a complete blob), pending multipart
    /// uploads on S3. Empty when nothing is in flight.
    pub async fn upload_leftovers(&self) -> Vec<String> {
        match &self.storage {
            Storage::S3(bucket) => bucket.pending_uploads().await,
            Storage::Local => {
                let root = self.settings.storage_url.trim_start_matches("file://").to_owned();
                let blobs = self.blob_keys().await;
                files_under(Path::new(&root))
                    .into_iter()
                    .filter(|relative| !relative.starts_with('!') && !blobs.contains(relative))
                    .collect()
            }
        }
    }

    /// Asserts that the store holds nothing at all for documents: no blob, no leftover of
    /// an upload (pending S3 parts are aborted in the background: waits a little for them).
    pub async fn assert_storage_empty(&self, what: &str) {
        assert_eq!(self.blob_keys().await, Vec::<String>::new(), "{what}: blobs were kept");
        eventually(std::time::Duration::from_secs(10), &format!("{what}: upload leftovers"), || async {
            self.upload_leftovers().await.is_empty()
        })
        .await;
    }

    /// GET of a download URL with a plain client (no bearer): an absolute URL as is (the
    /// S3 server's own presigned URL), a relative one against this node.
    pub async fn follow(&self, url: &str) -> reqwest::Response {
        let url = if url.starts_with("http://") || url.starts_with("https://") {
            url.to_owned()
        } else {
            self.url(url)
        };
        http_client().get(url).send().await.expect("GET of the download URL")
    }
}

/// The paths (relative to `root`, `/`-separated) of every file under `root`.
fn files_under(root: &Path) -> Vec<String> {
    let mut found = Vec::new();
    let mut pending = vec![root.to_path_buf()];
    while let Some(dir) = pending.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else { continue };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                pending.push(path);
            } else if let Ok(relative) = path.strip_prefix(root) {
                found.push(relative.to_string_lossy().replace('\\', "/"));
            }
        }
    }
    found
}
