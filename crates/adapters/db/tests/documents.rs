//! The contract of `DocumentRepository`, checked against both databases with the harness
//! of `common/mod.rs`: writes with their audit and version checks, foreign keys, the
//! keyset listing by every filter (tombstones never listed, every filter served by an
//! index), a request's documents and the blob keys the orphan sweep must keep.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use common::*;

use consular_db::Database;
use consular_domain::{
    CitizenId, Document, DocumentId, DocumentStatus, MissionId, NewDocument, PageRequest, PrincipalId,
    PrincipalKind, Reason, RequestId, Role, ScanStatus, ServiceTypeId, Subject,
};
use consular_ports::{
    DocumentFilter, DocumentRepository, ONE_LIVE_DOCUMENT, RepoError, RequestRepository, WriteMeta,
};
use std::collections::BTreeSet;
use uuid::Uuid;

// ---------------------------------------------------------------- fixtures

fn staff() -> Subject {
    Subject { kind: PrincipalKind::Staff, id: PrincipalId::new() }
}

/// A freshly uploaded document, as the use case makes it.
fn document(mission: MissionId, citizen: CitizenId, request: Option<RequestId>, kind: &str) -> Document {
    let new = NewDocument {
        mission_id: mission,
        citizen_id: citizen,
        request_id: request,
        kind: kind.to_owned(),
        file_name: "../scans/Quotes \" and ünïcode ✓.pdf".to_owned(),
        media_type: "application/pdf".to_owned(),
        size_bytes: 20 * 1024 * 1024,
        sha256: "0123456789abcdef".repeat(4),
        scan: ScanStatus::Clean,
    };
    new.validate().unwrap();
    let owner = Subject { kind: PrincipalKind::Citizen, id: PrincipalId(citizen.0) };
    Document::upload(new, consular_domain::document::new_blob_key(), owner, now())
}

fn reason(text: &str) -> Reason {
    Reason::required(Some(text.to_owned())).unwrap()
}

/// Brings a stored document to `status` through the state machine and stores that.
async fn moved_to(db: &Database, mut d: Document, status: DocumentStatus) -> Document {
    let expected = d.version;
    match status {
        DocumentStatus::Uploaded => return d,
        DocumentStatus::Verified => d.verify(Role::Staff, staff(), now()).unwrap(),
        DocumentStatus::Rejected => d.reject(Role::Staff, reason("blurred"), staff(), now()).unwrap(),
        DocumentStatus::Deleted => d.delete(Role::Staff, staff(), now()).unwrap(),
    };
    DocumentRepository::update(db, &d, expected, &WriteMeta::default()).await.unwrap();
    d
}

async fn stored(db: &Database, d: Document) -> Document {
    DocumentRepository::insert(db, &d, &WriteMeta::default()).await.unwrap();
    d
}

/// A mission with a citizen who has a request: what a document hangs on.
async fn setting(db: &Database, code: &str) -> (MissionId, CitizenId, RequestId) {
    let mission = stored_mission(db, code).await;
    let passport = stored_service_type(db, &format!("passport_{}", code.replace('-', "_"))).await;
    let alice = stored_citizen(db, mission.id, "AA1").await;
    let r = stored_request(db, request(mission.id, alice.id, &passport)).await;
    (mission.id, alice.id, r.id)
}

// ---------------------------------------------------------------- writes

