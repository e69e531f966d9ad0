//! Notifications (docs/notifications.md): the `notifications`, `emails`,
//! `notification_preferences` and `appointment_reminders` tables, their rows,
//! [`NotificationRepository`] (the outbox worker's leases on `outbox_events`, the inbox,
//! preferences and the email queue) and the plans of its claims and inbox list for tests.
//!
//! An email row holds its delivery only: the kind and details its templates render
//! ([`Email::kind`], [`Email::details`]) are its notification's, and the name of the
//! citizen it is about ([`Email::about`]) that citizen's, read by joins, never copied.
//!
//! The claims are the only queries of the adapter whose SQL differs between the databases,
//! and only by what [`ClaimDialect`] and [`SkipLocked`] add on PostgreSQL: a
//! transaction-scoped advisory lock that serialises event claims between nodes, and
//! `FOR UPDATE SKIP LOCKED` on the rows a claim selects. On SQLite a claim's `BEGIN
//! IMMEDIATE` serialises it with every other write.

use crate::failure::Failure;
use crate::shared::columns::{corrupt, from_json, to_json};
use crate::shared::repository;
use crate::shared::sql_types::{DbJson, DbTime, DbUuid};
use consular_domain::notification::{
    AfterAttempt, Category, Details, Email, EmailPreferences, Notification, NotificationKind, Produced,
    Recipient,
};
use consular_domain::{
    Appointment, AppointmentId, EmailId, NotificationId, Page, PageRequest, PrincipalId, RequestId,
};
use consular_ports::{Backlog, Claim, NotificationRepository, NotificationWithEmail, OutboxEvent, WriteMeta};
use diesel::QueryResult;
use diesel::pg::Pg;
use diesel::prelude::*;
use diesel::query_builder::{AstPass, Query, QueryFragment, QueryId};
use diesel::sqlite::Sqlite;
use serde::{Deserialize, Serialize};
use time::OffsetDateTime;
use uuid::Uuid;

diesel::table! {
    use diesel::sql_types::*;
    use crate::shared::sql_types::{PortableJson, PortableTimestamp, PortableUuid};

    notifications (id) {
        id -> PortableUuid,
        recipient_id -> PortableUuid,
        recipient_kind -> Text,
        event_id -> PortableUuid,
        kind -> Text,
        mission_id -> Nullable<PortableUuid>,
        request_id -> Nullable<PortableUuid>,
        details -> PortableJson,
        created_at -> PortableTimestamp,
        read_at -> Nullable<PortableTimestamp>,
        on_behalf_of -> Nullable<PortableUuid>,
    }
}

diesel::table! {
    use diesel::sql_types::*;
    use crate::shared::sql_types::{PortableTimestamp, PortableUuid};

    emails (id) {
        id -> PortableUuid,
        notification_id -> PortableUuid,
        to_address -> Text,
        language -> Text,
        status -> Text,
        attempts -> Integer,
        next_attempt_at -> Nullable<PortableTimestamp>,
        locked_until -> Nullable<PortableTimestamp>,
        sent_by -> Nullable<Text>,
        last_error -> Nullable<Text>,
        created_at -> PortableTimestamp,
        updated_at -> PortableTimestamp,
        delivered_at -> Nullable<PortableTimestamp>,
    }
}

diesel::table! {
    use diesel::sql_types::*;
    use crate::shared::sql_types::{PortableJson, PortableTimestamp, PortableUuid};

    notification_preferences (principal_id) {
        principal_id -> PortableUuid,
        email_off -> PortableJson,
        updated_at -> PortableTimestamp,
    }
}

diesel::table! {
    use diesel::sql_types::*;
    use crate::shared::sql_types::{PortableTimestamp, PortableUuid};

    appointment_reminders (appointment_id, starts_at) {
        appointment_id -> PortableUuid,
        starts_at -> PortableTimestamp,
        created_at -> PortableTimestamp,
    }
}

/// The unique constraints of the area (see `crate::error`).
pub(crate) const UNIQUE_CONSTRAINTS: &[(&str, &str)] = &[
    ("notifications_pkey", "notifications.id"),
    ("notifications_event_recipient_key", "notifications.event_id, notifications.recipient_id"),
    ("emails_pkey", "emails.id"),
    ("emails_notification_id_key", "emails.notification_id"),
    ("notification_preferences_pkey", "notification_preferences.principal_id"),
    ("appointment_reminders_pkey", "appointment_reminders.appointment_id, appointment_reminders.starts_at"),
];

