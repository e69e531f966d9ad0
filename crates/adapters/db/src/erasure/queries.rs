//! The queries of retention and erasure: what an erasure reads, and the one transaction
//! that deletes or scrubs everything of a citizen (or of expired requests) in the tables
//! of the other areas.

use super::{Backend, Conn, write_meta};
use crate::analytics::request_stage_spells;
use crate::appointments::{Locked, appointment_history, appointments, slots};
use crate::audit::audit_events;
use crate::catalog::service_types;
use crate::citizens::{CitizenRow, citizens};
use crate::clients::api_clients;
use crate::documents::documents;
use crate::erasure::{ERASED_CLIENT_NAME, ERASED_FILE_NAME, ERASED_SHA256, ErasureDialect, ForUpdate};
use crate::exports::exports;
use crate::failure::Failure;
use crate::idempotency::idempotency_keys;
use crate::notifications::{appointment_reminders, emails, notification_preferences, notifications};
use crate::outbox::outbox_events;
use crate::representations::representations;
use crate::requests::{request_history, request_messages, request_notes, service_requests};
use crate::shared::columns::corrupt;
use crate::shared::sql_types::{DbTime, DbUuid};
use crate::shared::update_versioned;
use crate::tokens::RevocationRow;
use consular_domain::erasure::RetainedRequest;
use consular_domain::{
    AppointmentStatus, CitizenId, ClientId, ClientStatus, DocumentStatus, PrincipalKind, RequestId,
    RequestStatus, ServiceTypeId,
};
use consular_ports::{Erased, Erasure, RevocationKind, WriteMeta};
use diesel::prelude::*;
use diesel_async::{RunQueryDsl, SimpleAsyncConnection};
use time::OffsetDateTime;

/// The statuses that end a request.
fn final_statuses() -> Vec<&'static str> {
    RequestStatus::ALL.into_iter().filter(|s| s.is_final()).map(|s| s.as_str()).collect()
}

pub(crate) async fn requests_of(
    conn: &mut Conn,
    citizen: CitizenId,
) -> Result<Vec<RetainedRequest>, Failure> {
    let rows: Vec<(DbUuid, DbUuid, String, Option<DbTime>, i32)> = service_requests::table
        .inner_join(service_types::table)
        .filter(service_requests::citizen_id.eq(DbUuid(citizen.0)))
        .order(service_requests::id.asc())
        .select((
            service_requests::id,
            service_requests::service_type_id,
            service_requests::status,
            service_requests::closed_at,
            service_types::retention_days,
        ))
        .load(conn)
        .await?;
    rows.into_iter()
        .map(|(id, service_type, status, closed_at, retention_days)| {
            Ok(RetainedRequest {
                request_id: id.0.into(),
                service_type_id: service_type.0.into(),
                status: status.parse().map_err(|e| corrupt("service_requests.status", e))?,
                closed_at: closed_at.map(|t| t.0),
                retention_days,
            })
        })
        .collect()
}

pub(crate) async fn expired_requests(
    conn: &mut Conn,
    service_type: ServiceTypeId,
    ended_before: OffsetDateTime,
    limit: i64,
) -> Result<Vec<RequestId>, Failure> {
    let ids: Vec<DbUuid> = service_requests::table
        .filter(service_requests::status.eq_any(final_statuses()))
        .filter(service_requests::closed_at.lt(DbTime(ended_before)))
        .filter(service_requests::service_type_id.eq(DbUuid(service_type.0)))
        .order((service_requests::closed_at.asc(), service_requests::id.asc()))
        .limit(limit)
        .select(service_requests::id)
        .load(conn)
        .await?;
    Ok(ids.into_iter().map(|id| id.0.into()).collect())
}