async fn documents_round_trip_and_updates_check_the_version(db: Database) {
    let (mission, alice, request) = setting(&db, "fr-paris").await;
    let mut d = document(mission, alice, Some(request), "passport_photo");
    DocumentRepository::insert(&db, &d, &audited("document", d.id.0)).await.unwrap();
    assert_eq!(DocumentRepository::get(&db, d.id).await.unwrap(), Some(d.clone()));
    assert_eq!(d.file_name, "Quotes \" and ünïcode ✓.pdf");
    assert_eq!(DocumentRepository::get(&db, DocumentId::new()).await.unwrap(), None);

    // One constraint violated at a time: SQLite reports the first it checks.
    let same_id = Document { id: d.id, ..document(mission, alice, None, "passport_photo") };
    let again = DocumentRepository::insert(&db, &same_id, &WriteMeta::default()).await;
    assert!(is_duplicate(&again, "documents_pkey"), "{again:?}");
    let same_blob =
        Document { blob_key: d.blob_key.clone(), ..document(mission, alice, None, "passport_photo") };
    let taken = DocumentRepository::insert(&db, &same_blob, &audited("document", same_blob.id.0)).await;
    assert!(is_duplicate(&taken, "documents_blob_key"), "{taken:?}");

    // A rejection with its reason and decider, then a deletion: the tombstone keeps both.
    d.reject(Role::Staff, reason("Quotes \" and ünïcode ✓"), staff(), now()).unwrap();
    DocumentRepository::update(&db, &d, 1, &audited("document", d.id.0)).await.unwrap();
    assert_eq!(DocumentRepository::get(&db, d.id).await.unwrap(), Some(d.clone()));
    d.delete(Role::Citizen, Subject { kind: PrincipalKind::Citizen, id: PrincipalId(d.citizen_id.0) }, now())
        .unwrap();
    DocumentRepository::update(&db, &d, 2, &WriteMeta::default()).await.unwrap();
    let tombstone = DocumentRepository::get(&db, d.id).await.unwrap().unwrap();
    assert_eq!(tombstone, d);
    assert_eq!((tombstone.status, tombstone.version), (DocumentStatus::Deleted, 3));
    assert!(tombstone.rejection_reason.is_some() && tombstone.decided_by.is_some());

    // A stale or unknown document changes nothing and stores no audit entry.
    let mut verified = stored(&db, document(mission, alice, Some(request), "old_passport")).await;
    verified.verify(Role::Staff, staff(), now()).unwrap();
    let stale = DocumentRepository::update(&db, &verified, 7, &audited("document", verified.id.0)).await;
    assert!(matches!(stale, Err(RepoError::VersionConflict)), "{stale:?}");
    let unknown = document(mission, alice, None, "old_passport");
    let gone = DocumentRepository::update(&db, &unknown, 1, &audited("document", unknown.id.0)).await;
    assert!(matches!(gone, Err(RepoError::NotFound)), "{gone:?}");
    assert_eq!(
        DocumentRepository::get(&db, verified.id).await.unwrap().unwrap().status,
        DocumentStatus::Uploaded
    );
    DocumentRepository::update(&db, &verified, 1, &WriteMeta::default()).await.unwrap();
    assert_eq!(DocumentRepository::get(&db, verified.id).await.unwrap(), Some(verified));
    assert_eq!(db.count_rows("audit_events").await.unwrap(), 2);
    assert_eq!(db.count_rows("documents").await.unwrap(), 2);
}

async fn a_document_with_unknown_references_is_not_stored(db: Database) {
    let (mission, alice, request) = setting(&db, "fr-paris").await;
    let valid = document(mission, alice, Some(request), "passport_photo");
    let broken = [
        Document { mission_id: MissionId::new(), ..valid.clone() },
        Document { citizen_id: CitizenId::new(), ..valid.clone() },
        Document { request_id: Some(RequestId::new()), ..valid.clone() },
    ];
    for d in &broken {
        let meta = WriteMeta {
            events: vec![outbox_event("document.uploaded", d.id.0)],
            ..audited("document", d.id.0)
        };
        let refused = DocumentRepository::insert(&db, d, &meta).await;
        assert!(matches!(refused, Err(RepoError::Other(_))), "{refused:?}");
    }
    for table in ["documents", "audit_events", "outbox_events"] {
        assert_eq!(db.count_rows(table).await.unwrap(), 0, "{table}");
    }
}

