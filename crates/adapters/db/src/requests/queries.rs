//! The queries of service requests, their stage history, staff notes and messages.

use super::{Backend, BoxedSelect, Conn, analytics, appointments, documents, explain, write_meta};
use crate::analytics::{SpellRow, may_end_a_spell};
use crate::appointments::EntryRow;
use crate::catalog::service_types;
use crate::documents::DocumentRow;
use crate::failure::Failure;
use crate::requests::{
    HistoryRow, MessageRow, NoteRow, OPEN, RequestRow, request_history, request_messages, request_notes,
    service_requests,
};
use crate::shared::columns::{from_json, service_type_ids};
use crate::shared::sql_types::{DbJson, DbTime, DbUuid};
use crate::shared::update_versioned;
use crate::staff::{staff_assignments, staff_members, staff_workloads};
use consular_domain::{
    AppointmentEntry, Document, HistoryEntry, MissionId, Page, PageRequest, RequestId, ServiceRequest,
    ServiceTypeId, StaffId,
};
use consular_ports::{Message, Note, QueueGroup, RepoError, RequestFilter, RequestRecord, WriteMeta};
use diesel::dsl::{AsSelect, InnerJoin, IntoBoxed, Select, case_when, count_star, min, not, sum};
use diesel::expression::SqlLiteral;
use diesel::prelude::*;
use diesel::sql_types::{Bool, Integer};
use diesel_async::RunQueryDsl;
use time::OffsetDateTime;

fn is_open() -> SqlLiteral<Bool> {
    diesel::dsl::sql::<Bool>(OPEN)
}

/// The request and its first history entry, in one transaction with `meta`, with the
/// stage spells that history has ended (none for a request that is not final: a spell
/// ends at a later entry, see `analytics`). An unknown mission, citizen, service type or
/// assignee is a foreign-key violation: `Other` (the use cases check them first).
pub(crate) async fn insert(
    conn: &mut Conn,
    request: &ServiceRequest,
    first: &HistoryEntry,
    meta: &WriteMeta,
) -> Result<(), Failure> {
    let row = RequestRow::try_from(request)?;
    let entry = HistoryRow::new(request.id, first)?;
    let spells = SpellRow::of_history(request, std::slice::from_ref(first))?;
    write_tx!(conn, async |conn: &mut Conn| -> Result<(), Failure> {
        write_meta::store(conn, meta).await?;
        diesel::insert_into(service_requests::table).values(&row).execute(conn).await?;
        diesel::insert_into(request_history::table).values(&entry).execute(conn).await?;
        analytics::insert_spells(conn, &spells).await
    })
    .await
}

/// Replaces the request if its version is still `expected_version`, then appends `entry`.
/// The entry is inserted after the update, which holds the request's row lock: the
/// history ids of one request are drawn in the order its changes commit. An entry that
/// changes the stage or closes the request ends a stage spell: the spells are brought up
/// to date in the same transaction (`analytics::record_spells`).
pub(crate) async fn update(
    conn: &mut Conn,
    request: &ServiceRequest,
    expected_version: i64,
    entry: Option<HistoryEntry>,
    meta: &WriteMeta,
) -> Result<(), Failure> {
    let row = RequestRow::try_from(request)?;
    let ends_a_spell = entry.as_ref().is_some_and(may_end_a_spell);
    let entry = entry.map(|e| HistoryRow::new(request.id, &e)).transpose()?;
    write_tx!(conn, async |conn: &mut Conn| -> Result<(), Failure> {
        write_meta::store(conn, meta).await?;
        update_versioned!(conn, service_requests, &row, expected_version).await?;
        if let Some(entry) = &entry {
            diesel::insert_into(request_history::table).values(entry).execute(conn).await?;
            if ends_a_spell {
                analytics::record_spells(conn, request).await?;
            }
        }
        Ok(())
    })
    .await
}

pub(crate) async fn get(conn: &mut Conn, id: RequestId) -> Result<Option<ServiceRequest>, Failure> {
    let row: Option<RequestRow> = service_requests::table
        .find(DbUuid(id.0))
        .select(RequestRow::as_select())
        .first(conn)
        .await
        .optional()?;
    row.map(ServiceRequest::try_from).transpose()
}

/// Oldest first: in insertion order (the generated id).
pub(crate) async fn history(conn: &mut Conn, id: RequestId) -> Result<Vec<HistoryEntry>, Failure> {
    let rows: Vec<HistoryRow> = history_query(id).load(conn).await?;
    rows.into_iter().map(HistoryEntry::try_from).collect()
}

