//! The world the matrix calls on, built through the API as the global admin and the
//! owners: missions 1 and 2, the callers of [`Who`], and in each mission a citizen's
//! request (with a message and an internal note), a document, a slot and an appointment,
//! notifications and spare clients; in mission 1 also one fresh object per principal for
//! each operation that changes or ends its object, so that every allowed call finds its
//! object in the state it needs. Every id made is recorded under its mission, for the
//! scan of response bodies.

use crate::rules::{Side, Who};
use consular_tests::files::pdf;
use consular_tests::reqwest::{Method, StatusCode};
use consular_tests::{SERVICES, TestApp, citizen_body, eventually, service_body, text, token_claims};
use serde_json::{Value, json};
use std::time::Duration;

/// How a principal authenticates: its client's credentials and a token of it.
#[derive(Debug, Clone, Default)]
pub struct Caller {
    pub client_id: String,
    pub secret: String,
    pub token: String,
}

/// The operations that get one fresh object per principal.
#[derive(Debug, Clone, Copy)]
pub enum Fresh {
    /// A submitted request of the owner whose status the caller changes.
    StatusRequest,
    /// A submitted request of the owner that the caller cancels.
    CancelRequest,
    /// A submitted request of the owner that the caller books a seat for (one active
    /// booking per citizen and request, docs/appointments.md).
    BookRequest,
    /// A document of the owner (not verified) that the caller verifies.
    VerifyDocument,
    /// A document of the owner that the caller deletes.
    DeleteDocument,
    /// A booked appointment of the owner that the caller moves.
    RescheduleAppointment,
    /// A booked appointment of the owner that the caller cancels.
    CancelAppointment,
    /// A client of mission 1 that the caller disables.
    DisableClient,
}

const FRESH: usize = 8;

impl Fresh {
    const ALL: [Fresh; FRESH] = [
        Fresh::StatusRequest,
        Fresh::CancelRequest,
        Fresh::BookRequest,
        Fresh::VerifyDocument,
        Fresh::DeleteDocument,
        Fresh::RescheduleAppointment,
        Fresh::CancelAppointment,
        Fresh::DisableClient,
    ];
}

/// The document kinds the matrix's service type requires: one live document per
/// citizen, request and kind, so every upload takes a kind of its own.
const KINDS: usize = 30;

pub struct Fixtures {
    pub m1: String,
    pub m2: String,
    callers: Vec<Caller>,
    /// The matrix's service type (its documents are `kind_01` to `kind_30`), active.
    pub service: String,
    /// The owner's request, document, appointment, notification.
    pub request: String,
    pub document: String,
    pub download_url: String,
    /// The owner's ready export and its archive's signed URL.
    pub export: String,
    pub export_url: String,
    pub appointment: String,
    /// The slot of the owner's bookings, and the one they are moved to.
    pub slot: String,
    pub later_slot: String,
    pub notification: String,
    /// The owner's representation by the neighbour (a guardian), open.
    pub representation: String,
    pub neighbour: String,
    /// The owner's client (read by `get_client`), and one of mission 1 whose secret is
    /// rotated.
    pub owner_client: String,
    pub spare_client: String,
    /// Staff member m1.
    pub staff: String,
    pub owner: String,
    /// A refresh token and a second access token of the owner's client.
    pub owner_refresh: String,
    pub owner_spare_access: String,
    fresh: [[String; Who::COUNT]; FRESH],
    /// Every id made in mission 1, and in mission 2, with what it is.
    ids: [Vec<(String, String)>; 2],
}

impl Fixtures {
    pub fn caller(&self, who: Who) -> &Caller {
        &self.callers[who.index()]
    }

    /// The fresh object of `kind` that `who` calls on.
    pub fn fresh(&self, kind: Fresh, who: Who) -> &str {
        &self.fresh[kind as usize][who.index()]
    }

