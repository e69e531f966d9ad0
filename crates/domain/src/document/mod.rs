//! Documents: the identity documents a citizen uploads (passport scans, photos,
//! certificates), their metadata and the state machine that governs them
//! (docs/documents.md "States").
//!
//! ```text
//! uploaded → verified | rejected   (staff and admins of the mission)
//! uploaded | rejected → deleted    (the owner: never once verified)
//! uploaded | verified | rejected → deleted   (staff and admins)
//! ```
//! `deleted` is final: the row stays as a tombstone for the audit log, the bytes are gone.
//! The document as stored and its statuses are in `model.rs`; what decides a new upload
//! and a request's required documents is in `checklist.rs`.

mod checklist;
mod disposition;
mod model;

pub use checklist::{
    ChecklistItem, ChecklistState, UploadRefused, checklist, may_upload, missing_for_approval,
};
pub use disposition::{attachment_disposition, safe_media_type};
pub use model::{Document, DocumentStatus, ScanStatus};

use crate::event::{DocumentRef, DomainEvent};
use crate::text_enum::text_enum;
use crate::validation::{CONTROL_CHARACTER, NO_CONTROL_IN_LINE, refused_in_line};
use crate::{
    CitizenId, DocumentId, MissionId, Reason, RequestId, Role, Subject, Trace, ValidationErrors, rules,
};
use std::borrow::Cow;
use time::OffsetDateTime;
use uuid::Uuid;
use validator::{Validate, ValidationError};

/// The longest file name kept, in characters.
pub const MAX_FILE_NAME: usize = 255;

text_enum!(
    /// A change asked of a document.
    DocumentAction ("document action") {
        Verify = "verify",
        Reject = "reject",
        Delete = "delete",
    }
);

/// Whether `role` may take `action` on a document in `status`: staff (and admins, who
/// act as staff) decide an uploaded document and delete any live one; the owner deletes
/// theirs while it is not verified; nothing changes a deleted document.
pub fn may(role: Role, status: DocumentStatus, action: DocumentAction) -> bool {
    use DocumentAction::*;
    use DocumentStatus::*;
    match (role, status, action) {
        (_, Deleted, _) => false,
        (Role::Staff, Uploaded, Verify | Reject) => true,
        (Role::Staff, _, Delete) => true,
        (Role::Citizen, Uploaded | Rejected, Delete) => true,
        _ => false,
    }
}

/// Why a change was refused: the actions allowed instead.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}", describe(*.from, *.action, *.role))]
pub struct IllegalDocumentTransition {
    pub from: DocumentStatus,
    pub action: DocumentAction,
    pub role: Role,
    pub allowed: Vec<DocumentAction>,
}

fn describe(from: DocumentStatus, action: DocumentAction, role: Role) -> String {
    let by = match role {
        Role::Citizen => "its owner",
        Role::Staff => "staff",
    };
    format!("a {from} document cannot be {} by {by}", past_participle(action))
}

fn past_participle(action: DocumentAction) -> &'static str {
    match action {
        DocumentAction::Verify => "verified",
        DocumentAction::Reject => "rejected",
        DocumentAction::Delete => "deleted",
    }
}

/// The key under which a document's bytes are stored: a fresh random-looking name in the
/// blob store's alphabet, generated before the bytes are written (the row follows them),
/// never derived from anything the uploader sent.
pub fn new_blob_key() -> String {
    format!("documents/{}", Uuid::now_v7().simple())
}

/// The part of an uploaded file name that is kept: its last path segment (a client may
/// send `C:\scans\passport.pdf` or `../../etc/passwd`; only `passport.pdf` or `passwd`
/// is kept). The name is metadata shown back to people, never a key or a path.
pub fn last_path_segment(raw: &str) -> &str {
    raw.rsplit(['/', '\\']).next().unwrap_or(raw)
}

