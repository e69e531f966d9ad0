//! The caller's own inbox and email preferences, and what staff see of the notifications
//! and emails about a request. Every use case asks `policy::notifications` first: another
//! principal's notification is 404.

use super::service::{NotificationService, PREFERENCES_RESOURCE};
use crate::error::{OrNotFound, ServiceError};
use consular_domain::notification::{Category, EmailPreferences, Notification};
use consular_domain::policy::{self, notifications as rules};
use consular_domain::{AccessEntry, AccessedData};
use consular_domain::{
    AuditAction, AuditRecord, NotificationId, Page, PageRequest, Principal, PrincipalId, RequestId,
};
use consular_ports::{NotificationWithEmail, WriteMeta};

/// A page of the caller's notifications and how many of all of theirs are unread.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Inbox {
    pub page: Page<Notification>,
    pub unread_count: u64,
}

/// The notifications produced about a request, with each email's delivery.
pub type RequestDelivery = Vec<NotificationWithEmail>;

impl NotificationService {
    /// The caller's notifications, newest first; unread ones only when `unread_only`.
    pub async fn inbox(
        &self,
        actor: &Principal,
        unread_only: bool,
        page: PageRequest,
    ) -> Result<Inbox, ServiceError> {
        let recipient = rules::inbox(actor);
        let page = self.ports.notifications.list(recipient, unread_only, page).await?;
        let unread_count = self.ports.notifications.unread_count(recipient).await?;
        Ok(Inbox { page, unread_count })
    }

    /// Marks the caller's notification `id` read (again: nothing changes, the first time
    /// is kept).
    pub async fn mark_read(
        &self,
        actor: &Principal,
        id: NotificationId,
    ) -> Result<Notification, ServiceError> {
        let notification = self.ports.notifications.get(id).await.or_not_found()?;
        rules::read(actor, &notification)?;
        if notification.read_at.is_some() {
            return Ok(notification);
        }
        let now = self.ports.clock.now();
        self.ports.notifications.mark_read(id, now).await.or_not_found()
    }

    /// Marks every notification of the caller read; how many were unread.
    pub async fn mark_all_read(&self, actor: &Principal) -> Result<u64, ServiceError> {
        let now = self.ports.clock.now();
        Ok(self.ports.notifications.mark_all_read(rules::inbox(actor), now).await?)
    }

    /// The email categories the caller turned off.
    pub async fn preferences(&self, actor: &Principal) -> Result<EmailPreferences, ServiceError> {
        let principal = self.own_preferences(actor).await?;
        Ok(self.ports.notifications.preferences(principal).await?)
    }

    /// The principal id whose preferences the caller reads and sets: theirs, unless the
    /// citizen or staff member of that id is of another kind or mission than the token.
    async fn own_preferences(&self, actor: &Principal) -> Result<PrincipalId, ServiceError> {
        let person =
            crate::clients::person_binding(&*self.ports.citizens, &*self.ports.staff, actor.subject.id)
                .await?;
        Ok(rules::preferences(actor, person)?)
    }

    /// Replaces the caller's preferences (audited).
    pub async fn set_preferences(
        &self,
        actor: &Principal,
        preferences: EmailPreferences,
    ) -> Result<EmailPreferences, ServiceError> {
        let principal = self.own_preferences(actor).await?;
        let now = self.ports.clock.now();
        let changed = Category::ALL.iter().map(|c| format!("email.{c}")).collect();
        let meta = WriteMeta {
            audit: vec![AuditRecord::new(
                Some(actor),
                now,
                AuditAction::Updated,
                PREFERENCES_RESOURCE,
                principal.as_uuid(),
                changed,
            )],
            events: Vec::new(),
            idempotency: None,
        };
        self.ports.notifications.set_preferences(principal, &preferences, now, &meta).await?;
        Ok(preferences)
    }

    /// The notifications about request `id` and how their emails fared: for those who
    /// work on the request (another mission's request is 404).
    pub async fn request_deliveries(
        &self,
        actor: &Principal,
        id: RequestId,
    ) -> Result<RequestDelivery, ServiceError> {
        policy::requests::work(actor)?;
        let request = self.ports.requests.get(id).await.or_not_found()?;
        rules::deliveries(actor, &policy::Owned::from(&request))?;
        let deliveries = self.ports.notifications.for_request(id).await?;
        let now = self.ports.clock.now();
        let what = AccessedData::RequestNotifications;
        self.ports.access.record(AccessEntry::of_read(actor, request.citizen_id, what, id.as_uuid(), now))?;
        Ok(deliveries)
    }
}