/// The table refuses what the domain never makes: the checks hold even for a caller
/// that skips `NewDocument::validate` or the state machine.
async fn the_table_refuses_inconsistent_documents(db: Database) {
    let (mission, alice, _) = setting(&db, "fr-paris").await;
    let valid = document(mission, alice, None, "passport_photo");
    let mut rejected_without_reason = valid.clone();
    rejected_without_reason.status = DocumentStatus::Rejected;
    let mut deleted_without_instant = valid.clone();
    deleted_without_instant.status = DocumentStatus::Deleted;
    let broken = [
        Document { sha256: "AB".repeat(32), ..valid.clone() },
        Document { sha256: "ab".repeat(31), ..valid.clone() },
        Document { file_name: String::new(), ..valid.clone() },
        Document { file_name: "x".repeat(256), ..valid.clone() },
        Document { size_bytes: 0, ..valid.clone() },
        Document { blob_key: String::new(), ..valid.clone() },
        Document { decided_by: Some(staff()), ..valid.clone() },
        rejected_without_reason,
        deleted_without_instant,
    ];
    for d in &broken {
        let refused = DocumentRepository::insert(&db, d, &WriteMeta::default()).await;
        assert!(matches!(refused, Err(RepoError::Other(_))), "{d:?}: {refused:?}");
    }
    assert_eq!(db.count_rows("documents").await.unwrap(), 0);
    stored(&db, Document { file_name: "é".repeat(255), ..valid }).await;
}

/// One live (`uploaded` or `verified`) document per citizen, request (or none) and kind
/// (docs/documents.md "Re-upload"): the table refuses a second one, whatever checked
/// before, with the business name and nothing of its write kept; rejected documents and
/// tombstones never count; other requests, kinds and citizens never collide.
async fn a_second_live_document_of_a_kind_is_refused(db: Database) {
    let (mission, alice, request) = setting(&db, "fr-paris").await;
    let bob = stored_citizen(&db, mission, "BB2").await.id;
    let audit_rows = async || db.count_rows("audit_events").await.unwrap();
    for place in [Some(request), None] {
        let first = stored(&db, document(mission, alice, place, "passport_photo")).await;
        let before = audit_rows().await;
        let second = document(mission, alice, place, "passport_photo");
        let meta = WriteMeta {
            events: vec![outbox_event("document.uploaded", second.id.0)],
            ..audited("document", second.id.0)
        };
        let refused = DocumentRepository::insert(&db, &second, &meta).await;
        assert!(is_duplicate(&refused, ONE_LIVE_DOCUMENT), "{place:?}: {refused:?}");
        assert_eq!(DocumentRepository::get(&db, second.id).await.unwrap(), None);
        assert_eq!(audit_rows().await, before, "nothing of the refused write is kept");

        // A verified document blocks as an uploaded one does.
        let first = moved_to(&db, first, DocumentStatus::Verified).await;
        let refused = DocumentRepository::insert(&db, &second, &WriteMeta::default()).await;
        assert!(is_duplicate(&refused, ONE_LIVE_DOCUMENT), "{place:?} verified: {refused:?}");
        // Deleted, it blocks nothing; a rejected one neither.
        moved_to(&db, first, DocumentStatus::Deleted).await;
        let second = stored(&db, second).await;
        moved_to(&db, second, DocumentStatus::Rejected).await;
        stored(&db, document(mission, alice, place, "passport_photo")).await;
        // Another kind, another citizen: never in the way.
        stored(&db, document(mission, alice, place, "old_passport")).await;
    }
    stored(&db, document(mission, bob, None, "passport_photo")).await;
    // A document of a request and one of no request are not the same place.
    let visa = stored_service_type(&db, "visa").await;
    let other = stored_request(&db, common::request(mission, alice, &visa)).await.id;
    stored(&db, document(mission, alice, Some(other), "passport_photo")).await;

    // Six inserts of one kind at once: exactly one row goes in.
    let racers: Vec<_> = (0..6)
        .map(|_| {
            let (db, d) = (db.clone(), document(mission, alice, Some(other), "old_passport"));
            tokio::spawn(
                async move { DocumentRepository::insert(&db, &d, &audited("document", d.id.0)).await },
            )
        })
        .collect();
    let mut results = Vec::new();
    for racer in racers {
        results.push(racer.await.unwrap());
    }
    let won = results.iter().filter(|r| r.is_ok()).count();
    let lost = results.iter().filter(|r| is_duplicate(r, ONE_LIVE_DOCUMENT)).count();
    assert_eq!((won, lost), (1, 5), "{results:?}");
    let live = DocumentRepository::for_request(&db, other).await.unwrap();
    assert_eq!(live.iter().filter(|d| d.kind == "old_passport").count(), 1);
}