/// Checks an uploaded file name as it will be kept (`last_path_segment`): 1 to
/// `MAX_FILE_NAME` characters, not blank, no control characters anywhere in what was
/// sent, and not `.` or `..`.
pub fn validate_file_name(raw: &str) -> Result<(), ValidationErrors> {
    rules::at_field("file_name", file_name(raw))
}

fn file_name(raw: &str) -> Result<(), ValidationError> {
    let kept = last_path_segment(raw);
    let fail = |code: &'static str, message: &'static str| {
        Err(ValidationError::new(code).with_message(Cow::Borrowed(message)))
    };
    if raw.chars().any(refused_in_line) {
        fail(CONTROL_CHARACTER, NO_CONTROL_IN_LINE)
    } else if kept.trim().is_empty() {
        fail("required", "must name a file, not a directory")
    } else if kept == "." || kept == ".." {
        fail("invalid_file_name", "must name a file, not a directory")
    } else if kept.chars().count() > MAX_FILE_NAME {
        fail("too_long", "must be at most 255 characters")
    } else {
        Ok(())
    }
}

fn is_sha256_hex(value: &str) -> bool {
    value.len() == 64 && value.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

fn sha256_hex(value: &str) -> Result<(), ValidationError> {
    if is_sha256_hex(value) {
        Ok(())
    } else {
        Err(ValidationError::new("invalid_sha256")
            .with_message(Cow::Borrowed("must be 64 lower-case hexadecimal digits")))
    }
}

fn media_type(value: &str) -> Result<(), ValidationError> {
    if is_media_type(value) {
        Ok(())
    } else {
        Err(ValidationError::new("invalid_media_type")
            .with_message(Cow::Borrowed("must be a media type such as application/pdf")))
    }
}

fn not_empty(size_bytes: u64) -> Result<(), ValidationError> {
    if size_bytes == 0 {
        Err(ValidationError::new("empty").with_message(Cow::Borrowed("the file is empty")))
    } else {
        Ok(())
    }
}

/// `type/subtype` in lower case, as the sniffer reports it (`application/pdf`).
fn is_media_type(value: &str) -> bool {
    let token = |part: &str| {
        !part.is_empty()
            && part.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b"+-.".contains(&b))
    };
    value.len() <= 127 && value.split_once('/').is_some_and(|(kind, sub)| token(kind) && token(sub))
}

/// What an upload knows once the bytes are stored: whose it is, what it is, and what
/// was measured while streaming.
#[derive(Debug, Clone, PartialEq, Eq, Validate)]
pub struct NewDocument {
    pub mission_id: MissionId,
    pub citizen_id: CitizenId,
    pub request_id: Option<RequestId>,
    /// A document kind of the service catalog (`passport_photo`).
    #[validate(custom(function = "rules::identifier"))]
    pub kind: String,
    /// The file name as sent; only `last_path_segment` of it is kept.
    #[validate(custom(function = "file_name"))]
    pub file_name: String,
    /// Detected from the bytes, never taken from the client.
    #[validate(custom(function = "media_type"))]
    pub media_type: String,
    #[validate(custom(function = "not_empty"))]
    pub size_bytes: u64,
    /// Lower-case hex of the SHA-256 of the bytes.
    #[validate(custom(function = "sha256_hex"))]
    pub sha256: String,
    pub scan: ScanStatus,
}

impl NewDocument {
    /// Every failing field at once, as JSON pointers.
    pub fn validate(&self) -> Result<(), ValidationErrors> {
        rules::flatten(Validate::validate(self))
    }
}

