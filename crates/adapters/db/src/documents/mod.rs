//! Documents: the `documents` table (metadata only: the bytes are in the blob store), its
//! row, [`DocumentRepository`] and
//! [`Database::explain_document_list`](crate::Database::explain_document_list). A new
//! field of a document changes its table and [`DocumentRow`] here and its queries in
//! `queries.rs`, nothing shared.

use crate::failure::Failure;
use crate::shared::columns::{actor_from_db, actor_to_db, corrupt, subject_from_db};
use crate::shared::repository;
use crate::shared::sql_types::{DbTime, DbUuid};
use consular_domain::{Document, DocumentId, Page, PageRequest, Reason, RequestId};
use consular_ports::{DocumentFilter, DocumentRepository, ONE_LIVE_DOCUMENT, WriteMeta};
use diesel::prelude::*;

diesel::table! {
    use diesel::sql_types::*;
    use crate::shared::sql_types::{PortableTimestamp, PortableUuid};

    documents (id) {
        id -> PortableUuid,
        mission_id -> PortableUuid,
        citizen_id -> PortableUuid,
        request_id -> Nullable<PortableUuid>,
        kind -> Text,
        status -> Text,
        file_name -> Text,
        media_type -> Text,
        size_bytes -> BigInt,
        sha256 -> Text,
        blob_key -> Text,
        scan -> Text,
        rejection_reason -> Nullable<Text>,
        uploaded_by_kind -> Text,
        uploaded_by_id -> PortableUuid,
        on_behalf_of -> Nullable<PortableUuid>,
        decided_by_kind -> Nullable<Text>,
        decided_by_id -> Nullable<PortableUuid>,
        decided_at -> Nullable<PortableTimestamp>,
        deleted_at -> Nullable<PortableTimestamp>,
        deleted_by_kind -> Nullable<Text>,
        deleted_by_id -> Nullable<PortableUuid>,
        version -> BigInt,
        created_at -> PortableTimestamp,
        updated_at -> PortableTimestamp,
    }
}

/// The unique constraints of `documents` (see `crate::error`). The one-live-document index
/// is on an expression (the missing request counts as one value), which SQLite reports by
/// the index's name rather than by its columns.
pub(crate) const UNIQUE_CONSTRAINTS: &[(&str, &str)] = &[
    ("documents_pkey", "documents.id"),
    ("documents_blob_key", "documents.blob_key"),
    (ONE_LIVE_DOCUMENT, "index 'documents_one_live_kind'"),
];

repository! {
    impl DocumentRepository for Database => documents {
        fn insert(document: &Document, meta: &WriteMeta);
        fn update(document: &Document, expected_version: i64, meta: &WriteMeta);
        fn get(id: DocumentId) -> Option<Document>;
        fn list(filter: DocumentFilter, page: PageRequest) -> Page<Document>;
        fn for_request(request: RequestId) -> Vec<Document>;
        fn known_blob_keys(keys: &[String]) -> Vec<String>;
    }
}

repository! {
    impl Database => documents {
        /// The query plan of [`DocumentRepository::list`] for `filter` and `page`, one line
        /// per row; for tests. Read as for
        /// [`explain_request_list`](crate::Database::explain_request_list).
        #[doc(hidden)]
        pub fn explain_document_list(filter: DocumentFilter, page: PageRequest) -> Vec<String>;
    }
}

