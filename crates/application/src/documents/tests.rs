//! The streaming upload's refusals against the port mocks: what is started, written,
//! aborted and deleted on each path.

use super::*;
use crate::fixtures::{alice, principal, service_type};
use bytes::Bytes;
use consular_domain::{
    Citizen, CitizenId, Document, MissionId, NewDocument, Page, Principal, PrincipalKind, ScanStatus,
    ValidationErrors,
};
use consular_ports::{
    MalwareScanner, MockAuditRepository, MockBlobStore, MockBlobUpload, MockCitizenRepository,
    MockDocumentRepository, MockIdempotencyRepository, MockMalwareScanner, MockRequestRepository,
    MockScanSession, MockServiceTypeRepository, RepoError, ScanError, ScanVerdict, SystemClock,
};
use futures_util::{FutureExt, StreamExt};
use sha2::{Digest, Sha256};
use std::sync::Arc;

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
    UploadForm { kind: "passport_photo".into(), request_id: None, citizen_id: None }
}

fn file() -> UploadFile {
    UploadFile { file_name: "passport.pdf".into(), declared_type: Some("application/pdf".into()) }
}

fn fields(form: UploadForm) -> UploadFields {
    UploadFields { form, idempotency_key: None }
}

/// The form's end as the delivery layer gives it: `form` with `parts_after_file`.
fn end(form: UploadForm, parts_after_file: bool) -> Result<FormEnd, BodyError> {
    Ok(FormEnd { fields: fields(form), parts_after_file })
}

/// A citizen (or, with `actor`, someone else) uploading, with a catalog that requires
/// `passport_photo`, no existing document, and the blob store and scanner given.
struct Fixture {
    documents: MockDocumentRepository,
    blobs: MockBlobStore,
    scanner: Option<MockMalwareScanner>,
    limit: u64,
    citizen: Citizen,
    actor: Principal,
}

impl Fixture {
    fn new(blobs: MockBlobStore) -> Self {
        let mut documents = MockDocumentRepository::new();
        documents.expect_list().returning(|_, _| Ok(Page::empty()));
        let mission = MissionId::new();
        let citizen = alice(mission).into_citizen(CitizenId::new(), time::OffsetDateTime::UNIX_EPOCH);
        let actor = principal(PrincipalKind::Citizen, citizen.id.as_uuid(), "citizen", Some(mission));
        Fixture { documents, blobs, scanner: None, limit: 1024, citizen, actor }
    }

    /// Every text part before the file, nothing after it.
    async fn upload(self, chunks: Vec<Vec<u8>>) -> Result<Document, ServiceError> {
        self.upload_as(chunks, BeforeFile::Whole(fields(form())), end(form(), false)).await
    }

