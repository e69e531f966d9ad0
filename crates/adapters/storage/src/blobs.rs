//! The [`BlobStore`] port on object_store: streaming uploads and reads, listing, signing.

use std::ops::Range;
use std::time::{Duration, SystemTime};

use async_trait::async_trait;
use consular_ports::{BlobError, BlobListing, BlobMeta, BlobRead, BlobStore, BlobUpload, ByteRange};
use futures_util::{StreamExt, TryStreamExt};
use object_store::path::Path as StorePath;
use object_store::signer::{Method, SignedUrlOptions, Signer};
use object_store::{GetOptions, GetRange, ObjectMeta, ObjectStoreExt, WriteMultipart};
use time::OffsetDateTime;

use crate::store::{ObjectBlobStore, is_missing, unavailable};
use crate::upload::{PART_SIZE, StoreUpload};
use crate::{abandoned, attachment_disposition, safe_media_type};

/// The bytes of `range` within a blob of `size` bytes, or `None` when the range selects
/// nothing (HTTP's 416).
fn resolve_range(range: &ByteRange, size: u64) -> Option<Range<u64>> {
    let resolved = match *range {
        ByteRange::Bounded(ref r) => r.start..r.end.min(size),
        ByteRange::From(start) => start..size,
        ByteRange::Suffix(n) => size.saturating_sub(n)..size,
    };
    (resolved.start < resolved.end).then_some(resolved)
}

fn to_offset_date_time(meta: &ObjectMeta) -> Result<OffsetDateTime, BlobError> {
    let nanos = i128::from(meta.last_modified.timestamp()) * 1_000_000_000
        + i128::from(meta.last_modified.timestamp_subsec_nanos());
    OffsetDateTime::from_unix_timestamp_nanos(nanos)
        .map_err(|e| BlobError::Unavailable(format!("{}: bad last-modified time: {e}", meta.location)))
}

fn to_blob_meta(meta: &ObjectMeta) -> Result<BlobMeta, BlobError> {
    Ok(BlobMeta {
        key: meta.location.as_ref().to_owned(),
        size: meta.size,
        last_modified: to_offset_date_time(meta)?,
    })
}

#[async_trait]
impl BlobStore for ObjectBlobStore {
    async fn start_upload(&self, key: &str) -> Result<Box<dyn BlobUpload>, BlobError> {
        let path = Self::path_of(key)?;
        let upload =
            self.store.put_multipart(&path).await.map_err(|e| unavailable("start upload", key, &e))?;
        Ok(Box::new(StoreUpload::new(key, WriteMultipart::new_with_chunk_size(upload, PART_SIZE))))
    }

    async fn read(&self, key: &str, range: Option<ByteRange>) -> Result<Option<BlobRead>, BlobError> {
        let path = Self::path_of(key)?;
        let mut options = GetOptions::default();
        if let Some(range) = range {
            // Resolved against the size first, so that every backend answers an
            // out-of-bounds range alike and `BlobRead::range` is exact.
            let Some(meta) = self.head(key).await? else {
                return Ok(None);
            };
            let Some(bytes) = resolve_range(&range, meta.size) else {
                return Err(BlobError::RangeNotSatisfiable { size: meta.size });
            };
            options = options.with_range(Some(GetRange::Bounded(bytes)));
        }
        let result = match self.store.get_opts(&path, options).await {
            Ok(result) => result,
            Err(e) if is_missing(&e) => return Ok(None),
            Err(e) => return Err(unavailable("read", key, &e)),
        };
        let owned_key = key.to_owned();
        Ok(Some(BlobRead {
            range: result.range.clone(),
            size: result.meta.size,
            last_modified: to_offset_date_time(&result.meta)?,
            chunks: result.into_stream().map_err(move |e| unavailable("read", &owned_key, &e)).boxed(),
        }))
    }

    async fn head(&self, key: &str) -> Result<Option<BlobMeta>, BlobError> {
        let path = Self::path_of(key)?;
        match self.store.head(&path).await {
            Ok(meta) => to_blob_meta(&meta).map(Some),
            Err(e) if is_missing(&e) => Ok(None),
            Err(e) => Err(unavailable("head", key, &e)),
        }
    }

    async fn delete(&self, key: &str) -> Result<(), BlobError> {
        let path = Self::path_of(key)?;
        match self.store.delete(&path).await {
            Ok(()) => Ok(()),
            Err(e) if is_missing(&e) => Ok(()),
            Err(e) => Err(unavailable("delete", key, &e)),
        }
    }

    async fn list(&self, prefix: &str) -> Result<BlobListing, BlobError> {
        let prefix = if prefix.is_empty() { None } else { Some(Self::path_of(prefix)?) };
        let listing = self.store.list(prefix.as_ref()).filter_map(|item| async move {
            match item {
                // Not a caller's blob (the health probe): never offered for deletion.
                Ok(meta) if crate::validate_key(meta.location.as_ref()).is_err() => None,
                Ok(meta) => Some(to_blob_meta(&meta)),
                Err(e) => Some(Err(BlobError::Unavailable(format!("list: {e}")))),
            }
        });
        Ok(listing.boxed())
    }

    async fn remove_abandoned_uploads(&self, older_than: OffsetDateTime) -> Result<u64, BlobError> {
        let Some(root) = self.local_root.clone() else {
            return Ok(0);
        };
        let cutoff = SystemTime::from(older_than);
        tokio::task::spawn_blocking(move || abandoned::remove_stale_staging_files(&root, cutoff))
            .await
            .map_err(|e| BlobError::Unavailable(format!("remove abandoned uploads: {e}")))?
            .map_err(|e| BlobError::Unavailable(format!("remove abandoned uploads: {e}")))
    }

    async fn presigned_get_url(
        &self,
        key: &str,
        expires_in: Duration,
        download_name: &str,
        media_type: &str,
    ) -> Result<Option<String>, BlobError> {
        let path = Self::path_of(key)?;
        let Some(signing) = &self.signing else {
            return Ok(None);
        };
        let full: StorePath = signing.prefix.parts().chain(path.parts()).collect();
        // S3 answers a signed GET with these response headers instead of the stored ones;
        // being signed, they cannot be altered by whoever holds the URL.
        let options = SignedUrlOptions::new().with_query([
            ("response-content-disposition", attachment_disposition(download_name)),
            ("response-content-type", safe_media_type(media_type).to_owned()),
        ]);
        let url = signing
            .s3
            .signed_url_opts(Method::GET, &full, expires_in, &options)
            .await
            .map_err(|e| unavailable("sign", key, &e))?;
        Ok(Some(url.into()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_resolve_against_the_size() {
        assert_eq!(resolve_range(&ByteRange::Bounded(0..10), 100), Some(0..10));
        assert_eq!(resolve_range(&ByteRange::Bounded(90..200), 100), Some(90..100));
        assert_eq!(resolve_range(&ByteRange::Bounded(100..200), 100), None);
        assert_eq!(resolve_range(&ByteRange::Bounded(5..5), 100), None);
        assert_eq!(resolve_range(&ByteRange::From(99), 100), Some(99..100));
        assert_eq!(resolve_range(&ByteRange::From(100), 100), None);
        assert_eq!(resolve_range(&ByteRange::Suffix(10), 100), Some(90..100));
        assert_eq!(resolve_range(&ByteRange::Suffix(1000), 100), Some(0..100));
        assert_eq!(resolve_range(&ByteRange::Suffix(0), 100), None);
        assert_eq!(resolve_range(&ByteRange::From(0), 0), None);
    }
}
