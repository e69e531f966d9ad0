//! The queries of notifications: the outbox worker's claims and completions, reminders,
//! the inbox, preferences and the email queue. A claim leases rows in one short
//! transaction (select, then set the lease) and returns them: no transaction is held
//! while the caller works on them. What differs per database is in
//! [`ClaimDialect`] and [`SkipLocked`] (see `notifications/mod.rs`).

use super::{Backend, BoxedSelect, Conn, explain, write_meta};
use crate::appointments::{AppointmentRow, appointments};
use crate::citizens::citizens;
use crate::failure::Failure;
use crate::notifications::{
    AWAITING_ATTEMPT, BOOKED, ClaimDialect, EmailRow, NotificationRow, SENDING, SkipLocked,
    appointment_reminders, email_off_from_db, email_off_to_db, emails, notification_preferences,
    notifications,
};
use crate::outbox::{OutboxRow, outbox_events};
use crate::shared::sql_types::{DbJson, DbTime, DbUuid, PortableTimestamp};
use consular_domain::notification::{
    AfterAttempt, Email, EmailPreferences, EmailStatus, Notification, Produced, Recipient,
};
use consular_domain::{
    Appointment, AppointmentId, EmailId, NotificationId, Page, PageRequest, PrincipalId, RequestId,
};
use consular_ports::{Backlog, Claim, NotificationWithEmail, OutboxEvent, WriteMeta};
use diesel::dsl::{AsSelect, IntoBoxed, LeftJoinOn, Select, count_star, min, sql};
use diesel::prelude::*;
use diesel::sql_types::Bool;
use diesel_async::RunQueryDsl;
use time::OffsetDateTime;
use uuid::Uuid;

/// How many ids one statement binds: well under SQLite's limit on parameters.
const IDS_PER_STATEMENT: usize = 500;

fn limit_of(limit: u32) -> i64 {
    i64::from(limit)
}

fn count_of(count: i64) -> u64 {
    u64::try_from(count).unwrap_or_default()
}

// ------------------------------------------------------------------- the outbox worker

type EventClaimQuery = BoxedSelect<outbox_events::table, OutboxRow>;

/// Undelivered events whose lease is free or expired at `claim.now`, in id order, read
/// from `outbox_events_pending_idx`; an event is passed over while an earlier undelivered
/// event of its aggregate holds a live lease (whoever holds it: this claim's own rows are
/// not leased yet when it selects), which `outbox_events_pending_aggregate_idx` answers.
/// The rule is a correlated subquery, which diesel's DSL does not type: it is SQL text
/// with the instant bound.
fn event_claim_query(claim: &Claim) -> EventClaimQuery {
    let now = DbTime(claim.now);
    let no_earlier_leased = sql::<Bool>(
        "NOT EXISTS (SELECT 1 FROM outbox_events AS earlier \
         WHERE earlier.aggregate_id = outbox_events.aggregate_id \
         AND earlier.delivered_at IS NULL \
         AND earlier.id < outbox_events.id \
         AND earlier.locked_until >= ",
    )
    .bind::<PortableTimestamp, _>(now)
    .sql(")");
    outbox_events::table
        .select(OutboxRow::as_select())
        .into_boxed()
        .filter(outbox_events::delivered_at.is_null())
        .filter(outbox_events::locked_until.is_null().or(outbox_events::locked_until.lt(now)))
        .filter(no_earlier_leased)
        .order(outbox_events::id.asc())
        .limit(limit_of(claim.limit))
}

pub(crate) async fn claim_events(conn: &mut Conn, claim: &Claim) -> Result<Vec<OutboxEvent>, Failure> {
    write_tx!(conn, async |conn: &mut Conn| -> Result<Vec<OutboxEvent>, Failure> {
        if let Some(serialise) = <Backend as ClaimDialect>::SERIALISE_EVENT_CLAIMS {
            diesel::sql_query(serialise).execute(conn).await?;
        }
        let rows: Vec<OutboxRow> = SkipLocked(event_claim_query(claim)).load(conn).await?;
        let ids: Vec<DbUuid> = rows.iter().map(|r| r.id).collect();
        for batch in ids.chunks(IDS_PER_STATEMENT) {
            diesel::update(outbox_events::table.filter(outbox_events::id.eq_any(batch.to_vec())))
                .set((
                    outbox_events::locked_until.eq(Some(DbTime(claim.lease_until))),
                    outbox_events::claimed_by.eq(Some(claim.node.as_str())),
                ))
                .execute(conn)
                .await?;
        }
        rows.into_iter().map(OutboxEvent::try_from).collect()
    })
    .await
}