    async fn upload_as(
        self,
        chunks: Vec<Vec<u8>>,
        before: BeforeFile,
        after: Result<FormEnd, BodyError>,
    ) -> Result<Document, ServiceError> {
        let citizen = self.citizen;
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
            missions: Arc::new(crate::fixtures::any_mission()),
            audit: Arc::new(MockAuditRepository::new()),
            access: crate::fixtures::access_recorder(),
            blobs: Arc::new(self.blobs),
            scanner: self.scanner.map(|s| Arc::new(s) as Arc<dyn MalwareScanner>),
            clock: Arc::new(SystemClock),
        };
        let config = DocumentConfig { max_upload_bytes: self.limit, ..DocumentConfig::default() };
        let service = DocumentService::new(ports, UrlSigner::new(&[7; 32]).unwrap(), config);
        let upload = Upload {
            before,
            file: file(),
            body: body(chunks),
            after: futures_util::future::ready(after).boxed_local(),
        };
        service.upload(&self.actor, upload).await.map(|created| created.value)
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

/// Two uploads of a kind at once both pass the check before streaming; the database
/// refuses the second row. The loser is the same 409 as before streaming, naming the
/// document that got in, and its blob is deleted.
#[tokio::test]
async fn an_upload_that_loses_the_race_names_the_winner_and_deletes_its_blob() {
    let mut blobs = store_with_upload(1, 0);
    blobs.expect_delete().times(1).withf(|key| key.starts_with("documents/")).returning(|_| Ok(()));
    let mut fixture = Fixture::new(blobs);
    let winner = Document::upload(
        NewDocument {
            mission_id: MissionId::new(),
            citizen_id: CitizenId::new(),
            request_id: None,
            kind: "passport_photo".into(),
            file_name: "first.pdf".into(),
            media_type: "application/pdf".into(),
            size_bytes: 700,
            sha256: "ab".repeat(32),
            scan: ScanStatus::NotConfigured,
        },
        consular_domain::document::new_blob_key(),
        consular_domain::Subject { kind: PrincipalKind::Citizen, id: consular_domain::PrincipalId::new() },
        time::OffsetDateTime::UNIX_EPOCH,
    );
    let winner_id = winner.id;
    let mut documents = MockDocumentRepository::new();
    // Nothing there before streaming; the winner there once the insert was refused (it
    // is of the loser's citizen: `may_upload` compares).
    let listed = std::sync::atomic::AtomicUsize::new(0);
    let mut found = winner.clone();
    documents.expect_list().times(2).returning(move |filter, _| {
        found.citizen_id = filter.citizen_id.unwrap();
        match listed.fetch_add(1, std::sync::atomic::Ordering::SeqCst) {
            0 => Ok(Page::empty()),
            _ => Ok(Page { items: vec![found.clone()], next_after: None }),
        }
    });
    documents
        .expect_insert()
        .times(1)
        .returning(|_, _| Err(RepoError::Duplicate { constraint: consular_ports::ONE_LIVE_DOCUMENT.into() }));
    fixture.documents = documents;
    let refused = fixture.upload(vec![pdf(700)]).await.unwrap_err();
    match refused {
        ServiceError::DocumentAlreadyPresent(refused) => assert_eq!(refused.existing, winner_id),
        other => panic!("{other:?}"),
    }
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

/// The pointers of a validation refusal; panics on any other error.
fn pointers(error: &ServiceError) -> Vec<String> {
    match error {
        ServiceError::Validation(errors) => errors.0.iter().map(|e| e.pointer.clone()).collect(),
        other => panic!("not a validation refusal: {other:?}"),
    }
}

/// Text parts after the file (docs/api.md "Documents"): the file streams into a pending
/// blob, the parts are checked once the body ended, and a refusal aborts the blob, which
/// is never completed (nothing becomes visible, no row).
#[tokio::test]
async fn parts_after_the_file_that_refuse_abort_the_pending_blob() {
    // `kind` after the file, one no service type requires.
    let late = UploadForm { kind: "tax_return".into(), ..form() };
    let refused = Fixture::new(store_with_upload(0, 1))
        .upload_as(vec![pdf(700)], BeforeFile::Incomplete, end(late, true))
        .await
        .unwrap_err();
    assert_eq!(pointers(&refused), ["/kind"]);
    // A part after the file the form refuses (repeated, unknown, too long): the same.
    let repeated = BodyError::Invalid(ValidationErrors::single("/kind", "duplicate", "sent more than once"));
    let refused = Fixture::new(store_with_upload(0, 1))
        .upload_as(vec![pdf(700)], BeforeFile::Partial(fields(form())), Err(repeated))
        .await
        .unwrap_err();
    assert_eq!(pointers(&refused), ["/kind"]);
}

#[tokio::test]
async fn parts_after_the_file_that_pass_complete_the_blob_and_write_the_row() {
    let mut fixture = Fixture::new(store_with_upload(1, 0));
    fixture.documents.expect_insert().times(1).returning(|_, _| Ok(()));
    let document =
        fixture.upload_as(vec![pdf(700)], BeforeFile::Incomplete, end(form(), true)).await.unwrap();
    assert_eq!((document.kind.as_str(), document.size_bytes), ("passport_photo", 700));
}

/// Staff sending `kind`, the file, then `citizen_id` (a generated client's order): the
/// checks before the file refuse for want of the citizen, which the part after the file
/// brings; without it, the same refusal comes once the body ended, the blob aborted.
#[tokio::test]
async fn a_refusal_before_the_file_waits_for_the_parts_after_it() {
    let staff = |fixture: &mut Fixture| {
        fixture.actor =
            principal(PrincipalKind::Staff, uuid::Uuid::now_v7(), "staff", Some(fixture.citizen.mission_id));
    };
    let mut fixture = Fixture::new(store_with_upload(1, 0));
    staff(&mut fixture);
    fixture.documents.expect_insert().times(1).returning(|_, _| Ok(()));
    let citizen = fixture.citizen.id;
    let whole = UploadForm { citizen_id: Some(citizen), ..form() };
    let document = fixture
        .upload_as(vec![pdf(700)], BeforeFile::Partial(fields(form())), end(whole, true))
        .await
        .unwrap();
    assert_eq!(document.citizen_id, citizen);

    let mut fixture = Fixture::new(store_with_upload(0, 1));
    staff(&mut fixture);
    let refused = fixture
        .upload_as(vec![pdf(700)], BeforeFile::Partial(fields(form())), end(form(), false))
        .await
        .unwrap_err();
    assert_eq!(pointers(&refused), ["/citizen_id"]);
    // Every part before the file: refused before anything is started, as ever.
    let mut fixture = Fixture::new(untouched_store());
    staff(&mut fixture);
    let refused = fixture
        .upload_as(vec![pdf(700)], BeforeFile::Whole(fields(form())), end(form(), false))
        .await
        .unwrap_err();
    assert_eq!(pointers(&refused), ["/citizen_id"]);
}

/// A refusal before the file that no later part can lift (here a kind no service type
/// requires) stores nothing: the file is read through, and the answer is the whole
/// form's, as with every part first; past the size limit, the answer before the file.
#[tokio::test]
async fn a_refusal_no_later_part_lifts_stores_nothing() {
    let wrong = || UploadForm { kind: "tax_return".into(), ..form() };
    let partial = || BeforeFile::Partial(fields(wrong()));
    let refused = Fixture::new(untouched_store())
        .upload_as(vec![pdf(700)], partial(), end(wrong(), false))
        .await
        .unwrap_err();
    assert_eq!(pointers(&refused), ["/kind"]);
    // Someone else's citizen id after the file: refused before the kind is looked at.
    let fixture = Fixture::new(untouched_store());
    let other = UploadForm { citizen_id: Some(CitizenId::new()), ..wrong() };
    let refused = fixture.upload_as(vec![pdf(700)], partial(), end(other, true)).await.unwrap_err();
    assert_eq!(pointers(&refused), ["/citizen_id"]);
    // Over the size limit: the parts after the file are never read.
    let after = Err(BodyError::Unreadable("never read".into()));
    let refused = Fixture::new(untouched_store())
        .upload_as(vec![pdf(700), vec![b' '; 700]], partial(), after)
        .await
        .unwrap_err();
    assert_eq!(pointers(&refused), ["/kind"]);
}

/// The refusals of a file known once it is read (its type when parts may follow, its
/// emptiness, the scanner's verdict) come after the checks of the parts after it, as
/// they would had those parts come first; nothing is completed either way.
#[tokio::test]
async fn a_refused_file_is_answered_after_the_parts_that_follow_it() {
    let html = b"<!DOCTYPE html><html></html>".to_vec();
    let no_kind = || Err(BodyError::Invalid(ValidationErrors::single("/kind", "required", "no kind")));
    let refused = Fixture::new(untouched_store())
        .upload_as(vec![html.clone(), vec![b' '; 600]], BeforeFile::Incomplete, no_kind())
        .await
        .unwrap_err();
    assert_eq!(pointers(&refused), ["/kind"]);
    let refused = Fixture::new(untouched_store())
        .upload_as(vec![html, vec![b' '; 600]], BeforeFile::Incomplete, end(form(), true))
        .await
        .unwrap_err();
    assert!(matches!(refused, ServiceError::Upload(UploadError::Type(_))), "{refused:?}");
    let refused = Fixture::new(untouched_store())
        .upload_as(vec![], BeforeFile::Incomplete, no_kind())
        .await
        .unwrap_err();
    assert_eq!(pointers(&refused), ["/kind"]);

    let infected = || Some(scanner(Ok(ScanVerdict::Infected { signature: "Eicar-Test-Signature".into() })));
    let mut fixture = Fixture::new(store_with_upload(0, 1));
    fixture.scanner = infected();
    let late = UploadForm { kind: "tax_return".into(), ..form() };
    let refused =
        fixture.upload_as(vec![pdf(700)], BeforeFile::Incomplete, end(late, true)).await.unwrap_err();
    assert_eq!(pointers(&refused), ["/kind"]);
    let mut fixture = Fixture::new(store_with_upload(0, 1));
    fixture.scanner = infected();
    let refused =
        fixture.upload_as(vec![pdf(700)], BeforeFile::Incomplete, end(form(), true)).await.unwrap_err();
    assert!(matches!(refused, ServiceError::Upload(UploadError::Malware { .. })), "{refused:?}");
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
        missions: Arc::new(crate::fixtures::any_mission()),
        audit: Arc::new(MockAuditRepository::new()),
        access: crate::fixtures::access_recorder(),
        blobs: Arc::new(blobs),
        scanner: None,
        clock: Arc::new(clock),
    };
    let service = DocumentService::new(ports, UrlSigner::new(&[7; 32]).unwrap(), DocumentConfig::default());
    assert_eq!(service.sweep().await.unwrap(), SweepReport { orphans: 1, abandoned_uploads: 2 });
}

/// `load_url_signer` against a mocked secret store: what it stores, seals and opens.
mod url_key {
    use super::super::signed_url::DownloadGrant;
    use super::super::{URL_KEY_SECRET, load_url_signer};
    use crate::auth::KeyEncryptionKey;
    use consular_domain::DocumentId;
    use consular_ports::{KeyProtection, MockServiceSecretRepository, StoredSecret, SystemClock};
    use std::sync::{Arc, Mutex};