// ---------------------------------------------------------------- reads

fn expected_list(all: &[Document], f: &DocumentFilter) -> Vec<DocumentId> {
    let mut ids: Vec<DocumentId> = all
        .iter()
        .filter(|d| d.status != DocumentStatus::Deleted)
        .filter(|d| f.mission_id.is_none_or(|m| d.mission_id == m))
        .filter(|d| f.citizen_id.is_none_or(|c| d.citizen_id == c))
        .filter(|d| f.request_id.is_none_or(|r| d.request_id == Some(r)))
        .filter(|d| f.kind.as_ref().is_none_or(|k| &d.kind == k))
        .filter(|d| f.statuses.is_empty() || f.statuses.contains(&d.status))
        .map(|d| d.id)
        .collect();
    ids.sort_by(|a, b| b.cmp(a));
    ids
}

async fn listed(db: &Database, filter: &DocumentFilter) -> Vec<DocumentId> {
    let page =
        DocumentRepository::list(db, filter.clone(), PageRequest { limit: 100, after: None }).await.unwrap();
    assert_eq!(page.next_after, None);
    page.items.iter().map(|d| d.id).collect()
}

/// Two missions, two citizens, a request each (and a second one for Alice), every kind
/// in every status, unattached documents among them.
async fn library(db: &Database) -> (Vec<Document>, [MissionId; 2], [CitizenId; 2], [RequestId; 3]) {
    use DocumentStatus::*;
    let (paris, alice, alice_renewal) = setting(db, "fr-paris").await;
    let (rome, bruno, bruno_renewal) = setting(db, "it-rome").await;
    let visa = stored_service_type(db, "visa").await;
    let alice_visa = stored_request(db, request(paris, alice, &visa)).await.id;
    let mut all = Vec::new();
    let places = [
        (paris, alice, Some(alice_renewal)),
        (paris, alice, Some(alice_visa)),
        (paris, alice, None),
        (rome, bruno, Some(bruno_renewal)),
        (rome, bruno, None),
    ];
    for (mission, citizen, request) in places {
        for kind in ["passport_photo", "old_passport"] {
            // One live (uploaded or verified) document per citizen, request and kind:
            // every document goes in as uploaded, so the one that stays so comes last,
            // and the verified one is of a kind of its own.
            for status in [Rejected, Deleted, Verified, Uploaded] {
                let kind = match status {
                    Verified => format!("{kind}_copy"),
                    _ => kind.to_owned(),
                };
                let d = stored(db, document(mission, citizen, request, &kind)).await;
                all.push(moved_to(db, d, status).await);
            }
        }
    }
    (all, [paris, rome], [alice, bruno], [alice_renewal, alice_visa, bruno_renewal])
}