/// "The email waits for an attempt", as literal SQL text rather than bound values: the
/// predicate of `emails_due_idx` word for word, which is what lets the planners
/// (PostgreSQL's with generic plans, SQLite's always) use it.
pub(crate) const AWAITING_ATTEMPT: &str = "emails.status IN ('pending', 'temporary_failure')";
/// "A sender holds the email": the predicate of `emails_sending_idx`.
pub(crate) const SENDING: &str = "emails.status = 'sending'";
/// "The appointment is booked": the predicate of `appointments_booked_starts_at_idx`.
pub(crate) const BOOKED: &str = "appointments.status = 'booked'";

repository! {
    impl NotificationRepository for Database => notifications {
        fn claim_events(claim: &Claim) -> Vec<OutboxEvent>;
        fn complete_events(
            node: &str,
            done: &[Uuid],
            produced: &[Produced],
            now: OffsetDateTime,
        ) -> u64;
        fn backlog() -> Backlog;
        fn reminder_candidates(from: OffsetDateTime, until: OffsetDateTime, limit: u32) -> Vec<Appointment>;
        fn schedule_reminder(appointment: AppointmentId, starts_at: OffsetDateTime, event: &OutboxEvent) -> bool;
        fn list(recipient: Recipient, unread_only: bool, page: PageRequest) -> Page<Notification>;
        fn unread_count(recipient: Recipient) -> u64;
        fn get(id: NotificationId) -> Option<Notification>;
        fn mark_read(id: NotificationId, now: OffsetDateTime) -> Option<Notification>;
        fn mark_all_read(recipient: Recipient, now: OffsetDateTime) -> u64;
        fn for_request(request: RequestId) -> Vec<NotificationWithEmail>;
        fn preferences(principal: PrincipalId) -> EmailPreferences;
        fn set_preferences(
            principal: PrincipalId,
            preferences: &EmailPreferences,
            now: OffsetDateTime,
            meta: &WriteMeta,
        );
        fn claim_emails(claim: &Claim) -> Vec<Email>;
        fn renew_email_lease(
            email: EmailId,
            node: &str,
            now: OffsetDateTime,
            lease_until: OffsetDateTime,
        ) -> bool;
        fn record_attempt(
            email: EmailId,
            node: &str,
            after: AfterAttempt,
            error: Option<String>,
            now: OffsetDateTime,
        ) -> bool;
        fn email(id: EmailId) -> Option<Email>;
    }
}

repository! {
    impl Database => notifications {
        /// The query plan of the selection of [`NotificationRepository::claim_events`],
        /// one line per row; for tests. Read as for
        /// [`explain_request_list`](crate::Database::explain_request_list).
        #[doc(hidden)]
        pub fn explain_event_claim(claim: &Claim) -> Vec<String>;
        /// The query plan of the selection of [`NotificationRepository::claim_emails`];
        /// for tests.
        #[doc(hidden)]
        pub fn explain_email_claim(claim: &Claim) -> Vec<String>;
        /// The query plan of [`NotificationRepository::list`]; for tests.
        #[doc(hidden)]
        pub fn explain_notification_list(
            recipient: Recipient,
            unread_only: bool,
            page: PageRequest,
        ) -> Vec<String>;
        /// The query plan of [`NotificationRepository::reminder_candidates`]; for tests.
        #[doc(hidden)]
        pub fn explain_reminder_candidates(
            from: OffsetDateTime,
            until: OffsetDateTime,
            limit: u32,
        ) -> Vec<String>;
    }
}

// ------------------------------------------------------------ what the databases differ in

/// What a claim does differently per database, chosen by the backend of the `Conn` type
/// `queries.rs` is compiled with.
pub(crate) trait ClaimDialect {
    /// Run first in an event claim's transaction, if any: on PostgreSQL a transaction-scoped
    /// advisory lock, so that the claims of several nodes run one after the other (for the
    /// claim's few milliseconds) and each sees the leases of those before it, which the
    /// per-aggregate rule reads. SQLite's `BEGIN IMMEDIATE` serialises claims already.
    const SERIALISE_EVENT_CLAIMS: Option<&'static str>;
}

impl ClaimDialect for Pg {
    // The key is "consulob" in ASCII (the migrations' lock is "consular").
    const SERIALISE_EVENT_CLAIMS: Option<&'static str> =
        Some("SELECT pg_advisory_xact_lock(x'636f6e73756c6f62'::bigint)");
}

impl ClaimDialect for Sqlite {
    const SERIALISE_EVENT_CLAIMS: Option<&'static str> = None;
}

