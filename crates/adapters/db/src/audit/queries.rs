//! The queries of the audit trail: reading it back, and entries that go with no other
//! write.

use super::{Conn, write_meta};
use crate::audit::{AuditRow, audit_events};
use crate::failure::Failure;
use crate::shared::sql_types::DbUuid;
use consular_domain::{AuditRecord, Page, PageRequest};
use consular_ports::{AuditFilter, WriteMeta};
use diesel::prelude::*;
use diesel_async::RunQueryDsl;
use uuid::Uuid;

/// The audit entries about one resource, oldest first.
pub(crate) async fn audit_trail(
    conn: &mut Conn,
    resource_type: &str,
    resource_id: Uuid,
) -> Result<Vec<AuditRecord>, Failure> {
    let rows: Vec<AuditRow> = audit_events::table
        .filter(audit_events::resource_type.eq(resource_type))
        .filter(audit_events::resource_id.eq(DbUuid(resource_id)))
        .order(audit_events::id.asc())
        .select(AuditRow::as_select())
        .load(conn)
        .await?;
    rows.into_iter().map(AuditRecord::try_from).collect()
}

/// Newest first (id descending): the page continues with the ids below `page.after`.
pub(crate) async fn list(
    conn: &mut Conn,
    filter: AuditFilter,
    page: PageRequest,
) -> Result<Page<AuditRecord>, Failure> {
    let mut query = audit_events::table
        .select(AuditRow::as_select())
        .order(audit_events::id.desc())
        .limit(page.fetch_limit())
        .into_boxed();
    if let Some(resource_type) = filter.resource_type {
        query = query.filter(audit_events::resource_type.eq(resource_type));
    }
    if let Some(resource_id) = filter.resource_id {
        query = query.filter(audit_events::resource_id.eq(DbUuid(resource_id)));
    }
    if let Some(actor) = filter.actor_id {
        query = query.filter(audit_events::actor_id.eq(DbUuid(actor)));
    }
    if let Some(after) = page.after {
        query = query.filter(audit_events::id.lt(DbUuid(after)));
    }
    let rows: Vec<AuditRow> = query.load(conn).await?;
    let records = rows.into_iter().map(AuditRecord::try_from).collect::<Result<Vec<_>, _>>()?;
    Ok(Page::from_rows(records, &page, |r| r.id.0))
}

/// `records`, in one transaction, through the write path every change uses.
pub(crate) async fn append(conn: &mut Conn, records: &[AuditRecord]) -> Result<(), Failure> {
    let meta = WriteMeta { audit: records.to_vec(), events: Vec::new(), idempotency: None };
    write_tx!(conn, async |conn: &mut Conn| -> Result<(), Failure> { write_meta::store(conn, &meta).await })
        .await
}