impl Document {
    /// A new `uploaded` document at version 1, its bytes stored under `blob_key`.
    /// `new` has passed `validate()`; the file name kept is its last path segment.
    pub fn upload(
        new: NewDocument,
        blob_key: String,
        uploaded_by: impl Into<Trace>,
        now: OffsetDateTime,
    ) -> Document {
        let uploaded_by = uploaded_by.into();
        Document {
            id: DocumentId::new(),
            mission_id: new.mission_id,
            citizen_id: new.citizen_id,
            request_id: new.request_id,
            kind: new.kind,
            status: DocumentStatus::Uploaded,
            file_name: last_path_segment(&new.file_name).to_owned(),
            media_type: new.media_type,
            size_bytes: new.size_bytes,
            sha256: new.sha256,
            blob_key,
            scan: new.scan,
            rejection_reason: None,
            uploaded_by: uploaded_by.actor,
            on_behalf_of: uploaded_by.on_behalf_of,
            decided_by: None,
            decided_at: None,
            deleted_at: None,
            deleted_by: None,
            version: 1,
            created_at: now,
            updated_at: now,
        }
    }

    /// What staff decided about it, if they did: `Verified` or `Rejected`, also once it
    /// is a tombstone (a rejection always has its reason, a verification never).
    pub fn decision(&self) -> Option<DocumentStatus> {
        self.decided_at?;
        Some(match self.rejection_reason {
            Some(_) => DocumentStatus::Rejected,
            None => DocumentStatus::Verified,
        })
    }

    /// The actions `role` may take now.
    pub fn allowed_actions(&self, role: Role) -> Vec<DocumentAction> {
        DocumentAction::ALL.into_iter().filter(|a| may(role, self.status, *a)).collect()
    }

    fn check(&self, role: Role, action: DocumentAction) -> Result<(), IllegalDocumentTransition> {
        if may(role, self.status, action) {
            Ok(())
        } else {
            Err(IllegalDocumentTransition {
                from: self.status,
                action,
                role,
                allowed: self.allowed_actions(role),
            })
        }
    }

    /// Staff accept the document: `document.verified`.
    pub fn verify(
        &mut self,
        role: Role,
        by: Subject,
        now: OffsetDateTime,
    ) -> Result<DomainEvent, IllegalDocumentTransition> {
        self.check(role, DocumentAction::Verify)?;
        self.decide(DocumentStatus::Verified, by, now);
        Ok(DomainEvent::DocumentVerified { document: DocumentRef::of(self) })
    }

    /// Staff refuse the document, with a reason the citizen reads; the kind may then be
    /// uploaded again: `document.rejected`.
    pub fn reject(
        &mut self,
        role: Role,
        reason: Reason,
        by: Subject,
        now: OffsetDateTime,
    ) -> Result<DomainEvent, IllegalDocumentTransition> {
        self.check(role, DocumentAction::Reject)?;
        let text = reason.as_str().to_owned();
        self.rejection_reason = Some(reason);
        self.decide(DocumentStatus::Rejected, by, now);
        Ok(DomainEvent::DocumentRejected { document: DocumentRef::of(self), reason: text })
    }

    /// Makes the document a tombstone: gone from every listing and checklist, its bytes
    /// to be removed from storage; the decision and reason stay for the audit trail and
    /// the request's timeline, with who deleted it and when: `document.deleted`.
    pub fn delete(
        &mut self,
        role: Role,
        by: Subject,
        now: OffsetDateTime,
    ) -> Result<DomainEvent, IllegalDocumentTransition> {
        self.check(role, DocumentAction::Delete)?;
        self.status = DocumentStatus::Deleted;
        self.deleted_at = Some(now);
        self.deleted_by = Some(by);
        self.touch(now);
        Ok(DomainEvent::DocumentDeleted { document: DocumentRef::of(self) })
    }

    fn decide(&mut self, status: DocumentStatus, by: Subject, now: OffsetDateTime) {
        self.status = status;
        self.decided_by = Some(by);
        self.decided_at = Some(now);
        self.touch(now);
    }

    /// Every change makes a new version.
    fn touch(&mut self, now: OffsetDateTime) {
        self.version += 1;
        self.updated_at = now;
    }

