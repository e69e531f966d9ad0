use crate::{RepoError, WriteMeta};
use async_trait::async_trait;
use consular_domain::{
    CitizenId, Document, DocumentId, DocumentStatus, MissionId, Page, PageRequest, RequestId,
};

/// Which documents a listing shows; every filter present must match. Deleted documents
/// (tombstones) are never listed, whatever `statuses` says.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DocumentFilter {
    pub mission_id: Option<MissionId>,
    pub citizen_id: Option<CitizenId>,
    pub request_id: Option<RequestId>,
    /// A document kind of the catalog (`passport_photo`).
    pub kind: Option<String>,
    /// Any of these statuses (empty: every live one).
    pub statuses: Vec<DocumentStatus>,
    /// Only documents attached to a request of one of these service types (a
    /// representative's mandate, docs/representation.md "Acting": a document of no
    /// request is outside it); `None`: any.
    pub within_services: Option<Vec<consular_domain::ServiceTypeId>>,
}

/// The unique index that keeps one live (`uploaded` or `verified`) document per citizen,
/// request (or none) and kind (docs/documents.md "Re-upload"): the `constraint` of the
/// `Duplicate` that [`DocumentRepository::insert`] reports when another upload of the kind
/// got there first.
pub const ONE_LIVE_DOCUMENT: &str = "documents_one_live_kind";

/// Document metadata (docs/documents.md "What is stored"): never the bytes, which live
/// in the `BlobStore` under each document's `blob_key`. A deleted document stays as a
/// tombstone row (status `deleted`) for the audit log.
#[cfg_attr(feature = "mock", mockall::automock)]
#[async_trait]
pub trait DocumentRepository: Send + Sync {
    /// Inserts a new document, in one transaction with `meta`. A taken id is
    /// `Duplicate { constraint: "documents_pkey" }`, a taken blob key `Duplicate {
    /// constraint: "documents_blob_key" }`, a second live (`uploaded` or `verified`)
    /// document of the same citizen, request (or none) and kind `Duplicate { constraint:
    /// ONE_LIVE_DOCUMENT }`, whatever the timing of the two inserts; an unknown mission,
    /// citizen or request is `Other` (the use cases check them first). A failed insert
    /// stores nothing of `meta`.
    async fn insert(&self, document: &Document, meta: &WriteMeta) -> Result<(), RepoError>;
    /// Replaces the stored document (verification, rejection, deletion as a tombstone) if
    /// its version is still `expected_version`: `VersionConflict` when it moved on,
    /// `NotFound` when there is no such document; either way nothing is stored.
    async fn update(
        &self,
        document: &Document,
        expected_version: i64,
        meta: &WriteMeta,
    ) -> Result<(), RepoError>;
    /// The document, tombstones included (the use cases answer 404 for one).
    async fn get(&self, id: DocumentId) -> Result<Option<Document>, RepoError>;
    /// Live documents newest first (id descending), before `page.after`, through indexes
    /// only (keyset, no OFFSET, no count).
    async fn list(&self, filter: DocumentFilter, page: PageRequest) -> Result<Page<Document>, RepoError>;
    /// The live documents attached to `request`, oldest first: what its checklist is
    /// computed from.
    async fn for_request(&self, request: RequestId) -> Result<Vec<Document>, RepoError>;
    /// Those of `keys` that a live (not deleted) row references, in the order given,
    /// without repeats. The orphan-blob sweep deletes only blobs whose key is not
    /// returned: a blob left behind by a crash before its row, and the blob of a deleted
    /// document whose removal failed after the tombstone was written.
    async fn known_blob_keys(&self, keys: &[String]) -> Result<Vec<String>, RepoError>;
}