pub(crate) async fn explain_event_claim(conn: &mut Conn, claim: &Claim) -> Result<Vec<String>, Failure> {
    explain(conn, event_claim_query(claim)).await
}

/// Each notification is inserted unless one is stored for its `(event_id, recipient_id)`
/// (`ON CONFLICT DO NOTHING`, which also passes over a notification stored before with
/// the same id: a retry with the same values), and its email only when it was; then the
/// events still undelivered are marked delivered.
pub(crate) async fn complete_events(
    conn: &mut Conn,
    node: &str,
    done: &[Uuid],
    produced: &[Produced],
    now: OffsetDateTime,
) -> Result<u64, Failure> {
    let rows = produced
        .iter()
        .map(|p| {
            Ok((
                NotificationRow::try_from(&p.notification)?,
                p.email.as_ref().map(EmailRow::try_from).transpose()?,
            ))
        })
        .collect::<Result<Vec<_>, Failure>>()?;
    let done: Vec<DbUuid> = done.iter().copied().map(DbUuid).collect();
    write_tx!(conn, async |conn: &mut Conn| -> Result<u64, Failure> {
        let mut stored = 0_u64;
        for (notification, email) in &rows {
            let inserted = diesel::insert_into(notifications::table)
                .values(notification)
                .on_conflict_do_nothing()
                .execute(conn)
                .await?;
            if inserted == 0 {
                continue;
            }
            stored += 1;
            if let Some(email) = email {
                diesel::insert_into(emails::table).values(email).execute(conn).await?;
            }
        }
        for batch in done.chunks(IDS_PER_STATEMENT) {
            diesel::update(
                outbox_events::table
                    .filter(outbox_events::id.eq_any(batch.to_vec()))
                    .filter(outbox_events::delivered_at.is_null()),
            )
            .set((
                outbox_events::delivered_at.eq(Some(DbTime(now))),
                outbox_events::delivered_by.eq(Some(node)),
                outbox_events::locked_until.eq(None::<DbTime>),
            ))
            .execute(conn)
            .await?;
        }
        Ok(stored)
    })
    .await
}

/// The undelivered events from `outbox_events_pending_idx`; the unsent emails from the
/// two partial indexes of the email queue (`emails_due_idx`, `emails_sending_idx`), which
/// hold every email not in a final status.
pub(crate) async fn backlog(conn: &mut Conn) -> Result<Backlog, Failure> {
    read_tx!(conn, async |conn: &mut Conn| -> Result<Backlog, Failure> {
        let (pending, oldest): (i64, Option<DbTime>) = outbox_events::table
            .filter(outbox_events::delivered_at.is_null())
            .select((count_star(), min(outbox_events::created_at)))
            .first(conn)
            .await?;
        let awaiting: i64 =
            emails::table.filter(sql::<Bool>(AWAITING_ATTEMPT)).count().get_result(conn).await?;
        let sending: i64 = emails::table.filter(sql::<Bool>(SENDING)).count().get_result(conn).await?;
        Ok(Backlog {
            pending_events: count_of(pending),
            oldest_pending_at: oldest.map(|t| t.0),
            unsent_emails: count_of(awaiting) + count_of(sending),
        })
    })
    .await
}

type ReminderQuery = IntoBoxed<
    'static,
    Select<
        LeftJoinOn<
            appointments::table,
            appointment_reminders::table,
            diesel::dsl::And<
                diesel::dsl::Eq<appointment_reminders::appointment_id, appointments::id>,
                diesel::dsl::Eq<appointment_reminders::starts_at, appointments::starts_at>,
            >,
        >,
        AsSelect<AppointmentRow, Backend>,
    >,
    Backend,
