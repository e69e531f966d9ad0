//! The streaming upload's refusals against the port mocks: what is started, written,
//! aborted and deleted on each path.

use super::*;
use crate::fixtures::{alice, principal, service_type};
use bytes::Bytes;
use consular_domain::{CitizenId, MissionId, Page, PrincipalKind, ScanStatus};
use consular_ports::{
    MockAuditRepository, MockBlobStore, MockBlobUpload, MockCitizenRepository, MockDocumentRepository,
    MockIdempotencyRepository, MockMalwareScanner, MockRequestRepository, MockScanSession,
    MockServiceTypeRepository, RepoError, ScanError, ScanVerdict, SystemClock,
};
use futures_util::StreamExt;
use sha2::{Digest, Sha256};

const PDF: &[u8] = b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n1 0 obj\n<< /Type /Catalog >>\nendobj\n";

/// A PDF of `len` bytes.
fn pdf(len: usize) -> Vec<u8> {
    let mut bytes = PDF.to_vec();
    bytes.resize(len, b' ');
    bytes
}

fn body(chunks: Vec<Vec<u8>>) -> UploadBody {
    futures_util::stream::iter(chunks.into_iter().map(|c| Ok(Bytes::from(c)))).boxed_local()
}

fn form() -> UploadForm {
    UploadForm {
        kind: "passport_photo".into(),
        request_id: None,
        citizen_id: None,
        file_name: "passport.pdf".into(),
        declared_type: Some("application/pdf".into()),
    }
}

/// A citizen uploading for themself, with a catalog that requires `passport_photo`, no
/// existing document, and the blob store and scanner given.
struct Fixture {
    documents: MockDocumentRepository,
    blobs: MockBlobStore,
    scanner: Option<MockMalwareScanner>,
    limit: u64,
}

impl Fixture {
    fn new(blobs: MockBlobStore) -> Self {
        let mut documents = MockDocumentRepository::new();
        documents.expect_list().returning(|_, _| Ok(Page::empty()));
        Fixture { documents, blobs, scanner: None, limit: 1024 }
    }

    async fn upload(self, chunks: Vec<Vec<u8>>) -> Result<Document, ServiceError> {
        let mission = MissionId::new();
        let citizen = alice(mission).into_citizen(CitizenId::new(), time::OffsetDateTime::UNIX_EPOCH);
        let actor = principal(PrincipalKind::Citizen, citizen.id.as_uuid(), "citizen", Some(mission));
        let mut citizens = MockCitizenRepository::new();
        citizens.expect_get().returning(move |_| Ok(Some(citizen.clone())));
        let mut service_types = MockServiceTypeRepository::new();
        service_types.expect_list().returning(|_, _| {
            let mut t = service_type(true);
            t.required_documents = vec!["passport_photo".into()];
            Ok(Page { items: vec![t], next_after: None })
        });
        let ports = DocumentPorts {
            documents: Arc::new(self.documents),
            requests: Arc::new(MockRequestRepository::new()),
            citizens: Arc::new(citizens),
            service_types: Arc::new(service_types),
            idempotency: Arc::new(MockIdempotencyRepository::new()),
            audit: Arc::new(MockAuditRepository::new()),
            blobs: Arc::new(self.blobs),
            scanner: self.scanner.map(|s| Arc::new(s) as Arc<dyn MalwareScanner>),
            clock: Arc::new(SystemClock),
        };
        let config = DocumentConfig { max_upload_bytes: self.limit, ..DocumentConfig::default() };
        let service = DocumentService::new(ports, UrlSigner::new(&[7; 32]).unwrap(), config);
        service.upload(&actor, form(), body(chunks), None).await.map(|created| created.value)
    }
}

/// A blob store that expects nothing to be started.
fn untouched_store() -> MockBlobStore {
    let mut blobs = MockBlobStore::new();
    blobs.expect_start_upload().never();
    blobs.expect_delete().never();
    blobs
}

