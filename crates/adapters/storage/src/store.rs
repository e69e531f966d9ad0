//! [`ObjectBlobStore`]: the store over an `object_store` backend, how it is opened from a
//! storage URL, and its health check; its `BlobStore` methods are in `blobs.rs`.

use std::fmt;
use std::path::PathBuf;
use std::sync::Arc;

use async_trait::async_trait;
use consular_ports::{BlobError, HealthCheck};
use object_store::aws::{AmazonS3, AmazonS3Builder};
use object_store::local::LocalFileSystem;
use object_store::path::Path as StorePath;
use object_store::prefix::PrefixStore;
use object_store::{ObjectStore, ObjectStoreExt};

use crate::key::validate_key;
use crate::location::{self, Location};

/// Key the health check writes and removes, at the root of the store. `!` is outside the
/// key alphabet, so [`validate_key`] rejects this name: no caller's blob can be it, and
/// none can be a directory or file in its way. (`!` is in S3's list of safe characters.)
const HEALTH_PROBE_KEY: &str = "!consular-health-probe";

/// The S3 client kept beside the (possibly prefixed) store: object_store signs URLs on
/// `AmazonS3` only, so keys are prefixed by hand for signing.
#[derive(Debug, Clone)]
pub(crate) struct S3Signing {
    pub(crate) s3: Arc<AmazonS3>,
    pub(crate) prefix: StorePath,
}

/// A [`consular_ports::BlobStore`] over any `object_store` backend.
#[derive(Clone)]
pub struct ObjectBlobStore {
    pub(crate) store: Arc<dyn ObjectStore>,
    backend: &'static str,
    pub(crate) signing: Option<S3Signing>,
    /// The directory of a local store, where interrupted uploads leave staging files.
    pub(crate) local_root: Option<PathBuf>,
}

impl fmt::Debug for ObjectBlobStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ObjectBlobStore").field("backend", &self.backend).field("store", &self.store).finish()
    }
}

impl ObjectBlobStore {
    /// Opens the store named by `url` (see [`backend_of`](crate::backend_of) for the accepted forms).
    ///
    /// A local directory is created when missing. An S3 store takes endpoint, region,
    /// credentials and `AWS_ALLOW_HTTP` from the `AWS_*` environment; no request is made
    /// here, so a wrong endpoint or credentials show up in the health check.
    pub fn from_url(url: &str) -> Result<Self, String> {
        Self::from_url_with(url, std::iter::empty::<(&str, &str)>())
    }

    /// Like [`ObjectBlobStore::from_url`], with S3 options given explicitly on top of the
    /// environment (object_store's keys: `aws_endpoint`, `aws_region`,
    /// `aws_access_key_id`, `aws_secret_access_key`, `aws_allow_http`, ...).
    pub fn from_url_with<'a>(
        url: &str,
        s3_options: impl IntoIterator<Item = (&'a str, &'a str)>,
    ) -> Result<Self, String> {
        match location::parse(url)? {
            Location::Local(dir) => {
                std::fs::create_dir_all(&dir)
                    .map_err(|e| format!("cannot create storage directory {}: {e}", dir.display()))?;
                let fs = LocalFileSystem::new_with_prefix(&dir)
                    .map_err(|e| format!("cannot open storage directory {}: {e}", dir.display()))?
                    .with_fsync(true)
                    .with_automatic_cleanup(true);
                let root = std::fs::canonicalize(&dir)
                    .map_err(|e| format!("cannot open storage directory {}: {e}", dir.display()))?;
                Ok(Self { local_root: Some(root), ..Self::new(Arc::new(fs), "file") })
            }
            Location::S3 { url, prefix } => {
                let mut builder = AmazonS3Builder::from_env().with_url(url.as_str());
                for (key, value) in s3_options {
                    let key = key.parse().map_err(|e| format!("unknown S3 option `{key}`: {e}"))?;
                    builder = builder.with_config(key, value);
                }
                let s3 = Arc::new(
                    builder.build().map_err(|e| format!("cannot configure S3 storage for `{url}`: {e}"))?,
                );
                let store: Arc<dyn ObjectStore> = if prefix.as_ref().is_empty() {
                    s3.clone()
                } else {
                    Arc::new(PrefixStore::new(s3.clone(), prefix.clone()))
                };
                Ok(Self { signing: Some(S3Signing { s3, prefix }), ..Self::new(store, "s3") })
            }
        }
    }

    /// Wraps an already-built store (tests, in-memory stores). `backend` is a label for
    /// logs. Such a store signs no URLs and has no staging files to sweep.
    pub fn new(store: Arc<dyn ObjectStore>, backend: &'static str) -> Self {
        Self { store, backend, signing: None, local_root: None }
    }

    /// `"file"` or `"s3"` (or the label given to [`ObjectBlobStore::new`]).
    pub fn backend(&self) -> &'static str {
        self.backend
    }

    pub(crate) fn path_of(key: &str) -> Result<StorePath, BlobError> {
        validate_key(key)?;
        StorePath::parse(key).map_err(|e| BlobError::InvalidKey(e.to_string()))
    }

    async fn probe(&self) -> Result<(), object_store::Error> {
        let path = StorePath::from(HEALTH_PROBE_KEY);
        self.store.put(&path, b"ok".as_slice().into()).await?;
        match self.store.delete(&path).await {
            Err(e) if is_missing(&e) => Ok(()),
            other => other,
        }
    }
}

/// True when `err` means "nothing is stored there": `NotFound`, or on a local file system
/// a path component that is a file rather than a directory.
pub(crate) fn is_missing(err: &object_store::Error) -> bool {
    if matches!(err, object_store::Error::NotFound { .. }) {
        return true;
    }
    let mut source: Option<&(dyn std::error::Error + 'static)> = std::error::Error::source(err);
    while let Some(e) = source {
        if let Some(io) = e.downcast_ref::<std::io::Error>() {
            return io.kind() == std::io::ErrorKind::NotADirectory;
        }
        source = e.source();
    }
    false
}

pub(crate) fn unavailable(op: &str, key: &str, err: &object_store::Error) -> BlobError {
    BlobError::Unavailable(format!("{op} {key}: {err}"))
}

#[async_trait]
impl HealthCheck for ObjectBlobStore {
    fn name(&self) -> &'static str {
        "storage"
    }

    /// Writes and removes a two-byte probe object: proves the store answers and accepts
    /// writes (a read-only, full or unreachable store is not ready).
    async fn check(&self) -> Result<(), String> {
        self.probe().await.map_err(|e| format!("{} storage probe failed: {e}", self.backend))
    }
}