>;

/// Booked appointments in `(from, until]` without a reminder row for their start time,
/// from `appointments_booked_starts_at_idx` in start order (an anti-join on the
/// reminders' primary key).
fn reminder_query(from: OffsetDateTime, until: OffsetDateTime, limit: u32) -> ReminderQuery {
    appointments::table
        .left_join(
            appointment_reminders::table.on(appointment_reminders::appointment_id
                .eq(appointments::id)
                .and(appointment_reminders::starts_at.eq(appointments::starts_at))),
        )
        .select(AppointmentRow::as_select())
        .into_boxed()
        .filter(sql::<Bool>(BOOKED))
        .filter(appointments::starts_at.gt(DbTime(from)))
        .filter(appointments::starts_at.le(DbTime(until)))
        .filter(appointment_reminders::appointment_id.is_null())
        .order((appointments::starts_at.asc(), appointments::id.asc()))
        .limit(limit_of(limit))
}

pub(crate) async fn reminder_candidates(
    conn: &mut Conn,
    from: OffsetDateTime,
    until: OffsetDateTime,
    limit: u32,
) -> Result<Vec<Appointment>, Failure> {
    let rows: Vec<AppointmentRow> = reminder_query(from, until, limit).load(conn).await?;
    rows.into_iter().map(Appointment::try_from).collect()
}

pub(crate) async fn explain_reminder_candidates(
    conn: &mut Conn,
    from: OffsetDateTime,
    until: OffsetDateTime,
    limit: u32,
) -> Result<Vec<String>, Failure> {
    explain(conn, reminder_query(from, until, limit)).await
}

/// The reminder's row, and its event only if the row is new (an unknown appointment is a
/// foreign-key violation: `Other`).
pub(crate) async fn schedule_reminder(
    conn: &mut Conn,
    appointment: AppointmentId,
    starts_at: OffsetDateTime,
    event: &OutboxEvent,
) -> Result<bool, Failure> {
    let event = OutboxRow::from(event);
    write_tx!(conn, async |conn: &mut Conn| -> Result<bool, Failure> {
        let inserted = diesel::insert_into(appointment_reminders::table)
            .values((
                appointment_reminders::appointment_id.eq(DbUuid(appointment.0)),
                appointment_reminders::starts_at.eq(DbTime(starts_at)),
                appointment_reminders::created_at.eq(event.created_at),
            ))
            .on_conflict_do_nothing()
            .execute(conn)
            .await?;
        if inserted == 0 {
            return Ok(false);
        }
        diesel::insert_into(outbox_events::table).values(&event).execute(conn).await?;
        Ok(true)
    })
    .await
}

// ---------------------------------------------------------------------------- the inbox

type ListQuery = BoxedSelect<notifications::table, NotificationRow>;

/// A recipient's notifications (id, kind and mission) newest first (`ORDER BY id DESC`),
/// the ids below `page.after`, `page.fetch_limit()` rows, from
/// `notifications_recipient_idx` or, unread only, `notifications_unread_idx` (both lead
/// with the recipient's id, kind and mission: migration 000017).
fn list_query(recipient: Recipient, unread_only: bool, page: &PageRequest) -> ListQuery {
    let mut query = notifications::table
        .select(NotificationRow::as_select())
        .into_boxed()
        .filter(notifications::recipient_id.eq(DbUuid(recipient.id.0)))
        .filter(notifications::recipient_kind.eq(recipient.kind.as_str()))
        .order(notifications::id.desc())
        .limit(page.fetch_limit());
    query = match recipient.mission {
        Some(mission) => query.filter(notifications::mission_id.eq(DbUuid(mission.0))),
        None => query.filter(notifications::mission_id.is_null()),
    };
    if unread_only {
        query = query.filter(notifications::read_at.is_null());
    }
    if let Some(after) = page.after {
        query = query.filter(notifications::id.lt(DbUuid(after)));
    }
    query
}

