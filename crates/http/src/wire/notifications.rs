//! The wire of `/api/v1/notifications` and a request's notifications: a notification and
//! what it says, the inbox's list parameters and unread count, the email preferences, and
//! an email's delivery.

use crate::wire::common::{PrincipalKindName, RequestStatusName, closed_set};
use consular_domain::notification::{
    Category, Details, Email, EmailPreferences, EmailStatus, Language, Notification, NotificationKind,
};
use consular_ports::NotificationWithEmail;
use serde::{Deserialize, Serialize};
use time::OffsetDateTime;
use utoipa::{IntoParams, ToSchema};
use uuid::Uuid;

closed_set!(NotificationKindName from NotificationKind, "What a notification tells its recipient.");
closed_set!(EmailLanguageName from Language, "The language an email is written in.");
closed_set!(EmailStatusName from EmailStatus, "Where an email's delivery stands.");

/// What a notification says besides its kind: only what its recipient may read through
/// the API anyway; absent fields do not apply to its kind.
#[derive(Debug, Serialize, ToSchema)]
pub struct NotificationDetails {
    /// The service type's name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub service: Option<String>,
    /// The request's new status.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<RequestStatusName>)]
    pub status: Option<String>,
    /// The reason of a status change or of a document's rejection.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// The stage a request advanced to.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stage: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub document_id: Option<Uuid>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub document_kind: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub appointment_id: Option<Uuid>,
    #[serde(skip_serializing_if = "Option::is_none", with = "time::serde::rfc3339::option")]
    #[schema(value_type = Option<String>, format = DateTime)]
    pub starts_at: Option<OffsetDateTime>,
    /// `starts_at` on the mission's clock, `YYYY-MM-DD HH:MM`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub local_time: Option<String>,
    /// The mission's IANA time zone.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timezone: Option<String>,
    /// The mission's name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mission: Option<String>,
}

impl From<Details> for NotificationDetails {
    fn from(d: Details) -> Self {
        NotificationDetails {
            service: d.service,
            status: d.status,
            reason: d.reason,
            stage: d.stage,
            document_id: d.document_id,
            document_kind: d.document_kind,
            appointment_id: d.appointment_id,
            starts_at: d.starts_at,
            local_time: d.local_time,
            timezone: d.timezone,
            mission: d.mission,
        }
    }
}

/// An in-app notification.
#[derive(Debug, Serialize, ToSchema)]
pub struct NotificationBody {
    pub id: Uuid,
    #[schema(value_type = NotificationKindName)]
    pub kind: String,
    /// The request it is about, when there is one.
    pub request_id: Option<Uuid>,
    /// The citizen it is about when it went to one of their representatives (the
    /// dependant's id); absent when it is about its recipient themself, or went to staff.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub on_behalf_of: Option<Uuid>,
    pub details: NotificationDetails,
    pub read: bool,
    #[serde(with = "time::serde::rfc3339::option")]
    #[schema(value_type = Option<String>, format = DateTime)]
    pub read_at: Option<OffsetDateTime>,
    #[serde(with = "time::serde::rfc3339")]
    #[schema(value_type = String, format = DateTime)]
    pub created_at: OffsetDateTime,
}

impl From<Notification> for NotificationBody {
    fn from(n: Notification) -> Self {
        NotificationBody {
            id: n.id.as_uuid(),
            kind: n.kind.as_str().to_owned(),
            request_id: n.request_id.map(|r| r.as_uuid()),
            on_behalf_of: n.on_behalf_of.map(|c| c.as_uuid()),
            details: n.details.into(),
            read: n.read_at.is_some(),
            read_at: n.read_at,
            created_at: n.created_at,
        }
    }
}

/// A page of the caller's notifications, newest first.
#[derive(Debug, Serialize, ToSchema)]
pub struct NotificationList {
    pub items: Vec<NotificationBody>,
    pub next_cursor: Option<String>,
    /// How many of all the caller's notifications are unread (not only on this page).
    pub unread_count: u64,
}

#[derive(Debug, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct NotificationListParams {
    /// Page size, 1 to 100 (default 20).
    #[param(minimum = 1, maximum = 100)]
    pub limit: Option<i64>,
    /// The `next_cursor` of the previous page.
    #[param(min_length = 22, max_length = 22, pattern = "^[A-Za-z0-9_-]{22}$")]
    pub cursor: Option<String>,
    /// Only unread notifications when true.
    pub unread: Option<bool>,
}

