//! Crash consistency of documents (docs/documents.md, "Crash consistency"): the real
//! `consular` binary, killed with SIGKILL in the middle of an upload (a slow streamed
//! body) and in the middle of deletions, then started again on the same database and
//! storage. After the restart no listed document lacks its blob, at most the interrupted
//! operations left orphans, and the sweep removes orphans older than the age limit and
//! never a blob that a live row references.
//!
//! The sweep (`DocumentService::sweep`, hourly in the server) is run by the test on the
//! same database and store with a clock two hours ahead, so that the orphans just made
//! are past the age limit; with the real clock it must leave them alone.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use consular_application::documents::signed_url::UrlSigner;
use consular_application::documents::{DocumentConfig, DocumentPorts, DocumentService, SweepReport};
use consular_tests::consular_ports::{BlobStore, Clock};
use consular_tests::files::{DOCUMENTS, MIB, form, pdf, slow_part};
use consular_tests::reqwest::{Method, StatusCode};
use consular_tests::{Stack, TestApp, citizen_body, eventually, stacks, text};
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

const KIND: &str = "passport_photo";

/// The system clock moved by `ahead`.
struct Ahead(time::Duration);

impl Clock for Ahead {
    fn now(&self) -> time::OffsetDateTime {
        time::OffsetDateTime::now_utc() + self.0
    }
}

/// Runs the orphan sweep on `app`'s database and store, as if `ahead` later.
async fn sweep(app: &TestApp, ahead: time::Duration) -> SweepReport {
    let db = Arc::new(app.database());
    let ports = DocumentPorts {
        documents: db.clone(),
        requests: db.clone(),
        citizens: db.clone(),
        service_types: db.clone(),
        idempotency: db.clone(),
        missions: db.clone(),
        audit: db.clone(),
        access: consular_application::access_log::AccessRecorder::new(db.clone()),
        blobs: Arc::new(app.blob_store()),
        scanner: None,
        clock: Arc::new(Ahead(ahead)),
    };
    let signer = UrlSigner::new(&[7; 32]).expect("a signer");
    let report =
        DocumentService::new(ports, signer, DocumentConfig::default()).sweep().await.expect("the sweep");
    db.close();
    report
}

/// The invariants after a restart: every live row's blob exists, every document the API
/// lists is such a row, and the blobs no live row references (orphans) are returned.
async fn check_consistency(app: &TestApp, admin: &str) -> Vec<String> {
    let rows = app.live_documents().await;
    for row in &rows {
        assert!(
            app.blob_exists(&row.blob_key).await,
            "live document {} has no blob {}",
            row.id,
            row.blob_key
        );
    }
    let mut listed = app.listed_ids(DOCUMENTS, admin).await;
    let mut live: Vec<String> = rows.iter().map(|r| r.id.to_string()).collect();
    listed.sort();
    live.sort();
    assert_eq!(listed, live, "the API lists exactly the live rows");
    let referenced: Vec<&String> = rows.iter().map(|r| &r.blob_key).collect();
    app.blob_keys().await.into_iter().filter(|key| !referenced.contains(&key)).collect()
}

/// Creates `n` citizens of mission X and uploads one 256 KiB PDF for each as its staff;
/// the document ids.
async fn upload_many(app: &TestApp, world: &consular_tests::World, n: usize) -> Vec<String> {
    let mut ids = Vec::new();
    for k in 0..n {
        let citizen = app
            .create_at(consular_tests::CITIZENS, &world.admin, &citizen_body(&world.x, &format!("K{k:05}")))
            .await;
        let fields = [("kind", KIND), ("citizen_id", &text(&citizen, "id"))];
        let body = app
            .upload_ok(
                &world.staff_x.token,
                &fields,
                pdf(256 * 1024, k as u32),
                "scan.pdf",
                "application/pdf",
            )
            .await;
        ids.push(text(&body, "id"));
    }
    ids
}