async fn documents_are_listed_newest_first_by_every_filter(db: Database) {
    use DocumentStatus::*;
    let (all, [paris, rome], [alice, bruno], [renewal, visa, rome_renewal]) = library(&db).await;
    let none = DocumentFilter::default();
    let photo = Some("passport_photo".to_owned());
    let filters = [
        none.clone(),
        DocumentFilter { mission_id: Some(paris), ..none.clone() },
        DocumentFilter { mission_id: Some(rome), ..none.clone() },
        DocumentFilter { mission_id: Some(MissionId::new()), ..none.clone() },
        DocumentFilter { citizen_id: Some(alice), ..none.clone() },
        DocumentFilter { citizen_id: Some(bruno), mission_id: Some(paris), ..none.clone() },
        DocumentFilter { request_id: Some(renewal), ..none.clone() },
        DocumentFilter { request_id: Some(visa), kind: photo.clone(), ..none.clone() },
        DocumentFilter { request_id: Some(rome_renewal), statuses: vec![Rejected], ..none.clone() },
        DocumentFilter { kind: photo.clone(), ..none.clone() },
        DocumentFilter { statuses: vec![Verified], ..none.clone() },
        DocumentFilter { statuses: vec![Uploaded, Rejected], ..none.clone() },
        // Asking for tombstones lists none.
        DocumentFilter { statuses: vec![Deleted], ..none.clone() },
        DocumentFilter { statuses: vec![Deleted, Verified], mission_id: Some(rome), ..none.clone() },
        DocumentFilter {
            mission_id: Some(paris),
            citizen_id: Some(alice),
            request_id: Some(renewal),
            kind: photo,
            statuses: vec![Uploaded],
            within_services: None,
        },
    ];
    for filter in &filters {
        assert_eq!(listed(&db, filter).await, expected_list(&all, filter), "{filter:?}");
    }
    assert_eq!(listed(&db, &none).await.len(), all.len() / 4 * 3, "every live document, no tombstone");
    assert!(listed(&db, &DocumentFilter { statuses: vec![Deleted], ..none }).await.is_empty());
}

/// A representative lists the dependant's documents of the mandate's services only
/// (docs/representation.md "Acting"): a document is within when its request is of one of
/// them, so a document of no request never is; none for an empty list, every live one
/// without it.
async fn documents_are_listed_within_a_mandates_services(db: Database) {
    let (all, _, [alice, _], [renewal, visa, rome_renewal]) = library(&db).await;
    let type_of =
        async |request| RequestRepository::get(&db, request).await.unwrap().unwrap().service_type_id;
    let (passport, visa_type, rome_passport) =
        (type_of(renewal).await, type_of(visa).await, type_of(rome_renewal).await);
    assert!(passport != visa_type && passport != rome_passport && visa_type != rome_passport);
    // The live documents of `requests`, newest first.
    let of = |requests: &[RequestId]| {
        let mut ids: Vec<DocumentId> = all
            .iter()
            .filter(|d| d.status != DocumentStatus::Deleted)
            .filter(|d| d.request_id.is_some_and(|r| requests.contains(&r)))
            .map(|d| d.id)
            .collect();
        ids.sort_by(|a, b| b.cmp(a));
        ids
    };
    let within = |types: &[ServiceTypeId]| DocumentFilter {
        within_services: Some(types.to_vec()),
        ..DocumentFilter::default()
    };
    assert_eq!(of(&[renewal]).len(), 6);
    assert_eq!(listed(&db, &within(&[passport])).await, of(&[renewal]));
    assert_eq!(listed(&db, &within(&[visa_type])).await, of(&[visa]));
    let every_type = within(&[rome_passport, visa_type, passport]);
    let attached = of(&[renewal, visa, rome_renewal]);
    assert_eq!(listed(&db, &every_type).await, attached, "no document of no request");
    assert_eq!(listed(&db, &within(&[])).await, [], "an empty mandate reaches nothing");
    assert_eq!(listed(&db, &within(&[ServiceTypeId::new()])).await, []);
    let everything = listed(&db, &DocumentFilter::default()).await;
    assert_eq!(everything, expected_list(&all, &DocumentFilter::default()));
    assert_eq!(everything.len(), attached.len() + 12, "no mandate: the unattached ones too");

    // With the other filters, and paged.
    let alice_photos = DocumentFilter {
        citizen_id: Some(alice),
        kind: Some("passport_photo".to_owned()),
        ..within(&[visa_type, rome_passport])
    };
    let expected: Vec<DocumentId> = of(&[visa])
        .into_iter()
        .filter(|id| all.iter().any(|d| d.id == *id && d.kind == "passport_photo"))
        .collect();
    assert_eq!(expected.len(), 2, "rejected and uploaded");
    assert_eq!(listed(&db, &alice_photos).await, expected);
    let mut paged = Vec::new();
    let mut after = None;
    loop {
        let page =
            DocumentRepository::list(&db, every_type.clone(), PageRequest { limit: 4, after }).await.unwrap();
        paged.extend(page.items.iter().map(|d| d.id));
        match page.next_after {
            Some(next) => after = Some(next),
            None => break,
        }
    }
    assert_eq!(paged, attached);
}

