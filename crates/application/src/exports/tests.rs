//! Exports against the port mocks: what an archive holds (read back with a zip reader),
//! that it is streamed and never holds an internal note, the lease lost mid-build, the
//! one-running rule, the signed download URL, and the sweep.

use super::*;
use crate::ServiceError;
use crate::access_log::AccessRecorder;
use crate::documents::signed_url::UrlSigner;
use crate::fixtures::principal;
use bytes::Bytes;
use consular_domain::fixtures;
use consular_domain::notification::Recipient;
use consular_domain::{
    AccessEntry, AccessedData, Citizen, Document, Export, ExportId, ExportState, MissionId, NewDocument,
    Page, PrincipalId, PrincipalKind, RequestStatus, ScanStatus, Subject,
};
use consular_ports::{
    BlobMeta, BlobRead, Message, MockAccessLogRepository, MockAppointmentRepository, MockAuditRepository,
    MockBlobStore, MockBlobUpload, MockCitizenRepository, MockClock, MockDocumentRepository,
    MockExportRepository, MockNotificationRepository, MockRequestRepository, Note, ONE_RUNNING_EXPORT,
    RepoError, RequestRecord,
};
use mockall::predicate::{always, eq};
use std::io::Read;
use std::sync::{Arc, Mutex};
use time::macros::datetime;
use time::{Duration, OffsetDateTime};
use uuid::Uuid;

const NOW: OffsetDateTime = datetime!(2026-11-27 10:00 UTC);
const NOTE_MARKER: &str = "INTERNAL-NOTE-7f3a9c";
const MESSAGE: &str = "When can I collect my passport?";
const FILE: &[u8] = b"%PDF-1.7 the scanned birth certificate";

fn clock(at: OffsetDateTime) -> Arc<MockClock> {
    let mut clock = MockClock::new();
    clock.expect_now().return_const(at);
    Arc::new(clock)
}

fn signer() -> Arc<UrlSigner> {
    Arc::new(UrlSigner::new(&[9; 32]).unwrap())
}

fn citizen() -> Citizen {
    fixtures::citizen(MissionId::new(), NOW)
}

fn requested(c: &Citizen) -> Export {
    let by = Subject { kind: PrincipalKind::Citizen, id: PrincipalId(c.id.as_uuid()) };
    Export::request(c.id, c.mission_id, by, NOW)
}

fn running(c: &Citizen) -> Export {
    let mut e = requested(c);
    e.start(NOW).unwrap();
    e
}

fn document(c: &Citizen) -> Document {
    let new = NewDocument {
        mission_id: c.mission_id,
        citizen_id: c.id,
        request_id: None,
        kind: "birth_certificate".to_owned(),
        file_name: "birth.pdf".to_owned(),
        media_type: "application/pdf".to_owned(),
        size_bytes: FILE.len() as u64,
        sha256: "0".repeat(64),
        scan: ScanStatus::NotConfigured,
    };
    Document::upload(
        new,
        "documents/0123".to_owned(),
        Subject { kind: PrincipalKind::Citizen, id: PrincipalId(c.id.as_uuid()) },
        NOW,
    )
}

/// Every port an export reads, holding one request (with a message, and a note the
/// builder must never write), one document, one notification and no appointment.
struct World {
    citizen: Citizen,
    document: Document,
    ports: ExportPorts,
}

/// The bytes written to the upload, in the order they came, and how many writes.
#[derive(Clone, Default)]
struct Uploaded(Arc<Mutex<(Vec<u8>, usize)>>);

impl Uploaded {
    fn upload(&self) -> MockBlobUpload {
        let mut upload = MockBlobUpload::new();
        let sink = self.clone();
        upload.expect_write().returning(move |chunk: Bytes| {
            let mut got = sink.0.lock().unwrap();
            got.0.extend_from_slice(&chunk);
            got.1 += 1;
            Ok(())
        });
        let sink = self.clone();
        upload.expect_complete().times(1).returning(move || Ok(sink.0.lock().unwrap().0.len() as u64));
        upload
    }