/// A claim's selection: `<query> FOR UPDATE SKIP LOCKED` on PostgreSQL (rows another
/// transaction is claiming or updating are passed over, and the selected ones stay locked
/// until the claim commits its leases), the query as it is on SQLite (one writer at a
/// time). `query` must be a whole `SELECT` of one table, `ORDER BY` and `LIMIT` included.
#[derive(Debug, Clone, Copy)]
pub(crate) struct SkipLocked<Q>(pub Q);

impl<Q> QueryId for SkipLocked<Q> {
    type QueryId = ();
    const HAS_STATIC_QUERY_ID: bool = false;
}

impl<Q: Query> Query for SkipLocked<Q> {
    type SqlType = Q::SqlType;
}

impl<Q: QueryFragment<Pg>> QueryFragment<Pg> for SkipLocked<Q> {
    fn walk_ast<'b>(&'b self, mut out: AstPass<'_, 'b, Pg>) -> QueryResult<()> {
        self.0.walk_ast(out.reborrow())?;
        out.push_sql(" FOR UPDATE SKIP LOCKED");
        Ok(())
    }
}

impl<Q: QueryFragment<Sqlite>> QueryFragment<Sqlite> for SkipLocked<Q> {
    fn walk_ast<'b>(&'b self, out: AstPass<'_, 'b, Sqlite>) -> QueryResult<()> {
        self.0.walk_ast(out)
    }
}

// ------------------------------------------------------------------------------- rows

#[derive(Debug, Clone, Queryable, Selectable, Insertable)]
#[diesel(table_name = notifications)]
#[diesel(treat_none_as_default_value = false)]
pub(crate) struct NotificationRow {
    pub id: DbUuid,
    pub recipient_id: DbUuid,
    pub recipient_kind: String,
    pub event_id: DbUuid,
    pub kind: String,
    pub mission_id: Option<DbUuid>,
    pub request_id: Option<DbUuid>,
    pub details: DbJson,
    pub created_at: DbTime,
    pub read_at: Option<DbTime>,
    /// The citizen it is about, when it went to one of their representatives (migration
    /// 000029).
    pub on_behalf_of: Option<DbUuid>,
}

impl TryFrom<&Notification> for NotificationRow {
    type Error = Failure;
    fn try_from(n: &Notification) -> Result<Self, Failure> {
        Ok(NotificationRow {
            id: DbUuid(n.id.0),
            recipient_id: DbUuid(n.recipient_id.0),
            recipient_kind: n.recipient_kind.as_str().to_owned(),
            event_id: DbUuid(n.event_id),
            kind: n.kind.as_str().to_owned(),
            mission_id: n.mission_id.map(|m| DbUuid(m.0)),
            request_id: n.request_id.map(|r| DbUuid(r.0)),
            details: to_json("notification details", &DetailsDoc::from(&n.details))?,
            created_at: DbTime(n.created_at),
            read_at: n.read_at.map(DbTime),
            on_behalf_of: n.on_behalf_of.map(|c| DbUuid(c.0)),
        })
    }
}

impl TryFrom<NotificationRow> for Notification {
    type Error = Failure;
    fn try_from(row: NotificationRow) -> Result<Self, Failure> {
        Ok(Notification {
            id: row.id.0.into(),
            recipient_id: row.recipient_id.0.into(),
            recipient_kind: row
                .recipient_kind
                .parse()
                .map_err(|e| corrupt("notifications.recipient_kind", e))?,
            event_id: row.event_id.0,
            kind: notification_kind(&row.kind)?,
            mission_id: row.mission_id.map(|m| m.0.into()),
            request_id: row.request_id.map(|r| r.0.into()),
            on_behalf_of: row.on_behalf_of.map(|c| c.0.into()),
            details: details(row.details)?,
            created_at: row.created_at.0,
            read_at: row.read_at.map(|t| t.0),
        })
    }
}

/// `notifications.kind`.
pub(crate) fn notification_kind(text: &str) -> Result<NotificationKind, Failure> {
    text.parse().map_err(|e| corrupt("notifications.kind", e))
}

/// `notifications.details`.
pub(crate) fn details(json: DbJson) -> Result<Details, Failure> {
    from_json::<DetailsDoc>("notifications.details", json).map(Details::from)
}

