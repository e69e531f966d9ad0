//! What an event becomes: the in-app [`Notification`] of its recipient and, unless they
//! turned its category off, the [`Email`] that tells them the same (docs/notifications.md).
//! [`produce`] decides both from the event, the people it concerns and the recipient's
//! [`EmailPreferences`]; nothing here does I/O.

use super::email::EmailStatus;
use super::kind::{Audience, Category, NotificationKind, audience};
use crate::event::EventKind;
use crate::text_enum::text_enum;
use crate::{CitizenId, EmailId, MissionId, NotificationId, PrincipalId, PrincipalKind, RequestId};
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;
use time::{Duration, OffsetDateTime};
use uuid::Uuid;

/// What a notification says besides its kind. Every field is something its recipient
/// may read through the API anyway (a status and its reason, a stage's name, a document's
/// kind and rejection reason, an appointment's time and place): there is no field a
/// message body, an internal note or a document's contents could go in.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Details {
    /// The service type's name (request events).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub service: Option<String>,
    /// The request's new status.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<String>,
    /// The reason given with a status change or a document rejection.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// The name of the stage a request advanced to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stage: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub document_id: Option<Uuid>,
    /// The document's kind (`passport_photo`, ...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub document_kind: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub appointment_id: Option<Uuid>,
    #[serde(default, skip_serializing_if = "Option::is_none", with = "time::serde::rfc3339::option")]
    pub starts_at: Option<OffsetDateTime>,
    /// `starts_at` on the mission's wall clock (`2027-03-02 10:00`), with `timezone`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub local_time: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timezone: Option<String>,
    /// The mission's name (appointments).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mission: Option<String>,
}

/// A notification in its recipient's in-app inbox.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Notification {
    pub id: NotificationId,
    /// The citizen or staff member it is for (their principal id).
    pub recipient_id: PrincipalId,
    pub recipient_kind: PrincipalKind,
    /// The outbox event it came from: `(event_id, recipient_id)` is unique, so an event
    /// handled twice produces it once.
    pub event_id: Uuid,
    pub kind: NotificationKind,
    /// The mission the event happened at (staff see emails of their mission).
    pub mission_id: Option<MissionId>,
    pub request_id: Option<RequestId>,
    /// The citizen it is about when it went to one of their representatives (their
    /// dependant: docs/representation.md "Notifications"); `None` when it is about its
    /// recipient's own request, document or appointment, or went to staff.
    pub on_behalf_of: Option<CitizenId>,
    pub details: Details,
    pub created_at: OffsetDateTime,
    pub read_at: Option<OffsetDateTime>,
}

/// Whose inbox: a principal id as the kind and mission a token acts as. Every inbox query
/// matches all three, so a token of another kind or mission bearing the same id reads,
/// marks and counts nothing of it (docs/api.md "Clients, principals and scopes").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Recipient {
    pub id: PrincipalId,
    pub kind: PrincipalKind,
    pub mission: Option<MissionId>,
}

impl Notification {
    /// The inbox it is in.
    pub fn recipient(&self) -> Recipient {
        Recipient { id: self.recipient_id, kind: self.recipient_kind, mission: self.mission_id }
    }

    /// Marks it read at `now`; reading it again keeps the first time. True when it changed.
    pub fn mark_read(&mut self, now: OffsetDateTime) -> bool {
        if self.read_at.is_some() {
            return false;
        }
        self.read_at = Some(now);
        true
    }
}

text_enum!(
    /// The languages emails are written in; any other preferred language gets English.
    Language ("language") {
        En = "en",
        Fr = "fr",
    }
);

impl Language {
    /// The language for a BCP 47 preference (`fr`, `fr-BE`, `en-GB`, `de`): its primary
    /// subtag when there are templates in it, else English.
    pub fn for_preference(preferred: &str) -> Language {
        let primary = preferred.split(['-', '_']).next().unwrap_or_default().to_ascii_lowercase();
        Language::ALL.into_iter().find(|l| l.as_str() == primary).unwrap_or(Language::En)
    }
}

/// The email telling a notification's recipient, with what its sender needs to render
/// and send it and where its delivery stands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Email {
    pub id: EmailId,
    pub notification_id: NotificationId,
    /// The address, as it was when the email was made.
    pub to: String,
    pub language: Language,
    /// The notification's kind and details, which the templates render.
    pub kind: NotificationKind,
    pub details: Details,
    /// The given name of the citizen it is about when it went to one of their
    /// representatives, so that it says whom it concerns; read with the email from the
    /// citizen's row (as `kind` and `details` from the notification's), never copied.
    pub about: Option<String>,
    pub status: EmailStatus,
    /// Attempts made so far (a claim by a sender counts as one).
    pub attempts: u32,
    /// When the next attempt is due (`pending`, `temporary_failure`).
    pub next_attempt_at: Option<OffsetDateTime>,
    /// The last failure's text (an SMTP reply or a connection error).
    pub last_error: Option<String>,
    pub created_at: OffsetDateTime,
    pub updated_at: OffsetDateTime,
    pub delivered_at: Option<OffsetDateTime>,
}