    fn entries(&self) -> Vec<(String, Vec<u8>)> {
        let bytes = self.0.lock().unwrap().0.clone();
        let mut zip = zip::ZipArchive::new(std::io::Cursor::new(bytes)).unwrap();
        (0..zip.len())
            .map(|i| {
                let mut file = zip.by_index(i).unwrap();
                let mut content = Vec::new();
                file.read_to_end(&mut content).unwrap();
                (file.name().unwrap().into_owned(), content)
            })
            .collect()
    }
}

fn world(exports: MockExportRepository, blobs: MockBlobStore) -> World {
    let citizen = citizen();
    let document = document(&citizen);
    let mut citizens = MockCitizenRepository::new();
    let c = citizen.clone();
    citizens.expect_get().with(eq(citizen.id)).returning(move |_| Ok(Some(c.clone())));

    let st = fixtures::service_type(NOW);
    let request = fixtures::service_request(citizen.mission_id, citizen.id, &st, NOW);
    let mut requests = MockRequestRepository::new();
    let listed = request.clone();
    requests
        .expect_list()
        .returning(move |_, _, _| Ok(Page { items: vec![listed.clone()], next_after: None }));
    let author = Subject { kind: PrincipalKind::Staff, id: PrincipalId::new() };
    let record = RequestRecord {
        request: request.clone(),
        required_documents: vec![],
        history: vec![fixtures::history_entry(NOW, RequestStatus::Submitted, 0)],
        messages: vec![Message {
            id: Uuid::now_v7(),
            request_id: request.id,
            author,
            on_behalf_of: None,
            body: MESSAGE.to_owned(),
            created_at: NOW,
        }],
        // Even a repository that returned notes would not get them into the archive.
        notes: Some(vec![Note {
            id: Uuid::now_v7(),
            request_id: request.id,
            author,
            body: NOTE_MARKER.to_owned(),
            created_at: NOW,
        }]),
        documents: vec![],
        appointments: vec![],
    };
    // The builder asks for the detail without notes.
    requests.expect_detail().with(eq(request.id), eq(false)).returning(move |_, _| Ok(Some(record.clone())));

    let mut documents = MockDocumentRepository::new();
    let d = document.clone();
    documents.expect_list().returning(move |_, _| Ok(Page { items: vec![d.clone()], next_after: None }));
    let mut appointments = MockAppointmentRepository::new();
    appointments.expect_list().returning(|_, _| Ok(Page::empty()));
    let mut notifications = MockNotificationRepository::new();
    let inbox = Recipient {
        id: PrincipalId(citizen.id.as_uuid()),
        kind: PrincipalKind::Citizen,
        mission: Some(citizen.mission_id),
    };
    let n = fixtures::notification(inbox.id, PrincipalKind::Citizen, NOW);
    notifications
        .expect_list()
        .with(eq(inbox), eq(false), always())
        .returning(move |_, _, _| Ok(Page { items: vec![n.clone()], next_after: None }));

    let mut access_log = MockAccessLogRepository::new();
    let staff = principal(PrincipalKind::Staff, Uuid::now_v7(), "staff", Some(citizen.mission_id));
    let read = AccessEntry::of_read(&staff, citizen.id, AccessedData::Request, request.id.as_uuid(), NOW);
    access_log
        .expect_list()
        .with(eq(citizen.id), always())
        .returning(move |_, _| Ok(Page { items: read.clone().into_iter().collect(), next_after: None }));

    World {
        citizen,
        document,
        ports: ExportPorts {
            exports: Arc::new(exports),
            citizens: Arc::new(citizens),
            requests: Arc::new(requests),
            documents: Arc::new(documents),
            appointments: Arc::new(appointments),
            notifications: Arc::new(notifications),
            access_log: Arc::new(access_log),
            audit: Arc::new(MockAuditRepository::new()),
            access: crate::fixtures::access_recorder(),
            blobs: Arc::new(blobs),
            clock: clock(NOW),
        },
    }
}

fn service(ports: ExportPorts) -> ExportService {
    ExportService::new(ports, signer(), ExportConfig { node: "node-a".to_owned(), ..ExportConfig::default() })
}