    /// The ids of the mission other than `side`'s (every id for an unbound caller
    /// without a token, none for a global admin).
    pub fn foreign_ids(&self, who: Who) -> Vec<(&str, &str)> {
        let all = |i: usize| self.ids[i].iter().map(|(id, what)| (id.as_str(), what.as_str()));
        match who.side() {
            Side::M1 => all(1).collect(),
            Side::M2 => all(0).collect(),
            Side::Unbound if who == Who::Anonymous => all(0).chain(all(1)).collect(),
            Side::Unbound => Vec::new(),
        }
    }

    /// How many ids of mission 1 and of mission 2 the bodies are scanned for.
    pub fn id_counts(&self) -> [usize; 2] {
        [self.ids[0].len(), self.ids[1].len()]
    }

    /// The mission ids (public to every bearer: `GET /missions` lists them all).
    pub fn mission_ids(&self) -> [&str; 2] {
        [&self.m1, &self.m2]
    }

    pub async fn build(app: &TestApp) -> Fixtures {
        let w = app.world().await;
        let ga = w.admin.clone();
        let secret = |body: &Value| text(&body["client"], "client_secret");
        let issued = |i: &consular_tests::Issued| Caller {
            client_id: i.client_id.clone(),
            secret: secret(&i.body),
            token: i.token.clone(),
        };
        let principal = |p: &consular_tests::Principal| Caller {
            client_id: p.client_id.clone(),
            secret: p.secret.clone(),
            token: p.token.clone(),
        };
        let mut callers = vec![
            Caller::default(),
            issued(&w.citizen_a),
            issued(&w.citizen_b),
            issued(&w.citizen_c),
            issued(&w.staff_x),
            issued(&w.staff_y),
            principal(&w.admin_x),
            principal(&w.admin_y),
            Caller { client_id: app.admin_id.clone(), secret: app.admin_secret.clone(), token: ga.clone() },
        ];
        let (owner, foreigner) = (&w.citizen_a, &w.citizen_c);
        // The impostors: the tokens of mission 2's citizen and staff member with the ids
        // of the owner and of staff member m1 as their principals (signed with the
        // server's key, as a client so bound would get them).
        for (like, kind, id) in
            [(Who::Foreigner, "citizen", &owner.id), (Who::StaffM2, "staff", &w.staff_x.id)]
        {
            let mut claims = token_claims(&callers[like.index()].token);
            claims["sub"] = json!(format!("{kind}:{id}"));
            claims["jti"] = json!(uuid::Uuid::now_v7().to_string());
            let token = app.forge(json!({}), claims).await;
            callers.push(Caller { token, ..callers[like.index()].clone() });
        }
        let mut ids: [Vec<(String, String)>; 2] = Default::default();
        let mut note =
            |side: usize, what: &str, id: &str| ids[side].push((id.to_lowercase(), what.to_owned()));
        note(0, "mission", &w.x);
        note(1, "mission", &w.y);
        for (side, people) in [
            (0, [("citizen", &w.citizen_a), ("citizen", &w.citizen_b), ("staff", &w.staff_x)]),
            (1, [("citizen", &w.citizen_c), ("citizen", &w.citizen_c), ("staff", &w.staff_y)]),
        ] {
            for (what, person) in people {
                note(side, what, &person.id);
                note(side, &format!("{what}'s client"), &person.client_id);
            }
        }
        for (side, admin) in [(0, &w.admin_x), (1, &w.admin_y)] {
            note(side, "admin's client", &admin.client_id);
            note(side, "admin", admin.body["principal_id"].as_str().unwrap_or_default());
        }

        let kinds = |from: usize| (from..from + KINDS).map(|i| format!("kind_{i:02}")).collect::<Vec<_>>();
        let service = service_type(app, &ga, "matrix_a", &kinds(1)).await;
        // A second type makes `kind_31`... kinds of the catalog, for the fresh documents;
        // the out-of-scope representative acts in it only.
        let other_service = service_type(app, &ga, "matrix_b", &kinds(31)).await;

        // The owner's request with a message and an internal note; the same in mission 2.
        let mut threads = Vec::new();
        for (side, citizen, staff) in [(0, owner, &w.staff_x), (1, foreigner, &w.staff_y)] {
            let request =
                created(app, "/api/v1/requests", &citizen.token, &json!({ "service_type_id": service }))
                    .await;
            let id = text(&request, "id");
            let message = json!({ "body": "When is my interview?" });
            let message =
                created(app, &format!("/api/v1/requests/{id}/messages"), &citizen.token, &message).await;
            let note = json!({ "body": "Photo looks old" });
            let note = created(app, &format!("/api/v1/requests/{id}/notes"), &staff.token, &note).await;
            ids[side].extend([
                (id.clone(), "request".to_owned()),
                (text(&message, "id"), "message".to_owned()),
                (text(&note, "id"), "note".to_owned()),
            ]);
            threads.push(id);
        }
        let request = threads[0].clone();

        // A document of each request (kind_01), and the owner's fresh documents.
        let mut documents = Vec::new();
        for (side, citizen, request) in [(0, owner, &threads[0]), (1, foreigner, &threads[1])] {
            let fields = [("kind", "kind_01"), ("request_id", request.as_str())];
            let document =
                app.upload_ok(&citizen.token, &fields, pdf(600, 1), "scan.pdf", "application/pdf").await;
            ids[side].push((text(&document, "id"), "document".to_owned()));
            documents.push(text(&document, "id"));
        }
        let document = documents[0].clone();
        let got = app
            .authed(Method::GET, &format!("/api/v1/documents/{document}"), &ga)
            .header("accept", "application/json")
            .send()
            .await
            .expect("GET document");
        assert_eq!(got.status(), StatusCode::OK);
        let download_url = text(&got.json::<Value>().await.expect("a document"), "download_url");

        // The owner's export, built by the worker, and its archive's signed URL.
        let started = app
            .authed(Method::POST, "/api/v1/citizens/me/export", &owner.token)
            .send()
            .await
            .expect("POST export");
        assert_eq!(started.status(), StatusCode::ACCEPTED);
        let export = text(&started.json::<Value>().await.expect("an export"), "id");
        ids[0].push((export.clone(), "export".to_owned()));
        let export_path = format!("/api/v1/citizens/me/exports/{export}");
        let ready = std::sync::Mutex::new(Value::Null);
        eventually(Duration::from_secs(20), "the owner's export is ready", || async {
            let got = app.authed(Method::GET, &export_path, &owner.token).send().await.expect("GET export");
            let body: Value = got.json().await.expect("an export");
            let done = body["state"] == "ready";
            *ready.lock().expect("not poisoned") = body;
            done
        })
        .await;
        let export_url = text(&ready.lock().expect("not poisoned"), "download_url");

        // The owner's representation by the neighbour, made by staff m1 on the owner's
        // document.
        let representation = json!({
            "representative_id": w.citizen_b.id,
            "kind": "guardian",
            "valid_from": day(-1),
            "evidence_document_id": document,
        });
        let path = format!("/api/v1/citizens/{}/representatives", owner.id);
        let representation = text(&created(app, &path, &w.staff_x.token, &representation).await, "id");
        ids[0].push((representation.clone(), "representation".to_owned()));

        // The citizens of mission 1 who call naming the owner in `On-Behalf-Of`, each a
        // guardian: over every service, over the other service type only, ended, and from
        // a month on (`Who::acts_for_owner`).
        let acting = [
            (Who::Representative, None, day(-1), false),
            (Who::OutOfScope, Some(&other_service), day(-1), false),
            (Who::EndedRepresentative, None, day(-1), true),
            (Who::FutureRepresentative, None, day(30), false),
        ];
        for (who, services, valid_from, ended) in acting {
            let person =
                app.citizen_with_client(&w.admin_x.token, new_citizen(&w.x, 900 + who.index())).await;
            let mut body = json!({
                "representative_id": person.id,
                "kind": "guardian",
                "valid_from": valid_from,
                "evidence_document_id": document,
            });
            if let Some(service) = services {
                body["service_type_ids"] = json!([service]);
            }
            let made = text(&created(app, &path, &w.staff_x.token, &body).await, "id");
            if ended {
                let end = json!({ "reason": "The court order was lifted" });
                let response = app.post_json(&format!("{path}/{made}/end"), &w.staff_x.token, &end).await;
                assert_eq!(response.status(), StatusCode::OK, "ending: {:?}", response.text().await);
            }
            ids[0].extend([
                (made, "representation".to_owned()),
                (person.id.clone(), "representative".to_owned()),
                (person.client_id.clone(), "representative's client".to_owned()),
            ]);
            assert_eq!(callers.len(), who.index(), "the callers in the order of Who::ALL");
            callers.push(issued(&person));
        }
        assert_eq!(callers.len(), Who::COUNT);

        // Slots: two in mission 1 (the owner's bookings, and where they move), one in 2.
        let mut slots = Vec::new();
        for (side, mission, starts) in [(0, &w.x, &["T09:00", "T10:00"][..]), (1, &w.y, &["T09:00"][..])] {
            let list: Vec<Value> = starts
                .iter()
                .map(|at| {
                    json!({
                        "starts_at": format!("{}{at}", day(10)),
                        "minutes": 60,
                        "capacity": 50,
                        "service_type_ids": [service],
                    })
                })
                .collect();
            let body = json!({ "mission_id": mission, "slots": list });
            let response = app.post_json("/api/v1/appointments/slots", &ga, &body).await;
            assert_eq!(response.status(), StatusCode::OK, "slots: {:?}", response.text().await);
            let query = format!("/api/v1/appointments/slots?mission_id={mission}&service_type_id={service}");
            let found = app.listed_ids(&query, &ga).await;
            assert_eq!(found.len(), starts.len(), "{found:?}");
            ids[side].extend(found.iter().map(|id| (id.clone(), "slot".to_owned())));
            slots.push(found);
        }
        let (slot, later_slot) = (slots[0][0].clone(), slots[0][1].clone());
        let book = json!({ "slot_id": slot, "service_type_id": service });
        let appointment = text(&created(app, "/api/v1/appointments", &owner.token, &book).await, "id");
        ids[0].push((appointment.clone(), "appointment".to_owned()));
        let mirror = json!({ "slot_id": slots[1][0], "service_type_id": service });
        let mirror = text(&created(app, "/api/v1/appointments", &foreigner.token, &mirror).await, "id");
        ids[1].push((mirror, "appointment".to_owned()));

        // Spare clients: the owner's client is read, one of each mission rotated.
        let mut spares = Vec::new();
        for (side, mission) in [(0, &w.x), (1, &w.y)] {
            let client = app.create_client(&ga, &client_body(mission, None)).await;
            ids[side].push((text(&client, "client_id"), "spare client".to_owned()));
            spares.push(text(&client, "client_id"));
        }

        // One fresh object per principal and operation that changes or ends it.
        let mut fresh: [[String; Who::COUNT]; FRESH] = Default::default();
        let mut kind = 31;
        for who in Who::ALL {
            let i = who.index();
            for purpose in [Fresh::StatusRequest, Fresh::CancelRequest, Fresh::BookRequest] {
                let body = json!({ "service_type_id": service });
                fresh[purpose as usize][i] =
                    text(&created(app, "/api/v1/requests", &owner.token, &body).await, "id");
            }
            for purpose in [Fresh::VerifyDocument, Fresh::DeleteDocument] {
                let fields = [("kind", format!("kind_{kind}"))];
                let fields: Vec<(&str, &str)> = fields.iter().map(|(k, v)| (*k, v.as_str())).collect();
                kind += 1;
                let document = app
                    .upload_ok(&owner.token, &fields, pdf(300, kind as u32), "scan.pdf", "application/pdf")
                    .await;
                fresh[purpose as usize][i] = text(&document, "id");
            }
            // Each for a request of its own: the owner holds one booking of the slot
            // without a request (`appointment`).
            for purpose in [Fresh::RescheduleAppointment, Fresh::CancelAppointment] {
                let body = json!({ "service_type_id": service });
                let request = text(&created(app, "/api/v1/requests", &owner.token, &body).await, "id");
                ids[0].push((request.clone(), "request of a fresh appointment".to_owned()));
                let mut book = book.clone();
                book["request_id"] = json!(request);
                let appointment = created(app, "/api/v1/appointments", &owner.token, &book).await;
                fresh[purpose as usize][i] = text(&appointment, "id");
            }
            let client = app.create_client(&ga, &client_body(&w.x, Some(&owner.id))).await;
            fresh[Fresh::DisableClient as usize][i] = text(&client, "client_id");
        }
        for (kind, objects) in fresh.iter().enumerate() {
            let what = format!("{:?} object", Fresh::ALL[kind]);
            ids[0].extend(objects.iter().map(|id| (id.clone(), what.clone())));
        }

        // A refresh token and a second access token of the owner's client.
        let tokens = app.token_for(&owner.client_id, &secret(&owner.body), None).await;

        // The notifications of the submissions, made by the outbox worker.
        let (m1_inbox, m2_inbox) = (owner.token.clone(), foreigner.token.clone());
        eventually(Duration::from_secs(20), "the owners' notifications", || {
            let (a, c) = (m1_inbox.clone(), m2_inbox.clone());
            async move { !inbox(app, &a).await.is_empty() && !inbox(app, &c).await.is_empty() }
        })
        .await;
        let notification = inbox(app, &owner.token).await[0].clone();
        for who in Who::ALL {
            let side = match who.side() {
                Side::M1 => 0,
                Side::M2 => 1,
                Side::Unbound => continue,
            };
            let inbox = inbox(app, &callers[who.index()].token).await;
            ids[side].extend(inbox.into_iter().map(|id| (id, "notification".to_owned())));
        }
        for side in &mut ids {
            side.sort();
            side.dedup_by(|a, b| a.0 == b.0);
        }

        Fixtures {
            m1: w.x.clone(),
            m2: w.y.clone(),
            callers,
            service,
            request,
            document,
            download_url,
            export,
            export_url,
            appointment,
            slot,
            later_slot,
            notification,
            representation,
            neighbour: w.citizen_b.id.clone(),
            owner_client: owner.client_id.clone(),
            spare_client: spares[0].clone(),
            staff: w.staff_x.id.clone(),
            owner: owner.id.clone(),
            owner_refresh: tokens.refresh_token,
            owner_spare_access: tokens.access_token,
            fresh,
            ids,
        }
    }
}