async fn document_pages_have_no_gaps_or_duplicates(db: Database) {
    let (all, [paris, _], _, _) = library(&db).await;
    let filter = DocumentFilter { mission_id: Some(paris), ..DocumentFilter::default() };
    let mut seen = Vec::new();
    let mut after = None;
    loop {
        let page =
            DocumentRepository::list(&db, filter.clone(), PageRequest { limit: 4, after }).await.unwrap();
        assert!(page.items.len() <= 4);
        seen.extend(page.items.iter().map(|d| d.id));
        match page.next_after {
            Some(next) => after = Some(next),
            None => break,
        }
    }
    assert_eq!(seen, expected_list(&all, &filter));
    assert_eq!(seen.len(), 18, "three places, two kinds, three live statuses");
}

async fn a_requests_documents_are_its_live_ones_oldest_first(db: Database) {
    let (all, _, _, [renewal, visa, _]) = library(&db).await;
    for request in [renewal, visa] {
        let found = DocumentRepository::for_request(&db, request).await.unwrap();
        let expected: Vec<&Document> = all
            .iter()
            .filter(|d| d.request_id == Some(request) && d.status != DocumentStatus::Deleted)
            .collect();
        assert_eq!(found.iter().collect::<Vec<_>>(), expected, "stored in creation order");
        assert_eq!(found.len(), 6);
        // The request's detail reads them in its one snapshot, tombstones too (its
        // timeline keeps a deleted document's history), with who deleted each.
        let detail = RequestRepository::detail(&db, request, false).await.unwrap().unwrap();
        let history: Vec<&Document> = all.iter().filter(|d| d.request_id == Some(request)).collect();
        assert_eq!(detail.documents.iter().collect::<Vec<_>>(), history);
        assert_eq!(detail.documents.len(), 8);
        let tombstones: Vec<&Document> = detail.documents.iter().filter(|d| d.is_deleted()).collect();
        assert_eq!(tombstones.len(), 2);
        assert!(
            tombstones.iter().all(|d| d.deleted_by.is_some() && d.deleted_at.is_some()),
            "{tombstones:?}"
        );
    }
    assert!(DocumentRepository::for_request(&db, RequestId::new()).await.unwrap().is_empty());
}

async fn known_blob_keys_are_those_of_live_documents(db: Database) {
    let (mission, alice, request) = setting(&db, "fr-paris").await;
    let live = stored(&db, document(mission, alice, Some(request), "passport_photo")).await;
    let deleted = stored(&db, document(mission, alice, None, "passport_photo")).await;
    let deleted = moved_to(&db, deleted, DocumentStatus::Deleted).await;
    let orphan = consular_domain::document::new_blob_key();
    let asked =
        vec![orphan.clone(), deleted.blob_key.clone(), live.blob_key.clone(), deleted.blob_key.clone()];
    let known = DocumentRepository::known_blob_keys(&db, &asked).await.unwrap();
    assert_eq!(known, std::slice::from_ref(&live.blob_key), "a tombstone's blob is collectable");
    let asked = vec![live.blob_key.clone(), orphan.clone(), live.blob_key.clone()];
    let known = DocumentRepository::known_blob_keys(&db, &asked).await.unwrap();
    assert_eq!(known, std::slice::from_ref(&live.blob_key), "in the order asked, once each");
    assert!(DocumentRepository::known_blob_keys(&db, &[]).await.unwrap().is_empty());
    // More keys than one statement binds.
    let mut many: Vec<String> = (0..1200).map(|_| consular_domain::document::new_blob_key()).collect();
    many.insert(700, live.blob_key.clone());
    let known = DocumentRepository::known_blob_keys(&db, &many).await.unwrap();
    assert_eq!(known, [live.blob_key]);
}

