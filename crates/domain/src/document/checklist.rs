//! What a request's documents add up to: whether a new upload of a kind is allowed, the
//! required-documents checklist and the approval gate (docs/documents.md "Re-upload" and
//! "Checklist and approval gate"). Pure functions over documents already read.

use super::model::{Document, DocumentStatus};
use crate::{CitizenId, DocumentId, RequestId};

/// A new upload of a kind refused because one is already under review or accepted.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("a {kind} document is already {status} here: delete it before uploading another")]
pub struct UploadRefused {
    pub kind: String,
    /// The live document that blocks the upload.
    pub existing: DocumentId,
    pub status: DocumentStatus,
}

/// Whether `citizen` may upload a document of `kind` for `request` (`None`: not attached
/// to a request), given their existing documents. At most one live document of a kind is
/// `uploaded` or `verified` for one (citizen, request): a rejected kind can be uploaded
/// again, and a pending or accepted one must be deleted first (by its owner while it is
/// pending, by staff always). Deleted documents count for nothing.
pub fn may_upload(
    citizen: CitizenId,
    request: Option<RequestId>,
    kind: &str,
    existing: &[Document],
) -> Result<(), UploadRefused> {
    let blocking = existing.iter().find(|d| {
        d.citizen_id == citizen
            && d.request_id == request
            && d.kind == kind
            && matches!(d.status, DocumentStatus::Uploaded | DocumentStatus::Verified)
    });
    match blocking {
        Some(d) => Err(UploadRefused { kind: kind.to_owned(), existing: d.id, status: d.status }),
        None => Ok(()),
    }
}

/// Where one required kind stands.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum ChecklistState {
    /// No live document of the kind.
    Missing,
    /// The newest one awaits review.
    Uploaded,
    /// The newest one is accepted.
    Verified,
    /// The newest one was refused, for this reason (the citizen uploads it again).
    Rejected { reason: String },
}

/// One line of a request's required documents.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ChecklistItem {
    pub kind: String,
    #[serde(flatten)]
    pub state: ChecklistState,
    /// The document that decides the state (`None` when missing).
    pub document_id: Option<DocumentId>,
}

/// For every kind in `required_kinds` (in that order), the state of the newest live
/// (not deleted) document of that kind among `documents` (a request's documents): newest
/// is the greatest id, ids being time-ordered. Documents of other kinds are ignored.
pub fn checklist(required_kinds: &[String], documents: &[Document]) -> Vec<ChecklistItem> {
    required_kinds
        .iter()
        .map(|kind| {
            let newest = documents.iter().filter(|d| &d.kind == kind && !d.is_deleted()).max_by_key(|d| d.id);
            let state = match newest {
                None => ChecklistState::Missing,
                Some(d) => match d.status {
                    // Filtered out above; a tombstone counts as nothing.
                    DocumentStatus::Deleted => ChecklistState::Missing,
                    DocumentStatus::Uploaded => ChecklistState::Uploaded,
                    DocumentStatus::Verified => ChecklistState::Verified,
                    DocumentStatus::Rejected => ChecklistState::Rejected {
                        reason: d
                            .rejection_reason
                            .as_ref()
                            .map(|r| r.as_str().to_owned())
                            .unwrap_or_default(),
                    },
                },
            };
            ChecklistItem { kind: kind.clone(), state, document_id: newest.map(|d| d.id) }
        })
        .collect()
}

