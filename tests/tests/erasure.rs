//! Retention and erasure end to end (docs/data-protection.md "Retention and erasure"):
//! `retention_days` on service types, `DELETE /api/v1/citizens/{id}` and what it leaves.
//! After an erasure, the database as a backup would hold it (the SQLite file with its WAL,
//! or a `pg_dump`) and the blob store hold none of the erased citizen's values, written
//! with unique markers: names, place of birth, passport, email, phone, address, emergency
//! contact, a message, a document's file name and content.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

#[path = "requests_support/mod.rs"]
#[allow(dead_code)]
mod requests_support;

use consular_tests::files::{file_part, form};
use consular_tests::reqwest::{Method, StatusCode};
use consular_tests::{Backend, TestApp, both, eventually, set_setting};
use requests_support::*;
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::time::Duration;

both!(an_erasure_leaves_none_of_the_citizens_values_in_the_database_or_the_blob_store);
both!(retention_days_are_set_with_a_service_type_and_shown_in_it);
both!(uploads_racing_an_erasure_leave_no_live_document_nor_blob);

/// `DELETE /api/v1/citizens/{id}` as `token`.
async fn erase(app: &TestApp, token: &str, citizen: &str) -> consular_tests::reqwest::Response {
    app.authed(Method::DELETE, &format!("{CITIZENS}/{citizen}"), token).send().await.expect("DELETE citizen")
}

/// A unique marker per test run, so that a search can only find what this test wrote.
fn marker() -> String {
    uuid::Uuid::now_v7().simple().to_string()[20..].to_owned()
}

/// The values written for the citizen, each holding the marker `m`.
struct Values {
    given_name: String,
    family_name: String,
    place_of_birth: String,
    passport: String,
    email: String,
    phone: String,
    address: String,
    contact: String,
    message: String,
    file_name: String,
    content: String,
}

impl Values {
    fn new(m: &str) -> Values {
        let digits: String = m.bytes().map(|b| char::from(b'0' + b % 10)).take(9).collect();
        Values {
            given_name: format!("Given{m}"),
            family_name: format!("Family{m}"),
            place_of_birth: format!("Birthplace{m}"),
            passport: format!("PP{}", m.to_uppercase()),
            email: format!("erase.{m}@example.org"),
            phone: format!("+336{digits}"),
            address: format!("{m} Erasure Street"),
            contact: format!("Contact{m}"),
            message: format!("Message text {m}"),
            file_name: format!("passport-{m}.pdf"),
            content: format!("%PDF-1.4 document content {m}"),
        }
    }

    fn all(&self) -> [&str; 11] {
        [
            &self.given_name,
            &self.family_name,
            &self.place_of_birth,
            &self.passport,
            &self.email,
            &self.phone,
            &self.address,
            &self.contact,
            &self.message,
            &self.file_name,
            &self.content,
        ]
    }
}