pub(crate) async fn erase(conn: &mut Conn, erasure: &Erasure, meta: &WriteMeta) -> Result<Erased, Failure> {
    let citizen = DbUuid(erasure.citizen_id.0);
    let erased =
        erasure.citizen.as_ref().map(|(c, version)| CitizenRow::try_from(c).map(|row| (row, *version)));
    let erased = erased.transpose()?;
    let doomed: Vec<DbUuid> = erasure.requests.iter().map(|id| DbUuid(id.0)).collect();
    let at = DbTime(erasure.at);
    let erased = write_tx!(conn, async |conn: &mut Conn| -> Result<Erased, Failure> {
        // First the citizen's row, locked until the commit: an insert of the citizen's data
        // (a request, a document, an appointment) takes a share lock on it (migration
        // 000025), so one that started before waits here and is seen by what follows, and
        // one that starts after waits for the commit and is refused.
        Locked(citizens::table.find(citizen).select(citizens::id)).execute(conn).await?;
        write_meta::store(conn, meta).await?;
        if let Some((row, version)) = &erased {
            update_versioned!(conn, citizens, row, *version).await?;
        }
        let kept: Vec<DbUuid> = service_requests::table
            .filter(service_requests::citizen_id.eq(citizen))
            .filter(service_requests::id.ne_all(doomed.clone()))
            .select(service_requests::id)
            .load(conn)
            .await?;
        let appointments: Vec<DbUuid> = appointments::table
            .filter(appointments::citizen_id.eq(citizen))
            .filter(appointments::request_id.is_null().or(appointments::request_id.ne_all(kept.clone())))
            .select(appointments::id)
            .load(conn)
            .await?;
        let documents: Vec<DbUuid> = documents::table
            .filter(documents::citizen_id.eq(citizen))
            .filter(documents::request_id.is_null().or(documents::request_id.ne_all(kept)))
            .select(documents::id)
            .load(conn)
            .await?;
        // The representations where the citizen is either party (docs/representation.md):
        // no personal value, but a link between two people. No insert can add one now
        // (migration 000027 checks both parties as 000025 does).
        let representations: Vec<DbUuid> = representations::table
            .filter(
                representations::dependant_id.eq(citizen).or(representations::representative_id.eq(citizen)),
            )
            .select(representations::id)
            .load(conn)
            .await?;
        let goes = Doomed {
            requests: &doomed,
            appointments,
            documents,
            representations: representations.clone(),
            citizen: Some(citizen),
        };
        let mut blob_keys = discard(conn, &goes, at).await?;
        diesel::delete(representations::table.filter(representations::id.eq_any(representations)))
            .execute(conn)
            .await?;
        // The citizen's exports (issue 27 part B): their archives hold everything above.
        let archives: Vec<Option<String>> = exports::table
            .filter(exports::citizen_id.eq(citizen))
            .select(exports::blob_key)
            .load(conn)
            .await?;
        blob_keys.extend(archives.into_iter().flatten());
        diesel::delete(exports::table.filter(exports::citizen_id.eq(citizen))).execute(conn).await?;
        // The addresses the citizen wrote from are theirs; the entries keep who did what.
        diesel::update(audit_events::table.filter(audit_events::actor_id.eq(citizen)))
            .set(audit_events::client_address.eq(None::<String>))
            .execute(conn)
            .await?;
        // The citizen's API clients are named by whoever issued them (often after the
        // citizen) and of no use to an erased citizen: renamed, disabled, and revoked
        // (every node refuses their tokens within a second).
        let clients: Vec<DbUuid> = api_clients::table
            .filter(api_clients::principal_kind.eq(PrincipalKind::Citizen.as_str()))
            .filter(api_clients::principal_id.eq(citizen))
            .select(api_clients::id)
            .load(conn)
            .await?;
        diesel::update(api_clients::table.filter(api_clients::id.eq_any(clients.clone())))
            .set((
                api_clients::name.eq(ERASED_CLIENT_NAME),
                api_clients::status.eq(ClientStatus::Disabled.as_str()),
                api_clients::updated_at.eq(at),
            ))
            .execute(conn)
            .await?;
        for client in clients {
            let revoked = RevocationKind::Client { client_id: ClientId(client.0) };
            super::tokens::record_revocation(conn, &RevocationRow::new(revoked, at.0)).await?;
        }
        diesel::delete(
            notification_preferences::table.filter(notification_preferences::principal_id.eq(citizen)),
        )
        .execute(conn)
        .await?;
        Ok(Erased { blob_keys, gone: Vec::new() })
    })
    .await?;
    checkpoint(conn).await?;
    Ok(erased)
}