fn history_query(id: RequestId) -> BoxedSelect<request_history::table, HistoryRow> {
    request_history::table
        .select(HistoryRow::as_select())
        .into_boxed()
        .filter(request_history::request_id.eq(DbUuid(id.0)))
        .order(request_history::id.asc())
}

/// The request with its service type's required documents (one row, or none).
type DetailQuery = IntoBoxed<
    'static,
    Select<
        InnerJoin<service_requests::table, service_types::table>,
        (AsSelect<RequestRow, Backend>, service_types::required_documents),
    >,
    Backend,
>;

fn detail_query(id: RequestId) -> DetailQuery {
    service_requests::table
        .inner_join(service_types::table)
        .select((RequestRow::as_select(), service_types::required_documents))
        .into_boxed()
        .filter(service_requests::id.eq(DbUuid(id.0)))
}

/// Everything `GET /api/v1/requests/{id}` shows, in one read-only transaction (one
/// snapshot: the history, thread and documents are those of the request as returned),
/// its statements pipelined on PostgreSQL (`reads!`): one pool checkout and about one
/// round trip instead of one checkout and one round trip per part (docs/requests.md
/// "Reading"). The notes are read only when asked for.
pub(crate) async fn detail(
    conn: &mut Conn,
    id: RequestId,
    notes: bool,
) -> Result<Option<RequestRecord>, Failure> {
    let (found, history, messages, notes, documents, appointments) =
        read_tx!(conn, async |conn: &mut Conn| -> Result<_, Failure> {
            Ok(reads!(conn =>
                detail_query(id).load::<(RequestRow, DbJson)>(conn),
                history_query(id).load::<HistoryRow>(conn),
                messages_query(id).load::<MessageRow>(conn),
                async {
                    match notes {
                        true => notes_query(id).load::<NoteRow>(conn).await.map(Some),
                        false => Ok(None),
                    }
                },
                documents::request_history_query(id).load::<DocumentRow>(conn),
                appointments::request_history_query(id).load::<EntryRow>(conn),
            )?)
        })
        .await?;
    let Some((request, required_documents)) = found.into_iter().next() else { return Ok(None) };
    Ok(Some(RequestRecord {
        request: ServiceRequest::try_from(request)?,
        required_documents: from_json("service_types.required_documents", required_documents)?,
        history: history.into_iter().map(HistoryEntry::try_from).collect::<Result<_, _>>()?,
        messages: messages.into_iter().map(Message::try_from).collect::<Result<_, _>>()?,
        notes: notes
            .map(|rows| rows.into_iter().map(Note::try_from).collect::<Result<_, _>>())
            .transpose()?,
        documents: documents.into_iter().map(Document::try_from).collect::<Result<_, _>>()?,
        appointments: appointments.into_iter().map(AppointmentEntry::try_from).collect::<Result<_, _>>()?,
    }))
}

/// The SQL [`detail`] sends (with `notes`), one statement per item as `debug_query` shows
/// it (`… -- binds: [the request id, …]`); for the bench, which runs the same statements
/// through pgbench.
pub(crate) async fn request_detail_statements(
    _conn: &mut Conn,
    id: RequestId,
) -> Result<Vec<String>, Failure> {
    use diesel::debug_query as shown;
    // The same builders, in the same order, as `detail`'s `reads!`.
    Ok(vec![
        shown::<Backend, _>(&detail_query(id)).to_string(),
        shown::<Backend, _>(&history_query(id)).to_string(),
        shown::<Backend, _>(&messages_query(id)).to_string(),
        shown::<Backend, _>(&notes_query(id)).to_string(),
        shown::<Backend, _>(&documents::request_history_query(id)).to_string(),
        shown::<Backend, _>(&appointments::request_history_query(id)).to_string(),
    ])
}

/// The listing query, boxed so that `EXPLAIN` can wrap it (`explain_request_list`).
type ListQuery = BoxedSelect<service_requests::table, RequestRow>;