/// Each filter of the listing, alone and combined, can be served by an index (no full
/// scan), as `the_request_list_can_use_an_index_for_every_filter` checks for requests.
async fn the_document_list_can_use_an_index_for_every_filter(db: Database) {
    use DocumentStatus::*;
    let some = |n: u128| Some(Uuid::from_u128(n));
    let none = DocumentFilter::default();
    let filters = [
        none.clone(),
        DocumentFilter { mission_id: Some(MissionId::new()), ..none.clone() },
        DocumentFilter { citizen_id: Some(CitizenId::new()), ..none.clone() },
        DocumentFilter { request_id: Some(RequestId::new()), ..none.clone() },
        DocumentFilter { kind: Some("passport_photo".to_owned()), ..none.clone() },
        DocumentFilter { statuses: vec![Verified], ..none.clone() },
        DocumentFilter { statuses: vec![Uploaded, Rejected], ..none.clone() },
        DocumentFilter { mission_id: Some(MissionId::new()), statuses: vec![Uploaded], ..none.clone() },
        DocumentFilter {
            mission_id: Some(MissionId::new()),
            citizen_id: Some(CitizenId::new()),
            request_id: Some(RequestId::new()),
            kind: Some("passport_photo".to_owned()),
            statuses: vec![Uploaded, Verified],
            within_services: Some(vec![ServiceTypeId::new(), ServiceTypeId::new()]),
        },
        DocumentFilter { within_services: Some(vec![ServiceTypeId::new()]), ..none.clone() },
        DocumentFilter {
            citizen_id: Some(CitizenId::new()),
            within_services: Some(vec![ServiceTypeId::new(), ServiceTypeId::new()]),
            ..none.clone()
        },
    ];
    for filter in &filters {
        for after in [None, some(1)] {
            let plan =
                db.explain_document_list(filter.clone(), PageRequest { limit: 20, after }).await.unwrap();
            assert_no_full_scan(db.backend(), "documents", &plan, &format!("{filter:?}"));
        }
    }
    // The mission, citizen and request filters (every listing has one of them) are read
    // backwards from their own index, already in order: no sort, whatever the page.
    let own_index = [
        (DocumentFilter { mission_id: Some(MissionId::new()), ..none.clone() }, "documents_mission_id_idx"),
        (DocumentFilter { citizen_id: Some(CitizenId::new()), ..none.clone() }, "documents_citizen_id_idx"),
        (DocumentFilter { request_id: Some(RequestId::new()), ..none.clone() }, "documents_request_id_idx"),
    ];
    for (filter, index) in own_index {
        for after in [None, some(1)] {
            let plan =
                db.explain_document_list(filter.clone(), PageRequest { limit: 20, after }).await.unwrap();
            assert_ordered_by_index(&plan, index);
        }
    }
}

/// Idempotent uploads store the created document as a JSON snapshot: it reads back the
/// same, rejection reason included.
#[test]
fn a_document_snapshot_round_trips_through_json() {
    let mut d = document(MissionId::new(), CitizenId::new(), Some(RequestId::new()), "passport_photo");
    let fresh = serde_json::to_value(&d).unwrap();
    assert_eq!(serde_json::from_value::<Document>(fresh).unwrap(), d);
    d.reject(Role::Staff, reason("Quotes \" and ünïcode ✓"), staff(), now()).unwrap();
    let json = serde_json::to_value(&d).unwrap();
    assert_eq!((&json["status"], &json["scan"]), (&"rejected".into(), &"clean".into()));
    assert_eq!(json["rejection_reason"], "Quotes \" and ünïcode ✓");
    assert_eq!(serde_json::from_value::<Document>(json.clone()).unwrap(), d);
    let mut blank = json;
    blank["rejection_reason"] = " ".into();
    assert!(
        serde_json::from_value::<Document>(blank).is_err(),
        "a stored reason obeys the rule it was made under"
    );
    let names: BTreeSet<&str> = DocumentStatus::ALL.iter().map(|s| s.as_str()).collect();
    assert_eq!(names, BTreeSet::from(["uploaded", "verified", "rejected", "deleted"]), "the CHECK's values");
}