pub(crate) async fn delete_requests(
    conn: &mut Conn,
    requests: &[RequestId],
    at: OffsetDateTime,
    meta: &WriteMeta,
) -> Result<Erased, Failure> {
    let doomed: Vec<DbUuid> = requests.iter().map(|id| DbUuid(id.0)).collect();
    let at = DbTime(at);
    let erased = write_tx!(conn, async |conn: &mut Conn| -> Result<Erased, Failure> {
        // Two nodes' sweeps may list the same requests: the second waits here for the
        // first's commit, then finds them gone and writes nothing, not even its audit
        // entries.
        let present: Vec<DbUuid> = ForUpdate(
            service_requests::table
                .filter(service_requests::id.eq_any(doomed.clone()))
                .select(service_requests::id),
        )
        .load(conn)
        .await?;
        if present.len() < doomed.len() {
            let gone = doomed.iter().filter(|id| !present.contains(id)).map(|id| RequestId(id.0)).collect();
            return Ok(Erased { blob_keys: Vec::new(), gone });
        }
        write_meta::store(conn, meta).await?;
        let appointments: Vec<DbUuid> = appointments::table
            .filter(appointments::request_id.eq_any(doomed.clone()))
            .select(appointments::id)
            .load(conn)
            .await?;
        let documents: Vec<DbUuid> = documents::table
            .filter(documents::request_id.eq_any(doomed.clone()))
            .select(documents::id)
            .load(conn)
            .await?;
        let goes =
            Doomed { requests: &doomed, appointments, documents, representations: Vec::new(), citizen: None };
        let blob_keys = discard(conn, &goes, at).await?;
        Ok(Erased { blob_keys, gone: Vec::new() })
    })
    .await?;
    checkpoint(conn).await?;
    Ok(erased)
}

/// After the commit, what the database needs so that the erased values leave its files
/// ([`ErasureDialect`]).
async fn checkpoint(conn: &mut Conn) -> Result<(), Failure> {
    if let Some(sql) = <Backend as ErasureDialect>::AFTER_COMMIT {
        conn.batch_execute(sql).await?;
    }
    Ok(())
}

/// What one transaction removes.
struct Doomed<'a> {
    /// Requests deleted.
    requests: &'a [DbUuid],
    /// Appointments deleted (those of the requests among them).
    appointments: Vec<DbUuid>,
    /// Documents made scrubbed tombstones (those of the requests among them).
    documents: Vec<DbUuid>,
    /// Representations deleted by the caller after [`discard`], which deletes what is
    /// filed under them (outbox events, idempotency records).
    representations: Vec<DbUuid>,
    /// The citizen erased, whose notifications and idempotency records go too.
    citizen: Option<DbUuid>,
}