stacks!(killed_in_the_middle_of_an_upload);
async fn killed_in_the_middle_of_an_upload(stack: Stack) {
    let app = TestApp::spawn_process(stack, |_| {}).await;
    let world = app.world().await;
    let kept = upload_many(&app, &world, 2).await;

    // 6 MiB at once (more than one S3 part), then 64 KiB every 50 ms, never ending.
    let (part, sent) = slow_part(pdf(6 * MIB, 99), 64 * 1024, Duration::from_millis(50), None);
    let request = app
        .authed(Method::POST, consular_tests::files::UPLOAD, &world.citizen_a.token)
        .multipart(form(&[("kind", KIND)], part));
    let upload = tokio::spawn(async move { request.send().await });
    eventually(Duration::from_secs(30), "the upload reaches the store", || async {
        sent.load(Ordering::SeqCst) > 6 * MIB as u64 && !app.upload_leftovers().await.is_empty()
    })
    .await;
    app.kill();
    assert!(upload.await.expect("the client task").is_err(), "the upload cannot succeed");

    let restarted = app.spawn_node().await;
    let admin = restarted.admin_token().await;
    let orphans = check_consistency(&restarted, &admin).await;
    assert!(orphans.is_empty(), "the killed upload completed no blob: {orphans:?}");
    assert_eq!(restarted.live_documents().await.len(), kept.len());

    // The sweep leaves a fresh interrupted upload alone, removes it once past the age
    // limit, and never touches a referenced blob.
    let report = sweep(&restarted, time::Duration::ZERO).await;
    assert_eq!(report, SweepReport::default(), "nothing is old enough yet");
    let report = sweep(&restarted, time::Duration::hours(2)).await;
    assert_eq!(report.orphans, 0, "{report:?}");
    if !restarted.upload_leftovers().await.is_empty() {
        // S3 parts: listed by the store only as pending uploads (no age on moto's side
        // is older than the real clock); they are aborted by the S3 lifecycle rule or by
        // `remove_abandoned_uploads` with a cutoff past them.
        assert_eq!(stack, Stack::POSTGRES_S3, "{:?}", restarted.upload_leftovers().await);
    }
    assert_eq!(check_consistency(&restarted, &admin).await, Vec::<String>::new());
    assert_eq!(restarted.live_documents().await.len(), kept.len(), "no live document was swept");
    for id in &kept {
        let response = restarted.get(&format!("{DOCUMENTS}/{id}"), &admin).await;
        assert_eq!(response.status(), StatusCode::OK);
    }
}

stacks!(killed_in_the_middle_of_deletions);
async fn killed_in_the_middle_of_deletions(stack: Stack) {
    let app = TestApp::spawn_process(stack, |_| {}).await;
    let world = app.world().await;
    let ids = upload_many(&app, &world, 24).await;

    // 24 deletions at once; the server is killed as soon as the first one is answered,
    // while the others are queued or half done.
    let (done, mut first) = tokio::sync::mpsc::unbounded_channel();
    let deletions: Vec<_> = ids
        .iter()
        .map(|id| {
            let request = app.authed(Method::DELETE, &format!("{DOCUMENTS}/{id}"), &world.staff_x.token);
            let done = done.clone();
            tokio::spawn(async move {
                let status = request.send().await.map(|r| r.status());
                let _ = done.send(());
                status
            })
        })
        .collect();
    tokio::time::timeout(Duration::from_secs(30), first.recv()).await.expect("a deletion is answered");
    app.kill();
    let mut answered = 0;
    for deletion in deletions {
        if let Ok(Ok(status)) = deletion.await {
            assert_eq!(status, StatusCode::NO_CONTENT);
            answered += 1;
        }
    }

    let restarted = app.spawn_node().await;
    let admin = restarted.admin_token().await;
    let orphans = check_consistency(&restarted, &admin).await;
    let live = restarted.live_documents().await.len();
    let deleted = ids.len() - live;
    assert!(deleted >= answered, "{answered} deletions answered 204, {deleted} rows are tombstones");
    // An orphan is the blob of a tombstone whose removal the kill interrupted.
    assert!(orphans.len() <= deleted - answered, "{orphans:?}: {deleted} deleted, {answered} answered");
    let mut tombstone_keys = Vec::new();
    for id in &ids {
        let row = restarted.document_row(id).await.expect("every row stays");
        if row.is_deleted() {
            tombstone_keys.push(row.blob_key);
        }
    }
    for orphan in &orphans {
        assert!(tombstone_keys.contains(orphan), "{orphan} is no deleted document's blob");
    }
    println!(
        "killed during deletions: {answered} answered, {deleted} deleted, {live} live, {} orphans",
        orphans.len()
    );

    // Plus the orphan of a crash between a blob and its row (the kill rarely lands
    // there): a blob under a fresh key that no row names.
    let store = restarted.blob_store();
    let mut stray = store
        .start_upload(&consular_tests::consular_domain::document::new_blob_key())
        .await
        .expect("an upload");
    stray.write(pdf(1024, 5).into()).await.expect("a write");
    stray.complete().await.expect("the stray blob");
    let report = sweep(&restarted, time::Duration::ZERO).await;
    assert_eq!(report.orphans, 0, "fresh orphans are left alone");
    assert_eq!(check_consistency(&restarted, &admin).await.len(), orphans.len() + 1);
    let report = sweep(&restarted, time::Duration::hours(2)).await;
    assert_eq!(report.orphans as usize, orphans.len() + 1, "{report:?}");
    assert_eq!(
        check_consistency(&restarted, &admin).await,
        Vec::<String>::new(),
        "no orphan after the sweep"
    );
    assert_eq!(restarted.live_documents().await.len(), live, "no live document lost its blob");

    // The survivors can still be deleted, down to their blob.
    for row in restarted.live_documents().await {
        let response = restarted
            .authed(Method::DELETE, &format!("{DOCUMENTS}/{}", row.id), &admin)
            .send()
            .await
            .expect("DELETE");
        assert_eq!(response.status(), StatusCode::NO_CONTENT);
        assert!(!restarted.blob_exists(&row.blob_key).await);
    }
    assert_eq!(restarted.blob_keys().await, Vec::<String>::new());
}