async fn an_erasure_leaves_none_of_the_citizens_values_in_the_database_or_the_blob_store(backend: Backend) {
    // The notification worker runs, and emails are queued for an SMTP server that never
    // answers: their rows (with the citizen's address) stay.
    let app = TestApp::spawn_with(backend, |s| {
        set_setting(s, "run_worker", json!(true));
        set_setting(s, "outbox_poll_ms", json!(50));
        set_setting(s, "smtp_url", json!("smtp://127.0.0.1:9"));
        set_setting(s, "mail_from", json!("Consulat <no-reply@consulat.example>"));
    })
    .await;
    let w = app.world().await;
    let m = marker();
    let v = Values::new(&m);

    // A type kept for no time after a request ended, and one kept for the default ten years.
    let mut gone_type = json!({
        "code": "gone_visa", "name": "Gone visa", "fee": { "amount_minor": 0, "currency": "EUR" },
        "sla_days": 5, "stages": [{ "name": "Check", "description": "" }], "retention_days": 0,
    });
    let gone_type = created(&app, SERVICES, &w.admin, &gone_type.take()).await;
    assert_eq!(gone_type["retention_days"], 0);
    let kept_type = text(&w.service, "id");
    assert_eq!(w.service["retention_days"], 3650, "the default");

    let body = json!({
        "mission_id": w.x, "given_name": v.given_name, "family_name": v.family_name,
        "date_of_birth": "1987-06-05", "place_of_birth": v.place_of_birth, "nationality": "FR",
        "passport_number": v.passport, "passport_expiry": "2033-01-02", "email": v.email,
        "phone": v.phone, "address": { "line1": v.address, "city": "Ottawa", "country": "CA" },
        "emergency_contact": { "name": v.contact, "phone": "+33611111111", "relationship": "sister" },
        "preferred_language": "fr", "registration_status": "active",
    });
    let citizen = app.citizen_with_client(&w.admin, body).await;
    let token = citizen.token.clone();

    // A request that ended (no retention: it goes), with a message; one that ended but
    // is kept ten years; one still open.
    let gone = submit(&app, &token, &json!({ "service_type_id": text(&gone_type, "id") })).await;
    let gone = text(&gone, "id");
    created(&app, &at(&gone, "/messages"), &token, &json!({ "body": v.message })).await;
    expect(app.post_json(&at(&gone, "/cancel"), &token, &json!({})).await, StatusCode::OK, "cancel").await;
    let held = text(&submit(&app, &token, &json!({ "service_type_id": kept_type })).await, "id");
    expect(app.post_json(&at(&held, "/cancel"), &token, &json!({})).await, StatusCode::OK, "cancel").await;
    let open = text(&submit(&app, &token, &json!({ "service_type_id": kept_type })).await, "id");
    // A document of no request: its file and row go.
    let upload = form(
        &[("kind", "old_passport")],
        file_part(v.content.clone().into_bytes(), &v.file_name, "application/pdf"),
    );
    let response = app.upload(&token, upload).await;
    let document = expect(response, StatusCode::CREATED, "upload").await;
    let document = text(&document, "id");
    assert!(
        blob_files(&app).iter().any(|f| holds(&std::fs::read(f).unwrap(), &v.content)),
        "the blob is stored"
    );

    // The notification worker has told the citizen (a notification, its email row).
    eventually(Duration::from_secs(20), "the citizen's notifications", || async {
        let inbox = app.get("/api/v1/notifications", &token).await;
        inbox.status() == StatusCode::OK
            && !inbox.json::<Value>().await.unwrap()["items"].as_array().unwrap().is_empty()
    })
    .await;

    // Who may not erase gets 404 or 403 and erases nothing.
    for (who, caller, status) in [
        ("admin of Y", w.admin_y.token.as_str(), StatusCode::NOT_FOUND),
        ("staff of X", w.staff_x.token.as_str(), StatusCode::FORBIDDEN),
        ("the citizen", token.as_str(), StatusCode::FORBIDDEN),
    ] {
        assert_eq!(erase(&app, caller, &citizen.id).await.status(), status, "{who}");
    }
    let profile =
        expect(app.get(&format!("{CITIZENS}/{}", citizen.id), &w.admin).await, StatusCode::OK, "read").await;
    assert_eq!(profile["given_name"], v.given_name.as_str(), "nothing was erased");

    // The mission's admin erases: the answer lists the requests kept and until when.
    let report = expect(erase(&app, &w.admin_x.token, &citizen.id).await, StatusCode::OK, "erasure").await;
    assert_eq!(report["citizen_id"], citizen.id.as_str());
    let kept = report["kept_requests"].as_array().unwrap();
    let kept_ids: Vec<&str> = kept.iter().map(|k| k["request_id"].as_str().unwrap()).collect();
    assert_eq!(kept_ids, [held.as_str(), open.as_str()], "{report}");
    assert_eq!(
        (kept[0]["reason"].as_str(), kept[0]["status"].as_str()),
        (Some("retention"), Some("cancelled"))
    );
    assert_eq!(kept[0]["retention_days"], 3650);
    let until = instant(&kept[0]["kept_until"]);
    let ended = instant(&kept[0]["ended_at"]);
    assert_eq!(until - ended, time::Duration::days(3650));
    assert_eq!((kept[1]["reason"].as_str(), kept[1]["kept_until"].is_null()), (Some("open"), true));

    // Erasing again answers the same report.
    let again = expect(erase(&app, &w.admin, &citizen.id).await, StatusCode::OK, "again").await;
    assert_eq!(again, report);

    // The row stays, blanked; what went is gone; the citizen's data is not written again.
    let erased =
        expect(app.get(&format!("{CITIZENS}/{}", citizen.id), &w.admin).await, StatusCode::OK, "read").await;
    assert_eq!(erased["registration"]["status"], "erased");
    assert_eq!((erased["given_name"].as_str(), erased["email"].as_str()), (Some(""), Some("")));
    assert_eq!(app.get(&at(&gone, ""), &w.admin).await.status(), StatusCode::NOT_FOUND);
    assert_eq!(app.get(&at(&held, ""), &w.admin).await.status(), StatusCode::OK);
    assert_eq!(
        app.get(&format!("/api/v1/documents/{document}"), &w.admin).await.status(),
        StatusCode::NOT_FOUND
    );
    let late = form(
        &[("kind", "passport_photo")],
        file_part(v.content.clone().into_bytes(), "late.pdf", "application/pdf"),
    );
    assert_ne!(
        app.upload(&token, late).await.status(),
        StatusCode::CREATED,
        "no upload for an erased citizen"
    );
    assert_ne!(
        app.post_json(REQUESTS, &token, &json!({ "service_type_id": kept_type })).await.status(),
        StatusCode::CREATED
    );

    // The audit log says that an erasure happened, by whom, of which citizen.
    let audit = expect(
        app.get(&with_query("/api/v1/audit-events", &[("resource_id", citizen.id.as_str())]), &w.admin).await,
        StatusCode::OK,
        "audit",
    )
    .await;
    assert!(
        audit["items"]
            .as_array()
            .unwrap()
            .iter()
            .any(|e| e["action"] == "erased" && e["client_id"] == w.admin_x.client_id.as_str()),
        "{audit}"
    );

    // Behind the API: neither the database as a backup holds it nor the blob store.
    app.stop().await;
    let dump = database_bytes(&app).await;
    let blobs: Vec<Vec<u8>> = blob_files(&app).iter().map(|f| std::fs::read(f).unwrap()).collect();
    for value in v.all() {
        assert!(!holds(&dump, value), "the database still holds {value}: {}", around(&dump, value));
        assert!(!blobs.iter().any(|b| holds(b, value)), "the blob store still holds {value}");
    }
    // The search finds what it looks for: the marker of the kept request's type is there.
    assert!(holds(&dump, "gone_visa"), "the dump is searchable");
}