    fn kek() -> KeyEncryptionKey {
        KeyEncryptionKey::from_base64(&KeyEncryptionKey::generate_base64().unwrap()).unwrap()
    }

    /// The candidate a store was given, and every value it was asked to seal in.
    type Seen = (Arc<Mutex<Option<StoredSecret>>>, Arc<Mutex<Vec<Vec<u8>>>>);

    /// A store holding `stored` (or nothing: then it keeps the candidate it is given),
    /// recording the candidate and every `protect`.
    fn store(stored: Option<StoredSecret>) -> (MockServiceSecretRepository, Seen) {
        let (candidates, protected) = (Arc::new(Mutex::new(None)), Arc::new(Mutex::new(Vec::new())));
        let mut secrets = MockServiceSecretRepository::new();
        let seen = candidates.clone();
        secrets.expect_get_or_insert().withf(|name, _, _| name == URL_KEY_SECRET).returning(
            move |_, candidate, _| {
                *seen.lock().unwrap() = Some(candidate.clone());
                Ok(stored.clone().unwrap_or_else(|| candidate.clone()))
            },
        );
        let sealed = protected.clone();
        secrets.expect_protect().withf(|name, _| name == URL_KEY_SECRET).returning(move |_, bytes| {
            sealed.lock().unwrap().push(bytes.to_vec());
            Ok(true)
        });
        (secrets, (candidates, protected))
    }