/// The URL-signing key's store: the first value stored under a name wins, whoever asks
/// later (another node starting) gets it back, with its protection; `protect` seals a
/// clear value once and never touches a sealed one.
async fn a_service_secret_keeps_its_first_value(db: Database) {
    use consular_ports::{KeyProtection, ServiceSecretRepository, StoredSecret};
    let now = time::OffsetDateTime::now_utc();
    let clear = |byte: u8| StoredSecret { value: vec![byte; 32], protection: KeyProtection::Clear };
    let sealed = |byte: u8| StoredSecret { value: vec![byte; 60], protection: KeyProtection::Aes256Gcm };
    let first = db.get_or_insert("download_url_key", &clear(1), now).await.unwrap();
    assert_eq!(first, clear(1));
    let again = db.get_or_insert("download_url_key", &sealed(2), now).await.unwrap();
    assert_eq!(again, clear(1), "an existing secret is never replaced");
    let other = db.get_or_insert("another", &sealed(3), now).await.unwrap();
    assert_eq!(other, sealed(3), "stored sealed as given");

    assert!(db.protect("download_url_key", &[4; 60]).await.unwrap(), "a clear value is sealed");
    let read = db.get_or_insert("download_url_key", &clear(5), now).await.unwrap();
    assert_eq!(read, sealed(4));
    assert!(!db.protect("download_url_key", &[6; 60]).await.unwrap(), "a sealed value is left alone");
    assert!(!db.protect("nothing", &[6; 60]).await.unwrap(), "nor an absent one made");
    assert_eq!(db.get_or_insert("download_url_key", &clear(5), now).await.unwrap(), sealed(4));
}

// ---------------------------------------------------------------- both databases

/// A reason stored before control characters were refused (issue 23) is read back as it
/// is: a stricter rule must not make earlier rows, and the lists holding them, a 500.
async fn a_reason_stored_under_earlier_rules_is_read_back(db: Database) {
    let (mission, alice, request) = setting(&db, "fr-paris").await;
    let mut d = stored(&db, document(mission, alice, Some(request), "passport_photo")).await;
    let earlier = "blurred\u{1}\u{1b}[2J photo".to_owned();
    assert!(Reason::required(Some(earlier.clone())).is_err(), "today's rule refuses it");
    d.reject(Role::Staff, Reason::stored(earlier.clone()), staff(), now()).unwrap();
    DocumentRepository::update(&db, &d, 1, &WriteMeta::default()).await.unwrap();
    let read = DocumentRepository::get(&db, d.id).await.unwrap().unwrap();
    assert_eq!(read.rejection_reason.as_ref().map(Reason::as_str), Some(earlier.as_str()));
    let rejected = DocumentFilter {
        citizen_id: Some(alice),
        statuses: vec![DocumentStatus::Rejected],
        ..DocumentFilter::default()
    };
    assert_eq!(listed(&db, &rejected).await, [d.id]);
}

on_both_databases!(
    a_reason_stored_under_earlier_rules_is_read_back,
    documents_round_trip_and_updates_check_the_version,
    a_document_with_unknown_references_is_not_stored,
    the_table_refuses_inconsistent_documents,
    a_second_live_document_of_a_kind_is_refused,
    documents_are_listed_newest_first_by_every_filter,
    documents_are_listed_within_a_mandates_services,
    document_pages_have_no_gaps_or_duplicates,
    a_requests_documents_are_its_live_ones_oldest_first,
    known_blob_keys_are_those_of_live_documents,
    the_document_list_can_use_an_index_for_every_filter,
    a_service_secret_keeps_its_first_value,
);