/// Newest first (`ORDER BY id DESC`), the ids below `page.after`, `page.fetch_limit()` rows:
/// no OFFSET, no count. Every equality filter has an index `(column, id)` that serves it
/// with the order and the keyset bound; the others are read from the id index, or
/// `submitted_at` / the open-SLA partial index, whichever the planner prefers. A
/// mandate's services (`within_services`) come with the dependant's `citizen_id`, whose
/// index reads the few rows they are checked on.
fn list_query(filter: &RequestFilter, page: &PageRequest) -> Result<ListQuery, Failure> {
    let mut query = service_requests::table
        .select(RequestRow::as_select())
        .into_boxed()
        .order(service_requests::id.desc())
        .limit(page.fetch_limit());
    if let Some(mission) = filter.mission_id {
        query = query.filter(service_requests::mission_id.eq(DbUuid(mission.0)));
    }
    if let Some(citizen) = filter.citizen_id {
        query = query.filter(service_requests::citizen_id.eq(DbUuid(citizen.0)));
    }
    match filter.statuses.as_slice() {
        [] => {}
        // `status = $1` (not `= ANY($1)`): one status is read from (status, id) in order.
        [status] => query = query.filter(service_requests::status.eq(status.as_str())),
        statuses => {
            let statuses: Vec<&'static str> = statuses.iter().map(|s| s.as_str()).collect();
            query = query.filter(service_requests::status.eq_any(statuses));
        }
    }
    if let Some(service_type) = filter.service_type_id {
        query = query.filter(service_requests::service_type_id.eq(DbUuid(service_type.0)));
    }
    if let Some(within) = &filter.within_services {
        query = query.filter(service_requests::service_type_id.eq_any(service_type_ids(within)));
    }
    if let Some(from) = filter.submitted_from {
        query = query.filter(service_requests::submitted_at.ge(DbTime(from)));
    }
    if let Some(to) = filter.submitted_to {
        query = query.filter(service_requests::submitted_at.lt(DbTime(to)));
    }
    if let Some(assignee) = filter.assignee_id {
        query = query.filter(service_requests::assignee_id.eq(DbUuid(assignee.0)));
    }
    if let Some(overdue) = filter.overdue {
        let Some(at) = filter.overdue_at else {
            return Err(Failure::Outcome(RepoError::Other(
                "the overdue filter needs the instant it is judged at (overdue_at)".to_owned(),
            )));
        };
        let past_due = service_requests::sla_due_at.lt(DbTime(at));
        query = if overdue {
            query.filter(is_open()).filter(past_due)
        } else {
            query.filter(not(is_open().and(past_due)))
        };
    }
    if let Some(after) = page.after {
        query = query.filter(service_requests::id.lt(DbUuid(after)));
    }
    Ok(query)
}

pub(crate) async fn list(
    conn: &mut Conn,
    filter: RequestFilter,
    page: PageRequest,
) -> Result<Page<ServiceRequest>, Failure> {
    let rows: Vec<RequestRow> = list_query(&filter, &page)?.load(conn).await?;
    let found = rows.into_iter().map(ServiceRequest::try_from).collect::<Result<Vec<_>, _>>()?;
    Ok(Page::from_rows(found, &page, |r| r.id.0))
}

/// The plan of [`list`]'s query, as the backend's `explain` reads it.
pub(crate) async fn explain_request_list(
    conn: &mut Conn,
    filter: RequestFilter,
    page: PageRequest,
) -> Result<Vec<String>, Failure> {
    explain(conn, list_query(&filter, &page)?).await
}

/// The active member of `mission` assigned to `service_type` with the fewest open
/// requests assigned to them (of any type), the smallest id among equals. One statement
/// over the members assigned to the type (at most one assignment row each: the key is
/// (staff, type)), each with its count in `staff_workloads`, which the database keeps in
/// step with every write of a request (docs/requests.md "Assignment").
pub(crate) async fn least_loaded_staff(
    conn: &mut Conn,
    mission: MissionId,
    service_type: ServiceTypeId,
) -> Result<Option<StaffId>, Failure> {
    let member: Option<DbUuid> = staff_members::table
        .inner_join(staff_assignments::table)
        .inner_join(staff_workloads::table)
        .filter(staff_members::mission_id.eq(DbUuid(mission.0)))
        .filter(staff_members::active.eq(true))
        .filter(staff_assignments::service_type_id.eq(DbUuid(service_type.0)))
        .select(staff_members::id)
        .order_by((staff_workloads::open_requests.asc(), staff_members::id.asc()))
        .first(conn)
        .await
        .optional()?;
    Ok(member.map(|id| StaffId(id.0)))
}

/// The members whose row in `staff_workloads` differs from a count of their open requests
/// (or who have no row): `(member, stored, counted)`, `stored` being `None` for no row.
/// Empty while the triggers keep the table; for tests.
pub(crate) async fn staff_workload_drift(
    conn: &mut Conn,
) -> Result<Vec<(StaffId, Option<i64>, i64)>, Failure> {
    let stored: Vec<(DbUuid, Option<i64>)> = staff_members::table
        .left_join(staff_workloads::table)
        .select((staff_members::id, staff_workloads::open_requests.nullable()))
        .load(conn)
        .await?;
    let counted: std::collections::HashMap<DbUuid, i64> = service_requests::table
        .filter(service_requests::assignee_id.is_not_null())
        .filter(is_open())
        .group_by(service_requests::assignee_id)
        .select((service_requests::assignee_id.assume_not_null(), count_star()))
        .load::<(DbUuid, i64)>(conn)
        .await?
        .into_iter()
        .collect();
    Ok(stored
        .into_iter()
        .map(|(id, stored)| (StaffId(id.0), stored, counted.get(&id).copied().unwrap_or(0)))
        .filter(|(_, stored, counted)| *stored != Some(*counted))
        .collect())
}