/// A blob store whose one upload takes every write, and is completed `completes` times
/// and aborted `aborts` times.
fn store_with_upload(completes: usize, aborts: usize) -> MockBlobStore {
    let mut blobs = MockBlobStore::new();
    blobs.expect_start_upload().times(1).returning(move |_| {
        let mut upload = MockBlobUpload::new();
        upload.expect_write().returning(|_| Ok(()));
        upload.expect_complete().times(completes).returning(|| Ok(0));
        upload.expect_abort().times(aborts).returning(|| Ok(()));
        Ok(Box::new(upload))
    });
    blobs
}

#[tokio::test]
async fn an_empty_file_starts_nothing() {
    let refused = Fixture::new(untouched_store()).upload(vec![]).await.unwrap_err();
    assert!(matches!(refused, ServiceError::Upload(UploadError::Empty)), "{refused:?}");
    let refused = Fixture::new(untouched_store()).upload(vec![vec![], vec![]]).await.unwrap_err();
    assert!(matches!(refused, ServiceError::Upload(UploadError::Empty)), "{refused:?}");
}

#[tokio::test]
async fn a_file_of_the_wrong_type_starts_nothing() {
    let mut fixture = Fixture::new(untouched_store());
    let mut scanner = MockMalwareScanner::new();
    scanner.expect_start().never();
    fixture.scanner = Some(scanner);
    let refused = fixture.upload(vec![b"<!DOCTYPE html><html></html>".to_vec()]).await.unwrap_err();
    assert!(matches!(refused, ServiceError::Upload(UploadError::Type(_))), "{refused:?}");
}

#[tokio::test]
async fn too_large_mid_stream_stops_reading_and_aborts() {
    // 600 + 600 bytes against a limit of 1024: refused at the second chunk; a third one
    // is never read.
    let chunks = vec![pdf(600), vec![b' '; 600], vec![b' '; 10_000]];
    let refused = Fixture::new(store_with_upload(0, 1)).upload(chunks).await.unwrap_err();
    assert_eq!(refused.to_string(), "upload refused: the file exceeds the limit of 1024 bytes");
    // Over the limit within the sniffed head: nothing is started at all.
    let mut small = Fixture::new(untouched_store());
    small.limit = 100;
    let refused = small.upload(vec![pdf(300)]).await.unwrap_err();
    assert!(matches!(refused, ServiceError::Upload(UploadError::TooLarge { limit: 100 })), "{refused:?}");
}

fn scanner(verdict: Result<ScanVerdict, ScanError>) -> MockMalwareScanner {
    let mut scanner = MockMalwareScanner::new();
    scanner.expect_start().times(1).returning(move || {
        let mut session = MockScanSession::new();
        session.expect_write().returning(|_| Ok(()));
        let verdict = verdict.clone();
        session.expect_finish().times(1).returning(move || verdict.clone());
        Ok(Box::new(session))
    });
    scanner
}

#[tokio::test]
async fn an_infected_file_is_aborted_and_never_completed() {
    let mut fixture = Fixture::new(store_with_upload(0, 1));
    fixture.scanner = Some(scanner(Ok(ScanVerdict::Infected { signature: "Eicar-Test-Signature".into() })));
    let refused = fixture.upload(vec![pdf(700)]).await.unwrap_err();
    assert!(
        matches!(&refused, ServiceError::Upload(UploadError::Malware { signature }) if signature == "Eicar-Test-Signature")
    );
}

#[tokio::test]
async fn a_scanner_that_cannot_answer_refuses_the_upload() {
    // Down from the start: nothing is written.
    let mut fixture = Fixture::new(untouched_store());
    let mut down = MockMalwareScanner::new();
    down.expect_start().times(1).returning(|| Err(ScanError::Unavailable("connection refused".into())));
    fixture.scanner = Some(down);
    let refused = fixture.upload(vec![pdf(700)]).await.unwrap_err();
    assert!(matches!(refused, ServiceError::Upload(UploadError::ScannerUnavailable(_))), "{refused:?}");
    // Failing at the verdict: the blob is aborted.
    let mut fixture = Fixture::new(store_with_upload(0, 1));
    fixture.scanner = Some(scanner(Err(ScanError::Unavailable("timed out".into()))));
    let refused = fixture.upload(vec![pdf(700)]).await.unwrap_err();
    assert!(matches!(refused, ServiceError::Upload(UploadError::ScannerUnavailable(_))), "{refused:?}");
}