/// The statement `$query` (of `notifications`) restricted to `$recipient`'s unread
/// notifications: its id, kind and mission all match. A macro, not a boxed query, because
/// an UPDATE takes no boxed filter.
macro_rules! unread_of {
    ($query:expr, $recipient:expr, |$q:ident| $then:expr) => {{
        let recipient: Recipient = $recipient;
        let mine = $query
            .filter(notifications::recipient_id.eq(DbUuid(recipient.id.0)))
            .filter(notifications::recipient_kind.eq(recipient.kind.as_str()))
            .filter(notifications::read_at.is_null());
        match recipient.mission {
            Some(mission) => {
                let $q = mine.filter(notifications::mission_id.eq(DbUuid(mission.0)));
                $then
            }
            None => {
                let $q = mine.filter(notifications::mission_id.is_null());
                $then
            }
        }
    }};
}

pub(crate) async fn list(
    conn: &mut Conn,
    recipient: Recipient,
    unread_only: bool,
    page: PageRequest,
) -> Result<Page<Notification>, Failure> {
    let rows: Vec<NotificationRow> = list_query(recipient, unread_only, &page).load(conn).await?;
    let found = rows.into_iter().map(Notification::try_from).collect::<Result<Vec<_>, _>>()?;
    Ok(Page::from_rows(found, &page, |n| n.id.0))
}

pub(crate) async fn explain_notification_list(
    conn: &mut Conn,
    recipient: Recipient,
    unread_only: bool,
    page: PageRequest,
) -> Result<Vec<String>, Failure> {
    explain(conn, list_query(recipient, unread_only, &page)).await
}

pub(crate) async fn unread_count(conn: &mut Conn, recipient: Recipient) -> Result<u64, Failure> {
    let count: i64 = unread_of!(notifications::table, recipient, |q| q.count().get_result(conn).await?);
    Ok(count_of(count))
}

pub(crate) async fn get(conn: &mut Conn, id: NotificationId) -> Result<Option<Notification>, Failure> {
    let row: Option<NotificationRow> = notifications::table
        .find(DbUuid(id.0))
        .select(NotificationRow::as_select())
        .first(conn)
        .await
        .optional()?;
    row.map(Notification::try_from).transpose()
}

/// Sets `read_at` only where it is not set, then reads the row back.
pub(crate) async fn mark_read(
    conn: &mut Conn,
    id: NotificationId,
    now: OffsetDateTime,
) -> Result<Option<Notification>, Failure> {
    write_tx!(conn, async |conn: &mut Conn| -> Result<Option<Notification>, Failure> {
        diesel::update(notifications::table.find(DbUuid(id.0)).filter(notifications::read_at.is_null()))
            .set(notifications::read_at.eq(Some(DbTime(now))))
            .execute(conn)
            .await?;
        get(conn, id).await
    })
    .await
}

pub(crate) async fn mark_all_read(
    conn: &mut Conn,
    recipient: Recipient,
    now: OffsetDateTime,
) -> Result<u64, Failure> {
    let updated = unread_of!(notifications::table, recipient, |q| {
        diesel::update(q).set(notifications::read_at.eq(Some(DbTime(now)))).execute(conn).await?
    });
    Ok(updated as u64)
}

/// A request's notifications newest first (`notifications_request_id_idx`), each with its
/// email if it has one.
pub(crate) async fn for_request(
    conn: &mut Conn,
    request: RequestId,
) -> Result<Vec<NotificationWithEmail>, Failure> {
    let rows: Vec<(NotificationRow, Option<EmailRow>, Option<String>)> = notifications::table
        .left_join(emails::table)
        .left_join(about())
        .filter(notifications::request_id.eq(DbUuid(request.0)))
        .order(notifications::id.desc())
        .select((
            NotificationRow::as_select(),
            Option::<EmailRow>::as_select(),
            citizens::given_name.nullable(),
        ))
        .load(conn)
        .await?;
    rows.into_iter()
        .map(|(row, email, about)| {
            let email = email.map(|e| e.into_email(&row.kind, row.details.clone(), about)).transpose()?;
            Ok(NotificationWithEmail { notification: Notification::try_from(row)?, email })
        })
        .collect()
}

// ------------------------------------------------------------------------- preferences