    pub fn is_deleted(&self) -> bool {
        self.status == DocumentStatus::Deleted
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::{PrincipalId, PrincipalKind};
    use DocumentAction::*;
    use DocumentStatus::*;

    pub(crate) fn staff() -> Subject {
        Subject { kind: PrincipalKind::Staff, id: PrincipalId::new() }
    }

    pub(crate) fn new_document(kind: &str) -> NewDocument {
        NewDocument {
            mission_id: MissionId::new(),
            citizen_id: CitizenId::new(),
            request_id: Some(RequestId::new()),
            kind: kind.to_owned(),
            file_name: "C:\\scans\\passport.pdf".to_owned(),
            media_type: "application/pdf".to_owned(),
            size_bytes: 1024,
            sha256: "ab".repeat(32),
            scan: ScanStatus::NotConfigured,
        }
    }

    pub(crate) fn document(status: DocumentStatus) -> Document {
        let owner = Subject { kind: PrincipalKind::Citizen, id: PrincipalId::new() };
        let mut d = Document::upload(
            new_document("passport_photo"),
            new_blob_key(),
            owner,
            OffsetDateTime::UNIX_EPOCH,
        );
        d.status = status;
        d
    }

    fn reason(text: &str) -> Reason {
        Reason::required(Some(text.to_owned())).unwrap()
    }

    fn take(
        d: &mut Document,
        role: Role,
        action: DocumentAction,
    ) -> Result<DomainEvent, IllegalDocumentTransition> {
        let now = OffsetDateTime::UNIX_EPOCH + time::Duration::hours(1);
        match action {
            Verify => d.verify(role, staff(), now),
            Reject => d.reject(role, reason("blurred"), staff(), now),
            Delete => d.delete(role, staff(), now),
        }
    }

    /// Every (state, action, role) triple, with the state it leads to (`None`: refused).
    #[test]
    fn transition_table() {
        use Role::{Citizen, Staff};
        let table: &[(DocumentStatus, DocumentAction, Role, Option<DocumentStatus>)] = &[
            (Uploaded, Verify, Staff, Some(Verified)),
            (Uploaded, Verify, Citizen, None),
            (Uploaded, Reject, Staff, Some(Rejected)),
            (Uploaded, Reject, Citizen, None),
            (Uploaded, Delete, Staff, Some(Deleted)),
            (Uploaded, Delete, Citizen, Some(Deleted)),
            (Verified, Verify, Staff, None),
            (Verified, Verify, Citizen, None),
            (Verified, Reject, Staff, None),
            (Verified, Reject, Citizen, None),
            (Verified, Delete, Staff, Some(Deleted)),
            (Verified, Delete, Citizen, None),
            (Rejected, Verify, Staff, None),
            (Rejected, Verify, Citizen, None),
            (Rejected, Reject, Staff, None),
            (Rejected, Reject, Citizen, None),
            (Rejected, Delete, Staff, Some(Deleted)),
            (Rejected, Delete, Citizen, Some(Deleted)),
            (Deleted, Verify, Staff, None),
            (Deleted, Verify, Citizen, None),
            (Deleted, Reject, Staff, None),
            (Deleted, Reject, Citizen, None),
            (Deleted, Delete, Staff, None),
            (Deleted, Delete, Citizen, None),
        ];
        assert_eq!(table.len(), DocumentStatus::ALL.len() * DocumentAction::ALL.len() * 2);
        for (from, action, role) in DocumentStatus::ALL
            .into_iter()
            .flat_map(|s| DocumentAction::ALL.into_iter().map(move |a| (s, a)))
            .flat_map(|(s, a)| [(s, a, Staff), (s, a, Citizen)])
        {
            assert!(
                table.iter().any(|t| (t.0, t.1, t.2) == (from, action, role)),
                "{role:?} {action} on {from}"
            );
        }
        for &(from, action, role, expected) in table {
            let mut d = document(from);
            let before = d.clone();
            let result = take(&mut d, role, action);
            match expected {
                Some(to) => {
                    assert!(result.is_ok(), "{role:?} {action} on {from}: {result:?}");
                    assert_eq!((d.status, d.version), (to, 2), "{role:?} {action} on {from}");
                    assert!(d.updated_at > before.updated_at);
                }
                None => {
                    let refused = result.unwrap_err();
                    assert_eq!((refused.from, refused.action, refused.role), (from, action, role));
                    assert_eq!(refused.allowed, before.allowed_actions(role), "{role:?} {action} on {from}");
                    assert!(!refused.allowed.contains(&action));
                    assert_eq!(d, before, "a refused change changes nothing");
                }
            }
        }
    }

    #[test]
    fn a_decision_records_who_when_and_why() {
        let by = staff();
        let now = OffsetDateTime::UNIX_EPOCH + time::Duration::hours(2);
        let mut rejected = document(Uploaded);
        rejected.reject(Role::Staff, reason("The photo is blurred"), by, now).unwrap();
        assert_eq!(rejected.rejection_reason.as_ref().map(Reason::as_str), Some("The photo is blurred"));
        assert_eq!(
            (rejected.decided_by, rejected.decided_at, rejected.updated_at),
            (Some(by), Some(now), now)
        );
        let owner = Subject { kind: PrincipalKind::Citizen, id: PrincipalId(rejected.citizen_id.0) };
        rejected.delete(Role::Citizen, owner, now).unwrap();
        assert_eq!(
            (rejected.status, rejected.deleted_at, rejected.deleted_by, rejected.version),
            (Deleted, Some(now), Some(owner), 3)
        );
        assert!(rejected.rejection_reason.is_some(), "a tombstone keeps its history");
        assert_eq!(rejected.decision(), Some(Rejected), "and its decision");
        assert!(rejected.allowed_actions(Role::Staff).is_empty());

        let mut verified = document(Uploaded);
        verified.verify(Role::Staff, by, now).unwrap();
        assert_eq!(
            (verified.status, verified.decided_by, verified.rejection_reason.clone()),
            (Verified, Some(by), None)
        );
        assert_eq!(verified.allowed_actions(Role::Citizen), []);
        assert_eq!(verified.allowed_actions(Role::Staff), [Delete]);
        let refused = verified.delete(Role::Citizen, by, now).unwrap_err();
        assert_eq!(refused.to_string(), "a verified document cannot be deleted by its owner");
        assert_eq!(verified.deleted_by, None, "a refused change changes nothing");
        verified.delete(Role::Staff, by, now).unwrap();
        assert_eq!(verified.decision(), Some(Verified));
        assert_eq!(document(Uploaded).decision(), None);
    }

    /// A representative's upload is the dependant's document, uploaded by the
    /// representative for them.
    #[test]
    fn an_upload_by_an_acting_principal_records_whom_it_was_for() {
        let new = new_document("passport_photo");
        let parent = crate::fixtures::acting_for(new.mission_id, new.citizen_id);
        let d = Document::upload(new.clone(), new_blob_key(), &parent, OffsetDateTime::UNIX_EPOCH);
        assert_eq!(
            (d.citizen_id, d.uploaded_by, d.on_behalf_of),
            (new.citizen_id, parent.subject, Some(new.citizen_id))
        );
        let json = serde_json::to_value(&d).unwrap();
        assert_eq!(serde_json::from_value::<Document>(json.clone()).unwrap(), d);
        let mut before = json;
        before.as_object_mut().unwrap().remove("on_behalf_of");
        let stored: Document = serde_json::from_value(before).unwrap();
        assert_eq!(stored.on_behalf_of, None, "a snapshot written before the field reads as no one");
    }

    #[test]
    fn an_upload_sets_every_field_and_keeps_only_the_last_path_segment() {
        let new = new_document("passport_photo");
        let by = Subject { kind: PrincipalKind::Citizen, id: PrincipalId(new.citizen_id.0) };
        let now = OffsetDateTime::UNIX_EPOCH + time::Duration::hours(5);
        let key = new_blob_key();
        let d = Document::upload(new.clone(), key.clone(), by, now);
        let expected = Document {
            id: d.id,
            mission_id: new.mission_id,
            citizen_id: new.citizen_id,
            request_id: new.request_id,
            kind: "passport_photo".to_owned(),
            status: Uploaded,
            file_name: "passport.pdf".to_owned(),
            media_type: "application/pdf".to_owned(),
            size_bytes: 1024,
            sha256: new.sha256.clone(),
            blob_key: key.clone(),
            scan: ScanStatus::NotConfigured,
            rejection_reason: None,
            uploaded_by: by,
            on_behalf_of: None,
            decided_by: None,
            decided_at: None,
            deleted_at: None,
            deleted_by: None,
            version: 1,
            created_at: now,
            updated_at: now,
        };
        assert_eq!(d, expected);
        assert!(key.starts_with("documents/") && !key.contains("passport"));
        assert_ne!(new_blob_key(), key, "every key is fresh");
    }

    #[test]
    fn file_names_keep_their_last_segment_and_refuse_what_is_not_a_name() {
        for (raw, kept) in [
            ("passport.pdf", "passport.pdf"),
            ("../../etc/passwd", "passwd"),
            ("C:\\Users\\alice\\scan 1.png", "scan 1.png"),
            ("/abs/photo.jpg", "photo.jpg"),
            ("ünïcode ✓.pdf", "ünïcode ✓.pdf"),
        ] {
            assert_eq!(last_path_segment(raw), kept);
            assert_eq!(validate_file_name(raw), Ok(()), "{raw}");
        }
        let code = |raw: &str| validate_file_name(raw).unwrap_err().0[0].code.clone();
        assert_eq!(code(""), "required");
        assert_eq!(code("dir/"), "required");
        assert_eq!(code("  "), "required");
        assert_eq!(code(".."), "invalid_file_name");
        assert_eq!(code("a/.."), "invalid_file_name");
        assert_eq!(code("a\u{0}b.pdf"), "control_character");
        assert_eq!(code("evil\n/x.pdf"), "control_character");
        assert_eq!(code(&"é".repeat(MAX_FILE_NAME + 1)), "too_long");
        assert_eq!(validate_file_name(&format!("dir/{}", "é".repeat(MAX_FILE_NAME))), Ok(()));
    }

    #[test]
    fn every_failing_field_of_an_upload_is_listed() {
        assert_eq!(new_document("passport_photo").validate(), Ok(()));
        let bad = NewDocument {
            kind: "Passport Photo".to_owned(),
            file_name: "..".to_owned(),
            media_type: "PDF".to_owned(),
            size_bytes: 0,
            sha256: "AB".repeat(32),
            ..new_document("x")
        };
        let pointers: Vec<String> = bad.validate().unwrap_err().0.into_iter().map(|e| e.pointer).collect();
        assert_eq!(pointers, ["/file_name", "/kind", "/media_type", "/sha256", "/size_bytes"]);
        for (media_type, ok) in
            [("image/png", true), ("image/svg+xml", true), ("image/", false), ("text/html; x", false)]
        {
            assert_eq!(is_media_type(media_type), ok, "{media_type}");
        }
        assert!(!is_sha256_hex(&"a".repeat(63)) && !is_sha256_hex(&"g".repeat(64)));
    }

    #[test]
    fn statuses_read_back_from_their_text() {
        for status in DocumentStatus::ALL {
            assert_eq!(status.as_str().parse::<DocumentStatus>(), Ok(status));
        }
        for scan in ScanStatus::ALL {
            assert_eq!(scan.as_str().parse::<ScanStatus>(), Ok(scan));
        }
        for action in DocumentAction::ALL {
            assert_eq!(action.as_str().parse::<DocumentAction>(), Ok(action));
        }
        assert_eq!("gone".parse::<DocumentStatus>(), Err("unknown document status `gone`".to_owned()));
        assert!("infected".parse::<ScanStatus>().is_err() && "approve".parse::<DocumentAction>().is_err());
    }
}