#[derive(Debug, Clone, Queryable, Selectable, Insertable, AsChangeset)]
#[diesel(table_name = documents)]
#[diesel(treat_none_as_default_value = false)]
// Without this, a `None` would keep the stored value instead of writing NULL.
#[diesel(treat_none_as_null = true)]
pub(crate) struct DocumentRow {
    pub id: DbUuid,
    pub mission_id: DbUuid,
    pub citizen_id: DbUuid,
    pub request_id: Option<DbUuid>,
    pub kind: String,
    pub status: String,
    pub file_name: String,
    pub media_type: String,
    pub size_bytes: i64,
    pub sha256: String,
    pub blob_key: String,
    pub scan: String,
    pub rejection_reason: Option<String>,
    pub uploaded_by_kind: String,
    pub uploaded_by_id: DbUuid,
    pub on_behalf_of: Option<DbUuid>,
    pub decided_by_kind: Option<String>,
    pub decided_by_id: Option<DbUuid>,
    pub decided_at: Option<DbTime>,
    pub deleted_at: Option<DbTime>,
    pub deleted_by_kind: Option<String>,
    pub deleted_by_id: Option<DbUuid>,
    pub version: i64,
    pub created_at: DbTime,
    pub updated_at: DbTime,
}

impl TryFrom<&Document> for DocumentRow {
    type Error = Failure;
    fn try_from(d: &Document) -> Result<Self, Failure> {
        let (decided_by_kind, decided_by_id) = actor_to_db(d.decided_by);
        let (deleted_by_kind, deleted_by_id) = actor_to_db(d.deleted_by);
        Ok(DocumentRow {
            id: DbUuid(d.id.0),
            mission_id: DbUuid(d.mission_id.0),
            citizen_id: DbUuid(d.citizen_id.0),
            request_id: d.request_id.map(|r| DbUuid(r.0)),
            kind: d.kind.clone(),
            status: d.status.as_str().to_owned(),
            file_name: d.file_name.clone(),
            media_type: d.media_type.clone(),
            size_bytes: i64::try_from(d.size_bytes).map_err(|e| corrupt("document size", e))?,
            sha256: d.sha256.clone(),
            blob_key: d.blob_key.clone(),
            scan: d.scan.as_str().to_owned(),
            rejection_reason: d.rejection_reason.as_ref().map(|r| r.as_str().to_owned()),
            uploaded_by_kind: d.uploaded_by.kind.as_str().to_owned(),
            uploaded_by_id: DbUuid(d.uploaded_by.id.0),
            on_behalf_of: d.on_behalf_of.map(|c| DbUuid(c.0)),
            decided_by_kind,
            decided_by_id,
            decided_at: d.decided_at.map(DbTime),
            deleted_at: d.deleted_at.map(DbTime),
            deleted_by_kind,
            deleted_by_id,
            version: d.version,
            created_at: DbTime(d.created_at),
            updated_at: DbTime(d.updated_at),
        })
    }
}

impl TryFrom<DocumentRow> for Document {
    type Error = Failure;
    fn try_from(row: DocumentRow) -> Result<Self, Failure> {
        let rejection_reason = row.rejection_reason.map(Reason::stored);
        Ok(Document {
            id: row.id.0.into(),
            mission_id: row.mission_id.0.into(),
            citizen_id: row.citizen_id.0.into(),
            request_id: row.request_id.map(|r| r.0.into()),
            kind: row.kind,
            status: row.status.parse().map_err(|e| corrupt("documents.status", e))?,
            file_name: row.file_name,
            media_type: row.media_type,
            size_bytes: u64::try_from(row.size_bytes).map_err(|e| corrupt("documents.size_bytes", e))?,
            sha256: row.sha256,
            blob_key: row.blob_key,
            scan: row.scan.parse().map_err(|e| corrupt("documents.scan", e))?,
            rejection_reason,
            uploaded_by: subject_from_db(
                "documents.uploaded_by_kind",
                &row.uploaded_by_kind,
                row.uploaded_by_id,
            )?,
            on_behalf_of: row.on_behalf_of.map(|c| c.0.into()),
            decided_by: actor_from_db("documents.decided_by_kind", row.decided_by_kind, row.decided_by_id)?,
            decided_at: row.decided_at.map(|t| t.0),
            deleted_at: row.deleted_at.map(|t| t.0),
            deleted_by: actor_from_db("documents.deleted_by_kind", row.deleted_by_kind, row.deleted_by_id)?,
            version: row.version,
            created_at: row.created_at.0,
            updated_at: row.updated_at.0,
        })
    }
}