pub(crate) async fn preferences(
    conn: &mut Conn,
    principal: PrincipalId,
) -> Result<EmailPreferences, Failure> {
    let stored: Option<DbJson> = notification_preferences::table
        .find(DbUuid(principal.0))
        .select(notification_preferences::email_off)
        .first(conn)
        .await
        .optional()?;
    stored.map_or_else(|| Ok(EmailPreferences::default()), email_off_from_db)
}

pub(crate) async fn set_preferences(
    conn: &mut Conn,
    principal: PrincipalId,
    preferences: &EmailPreferences,
    now: OffsetDateTime,
    meta: &WriteMeta,
) -> Result<(), Failure> {
    let email_off = email_off_to_db(preferences)?;
    write_tx!(conn, async |conn: &mut Conn| -> Result<(), Failure> {
        write_meta::store(conn, meta).await?;
        diesel::insert_into(notification_preferences::table)
            .values((
                notification_preferences::principal_id.eq(DbUuid(principal.0)),
                notification_preferences::email_off.eq(email_off.clone()),
                notification_preferences::updated_at.eq(DbTime(now)),
            ))
            .on_conflict(notification_preferences::principal_id)
            .do_update()
            .set((
                notification_preferences::email_off.eq(email_off.clone()),
                notification_preferences::updated_at.eq(DbTime(now)),
            ))
            .execute(conn)
            .await?;
        Ok(())
    })
    .await
}

// ---------------------------------------------------------------------- the email queue

type EmailClaimQuery = IntoBoxed<'static, Select<emails::table, emails::id>, Backend>;

/// The two selections of an email claim, most overdue first, each read in its order from
/// its own partial index (one statement with `OR` would need a sort, or a scan of the
/// whole table in id order): emails whose sender's lease expired (from
/// `emails_sending_idx`, by lease end: a sender died), then emails due an attempt (from
/// `emails_due_idx`, by due time: for a new email, its creation).
fn expired_lease_query(claim: &Claim) -> EmailClaimQuery {
    emails::table
        .select(emails::id)
        .into_boxed()
        .filter(sql::<Bool>(SENDING))
        .filter(emails::locked_until.lt(DbTime(claim.now)))
        .order((emails::locked_until.asc(), emails::id.asc()))
        .limit(limit_of(claim.limit))
}

fn due_query(claim: &Claim, limit: i64) -> EmailClaimQuery {
    emails::table
        .select(emails::id)
        .into_boxed()
        .filter(sql::<Bool>(AWAITING_ATTEMPT))
        .filter(emails::next_attempt_at.le(DbTime(claim.now)))
        .order((emails::next_attempt_at.asc(), emails::id.asc()))
        .limit(limit)
}

/// The citizen a notification is about (`on_behalf_of`), to join on the left: their given
/// name is what a representative's email names.
fn about() -> diesel::dsl::On<
    citizens::table,
    diesel::dsl::Eq<diesel::dsl::Nullable<citizens::id>, notifications::on_behalf_of>,
> {
    citizens::table.on(citizens::id.nullable().eq(notifications::on_behalf_of))
}

/// The emails of `ids` with their notifications' kind and details and the name of whom
/// they are about, in the order of `ids`.
async fn emails_with_notifications(conn: &mut Conn, ids: &[DbUuid]) -> Result<Vec<Email>, Failure> {
    let mut rows: Vec<(EmailRow, String, DbJson, Option<String>)> = emails::table
        .inner_join(notifications::table)
        .left_join(about())
        .filter(emails::id.eq_any(ids.to_vec()))
        .select((
            EmailRow::as_select(),
            notifications::kind,
            notifications::details,
            citizens::given_name.nullable(),
        ))
        .load(conn)
        .await?;
    rows.sort_by_key(|(email, _, _, _)| ids.iter().position(|id| *id == email.id));
    rows.into_iter().map(|(email, kind, details, about)| email.into_email(&kind, details, about)).collect()
}