#[tokio::test]
async fn a_failed_insert_deletes_the_blob_it_wrote() {
    let mut blobs = store_with_upload(1, 0);
    blobs.expect_delete().times(1).withf(|key| key.starts_with("documents/")).returning(|_| Ok(()));
    let mut fixture = Fixture::new(blobs);
    fixture.documents.expect_insert().times(1).returning(|_, _| Err(RepoError::Unavailable("down".into())));
    let refused = fixture.upload(vec![pdf(700)]).await.unwrap_err();
    assert!(matches!(refused, ServiceError::Unavailable(_)), "{refused:?}");
}

#[tokio::test]
async fn a_clean_upload_records_what_streamed_through() {
    let mut fixture = Fixture::new(store_with_upload(1, 0));
    fixture.scanner = Some(scanner(Ok(ScanVerdict::Clean)));
    fixture.documents.expect_insert().times(1).returning(|document, meta| {
        assert_eq!(meta.events[0].kind, "document.uploaded");
        assert_eq!(meta.audit[0].resource_type, RESOURCE);
        assert_eq!(meta.events[0].aggregate_id, document.id.as_uuid(), "not attached: the document's own");
        Ok(())
    });
    let bytes = pdf(1000);
    let document = fixture.upload(vec![bytes[..300].to_vec(), bytes[300..].to_vec()]).await.unwrap();
    assert_eq!(document.size_bytes, 1000);
    assert_eq!(document.sha256, format!("{:x}", Sha256::digest(&bytes)));
    assert_eq!((document.media_type.as_str(), document.scan), ("application/pdf", ScanStatus::Clean));
    assert!(document.blob_key.starts_with("documents/"));
}

/// The sweep removes exactly the blobs older than an hour that no live document
/// references, then what interrupted uploads left.
#[tokio::test]
async fn the_sweep_removes_old_unreferenced_blobs_only() {
    use consular_ports::{BlobMeta, MockClock};
    let now = time::OffsetDateTime::UNIX_EPOCH + time::Duration::days(30);
    let meta =
        |key: &str, age: time::Duration| BlobMeta { key: key.into(), size: 1, last_modified: now - age };
    let listing = vec![
        meta("documents/orphan", time::Duration::hours(2)),
        meta("documents/live", time::Duration::hours(2)),
        meta("documents/in-flight", time::Duration::minutes(5)),
    ];
    let mut blobs = MockBlobStore::new();
    blobs
        .expect_list()
        .withf(|prefix| prefix == "documents")
        .times(1)
        .returning(move |_| Ok(futures_util::stream::iter(listing.clone().into_iter().map(Ok)).boxed()));
    blobs.expect_delete().withf(|key| key == "documents/orphan").times(1).returning(|_| Ok(()));
    blobs
        .expect_remove_abandoned_uploads()
        .withf(move |cutoff| *cutoff == now - ORPHAN_AGE)
        .returning(|_| Ok(2));
    let mut documents = MockDocumentRepository::new();
    documents
        .expect_known_blob_keys()
        .withf(|keys| keys == ["documents/orphan".to_owned(), "documents/live".to_owned()])
        .returning(|_| Ok(vec!["documents/live".to_owned()]));
    let mut clock = MockClock::new();
    clock.expect_now().returning(move || now);
    let ports = DocumentPorts {
        documents: Arc::new(documents),
        requests: Arc::new(MockRequestRepository::new()),
        citizens: Arc::new(MockCitizenRepository::new()),
        service_types: Arc::new(MockServiceTypeRepository::new()),
        idempotency: Arc::new(MockIdempotencyRepository::new()),
        audit: Arc::new(MockAuditRepository::new()),
        blobs: Arc::new(blobs),
        scanner: None,
        clock: Arc::new(clock),
    };
    let service = DocumentService::new(ports, UrlSigner::new(&[7; 32]).unwrap(), DocumentConfig::default());
    assert_eq!(service.sweep().await.unwrap(), SweepReport { orphans: 1, abandoned_uploads: 2 });
}