/// The open requests assigned to `staff`, one group per service type (by type id), with
/// the count, the oldest submission and how many are past their SLA at `now`.
pub(crate) async fn queue(
    conn: &mut Conn,
    staff: StaffId,
    now: OffsetDateTime,
) -> Result<Vec<QueueGroup>, Failure> {
    let overdue = case_when(service_requests::sla_due_at.lt(DbTime(now)), 1.into_sql::<Integer>())
        .otherwise(0.into_sql::<Integer>());
    let rows: Vec<(DbUuid, i64, Option<DbTime>, Option<i64>)> = service_requests::table
        .filter(service_requests::assignee_id.eq(DbUuid(staff.0)))
        .filter(is_open())
        .group_by(service_requests::service_type_id)
        .select((
            service_requests::service_type_id,
            count_star(),
            min(service_requests::submitted_at),
            sum(overdue),
        ))
        .order_by(service_requests::service_type_id.asc())
        .load(conn)
        .await?;
    rows.into_iter()
        .map(|(service_type, count, oldest, overdue)| {
            // A group has at least one row, so MIN is never NULL.
            let oldest =
                oldest.ok_or_else(|| Failure::Corrupt("queue group without a request".to_owned()))?;
            Ok(QueueGroup {
                service_type_id: ServiceTypeId(service_type.0),
                count,
                oldest_submitted_at: oldest.0,
                overdue: overdue.unwrap_or(0),
            })
        })
        .collect()
}

pub(crate) async fn add_note(conn: &mut Conn, note: &Note, meta: &WriteMeta) -> Result<(), Failure> {
    let row = NoteRow::from(note);
    write_tx!(conn, async |conn: &mut Conn| -> Result<(), Failure> {
        write_meta::store(conn, meta).await?;
        diesel::insert_into(request_notes::table).values(&row).execute(conn).await?;
        Ok(())
    })
    .await
}

/// Oldest first (id ascending), the ids above `page.after`.
pub(crate) async fn notes(
    conn: &mut Conn,
    request: RequestId,
    page: PageRequest,
) -> Result<Page<Note>, Failure> {
    let mut query = notes_query(request).limit(page.fetch_limit());
    if let Some(after) = page.after {
        query = query.filter(request_notes::id.gt(DbUuid(after)));
    }
    let rows: Vec<NoteRow> = query.load(conn).await?;
    let found = rows.into_iter().map(Note::try_from).collect::<Result<Vec<_>, _>>()?;
    Ok(Page::from_rows(found, &page, |n| n.id))
}

pub(crate) async fn add_message(conn: &mut Conn, message: &Message, meta: &WriteMeta) -> Result<(), Failure> {
    let row = MessageRow::from(message);
    write_tx!(conn, async |conn: &mut Conn| -> Result<(), Failure> {
        write_meta::store(conn, meta).await?;
        diesel::insert_into(request_messages::table).values(&row).execute(conn).await?;
        Ok(())
    })
    .await
}

/// Oldest first (id ascending), the ids above `page.after`.
pub(crate) async fn messages(
    conn: &mut Conn,
    request: RequestId,
    page: PageRequest,
) -> Result<Page<Message>, Failure> {
    let mut query = messages_query(request).limit(page.fetch_limit());
    if let Some(after) = page.after {
        query = query.filter(request_messages::id.gt(DbUuid(after)));
    }
    let rows: Vec<MessageRow> = query.load(conn).await?;
    let found = rows.into_iter().map(Message::try_from).collect::<Result<Vec<_>, _>>()?;
    Ok(Page::from_rows(found, &page, |m| m.id))
}

/// A request's notes, oldest first (id ascending).
fn notes_query(request: RequestId) -> BoxedSelect<request_notes::table, NoteRow> {
    request_notes::table
        .select(NoteRow::as_select())
        .into_boxed()
        .filter(request_notes::request_id.eq(DbUuid(request.0)))
        .order(request_notes::id.asc())
}

/// A request's thread, oldest first (id ascending).
fn messages_query(request: RequestId) -> BoxedSelect<request_messages::table, MessageRow> {
    request_messages::table
        .select(MessageRow::as_select())
        .into_boxed()
        .filter(request_messages::request_id.eq(DbUuid(request.0)))
        .order(request_messages::id.asc())
}