async fn retention_days_are_set_with_a_service_type_and_shown_in_it(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let admin = app.admin_token().await;
    let service = service_type(&app, &admin, "kept_long", &["Check"], 10).await;
    assert_eq!(service["retention_days"], 3650);
    let path = format!("{SERVICES}/{}", text(&service, "id"));
    let changed = app.patch_json(&path, &admin, Some("*"), &json!({ "retention_days": 30 })).await;
    assert_eq!(expect(changed, StatusCode::OK, "update").await["retention_days"], 30);
    for bad in [json!(-1), json!(36501)] {
        let refused = app.patch_json(&path, &admin, Some("*"), &json!({ "retention_days": bad })).await;
        assert_eq!(refused.status(), StatusCode::UNPROCESSABLE_ENTITY, "{bad}");
    }
    assert_eq!(expect(app.get(&path, &admin).await, StatusCode::OK, "read").await["retention_days"], 30);
}

async fn uploads_racing_an_erasure_leave_no_live_document_nor_blob(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let w = app.world().await;
    let citizen = &w.citizen_a;
    let m = marker();
    // Eight uploads of two kinds (one live document per kind: those of a kind race each
    // other too), sent at once with the erasure.
    let kinds = ["passport_photo", "old_passport"];
    let uploads = (0..8).map(|i| {
        let content = format!("%PDF-1.4 racing {i} {m}");
        let upload = form(
            &[("kind", kinds[i % 2])],
            file_part(content.into_bytes(), &format!("race-{i}.pdf"), "application/pdf"),
        );
        app.upload(&citizen.token, upload)
    });
    let (statuses, erased) = tokio::join!(futures_util::future::join_all(uploads), async {
        erase(&app, &w.admin, &citizen.id).await.status()
    },);
    assert_eq!(erased, StatusCode::OK);
    let stored = statuses.iter().filter(|r| r.status() == StatusCode::CREATED).count();
    let live: Vec<_> = app
        .live_documents()
        .await
        .into_iter()
        .filter(|d| d.citizen_id.as_uuid().to_string() == citizen.id)
        .collect();
    assert!(live.is_empty(), "{} uploads stored, live after the erasure: {live:?}", stored);
    // Every blob an upload stored is deleted: by the erasure (it went after the commit) or
    // by the refused upload itself.
    eventually(Duration::from_secs(10), "the racing uploads' blobs deleted", || async {
        !blob_files(&app).iter().any(|f| holds(&std::fs::read(f).unwrap_or_default(), &m))
    })
    .await;
}