/// The approval gate: the kinds of `checklist` without a verified document, in order.
/// A request may be approved only when this is empty.
pub fn missing_for_approval(checklist: &[ChecklistItem]) -> Vec<String> {
    checklist
        .iter()
        .filter(|item| item.state != ChecklistState::Verified)
        .map(|item| item.kind.clone())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::super::tests::{document, staff};
    use super::*;
    use crate::{Reason, Role};
    use DocumentStatus::*;
    use time::OffsetDateTime;

    /// A document of `kind` for `citizen` and `request`, brought to `status` through the
    /// state machine (so a rejected one has its reason).
    fn doc(citizen: CitizenId, request: Option<RequestId>, kind: &str, status: DocumentStatus) -> Document {
        let mut d = document(Uploaded);
        (d.citizen_id, d.request_id, d.kind) = (citizen, request, kind.to_owned());
        let now = OffsetDateTime::UNIX_EPOCH;
        match status {
            Uploaded => {}
            Verified => {
                d.verify(Role::Staff, staff(), now).unwrap();
            }
            Rejected => {
                let reason = Reason::required(Some(format!("{kind} unreadable"))).unwrap();
                d.reject(Role::Staff, reason, staff(), now).unwrap();
            }
            Deleted => {
                d.delete(Role::Staff, staff(), now).unwrap();
            }
        }
        d
    }

    /// Every status of an existing document, for the same and for another (citizen,
    /// request, kind): only a live pending or accepted one of the same triple refuses.
    #[test]
    fn a_kind_can_be_uploaded_again_once_rejected_or_deleted() {
        let (alice, bob) = (CitizenId::new(), CitizenId::new());
        let (request, other) = (Some(RequestId::new()), Some(RequestId::new()));
        for status in DocumentStatus::ALL {
            let refuses = matches!(status, Uploaded | Verified);
            for (existing, same) in [
                (doc(alice, request, "photo", status), true),
                (doc(alice, other, "photo", status), false),
                (doc(alice, None, "photo", status), false),
                (doc(alice, request, "birth_certificate", status), false),
                (doc(bob, request, "photo", status), false),
            ] {
                let result = may_upload(alice, request, "photo", std::slice::from_ref(&existing));
                if same && refuses {
                    let expected = UploadRefused { kind: "photo".to_owned(), existing: existing.id, status };
                    assert_eq!(result, Err(expected), "{status}");
                } else {
                    assert_eq!(result, Ok(()), "{status} {existing:?}");
                }
            }
        }
        // Unattached documents follow the same rule among themselves.
        let library = [doc(alice, None, "photo", Verified)];
        assert!(may_upload(alice, None, "photo", &library).is_err());
        assert!(may_upload(alice, request, "photo", &library).is_ok());
        let history = [doc(alice, request, "photo", Rejected), doc(alice, request, "photo", Deleted)];
        assert_eq!(may_upload(alice, request, "photo", &history), Ok(()));
        assert!(may_upload(alice, request, "photo", &[]).is_ok());
    }

    #[test]
    fn the_newest_live_document_of_each_kind_decides_the_checklist() {
        let (citizen, request) = (CitizenId::new(), Some(RequestId::new()));
        let d = |kind: &str, status| doc(citizen, request, kind, status);
        let required: Vec<String> = ["photo", "old_passport", "birth_certificate", "form", "proof"]
            .into_iter()
            .map(str::to_owned)
            .collect();
        // Created in this order: later ids are newer.
        let photo_rejected = d("photo", Rejected);
        let photo_again = d("photo", Uploaded);
        let passport_verified = d("old_passport", Verified);
        let passport_deleted = d("old_passport", Deleted);
        let certificate = d("birth_certificate", Rejected);
        let form_deleted = d("form", Deleted);
        let extra = d("unrelated", Verified);
        let documents = vec![
            passport_deleted.clone(),
            photo_again.clone(),
            extra,
            certificate.clone(),
            photo_rejected,
            passport_verified.clone(),
            form_deleted,
        ];
        let list = checklist(&required, &documents);
        let expected = vec![
            ChecklistItem {
                kind: "photo".into(),
                state: ChecklistState::Uploaded,
                document_id: Some(photo_again.id),
            },
            ChecklistItem {
                kind: "old_passport".into(),
                state: ChecklistState::Verified,
                document_id: Some(passport_verified.id),
            },
            ChecklistItem {
                kind: "birth_certificate".into(),
                state: ChecklistState::Rejected { reason: "birth_certificate unreadable".into() },
                document_id: Some(certificate.id),
            },
            ChecklistItem { kind: "form".into(), state: ChecklistState::Missing, document_id: None },
            ChecklistItem { kind: "proof".into(), state: ChecklistState::Missing, document_id: None },
        ];
        assert_eq!(list, expected);
        assert_eq!(missing_for_approval(&list), ["photo", "birth_certificate", "form", "proof"]);
    }

    /// The approval gate for each state a required kind can be in.
    #[test]
    fn approval_needs_a_verified_document_of_every_required_kind() {
        let (citizen, request) = (CitizenId::new(), Some(RequestId::new()));
        let required = vec!["photo".to_owned()];
        for (documents, missing) in [
            (vec![], true),
            (vec![doc(citizen, request, "photo", Uploaded)], true),
            (vec![doc(citizen, request, "photo", Rejected)], true),
            (vec![doc(citizen, request, "photo", Deleted)], true),
            (vec![doc(citizen, request, "photo", Verified)], false),
            (vec![doc(citizen, request, "photo", Verified), doc(citizen, request, "photo", Deleted)], false),
            (vec![doc(citizen, request, "photo", Verified), doc(citizen, request, "photo", Uploaded)], true),
        ] {
            let gate = missing_for_approval(&checklist(&required, &documents));
            assert_eq!(gate.is_empty(), !missing, "{documents:?}");
        }
        assert!(missing_for_approval(&checklist(&[], &[])).is_empty(), "nothing required, nothing missing");
    }
}