    /// Whether `signer` signs as a signer over `key` does.
    fn signs_with(signer: &super::super::signed_url::UrlSigner, key: &[u8]) -> bool {
        let grant = DownloadGrant {
            document: DocumentId::new(),
            version: 1,
            expires_at: time::OffsetDateTime::now_utc(),
        };
        signer.sign(&grant) == super::super::signed_url::UrlSigner::new(key).unwrap().sign(&grant)
    }

    #[tokio::test]
    async fn without_a_kek_the_first_key_is_stored_in_clear() {
        let (secrets, (candidate, protected)) = store(None);
        let signer = load_url_signer(&secrets, None, &SystemClock).await.unwrap();
        let candidate = candidate.lock().unwrap().clone().unwrap();
        assert_eq!(candidate.protection, KeyProtection::Clear);
        assert_eq!(candidate.value.len(), 32);
        assert!(signs_with(&signer, &candidate.value));
        assert!(protected.lock().unwrap().is_empty());
    }

    #[tokio::test]
    async fn with_a_kek_the_first_key_is_stored_sealed_and_used_opened() {
        let kek = kek();
        let (secrets, (candidate, protected)) = store(None);
        let signer = load_url_signer(&secrets, Some(&kek), &SystemClock).await.unwrap();
        let candidate = candidate.lock().unwrap().clone().unwrap();
        assert_eq!(candidate.protection, KeyProtection::Aes256Gcm);
        let key = kek.open(URL_KEY_SECRET, &candidate.value).unwrap();
        assert_eq!(key.len(), 32);
        assert!(
            !candidate.value.windows(32).any(|w| w == key.as_slice()),
            "the key is not in what is stored"
        );
        assert!(signs_with(&signer, &key));
        assert!(protected.lock().unwrap().is_empty());
    }

    #[tokio::test]
    async fn a_key_found_in_clear_is_sealed_in_its_row_and_kept() {
        let kek = kek();
        let clear = StoredSecret { value: vec![7; 32], protection: KeyProtection::Clear };
        let (secrets, (_, protected)) = store(Some(clear));
        let signer = load_url_signer(&secrets, Some(&kek), &SystemClock).await.unwrap();
        assert!(signs_with(&signer, &[7; 32]), "the same key: earlier URLs stay valid");
        let protected = protected.lock().unwrap().clone();
        assert_eq!(protected.len(), 1);
        assert_eq!(kek.open(URL_KEY_SECRET, &protected[0]).unwrap(), vec![7; 32]);
    }

    #[tokio::test]
    async fn a_sealed_key_opens_with_its_kek_only() {
        let kek = kek();
        let sealed = StoredSecret {
            value: kek.seal(URL_KEY_SECRET, &[9; 32]).unwrap(),
            protection: KeyProtection::Aes256Gcm,
        };

        let (secrets, _) = store(Some(sealed.clone()));
        let signer = load_url_signer(&secrets, Some(&kek), &SystemClock).await.unwrap();
        assert!(signs_with(&signer, &[9; 32]));

        let (secrets, _) = store(Some(sealed.clone()));
        let error = load_url_signer(&secrets, Some(&self::kek()), &SystemClock).await.err().unwrap();
        assert!(
            error.to_string().contains("cannot decrypt the download URL key: wrong key_encryption_key?"),
            "{error}"
        );

        let (secrets, _) = store(Some(sealed));
        let error = load_url_signer(&secrets, None, &SystemClock).await.err().unwrap();
        assert!(error.to_string().contains("configure the key_encryption_key"), "{error}");
    }
}