/// Whether `haystack` holds `needle` (as raw bytes: both dumps write text as UTF-8).
fn holds(haystack: &[u8], needle: &str) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle.as_bytes())
}

/// What surrounds the first `needle` in `haystack`, to say where it was found.
fn around(haystack: &[u8], needle: &str) -> String {
    let at = haystack.windows(needle.len()).position(|w| w == needle.as_bytes()).unwrap_or(0);
    String::from_utf8_lossy(&haystack[at.saturating_sub(200)..(at + needle.len() + 100).min(haystack.len())])
        .into_owned()
}

/// The files of the local blob store.
fn blob_files(app: &TestApp) -> Vec<PathBuf> {
    let root = app.settings.storage_url.strip_prefix("file://").expect("a local store");
    let mut files = Vec::new();
    walk(Path::new(root), &mut files);
    files
}

fn walk(dir: &Path, files: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for entry in entries {
        let path = entry.unwrap().path();
        if path.is_dir() { walk(&path, files) } else { files.push(path) }
    }
}

/// The database as a backup would hold it: `pg_dump` of the PostgreSQL database, or the
/// SQLite file with its WAL and shared memory (the node stopped: its erasure truncated the
/// WAL after a checkpoint, and its last connection checkpointed again).
async fn database_bytes(app: &TestApp) -> Vec<u8> {
    match app.backend {
        Backend::Postgres => {
            let output = tokio::process::Command::new(consular_tests::bench::pg_bin("pg_dump"))
                .args(["--no-owner", "-d", &app.settings.database_url])
                .output()
                .await
                .unwrap();
            assert!(output.status.success(), "pg_dump: {}", String::from_utf8_lossy(&output.stderr));
            output.stdout
        }
        Backend::Sqlite => {
            let mut bytes = Vec::new();
            for entry in std::fs::read_dir(app.dir()).unwrap() {
                let path = entry.unwrap().path();
                if path.file_name().unwrap().to_string_lossy().starts_with("consular.db") {
                    // The last connection closing removes the WAL and shared memory files:
                    // one gone between the listing and the read held nothing more.
                    match std::fs::read(&path) {
                        Ok(read) => bytes.extend(read),
                        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                        Err(e) => panic!("{}: {e}", path.display()),
                    }
                }
            }
            assert!(!bytes.is_empty(), "no SQLite file in {}", app.dir().display());
            bytes
        }
    }
}