/// The categories a person turned email off for; in-app notifications are always on.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EmailPreferences {
    pub off: BTreeSet<Category>,
}

impl EmailPreferences {
    pub fn sends(&self, category: Category) -> bool {
        !self.off.contains(&category)
    }
}

/// Someone an event may concern, as the worker found them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Person {
    pub id: PrincipalId,
    pub kind: PrincipalKind,
    /// None: in-app only.
    pub email: Option<String>,
    pub language: Language,
    pub preferences: EmailPreferences,
}

/// An outbox event with what the worker looked up about it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EventFacts {
    pub event_id: Uuid,
    pub kind: EventKind,
    /// Who wrote a `message.posted`.
    pub author: Option<PrincipalKind>,
    /// The citizen the request or appointment belongs to.
    pub citizen: Option<Person>,
    /// Their given name, which an email to one of their representatives names.
    pub citizen_name: Option<String>,
    /// Whether that citizen is a minor at delivery (on the date in their mission's time
    /// zone): a minor hears of what concerns them only when none of their representatives
    /// does. The worker works it out only for a citizen with representations; without
    /// any, `false` changes nothing (nobody else hears it).
    pub citizen_minor: bool,
    /// That citizen's representatives who hear of this event
    /// ([`representatives_hearing`](super::representatives_hearing): in force at delivery,
    /// their mandate covering the event's service), as recipients of their own.
    pub representatives: Vec<Person>,
    /// The staff member the request is assigned to after the event.
    pub assignee: Option<Person>,
    pub mission_id: Option<MissionId>,
    pub request_id: Option<RequestId>,
    pub details: Details,
}

/// What one event produces for one recipient: a notification, and its email unless the
/// recipient has no address or turned the category off.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Produced {
    pub notification: Notification,
    pub email: Option<Email>,
}

/// What `facts` produce at `now`, by the table of [`audience`]: one [`Produced`] per
/// recipient, none when nobody hears the event or the person who would is unknown (a
/// request nobody is assigned to, an erased citizen). What concerns a citizen goes to each
/// of `facts.representatives` (marked `on_behalf_of` the citizen), and to the citizen
/// themself, first, if an adult, or if a minor whom no representative hears of it
/// (docs/notifications.md "Who hears what").
pub fn produce(facts: &EventFacts, now: OffsetDateTime) -> Vec<Produced> {
    let Some((kind, who)) = audience(facts.kind, facts.author) else { return Vec::new() };
    match who {
        Audience::Assignee => {
            facts.assignee.iter().map(|staff| made(facts, kind, staff, None, now)).collect()
        }
        Audience::Citizen => {
            let Some(citizen) = &facts.citizen else { return Vec::new() };
            let about = CitizenId(citizen.id.as_uuid());
            let mut produced: Vec<Produced> = facts
                .representatives
                .iter()
                .filter(|r| r.id != citizen.id)
                .map(|r| made(facts, kind, r, Some(about), now))
                .collect();
            if !facts.citizen_minor || produced.is_empty() {
                produced.insert(0, made(facts, kind, citizen, None, now));
            }
            produced
        }
    }
}

/// The notification of `kind` to `person` (and its email, unless they have no address or
/// turned its category off).
fn made(
    facts: &EventFacts,
    kind: NotificationKind,
    person: &Person,
    on_behalf_of: Option<CitizenId>,
    now: OffsetDateTime,
) -> Produced {
    let notification = Notification {
        id: NotificationId::new(),
        recipient_id: person.id,
        recipient_kind: person.kind,
        event_id: facts.event_id,
        kind,
        mission_id: facts.mission_id,
        request_id: facts.request_id,
        on_behalf_of,
        details: facts.details.clone(),
        created_at: now,
        read_at: None,
    };
    let email = person.email.as_ref().filter(|_| person.preferences.sends(kind.category())).map(|to| Email {
        id: EmailId::new(),
        notification_id: notification.id,
        to: to.clone(),
        language: person.language,
        kind,
        details: facts.details.clone(),
        about: on_behalf_of.and(facts.citizen_name.clone()),
        status: EmailStatus::Pending,
        attempts: 0,
        next_attempt_at: Some(now),
        last_error: None,
        created_at: now,
        updated_at: now,
        delivered_at: None,
    });
    Produced { notification, email }
}

/// How long before an appointment its reminder goes out.
pub const REMINDER_LEAD: Duration = Duration::hours(24);

/// Whether a booked appointment starting at `starts_at`, last booked or moved at
/// `changed_at`, is due its reminder at `now`: within the day before it starts, and only
/// if it was booked (or moved) before that day began; a booking made the day before
/// already told the citizen the time.
pub fn reminder_due(starts_at: OffsetDateTime, changed_at: OffsetDateTime, now: OffsetDateTime) -> bool {
    let window_opens = starts_at - REMINDER_LEAD;
    window_opens <= now && now < starts_at && changed_at < window_opens
}