/// A blob store that streams the document in three chunks and takes the archive.
fn blobs_with(uploaded: &Uploaded, key: Arc<Mutex<Option<String>>>) -> MockBlobStore {
    let mut blobs = MockBlobStore::new();
    let sink = uploaded.clone();
    blobs.expect_start_upload().times(1).returning(move |k| {
        *key.lock().unwrap() = Some(k.to_owned());
        Ok(Box::new(sink.upload()))
    });
    blobs.expect_read().with(eq("documents/0123"), eq(None)).returning(|_, _| {
        let chunks = FILE.chunks(12).map(|c| Ok(Bytes::copy_from_slice(c))).collect::<Vec<_>>();
        Ok(Some(BlobRead {
            range: 0..FILE.len() as u64,
            size: FILE.len() as u64,
            last_modified: NOW,
            chunks: Box::pin(futures_util::stream::iter(chunks)),
        }))
    });
    blobs
}

#[tokio::test]
async fn an_archive_holds_every_part_streamed_and_never_an_internal_note() {
    let uploaded = Uploaded::default();
    let key = Arc::new(Mutex::new(None));
    let mut exports = MockExportRepository::new();
    let slot = Arc::new(Mutex::new(None::<Export>));
    let stored = slot.clone();
    exports.expect_claim().times(1).returning(move |node, _, until| {
        assert_eq!((node, until), ("node-a", NOW + Duration::seconds(60)));
        Ok(stored.lock().unwrap().clone())
    });
    exports.expect_renew().returning(|_, node, _, _| Ok(node == "node-a"));
    let settled = Arc::new(Mutex::new(None::<Export>));
    let record = settled.clone();
    exports.expect_settle().times(1).returning(move |e, node| {
        assert_eq!(node, "node-a");
        *record.lock().unwrap() = Some(e.clone());
        Ok(true)
    });
    let w = world(exports, blobs_with(&uploaded, key.clone()));
    *slot.lock().unwrap() = Some(running(&w.citizen));

    let outcome = service(w.ports.clone()).build_next().await.unwrap();
    assert_eq!(outcome, BuildOutcome::Settled(ExportState::Ready));
    let settled = settled.lock().unwrap().clone().unwrap();
    let key = key.lock().unwrap().clone().unwrap();
    assert_eq!(settled.blob_key.as_deref(), Some(key.as_str()));
    assert_eq!(settled.size_bytes, Some(uploaded.0.lock().unwrap().0.len() as u64));
    assert_eq!(settled.expires_at, Some(NOW + consular_domain::EXPORT_LIFETIME));

    let entries = uploaded.entries();
    let names: Vec<&str> = entries.iter().map(|(n, _)| n.as_str()).collect();
    let file = format!("documents/{}/birth.pdf", w.document.id);
    assert_eq!(
        names,
        [
            "README.txt",
            "profile.json",
            "requests.json",
            "documents.json",
            file.as_str(),
            "appointments.json",
            "notifications.json",
            "access_log.json"
        ]
    );
    let json = |name: &str| -> serde_json::Value {
        serde_json::from_slice(&entries.iter().find(|(n, _)| n == name).unwrap().1).unwrap()
    };
    assert_eq!(json("profile.json")["passport_number"], w.citizen.passport_number);
    let requests = json("requests.json");
    assert_eq!(requests[0]["messages"][0]["body"], MESSAGE);
    assert_eq!(requests[0]["messages"][0]["from"], "staff");
    assert_eq!(requests[0]["history"][0]["to_status"], "submitted");
    assert_eq!(json("documents.json")[0]["file"], file.as_str());
    assert_eq!(entries.iter().find(|(n, _)| *n == file).unwrap().1, FILE);
    assert_eq!(json("appointments.json"), serde_json::json!([]));
    assert_eq!(json("notifications.json").as_array().unwrap().len(), 1);
    let log = json("access_log.json");
    assert_eq!((log[0]["what"].as_str(), log[0]["role"].as_str()), (Some("request"), Some("staff")));
    assert_eq!(log[0]["by"]["kind"], "staff");
    // No entry holds the note, compressed or not.
    for (name, content) in &entries {
        assert!(!String::from_utf8_lossy(content).contains(NOTE_MARKER), "{name}");
    }
    // Streamed: the upload got the archive in several writes, not once at the end.
    assert!(uploaded.0.lock().unwrap().1 >= 7, "{} writes", uploaded.0.lock().unwrap().1);
}

