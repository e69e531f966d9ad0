//! The queries of documents.

use super::{BoxedSelect, Conn, explain, write_meta};
use crate::documents::{DocumentRow, documents};
use crate::failure::Failure;
use crate::requests::service_requests;
use crate::shared::columns::service_type_ids;
use crate::shared::sql_types::DbUuid;
use crate::shared::update_versioned;
use consular_domain::{Document, DocumentId, DocumentStatus, Page, PageRequest, RequestId};
use consular_ports::{DocumentFilter, WriteMeta};
use diesel::dsl::exists;
use diesel::prelude::*;
use diesel_async::RunQueryDsl;
use std::collections::HashSet;

/// How many keys one `known_blob_keys` statement binds: well under SQLite's limit on
/// bound parameters.
const KEYS_PER_STATEMENT: usize = 500;

/// The document, in one transaction with `meta`. An unknown mission, citizen or request
/// is a foreign-key violation: `Other` (the use cases check them first).
pub(crate) async fn insert(conn: &mut Conn, document: &Document, meta: &WriteMeta) -> Result<(), Failure> {
    let row = DocumentRow::try_from(document)?;
    write_tx!(conn, async |conn: &mut Conn| -> Result<(), Failure> {
        write_meta::store(conn, meta).await?;
        diesel::insert_into(documents::table).values(&row).execute(conn).await?;
        Ok(())
    })
    .await
}

/// Replaces the document if its version is still `expected_version`.
pub(crate) async fn update(
    conn: &mut Conn,
    document: &Document,
    expected_version: i64,
    meta: &WriteMeta,
) -> Result<(), Failure> {
    let row = DocumentRow::try_from(document)?;
    write_tx!(conn, async |conn: &mut Conn| -> Result<(), Failure> {
        write_meta::store(conn, meta).await?;
        update_versioned!(conn, documents, &row, expected_version).await
    })
    .await
}

/// Tombstones included.
pub(crate) async fn get(conn: &mut Conn, id: DocumentId) -> Result<Option<Document>, Failure> {
    let row: Option<DocumentRow> =
        documents::table.find(DbUuid(id.0)).select(DocumentRow::as_select()).first(conn).await.optional()?;
    row.map(Document::try_from).transpose()
}

fn live() -> diesel::dsl::NotEq<documents::status, &'static str> {
    documents::status.ne(DocumentStatus::Deleted.as_str())
}

/// The listing query, boxed so that `EXPLAIN` can wrap it (`explain_document_list`).
type ListQuery = BoxedSelect<documents::table, DocumentRow>;

/// Live documents newest first (`ORDER BY id DESC`), the ids below `page.after`,
/// `page.fetch_limit()` rows: no OFFSET, no count. Every equality filter has an index
/// `(column, id)` that serves it with the order and the keyset bound; no filter reads the
/// primary key backwards. Tombstones are filtered on the way, and so are the documents
/// outside a mandate's services (`within_services`), each by its request's primary key.
fn list_query(filter: &DocumentFilter, page: &PageRequest) -> ListQuery {
    let mut query = documents::table
        .select(DocumentRow::as_select())
        .into_boxed()
        .filter(live())
        .order(documents::id.desc())
        .limit(page.fetch_limit());
    if let Some(mission) = filter.mission_id {
        query = query.filter(documents::mission_id.eq(DbUuid(mission.0)));
    }
    if let Some(citizen) = filter.citizen_id {
        query = query.filter(documents::citizen_id.eq(DbUuid(citizen.0)));
    }
    if let Some(request) = filter.request_id {
        query = query.filter(documents::request_id.eq(DbUuid(request.0)));
    }
    if let Some(within) = &filter.within_services {
        // The document's request is of one of them: a document of no request is outside.
        let of_request = service_requests::table
            .filter(service_requests::id.nullable().eq(documents::request_id))
            .filter(service_requests::service_type_id.eq_any(service_type_ids(within)));
        query = query.filter(exists(of_request));
    }
    if let Some(kind) = &filter.kind {
        query = query.filter(documents::kind.eq(kind.clone()));
    }
    match filter.statuses.as_slice() {
        [] => {}
        // `status = $1` (not `= ANY($1)`): one status is read from (status, id) in order.
        [status] => query = query.filter(documents::status.eq(status.as_str())),
        statuses => {
            let statuses: Vec<&'static str> = statuses.iter().map(|s| s.as_str()).collect();
            query = query.filter(documents::status.eq_any(statuses));
        }
    }
    if let Some(after) = page.after {
        query = query.filter(documents::id.lt(DbUuid(after)));
    }
    query
}

pub(crate) async fn list(
    conn: &mut Conn,
    filter: DocumentFilter,
    page: PageRequest,
) -> Result<Page<Document>, Failure> {
    let rows: Vec<DocumentRow> = list_query(&filter, &page).load(conn).await?;
    let found = rows.into_iter().map(Document::try_from).collect::<Result<Vec<_>, _>>()?;
    Ok(Page::from_rows(found, &page, |d| d.id.0))
}

/// The plan of [`list`]'s query, as the backend's `explain` reads it.
pub(crate) async fn explain_document_list(
    conn: &mut Conn,
    filter: DocumentFilter,
    page: PageRequest,
) -> Result<Vec<String>, Failure> {
    explain(conn, list_query(&filter, &page)).await
}

/// The live documents of `request`, oldest first, from `documents_request_id_idx`.
pub(crate) async fn for_request(conn: &mut Conn, request: RequestId) -> Result<Vec<Document>, Failure> {
    let rows: Vec<DocumentRow> = for_request_query(request).load(conn).await?;
    rows.into_iter().map(Document::try_from).collect()
}

/// The live documents of a request, oldest first.
fn for_request_query(request: RequestId) -> BoxedSelect<documents::table, DocumentRow> {
    request_history_query(request).filter(live())
}

/// Every document of a request, tombstones included, oldest first: what its timeline
/// shows (a deleted document keeps its upload, decision and deletion there).
pub(crate) fn request_history_query(request: RequestId) -> BoxedSelect<documents::table, DocumentRow> {
    documents::table
        .select(DocumentRow::as_select())
        .into_boxed()
        .filter(documents::request_id.eq(DbUuid(request.0)))
        .order(documents::id.asc())
}

/// Those of `keys` some row (tombstones included) references, in the order given and
/// without repeats, looked up through the unique `blob_key` index in batches.
pub(crate) async fn known_blob_keys(conn: &mut Conn, keys: &[String]) -> Result<Vec<String>, Failure> {
    let mut known: HashSet<String> = HashSet::new();
    for batch in keys.chunks(KEYS_PER_STATEMENT) {
        let found: Vec<String> = documents::table
            .filter(documents::blob_key.eq_any(batch))
            .filter(documents::status.ne(DocumentStatus::Deleted.as_str()))
            .select(documents::blob_key)
            .load(conn)
            .await?;
        known.extend(found);
    }
    let mut seen = HashSet::new();
    Ok(keys.iter().filter(|k| known.contains(*k) && seen.insert(*k)).cloned().collect())
}
