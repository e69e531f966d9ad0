//! Internal notes (staff and admins of the mission) and the message thread between the
//! citizen who owns a request and the mission's staff (docs/requests.md "Notes,
//! messages, queues").

use super::service::RequestService;
use crate::ServiceError;
use crate::idempotency::{self, Created, IdempotencyRequest};
use consular_domain::request::validate_post_body;
use consular_domain::{AuditAction, AuditRecord, DomainEvent, Page, PageRequest, Principal, RequestId};
use consular_ports::{Message, Note, OutboxEvent, WriteMeta};
use uuid::Uuid;

impl RequestService {
    /// Adds an internal note (staff and admins of the mission).
    pub async fn add_note(
        &self,
        actor: &Principal,
        id: RequestId,
        body: String,
        idempotency_key: Option<&IdempotencyRequest>,
    ) -> Result<Created<Note>, ServiceError> {
        self.workable(actor, id).await?;
        let now = self.ports.clock.now();
        if let Some(replayed) =
            idempotency::replay(&*self.ports.idempotency, actor, idempotency_key, now).await?
        {
            return Ok(replayed);
        }
        validate_post_body(&body)?;
        let note = Note { id: Uuid::now_v7(), request_id: id, author: actor.subject, body, created_at: now };
        let meta = WriteMeta {
            audit: vec![AuditRecord::new(
                Some(actor),
                now,
                AuditAction::Created,
                "request_note",
                note.id,
                vec!["body".into()],
            )],
            events: Vec::new(),
            idempotency: idempotency::record(actor, idempotency_key, note.id, &note, now)?,
        };
        self.ports.requests.add_note(&note, &meta).await?;
        Ok(Created::fresh(note))
    }

    /// The internal notes (staff and admins of the mission), oldest first.
    pub async fn notes(
        &self,
        actor: &Principal,
        id: RequestId,
        page: PageRequest,
    ) -> Result<Page<Note>, ServiceError> {
        self.workable(actor, id).await?;
        Ok(self.ports.requests.notes(id, page).await?)
    }

    /// The message thread (the owner, staff and admins of the mission), oldest first.
    pub async fn messages(
        &self,
        actor: &Principal,
        id: RequestId,
        page: PageRequest,
    ) -> Result<Page<Message>, ServiceError> {
        self.readable(actor, id).await?;
        Ok(self.ports.requests.messages(id, page).await?)
    }

    /// Posts a message on the thread (the owner, staff and admins of the mission).
    pub async fn post_message(
        &self,
        actor: &Principal,
        id: RequestId,
        body: String,
        idempotency_key: Option<&IdempotencyRequest>,
    ) -> Result<Created<Message>, ServiceError> {
        let request = self.readable(actor, id).await?;
        let now = self.ports.clock.now();
        self.refuse_minor_alone(actor, now).await?;
        if let Some(replayed) =
            idempotency::replay(&*self.ports.idempotency, actor, idempotency_key, now).await?
        {
            return Ok(replayed);
        }
        validate_post_body(&body)?;
        let message = Message {
            id: Uuid::now_v7(),
            request_id: id,
            author: actor.subject,
            on_behalf_of: actor.on_behalf_of(),
            body,
            created_at: now,
        };
        let meta = WriteMeta {
            audit: vec![AuditRecord::new(
                Some(actor),
                now,
                AuditAction::Created,
                "request_message",
                message.id,
                vec!["body".into()],
            )],
            events: vec![OutboxEvent::new(
                &DomainEvent::MessagePosted {
                    request_id: request.id,
                    message_id: message.id,
                    author_kind: actor.subject.kind,
                    citizen_id: request.citizen_id,
                },
                now,
            )?],
            idempotency: idempotency::record(actor, idempotency_key, message.id, &message, now)?,
        };
        self.ports.requests.add_message(&message, &meta).await?;
        Ok(Created::fresh(message))
    }
}