/// A citizen client of `mission` (bound to `principal` when given).
pub fn client_body(mission: &str, principal: Option<&str>) -> Value {
    json!({ "name": "Matrix client", "scopes": ["citizen"], "mission_id": mission, "principal_id": principal })
}

/// A citizen of mission `mission` to register, with a passport number of its own.
pub fn new_citizen(mission: &str, n: usize) -> Value {
    let mut body = citizen_body(mission, &format!("M{n:07}"));
    body["given_name"] = json!("Matrix");
    body
}

/// `POST path` as `token`; panics unless 201. The body.
async fn created(app: &TestApp, path: &str, token: &str, body: &Value) -> Value {
    app.create_at(path, token, body).await
}

/// An active service type requiring `kinds`; its id.
async fn service_type(app: &TestApp, admin: &str, code: &str, kinds: &[String]) -> String {
    let mut body = service_body(code);
    body["required_documents"] = json!(kinds);
    text(&created(app, SERVICES, admin, &body).await, "id")
}

/// The ids of the first page of the caller's notifications.
async fn inbox(app: &TestApp, token: &str) -> Vec<String> {
    let response = app.get("/api/v1/notifications?limit=100", token).await;
    let body: Value = response.json().await.expect("an inbox");
    body["items"].as_array().into_iter().flatten().map(|n| text(n, "id")).collect()
}

/// The local date `days` from today, `YYYY-MM-DD`.
pub fn day(days: i64) -> String {
    let d = (time::OffsetDateTime::now_utc() + time::Duration::days(days)).date();
    format!("{:04}-{:02}-{:02}", d.year(), u8::from(d.month()), d.day())
}