#[tokio::test]
async fn a_build_that_lost_its_lease_discards_its_upload_and_settles_nothing() {
    let mut exports = MockExportRepository::new();
    let slot = Arc::new(Mutex::new(None::<Export>));
    let stored = slot.clone();
    exports.expect_claim().returning(move |_, _, _| Ok(stored.lock().unwrap().clone()));
    exports.expect_renew().returning(|_, _, _, _| Ok(false));
    exports.expect_settle().never();
    let mut blobs = MockBlobStore::new();
    blobs.expect_start_upload().times(1).returning(|_| {
        let mut upload = MockBlobUpload::new();
        upload.expect_write().returning(|_| Ok(()));
        upload.expect_complete().never();
        upload.expect_abort().times(1).returning(|| Ok(()));
        Ok(Box::new(upload))
    });
    let w = world(exports, blobs);
    *slot.lock().unwrap() = Some(running(&w.citizen));
    assert_eq!(service(w.ports).build_next().await.unwrap(), BuildOutcome::LeaseLost);
}

#[tokio::test]
async fn a_second_export_while_one_runs_names_the_running_one() {
    let c = citizen();
    let first = requested(&c);
    let actor = principal(PrincipalKind::Citizen, c.id.as_uuid(), "citizen", Some(c.mission_id));

    // Seen before the insert.
    let mut exports = MockExportRepository::new();
    let f = first.clone();
    exports.expect_running_for().returning(move |_| Ok(Some(f.clone())));
    exports.expect_insert().never();
    let mut w = world(MockExportRepository::new(), MockBlobStore::new());
    let mut citizens = MockCitizenRepository::new();
    let cc = c.clone();
    citizens.expect_get().returning(move |_| Ok(Some(cc.clone())));
    w.ports.citizens = Arc::new(citizens);
    w.ports.exports = Arc::new(exports);
    let refused = service(w.ports.clone()).start(&actor, Whose::Me).await;
    assert!(
        matches!(refused, Err(ServiceError::ExportRunning { existing, .. }) if existing == first.id),
        "{refused:?}"
    );

    // Lost at the insert, to a request that got there first.
    let mut exports = MockExportRepository::new();
    let f = first.clone();
    let mut seen = 0;
    exports.expect_running_for().returning(move |_| {
        seen += 1;
        Ok((seen > 1).then(|| f.clone()))
    });
    exports
        .expect_insert()
        .returning(|_, _| Err(RepoError::Duplicate { constraint: ONE_RUNNING_EXPORT.to_owned() }));
    w.ports.exports = Arc::new(exports);
    let refused = service(w.ports).start(&actor, Whose::Me).await;
    assert!(
        matches!(refused, Err(ServiceError::ExportRunning { existing, .. }) if existing == first.id),
        "{refused:?}"
    );
}

