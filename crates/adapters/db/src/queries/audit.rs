//! Reading the audit trail back.

use super::Conn;
use crate::error::Failure;
use crate::rows::AuditRow;
use crate::schema::audit_events;
use crate::sql_types::DbUuid;
use consular_domain::AuditRecord;
use diesel::prelude::*;
use diesel_async::RunQueryDsl;
use uuid::Uuid;

/// The audit entries about one resource, oldest first.
pub(crate) async fn trail(
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