pub(crate) async fn claim_emails(conn: &mut Conn, claim: &Claim) -> Result<Vec<Email>, Failure> {
    write_tx!(conn, async |conn: &mut Conn| -> Result<Vec<Email>, Failure> {
        let mut ids: Vec<DbUuid> = SkipLocked(expired_lease_query(claim)).load(conn).await?;
        let room = claim.limit.saturating_sub(u32::try_from(ids.len()).unwrap_or(u32::MAX));
        if room > 0 {
            ids.extend(SkipLocked(due_query(claim, limit_of(room))).load::<DbUuid>(conn).await?);
        }
        let mut claimed = Vec::with_capacity(ids.len());
        for batch in ids.chunks(IDS_PER_STATEMENT) {
            diesel::update(emails::table.filter(emails::id.eq_any(batch.to_vec())))
                .set((
                    emails::status.eq(EmailStatus::Sending.as_str()),
                    emails::attempts.eq(emails::attempts + 1),
                    emails::locked_until.eq(Some(DbTime(claim.lease_until))),
                    emails::sent_by.eq(Some(claim.node.as_str())),
                    emails::updated_at.eq(DbTime(claim.now)),
                ))
                .execute(conn)
                .await?;
            claimed.extend(emails_with_notifications(conn, batch).await?);
        }
        Ok(claimed)
    })
    .await
}

/// The plans of both selections of [`claim_emails`], one after the other.
pub(crate) async fn explain_email_claim(conn: &mut Conn, claim: &Claim) -> Result<Vec<String>, Failure> {
    let mut plan = explain(conn, expired_lease_query(claim)).await?;
    plan.extend(explain(conn, due_query(claim, limit_of(claim.limit))).await?);
    Ok(plan)
}

/// One guarded statement, checked and renewed at once: the lease moves to `lease_until`
/// only if the email is still `sending` by `node` with a lease that has not expired at
/// `now` (a sender that lost it, even to nobody yet, must not send: it may be claimed at
/// any moment). On PostgreSQL the `UPDATE` takes the row's lock, so a claim running at
/// the same time skips the row (`SKIP LOCKED`) or, once it commits, makes the guard fail;
/// on SQLite writes are serialised.
pub(crate) async fn renew_email_lease(
    conn: &mut Conn,
    email: EmailId,
    node: &str,
    now: OffsetDateTime,
    lease_until: OffsetDateTime,
) -> Result<bool, Failure> {
    let updated = diesel::update(
        emails::table
            .find(DbUuid(email.0))
            .filter(emails::status.eq(EmailStatus::Sending.as_str()))
            .filter(emails::sent_by.eq(node))
            .filter(emails::locked_until.gt(DbTime(now))),
    )
    .set(emails::locked_until.eq(Some(DbTime(lease_until))))
    .execute(conn)
    .await?;
    Ok(updated == 1)
}

/// One guarded statement: the email changes only if it is still `sending` by `node`.
/// `last_error` is the last failure's text ([`Email::last_error`]): an attempt without an
/// error (a delivery) keeps the one before.
pub(crate) async fn record_attempt(
    conn: &mut Conn,
    email: EmailId,
    node: &str,
    after: AfterAttempt,
    error: Option<String>,
    now: OffsetDateTime,
) -> Result<bool, Failure> {
    let delivered_at = (after.status == EmailStatus::Delivered).then_some(DbTime(now));
    let updated = diesel::update(
        emails::table
            .find(DbUuid(email.0))
            .filter(emails::status.eq(EmailStatus::Sending.as_str()))
            .filter(emails::sent_by.eq(node)),
    )
    .set((
        emails::status.eq(after.status.as_str()),
        emails::next_attempt_at.eq(after.next_attempt_at.map(DbTime)),
        error.map(|error| emails::last_error.eq(Some(error))),
        emails::delivered_at.eq(delivered_at),
        emails::locked_until.eq(None::<DbTime>),
        emails::updated_at.eq(DbTime(now)),
    ))
    .execute(conn)
    .await?;
    Ok(updated == 1)
}

pub(crate) async fn email(conn: &mut Conn, id: EmailId) -> Result<Option<Email>, Failure> {
    Ok(emails_with_notifications(conn, &[DbUuid(id.0)]).await?.pop())
}