#[tokio::test]
async fn a_ready_export_comes_with_a_signed_url_that_reads_its_archive_until_it_expires() {
    let c = citizen();
    let mut ready = running(&c);
    ready.finish("exports/k/1".to_owned(), 3, NOW).unwrap();
    let actor = principal(PrincipalKind::Citizen, c.id.as_uuid(), "citizen", Some(c.mission_id));
    let mut exports = MockExportRepository::new();
    let r = ready.clone();
    exports.expect_get().with(eq(ready.id)).returning(move |_| Ok(Some(r.clone())));
    let mut blobs = MockBlobStore::new();
    blobs.expect_presigned_get_url().returning(|_, _, _, _| Ok(None));
    blobs.expect_read().with(eq("exports/k/1"), eq(None)).returning(|_, _| {
        Ok(Some(BlobRead {
            range: 0..3,
            size: 3,
            last_modified: NOW,
            chunks: Box::pin(futures_util::stream::iter([Ok(Bytes::from_static(b"zip"))])),
        }))
    });
    let mut w = world(exports, blobs);
    let mut citizens = MockCitizenRepository::new();
    let cc = c.clone();
    citizens.expect_get().returning(move |_| Ok(Some(cc.clone())));
    w.ports.citizens = Arc::new(citizens);
    let mut audit = MockAuditRepository::new();
    audit.expect_append().times(2).returning(|r| {
        assert_eq!(r[0].action, "download_url_issued");
        Ok(())
    });
    w.ports.audit = Arc::new(audit);
    // The URL handed to the mission's admin is an access-log entry naming the export;
    // the citizen's own is not (one entry in all).
    let admin = principal(PrincipalKind::Admin, Uuid::now_v7(), "admin", Some(c.mission_id));
    let mut log = MockAccessLogRepository::new();
    let (who, citizen_id, export_id) = (admin.subject, c.id, ready.id.as_uuid());
    log.expect_append().times(1).returning(move |entries| {
        assert_eq!(entries.len(), 1);
        let e = &entries[0];
        assert_eq!(
            (e.actor, e.citizen_id, e.what, e.object_id),
            (who, citizen_id, AccessedData::Export, export_id)
        );
        Ok(())
    });
    w.ports.access = AccessRecorder::new(Arc::new(log));
    let exports = service(w.ports.clone());
    let for_admin = exports.get(&admin, Whose::Citizen(c.id), ready.id).await.unwrap();
    assert!(for_admin.download.is_some());

    let view = exports.get(&actor, Whose::Me, ready.id).await.unwrap();
    assert_eq!(view.state, ExportState::Ready);
    let (url, expires_at) = view.download.unwrap();
    assert_eq!(expires_at, NOW + Duration::seconds(300));
    let query = url.split_once('?').unwrap().1;
    assert!(url.starts_with(&format!("/api/v1/exports/{}/archive?", ready.id)), "{url}");
    let signature = query.split("signature=").nth(1).unwrap();
    let grant = ExportGrant { export: ready.id, expires_at };
    let archive = exports.archive(grant, signature).await.unwrap();
    assert_eq!(archive.read.size, 3);

    // Another export's id, or a later expiry, under the same signature: refused.
    for forged in [
        ExportGrant { export: ExportId::new(), ..grant },
        ExportGrant { expires_at: expires_at + Duration::hours(1), ..grant },
    ] {
        assert!(matches!(exports.archive(forged, signature).await, Err(ServiceError::InvalidDownloadUrl(_))));
    }
    // Past its time, the URL is refused before anything is read.
    let mut late = w.ports.clone();
    late.clock = clock(expires_at);
    let refused = service(late).archive(grant, signature).await;
    assert!(
        matches!(refused, Err(ServiceError::InvalidDownloadUrl(ref why)) if why.contains("expired")),
        "{refused:?}"
    );
    // Another citizen's token never sees it.
    let other = principal(PrincipalKind::Citizen, Uuid::now_v7(), "citizen", Some(c.mission_id));
    assert!(matches!(exports.get(&other, Whose::Me, ready.id).await, Err(ServiceError::NotFound)));
}

#[tokio::test]
async fn the_sweep_expires_ready_exports_and_removes_archives_nobody_references() {
    let c = citizen();
    let mut ready = running(&c);
    ready.finish("exports/k/old".to_owned(), 3, NOW - Duration::days(8)).unwrap();
    let mut exports = MockExportRepository::new();
    let due = ready.clone();
    exports.expect_due_to_expire().returning(move |_, _| Ok(vec![due.clone()]));
    exports.expect_expire().times(1).returning(|e| {
        assert_eq!((e.state, e.blob_key.as_deref()), (ExportState::Expired, None));
        Ok(true)
    });
    exports
        .expect_known_archive_keys()
        .returning(|keys| Ok(keys.iter().filter(|k| k.as_str() == "exports/k/kept").cloned().collect()));
    let mut blobs = MockBlobStore::new();
    blobs.expect_list().with(eq("exports")).returning(|_| {
        let meta = |key: &str, age: i64| {
            Ok(BlobMeta { key: key.to_owned(), size: 1, last_modified: NOW - Duration::minutes(age) })
        };
        Ok(Box::pin(futures_util::stream::iter([
            meta("exports/k/kept", 600),
            meta("exports/k/orphan", 120),
            meta("exports/k/building", 5),
        ])))
    });
    blobs.expect_delete().with(eq("exports/k/old")).times(1).returning(|_| Ok(()));
    blobs.expect_delete().with(eq("exports/k/orphan")).times(1).returning(|_| Ok(()));
    let w = world(exports, blobs);
    let report = service(w.ports).sweep().await.unwrap();
    assert_eq!(report, ExportSweep { expired: 1, orphans: 1 });
}