/// The inbox's field besides the page's.
#[derive(Debug, Serialize)]
pub struct UnreadCount {
    pub unread_count: u64,
}

/// How many notifications were marked read.
#[derive(Debug, Serialize, ToSchema)]
pub struct MarkedRead {
    pub marked: u64,
}

/// Email on or off per category; in-app notifications are always on.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct EmailCategories {
    /// Submission, status changes and stage advances of requests.
    pub requests: bool,
    /// Messages on a request's thread.
    pub messages: bool,
    /// Documents verified or rejected.
    pub documents: bool,
    /// Appointments booked, moved, cancelled, and the day-before reminder.
    pub appointments: bool,
    /// Staff: requests assigned to them.
    pub assignments: bool,
}

/// The caller's notification preferences.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct NotificationPreferences {
    pub email: EmailCategories,
}

impl From<EmailPreferences> for NotificationPreferences {
    fn from(p: EmailPreferences) -> Self {
        NotificationPreferences {
            email: EmailCategories {
                requests: p.sends(Category::Requests),
                messages: p.sends(Category::Messages),
                documents: p.sends(Category::Documents),
                appointments: p.sends(Category::Appointments),
                assignments: p.sends(Category::Assignments),
            },
        }
    }
}

impl From<NotificationPreferences> for EmailPreferences {
    fn from(p: NotificationPreferences) -> Self {
        let e = p.email;
        let on = [
            (Category::Requests, e.requests),
            (Category::Messages, e.messages),
            (Category::Documents, e.documents),
            (Category::Appointments, e.appointments),
            (Category::Assignments, e.assignments),
        ];
        EmailPreferences { off: on.into_iter().filter(|(_, on)| !on).map(|(c, _)| c).collect() }
    }
}

/// How an email fared (never its text).
#[derive(Debug, Serialize, ToSchema)]
pub struct EmailDelivery {
    pub id: Uuid,
    pub to: String,
    #[schema(value_type = EmailLanguageName)]
    pub language: String,
    #[schema(value_type = EmailStatusName)]
    pub status: String,
    pub attempts: u32,
    /// The last failure: the SMTP server's reply or the connection error.
    pub last_error: Option<String>,
    #[serde(with = "time::serde::rfc3339::option")]
    #[schema(value_type = Option<String>, format = DateTime)]
    pub next_attempt_at: Option<OffsetDateTime>,
    #[serde(with = "time::serde::rfc3339::option")]
    #[schema(value_type = Option<String>, format = DateTime)]
    pub delivered_at: Option<OffsetDateTime>,
    #[serde(with = "time::serde::rfc3339")]
    #[schema(value_type = String, format = DateTime)]
    pub updated_at: OffsetDateTime,
}

impl From<Email> for EmailDelivery {
    fn from(e: Email) -> Self {
        EmailDelivery {
            id: e.id.as_uuid(),
            to: e.to,
            language: e.language.as_str().to_owned(),
            status: e.status.as_str().to_owned(),
            attempts: e.attempts,
            last_error: e.last_error,
            next_attempt_at: e.next_attempt_at,
            delivered_at: e.delivered_at,
            updated_at: e.updated_at,
        }
    }
}

/// A notification about a request, its recipient and its email's delivery.
#[derive(Debug, Serialize, ToSchema)]
pub struct RequestNotification {
    #[serde(flatten)]
    pub notification: NotificationBody,
    pub recipient_id: Uuid,
    /// `citizen` or `staff`.
    #[schema(value_type = PrincipalKindName)]
    pub recipient_kind: String,
    /// None: no email was made (no SMTP server, no address, or the category is off).
    pub email: Option<EmailDelivery>,
}

impl From<NotificationWithEmail> for RequestNotification {
    fn from(d: NotificationWithEmail) -> Self {
        RequestNotification {
            recipient_id: d.notification.recipient_id.as_uuid(),
            recipient_kind: d.notification.recipient_kind.as_str().to_owned(),
            notification: d.notification.into(),
            email: d.email.map(EmailDelivery::from),
        }
    }
}

#[derive(Debug, Serialize, ToSchema)]
pub struct RequestNotificationList {
    pub items: Vec<RequestNotification>,
}