/// Deletes or scrubs everything `doomed` names, children before parents; returns the blob
/// keys of the documents, whose bytes the caller deletes after the commit.
async fn discard(conn: &mut Conn, doomed: &Doomed<'_>, at: DbTime) -> Result<Vec<String>, Failure> {
    let requests = doomed.requests.to_vec();
    let mut about: Vec<DbUuid> = requests.clone();
    about.extend(doomed.appointments.iter().copied());
    about.extend(doomed.documents.iter().copied());
    about.extend(doomed.representations.iter().copied());

    // The requests and the events that go are locked first ([`ForUpdate`]): nothing
    // can refer to them anew until the commit.
    ForUpdate(
        service_requests::table
            .filter(service_requests::id.eq_any(requests.clone()))
            .select(service_requests::id),
    )
    .execute(conn)
    .await?;
    let events: Vec<DbUuid> = ForUpdate(
        outbox_events::table
            .filter(outbox_events::aggregate_id.eq_any(about.clone()))
            .select(outbox_events::id),
    )
    .load(conn)
    .await?;
    // Notifications (and their emails) addressed to the citizen or to their
    // representatives about them (`on_behalf_of`, migration 000029), about a request that
    // goes, or made from an event that goes; then the events filed under what goes.
    let recipient = doomed.citizen.unwrap_or(DbUuid(uuid::Uuid::nil()));
    let told: Vec<DbUuid> = notifications::table
        .filter(
            notifications::event_id
                .eq_any(events.clone())
                .or(notifications::request_id.eq_any(requests.clone()))
                .or(notifications::recipient_id.eq(recipient))
                .or(notifications::on_behalf_of.eq(recipient)),
        )
        .select(notifications::id)
        .load(conn)
        .await?;
    diesel::delete(emails::table.filter(emails::notification_id.eq_any(told.clone()))).execute(conn).await?;
    diesel::delete(notifications::table.filter(notifications::id.eq_any(told))).execute(conn).await?;
    diesel::delete(outbox_events::table.filter(outbox_events::id.eq_any(events))).execute(conn).await?;

    // Idempotency records hold a created resource's representation for a day.
    let mut resources = about;
    resources.extend(
        request_messages::table
            .filter(request_messages::request_id.eq_any(requests.clone()))
            .select(request_messages::id)
            .load::<DbUuid>(conn)
            .await?,
    );
    resources.extend(
        request_notes::table
            .filter(request_notes::request_id.eq_any(requests.clone()))
            .select(request_notes::id)
            .load::<DbUuid>(conn)
            .await?,
    );
    resources.push(recipient);
    diesel::delete(
        idempotency_keys::table.filter(
            idempotency_keys::resource_id.eq_any(resources).or(idempotency_keys::owner.eq(recipient)),
        ),
    )
    .execute(conn)
    .await?;

    // Appointments: a seat still booked is given back to its slot.
    let booked: Vec<DbUuid> = appointments::table
        .filter(appointments::id.eq_any(doomed.appointments.clone()))
        .filter(appointments::status.eq(AppointmentStatus::Booked.as_str()))
        .select(appointments::slot_id)
        .load(conn)
        .await?;
    for slot in booked {
        diesel::update(slots::table.find(slot))
            .set(slots::booked.eq(slots::booked - 1))
            .execute(conn)
            .await?;
    }
    diesel::delete(
        appointment_reminders::table
            .filter(appointment_reminders::appointment_id.eq_any(doomed.appointments.clone())),
    )
    .execute(conn)
    .await?;
    diesel::delete(
        appointment_history::table.filter(
            appointment_history::appointment_id
                .eq_any(doomed.appointments.clone())
                .or(appointment_history::request_id.eq_any(requests.clone())),
        ),
    )
    .execute(conn)
    .await?;
    diesel::delete(appointments::table.filter(appointments::id.eq_any(doomed.appointments.clone())))
        .execute(conn)
        .await?;

    // Documents become tombstones of no request, their names, digests and reasons
    // scrubbed (tombstones made before too); the bytes go after the commit.
    let blob_keys: Vec<String> = documents::table
        .filter(documents::id.eq_any(doomed.documents.clone()))
        .select(documents::blob_key)
        .load(conn)
        .await?;
    let deleted = DocumentStatus::Deleted.as_str();
    diesel::update(
        documents::table
            .filter(documents::id.eq_any(doomed.documents.clone()))
            .filter(documents::status.ne(deleted)),
    )
    .set((documents::status.eq(deleted), documents::deleted_at.eq(Some(at))))
    .execute(conn)
    .await?;
    diesel::update(documents::table.filter(documents::id.eq_any(doomed.documents.clone())))
        .set((
            documents::request_id.eq(None::<DbUuid>),
            documents::file_name.eq(ERASED_FILE_NAME),
            documents::sha256.eq(ERASED_SHA256),
            documents::rejection_reason.eq(None::<String>),
            documents::version.eq(documents::version + 1),
            documents::updated_at.eq(at),
        ))
        .execute(conn)
        .await?;

    // The requests, their children first.
    diesel::delete(
        request_stage_spells::table.filter(request_stage_spells::request_id.eq_any(requests.clone())),
    )
    .execute(conn)
    .await?;
    diesel::delete(request_history::table.filter(request_history::request_id.eq_any(requests.clone())))
        .execute(conn)
        .await?;
    diesel::delete(request_notes::table.filter(request_notes::request_id.eq_any(requests.clone())))
        .execute(conn)
        .await?;
    diesel::delete(request_messages::table.filter(request_messages::request_id.eq_any(requests.clone())))
        .execute(conn)
        .await?;
    diesel::delete(service_requests::table.filter(service_requests::id.eq_any(requests)))
        .execute(conn)
        .await?;
    Ok(blob_keys)
}