#[derive(Debug, Clone, Queryable, Selectable, Insertable)]
#[diesel(table_name = emails)]
#[diesel(treat_none_as_default_value = false)]
pub(crate) struct EmailRow {
    pub id: DbUuid,
    pub notification_id: DbUuid,
    pub to_address: String,
    pub language: String,
    pub status: String,
    pub attempts: i32,
    pub next_attempt_at: Option<DbTime>,
    pub locked_until: Option<DbTime>,
    pub sent_by: Option<String>,
    pub last_error: Option<String>,
    pub created_at: DbTime,
    pub updated_at: DbTime,
    pub delivered_at: Option<DbTime>,
}

impl TryFrom<&Email> for EmailRow {
    type Error = Failure;
    /// A new email's row: no sender holds it yet.
    fn try_from(e: &Email) -> Result<Self, Failure> {
        Ok(EmailRow {
            id: DbUuid(e.id.0),
            notification_id: DbUuid(e.notification_id.0),
            to_address: e.to.clone(),
            language: e.language.as_str().to_owned(),
            status: e.status.as_str().to_owned(),
            attempts: i32::try_from(e.attempts).map_err(|err| corrupt("email attempts", err))?,
            next_attempt_at: e.next_attempt_at.map(DbTime),
            locked_until: None,
            sent_by: None,
            last_error: e.last_error.clone(),
            created_at: DbTime(e.created_at),
            updated_at: DbTime(e.updated_at),
            delivered_at: e.delivered_at.map(DbTime),
        })
    }
}

impl EmailRow {
    /// The email, with its notification's `kind` and `details` (its columns' text), and
    /// the given name of the citizen the notification is about (`on_behalf_of`), if any.
    pub(crate) fn into_email(
        self,
        kind: &str,
        details_json: DbJson,
        about: Option<String>,
    ) -> Result<Email, Failure> {
        Ok(Email {
            id: self.id.0.into(),
            notification_id: self.notification_id.0.into(),
            to: self.to_address,
            language: self.language.parse().map_err(|e| corrupt("emails.language", e))?,
            kind: notification_kind(kind)?,
            details: details(details_json)?,
            about,
            status: self.status.parse().map_err(|e| corrupt("emails.status", e))?,
            attempts: u32::try_from(self.attempts).map_err(|e| corrupt("emails.attempts", e))?,
            next_attempt_at: self.next_attempt_at.map(|t| t.0),
            last_error: self.last_error,
            created_at: self.created_at.0,
            updated_at: self.updated_at.0,
            delivered_at: self.delivered_at.map(|t| t.0),
        })
    }
}

/// `notification_preferences.email_off`: the names of the categories turned off.
pub(crate) fn email_off_to_db(preferences: &EmailPreferences) -> Result<DbJson, Failure> {
    let names: Vec<&str> = preferences.off.iter().map(|c| c.as_str()).collect();
    to_json("email preferences", &names)
}

pub(crate) fn email_off_from_db(json: DbJson) -> Result<EmailPreferences, Failure> {
    let names: Vec<String> = from_json("notification_preferences.email_off", json)?;
    let off = names
        .iter()
        .map(|name| name.parse::<Category>().map_err(|e| corrupt("notification_preferences.email_off", e)))
        .collect::<Result<_, _>>()?;
    Ok(EmailPreferences { off })
}

/// `notifications.details`: [`Details`]' fields, under the same names.
#[derive(Serialize, Deserialize)]
struct DetailsDoc {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    service: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    status: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    reason: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    stage: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    document_id: Option<Uuid>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    document_kind: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    appointment_id: Option<Uuid>,
    #[serde(default, skip_serializing_if = "Option::is_none", with = "time::serde::rfc3339::option")]
    starts_at: Option<OffsetDateTime>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    local_time: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    timezone: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    mission: Option<String>,
}

impl From<&Details> for DetailsDoc {
    fn from(d: &Details) -> Self {
        DetailsDoc {
            service: d.service.clone(),
            status: d.status.clone(),
            reason: d.reason.clone(),
            stage: d.stage.clone(),
            document_id: d.document_id,
            document_kind: d.document_kind.clone(),
            appointment_id: d.appointment_id,
            starts_at: d.starts_at,
            local_time: d.local_time.clone(),
            timezone: d.timezone.clone(),
            mission: d.mission.clone(),
        }
    }
}

impl From<DetailsDoc> for Details {
    fn from(doc: DetailsDoc) -> Self {
        Details {
            service: doc.service,
            status: doc.status,
            reason: doc.reason,
            stage: doc.stage,
            document_id: doc.document_id,
            document_kind: doc.document_kind,
            appointment_id: doc.appointment_id,
            starts_at: doc.starts_at,
            local_time: doc.local_time,
            timezone: doc.timezone,
            mission: doc.mission,
        }
    }
}
