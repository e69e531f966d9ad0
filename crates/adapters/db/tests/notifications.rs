//! The contract of `NotificationRepository`, checked against both databases with the
//! harness of `common/mod.rs`: the outbox worker's leases on events (expiry, the order of
//! an aggregate's events, concurrent claimers), completions that store nothing twice, the
//! backlog, the inbox, preferences, the email queue's claims and attempts, and reminders
//! (docs/notifications.md).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use common::*;

use consular_db::Database;
use consular_domain::notification::{
    AfterAttempt, Category, Details, Email, EmailPreferences, EmailStatus, EventFacts, EventKind, Language,
    Notification, Person, Produced, Recipient, produce,
};
use consular_domain::{
    Appointment, AppointmentChange, AppointmentEntry, CitizenId, MissionId, NotificationId, PageRequest,
    PrincipalId, PrincipalKind, RequestId, Role, ServiceTypeId, Slot, Subject,
};
use consular_ports::{
    AppointmentRepository, Backlog, CitizenRepository, Claim, Erasure, ErasureRepository, MissionRepository,
    NotificationRepository, NotificationWithEmail, OutboxEvent, SlotUpsert, WriteMeta,
};
use std::collections::BTreeSet;
use time::{Duration, OffsetDateTime};
use uuid::Uuid;

// ---------------------------------------------------------------- fixtures

const LEASE: Duration = Duration::seconds(30);

fn claim(node: &str, limit: u32, now: OffsetDateTime) -> Claim {
    Claim { node: node.to_owned(), limit, now, lease_until: now + LEASE }
}

/// Stores `events` through a write path: a mission's creation carries them.
async fn store_events(db: &Database, events: &[OutboxEvent]) {
    let meta = WriteMeta { events: events.to_vec(), ..WriteMeta::default() };
    let code = format!("m-{}", Uuid::now_v7().simple());
    MissionRepository::insert(db, &mission(&code), &meta).await.unwrap();
}

async fn stored_events(db: &Database, aggregates: &[Uuid]) -> Vec<OutboxEvent> {
    let events: Vec<OutboxEvent> = aggregates.iter().map(|a| outbox_event("request.submitted", *a)).collect();
    store_events(db, &events).await;
    events
}

fn ids(events: &[OutboxEvent]) -> Vec<Uuid> {
    events.iter().map(|e| e.id).collect()
}

async fn claim_events(db: &Database, claim: &Claim) -> Vec<Uuid> {
    ids(&NotificationRepository::claim_events(db, claim).await.unwrap())
}

/// What notifications hang on: a mission, a citizen and their request.
struct Setting {
    mission: MissionId,
    service_type: ServiceTypeId,
    citizen: CitizenId,
    request: RequestId,
}

async fn setting(db: &Database) -> Setting {
    let mission = stored_mission(db, "fr-paris").await;
    let passport = stored_service_type(db, "passport").await;
    let alice = stored_citizen(db, mission.id, "AA1").await;
    let r = stored_request(db, request(mission.id, alice.id, &passport)).await;
    Setting { mission: mission.id, service_type: passport.id, citizen: alice.id, request: r.id }
}

fn person(id: PrincipalId, email: Option<&str>) -> Person {
    Person {
        id,
        kind: PrincipalKind::Citizen,
        email: email.map(str::to_owned),
        language: Language::Fr,
        preferences: EmailPreferences::default(),
    }
}

/// What the worker makes of `event` for `recipient` at `at` (fresh ids every call).
fn produced(
    s: &Setting,
    event: &OutboxEvent,
    recipient: PrincipalId,
    email: bool,
    at: OffsetDateTime,
) -> Produced {
    let facts = EventFacts {
        event_id: event.id,
        kind: EventKind::RequestSubmitted,
        author: None,
        citizen: Some(person(recipient, email.then_some("alice@example.org"))),
        citizen_name: None,
        citizen_minor: false,
        representatives: Vec::new(),
        assignee: None,
        mission_id: Some(s.mission),
        request_id: Some(s.request),
        details: Details {
            service: Some("Passport — ünïcode ✓".to_owned()),
            status: Some("submitted".to_owned()),
            starts_at: Some(at + Duration::days(2)),
            ..Details::default()
        },
    };
    produce(&facts, at).remove(0)
}

/// What the worker makes of `event` for the adult citizen `dependant` (given name `name`)
/// and their `representatives` at `at`: the dependant's first, then one about them each.
fn fanned_out(
    s: &Setting,
    event: &OutboxEvent,
    (dependant, name): (CitizenId, &str),
    representatives: &[CitizenId],
    at: OffsetDateTime,
) -> Vec<Produced> {
    let citizen = |id: CitizenId| person(PrincipalId(id.0), Some("someone@example.org"));
    let facts = EventFacts {
        event_id: event.id,
        kind: EventKind::RequestSubmitted,
        author: None,
        citizen: Some(citizen(dependant)),
        citizen_name: Some(name.to_owned()),
        citizen_minor: false,
        representatives: representatives.iter().copied().map(citizen).collect(),
        assignee: None,
        mission_id: Some(s.mission),
        request_id: Some(s.request),
        details: Details { status: Some("submitted".to_owned()), ..Details::default() },
    };
    produce(&facts, at)
}

fn alice(s: &Setting) -> PrincipalId {
    PrincipalId(s.citizen.0)
}

async fn email_of(db: &Database, p: &Produced) -> Email {
    NotificationRepository::email(db, p.email.as_ref().unwrap().id).await.unwrap().unwrap()
}

fn after(status: EmailStatus, next_attempt_at: Option<OffsetDateTime>) -> AfterAttempt {
    AfterAttempt { status, next_attempt_at }
}

/// An event delivered with an email for Alice, created and due at `at`.
async fn delivered_with_email(db: &Database, s: &Setting, at: OffsetDateTime) -> Produced {
    let events = stored_events(db, &[s.request.0]).await;
    let p = produced(s, &events[0], alice(s), true, at);
    let stored = db.complete_events("worker", &ids(&events), std::slice::from_ref(&p), at).await.unwrap();
    assert_eq!(stored, 1);
    p
}

// ---------------------------------------------------------------- the outbox worker

async fn claims_lease_events_until_the_lease_expires(db: Database) {
    let t = now();
    let events = stored_events(&db, &[Uuid::now_v7(), Uuid::now_v7(), Uuid::now_v7()]).await;
    let claimed = NotificationRepository::claim_events(&db, &claim("a", 10, t)).await.unwrap();
    assert_eq!(claimed, events, "oldest first, as written");
    assert!(claim_events(&db, &claim("b", 10, t + Duration::SECOND)).await.is_empty(), "leased to a");
    assert!(claim_events(&db, &claim("b", 10, t + LEASE)).await.is_empty(), "the lease runs to its end");
    let after_lease = t + LEASE + Duration::MICROSECOND;
    assert_eq!(claim_events(&db, &claim("b", 2, after_lease)).await, ids(&events[..2]), "up to the limit");
    assert_eq!(claim_events(&db, &claim("c", 10, after_lease)).await, ids(&events[2..]));
    assert!(claim_events(&db, &claim("a", 10, after_lease)).await.is_empty());

    // Delivered events are never claimed again, whatever the leases.
    db.complete_events("b", &ids(&events), &[], after_lease).await.unwrap();
    assert!(claim_events(&db, &claim("a", 10, t + Duration::days(1))).await.is_empty());
    let stored = db.outbox_events(None, 10).await.unwrap();
    assert_eq!(stored, events, "the events themselves are unchanged");
}

async fn events_of_an_aggregate_are_claimed_in_order(db: Database) {
    let t = now();
    let (x, y) = (Uuid::now_v7(), Uuid::now_v7());
    let events = stored_events(&db, &[x, y, x, x]).await;
    let (x1, y1, x2, x3) = (events[0].id, events[1].id, events[2].id, events[3].id);
    assert_eq!(claim_events(&db, &claim("a", 1, t)).await, [x1]);
    // x2 and x3 wait behind x1, leased to a; y's event is free.
    assert_eq!(claim_events(&db, &claim("b", 10, t)).await, [y1]);
    assert!(claim_events(&db, &claim("c", 10, t)).await.is_empty());
    db.complete_events("a", &[x1], &[], t).await.unwrap();
    // An earlier event in the same batch does not hold a later one back.
    assert_eq!(claim_events(&db, &claim("c", 10, t)).await, [x2, x3]);

    db.complete_events("c", &[x2, x3, y1], &[], t).await.unwrap();

    // When the lease on an aggregate's first event expires, the aggregate goes on, from
    // that event.
    let z = Uuid::now_v7();
    let later = stored_events(&db, &[z, z]).await;
    assert_eq!(claim_events(&db, &claim("a", 1, t)).await, [later[0].id]);
    assert!(claim_events(&db, &claim("b", 10, t)).await.is_empty());
    let expired = t + LEASE + Duration::SECOND;
    assert_eq!(claim_events(&db, &claim("b", 10, expired)).await, ids(&later));
}

async fn completing_an_event_twice_stores_its_notification_once(db: Database) {
    let s = setting(&db).await;
    let t = now();
    let events = stored_events(&db, &[s.request.0]).await;
    let event = &events[0];
    assert_eq!(claim_events(&db, &claim("a", 10, t)).await, [event.id]);
    let first = produced(&s, event, alice(&s), true, t);
    assert_eq!(db.complete_events("a", &[event.id], std::slice::from_ref(&first), t).await.unwrap(), 1);

    // Handled again (a lease expired mid-way): the worker builds new values, new ids.
    let again = produced(&s, event, alice(&s), true, t + Duration::SECOND);
    assert_ne!(again.notification.id, first.notification.id);
    let later = t + Duration::SECOND;
    assert_eq!(db.complete_events("b", &[event.id], std::slice::from_ref(&again), later).await.unwrap(), 0);
    // A retry with the very same values stores nothing either.
    assert_eq!(db.complete_events("a", &[event.id], std::slice::from_ref(&first), t).await.unwrap(), 0);
    assert_eq!(db.count_rows("notifications").await.unwrap(), 1);
    assert_eq!(db.count_rows("emails").await.unwrap(), 1);

    assert_eq!(
        NotificationRepository::get(&db, first.notification.id).await.unwrap(),
        Some(first.notification.clone())
    );
    assert_eq!(email_of(&db, &first).await, first.email.clone().unwrap());
    assert_eq!(
        NotificationRepository::for_request(&db, s.request).await.unwrap(),
        [NotificationWithEmail { notification: first.notification.clone(), email: first.email.clone() }]
    );
    assert!(NotificationRepository::for_request(&db, RequestId::new()).await.unwrap().is_empty());
    assert_eq!(NotificationRepository::get(&db, NotificationId::new()).await.unwrap(), None);
    assert!(claim_events(&db, &claim("c", 10, t + Duration::days(1))).await.is_empty(), "delivered");
    assert_eq!(db.backlog().await.unwrap().pending_events, 0);
}

async fn the_backlog_counts_what_is_waiting(db: Database) {
    assert_eq!(db.backlog().await.unwrap(), Backlog::default());
    let s = setting(&db).await;
    let t = now();
    let events = stored_events(&db, &[s.request.0, s.request.0, Uuid::now_v7()]).await;
    let oldest = events.iter().map(|e| e.created_at).min();
    assert_eq!(
        db.backlog().await.unwrap(),
        Backlog { pending_events: 3, oldest_pending_at: oldest, unsent_emails: 0 }
    );
    let with_email = produced(&s, &events[0], alice(&s), true, t);
    let without = produced(&s, &events[1], alice(&s), false, t);
    let done = [events[0].id, events[1].id];
    assert_eq!(db.complete_events("a", &done, &[with_email.clone(), without], t).await.unwrap(), 2);
    assert_eq!(
        db.backlog().await.unwrap(),
        Backlog { pending_events: 1, oldest_pending_at: Some(events[2].created_at), unsent_emails: 1 }
    );
    // Sending is not sent yet; delivered is.
    let claimed = db.claim_emails(&claim("a", 10, t)).await.unwrap();
    assert_eq!(claimed.len(), 1);
    assert_eq!(db.backlog().await.unwrap().unsent_emails, 1);
    let email = with_email.email.unwrap().id;
    assert!(db.record_attempt(email, "a", after(EmailStatus::Delivered, None), None, t).await.unwrap());
    assert_eq!(db.backlog().await.unwrap().unsent_emails, 0);
    db.complete_events("a", &[events[2].id], &[], t).await.unwrap();
    assert_eq!(db.backlog().await.unwrap(), Backlog::default());
}

async fn concurrent_claimers_share_the_events_without_overlap(db: Database) {
    let aggregates: Vec<Uuid> = (0..200).map(|_| Uuid::now_v7()).collect();
    let events = stored_events(&db, &aggregates).await;
    let mut tasks = Vec::new();
    for node in ["a", "b"] {
        let db = db.clone();
        tasks.push(tokio::spawn(async move {
            let mut mine = Vec::new();
            loop {
                let batch = claim_events(&db, &claim(node, 15, now())).await;
                if batch.is_empty() {
                    return mine;
                }
                mine.extend(batch);
                tokio::task::yield_now().await;
            }
        }));
    }
    let mut claimed = Vec::new();
    for task in tasks {
        claimed.push(task.await.unwrap().into_iter().collect::<BTreeSet<Uuid>>());
    }
    assert!(claimed[0].is_disjoint(&claimed[1]), "an event was claimed twice");
    let all: BTreeSet<Uuid> = claimed[0].union(&claimed[1]).copied().collect();
    assert_eq!(all, ids(&events).into_iter().collect::<BTreeSet<_>>());
}

async fn claims_read_indexes(db: Database) {
    let backend = db.backend();
    // Some rows, so that SQLite's planner has something to weigh.
    let s = setting(&db).await;
    for _ in 0..3 {
        delivered_with_email(&db, &s, now()).await;
    }
    let plan = db.explain_event_claim(&claim("a", 10, now())).await.unwrap();
    assert_no_full_scan(backend, "outbox_events", &plan, "event claim");
    assert_no_full_scan(backend, "earlier", &plan, "event claim, earlier events");
    assert!(plan.join("\n").contains("outbox_events_pending_aggregate_idx"), "{plan:#?}");
    assert_ordered_by_index(&plan, "outbox_events_pending_idx");
    let plan = db.explain_email_claim(&claim("a", 10, now())).await.unwrap();
    assert_no_full_scan(backend, "emails", &plan, "email claim");
    assert_ordered_by_index(&plan, "emails_due_idx");
    assert_ordered_by_index(&plan, "emails_sending_idx");
}

// ---------------------------------------------------------------- the inbox

async fn the_inbox_pages_filters_and_marks_read(db: Database) {
    let s = setting(&db).await;
    let (alice_id, bob_id) = (alice(&s), PrincipalId::new());
    let inbox = |id| Recipient { id, kind: PrincipalKind::Citizen, mission: Some(s.mission) };
    let (alice, bob) = (inbox(alice_id), inbox(bob_id));
    let t = now();
    let events = stored_events(&db, &[s.request.0; 6]).await;
    let mut produced_all: Vec<Produced> =
        events[..5].iter().map(|e| produced(&s, e, alice_id, false, t)).collect();
    produced_all.push(produced(&s, &events[5], bob_id, false, t));
    assert_eq!(db.complete_events("a", &ids(&events), &produced_all, t).await.unwrap(), 6);
    let n: Vec<Notification> = produced_all.iter().map(|p| p.notification.clone()).collect();

    let page = |after: Option<NotificationId>| PageRequest { limit: 2, after: after.map(|a| a.0) };
    let first = NotificationRepository::list(&db, alice, false, page(None)).await.unwrap();
    assert_eq!(first.items, [n[4].clone(), n[3].clone()], "newest first");
    assert_eq!(first.next_after, Some(n[3].id.0));
    let second = NotificationRepository::list(&db, alice, false, page(Some(n[3].id))).await.unwrap();
    assert_eq!(second.items, [n[2].clone(), n[1].clone()]);
    let third = NotificationRepository::list(&db, alice, false, page(Some(n[1].id))).await.unwrap();
    assert_eq!((third.items, third.next_after), (vec![n[0].clone()], None));
    assert_eq!(db.unread_count(alice).await.unwrap(), 5);
    assert_eq!(db.unread_count(bob).await.unwrap(), 1);
    // The same id as another kind, or in another mission (a token of a client bound to
    // it elsewhere), has an empty inbox and marks nothing.
    let as_staff = Recipient { kind: PrincipalKind::Staff, ..alice };
    let elsewhere = Recipient { mission: Some(MissionId::new()), ..alice };
    let global = Recipient { kind: PrincipalKind::Admin, mission: None, ..alice };
    for stranger in [as_staff, elsewhere, global] {
        let listed = NotificationRepository::list(&db, stranger, false, page(None)).await.unwrap();
        assert!(listed.items.is_empty(), "{stranger:?} read {listed:?}");
        assert_eq!(db.unread_count(stranger).await.unwrap(), 0, "{stranger:?}");
        assert_eq!(db.mark_all_read(stranger, t).await.unwrap(), 0, "{stranger:?}");
    }

    // Reading twice keeps the first time.
    let (t1, t2) = (t + Duration::minutes(1), t + Duration::minutes(2));
    let read = db.mark_read(n[3].id, t1).await.unwrap().unwrap();
    assert_eq!(read, Notification { read_at: Some(t1), ..n[3].clone() });
    assert_eq!(db.mark_read(n[3].id, t2).await.unwrap(), Some(read.clone()));
    assert_eq!(db.mark_read(NotificationId::new(), t2).await.unwrap(), None);
    let unread =
        NotificationRepository::list(&db, alice, true, PageRequest { limit: 10, after: None }).await.unwrap();
    assert_eq!(unread.items.iter().map(|x| x.id).collect::<Vec<_>>(), [n[4].id, n[2].id, n[1].id, n[0].id]);
    let unread_page = NotificationRepository::list(&db, alice, true, page(Some(n[4].id))).await.unwrap();
    assert_eq!(unread_page.items.iter().map(|x| x.id).collect::<Vec<_>>(), [n[2].id, n[1].id]);
    assert_eq!(db.unread_count(alice).await.unwrap(), 4);

    let t3 = t + Duration::minutes(3);
    assert_eq!(db.mark_all_read(alice, t3).await.unwrap(), 4);
    assert_eq!(db.mark_all_read(alice, t3).await.unwrap(), 0);
    assert_eq!(db.unread_count(alice).await.unwrap(), 0);
    assert_eq!(db.unread_count(bob).await.unwrap(), 1, "only the recipient's");
    assert_eq!(NotificationRepository::get(&db, n[0].id).await.unwrap().unwrap().read_at, Some(t3));
    assert_eq!(NotificationRepository::get(&db, n[3].id).await.unwrap().unwrap().read_at, Some(t1));
    assert!(NotificationRepository::list(&db, alice, true, page(None)).await.unwrap().items.is_empty());
    assert_eq!(
        NotificationRepository::list(&db, bob, false, page(None)).await.unwrap().items,
        [n[5].clone()]
    );

    let backend = db.backend();
    for (unread_only, index) in [(false, "notifications_recipient_idx"), (true, "notifications_unread_idx")] {
        let plan = db.explain_notification_list(alice, unread_only, page(Some(n[3].id))).await.unwrap();
        assert_no_full_scan(backend, "notifications", &plan, index);
        assert_ordered_by_index(&plan, index);
    }
}

async fn preferences_round_trip(db: Database) {
    let (p, other) = (PrincipalId::new(), PrincipalId::new());
    assert_eq!(db.preferences(p).await.unwrap(), EmailPreferences::default());
    let off = EmailPreferences { off: [Category::Messages, Category::Documents].into_iter().collect() };
    db.set_preferences(p, &off, now(), &audited("notification_preferences", p.0)).await.unwrap();
    assert_eq!(db.preferences(p).await.unwrap(), off);
    assert_eq!(db.preferences(other).await.unwrap(), EmailPreferences::default());
    let all = EmailPreferences { off: Category::ALL.into_iter().collect() };
    db.set_preferences(p, &all, now(), &audited("notification_preferences", p.0)).await.unwrap();
    assert_eq!(db.preferences(p).await.unwrap(), all);
    db.set_preferences(p, &EmailPreferences::default(), now(), &WriteMeta::default()).await.unwrap();
    assert_eq!(db.preferences(p).await.unwrap(), EmailPreferences::default());
    assert_eq!(db.count_rows("audit_events").await.unwrap(), 2, "stored with their writes");
}

// ---------------------------------------------------------------- the email queue

async fn email_attempts_retry_until_final(db: Database) {
    let s = setting(&db).await;
    let t = now();
    let p = delivered_with_email(&db, &s, t).await;
    let id = p.email.as_ref().unwrap().id;
    assert!(db.claim_emails(&claim("a", 10, t - Duration::SECOND)).await.unwrap().is_empty(), "not due yet");
    let claimed = db.claim_emails(&claim("a", 10, t)).await.unwrap();
    let expected = Email { status: EmailStatus::Sending, attempts: 1, ..p.email.clone().unwrap() };
    assert_eq!(claimed, std::slice::from_ref(&expected), "with the notification's kind and details");
    assert_eq!(claimed[0].kind, p.notification.kind);
    assert_eq!(claimed[0].details, p.notification.details);
    assert!(db.claim_emails(&claim("b", 10, t + Duration::SECOND)).await.unwrap().is_empty(), "leased to a");

    // A temporary failure: the next attempt at t + 60 s, not before.
    let (t2, retry_at) = (t + Duration::seconds(2), t + Duration::seconds(60));
    let temporary = after(EmailStatus::TemporaryFailure, Some(retry_at));
    assert!(db.record_attempt(id, "a", temporary, Some("421 try later".to_owned()), t2).await.unwrap());
    let stored = email_of(&db, &p).await;
    assert_eq!(
        (
            stored.status,
            stored.attempts,
            stored.next_attempt_at,
            stored.last_error.as_deref(),
            stored.updated_at
        ),
        (EmailStatus::TemporaryFailure, 1, Some(retry_at), Some("421 try later"), t2)
    );
    assert!(!db.record_attempt(id, "a", temporary, None, t2).await.unwrap(), "no longer sending");
    assert!(db.claim_emails(&claim("b", 10, retry_at - Duration::SECOND)).await.unwrap().is_empty());
    let retried = db.claim_emails(&claim("b", 10, retry_at)).await.unwrap();
    assert_eq!(
        retried.iter().map(|e| (e.id, e.status, e.attempts)).collect::<Vec<_>>(),
        [(id, EmailStatus::Sending, 2)]
    );
    assert!(!db.record_attempt(id, "a", temporary, None, retry_at).await.unwrap(), "b holds it now");

    // A permanent failure is final.
    let t3 = retry_at + Duration::SECOND;
    let permanent = after(EmailStatus::PermanentFailure, None);
    assert!(db.record_attempt(id, "b", permanent, Some("550 no such mailbox".to_owned()), t3).await.unwrap());
    let stored = email_of(&db, &p).await;
    assert_eq!(
        (
            stored.status,
            stored.attempts,
            stored.next_attempt_at,
            stored.delivered_at,
            stored.last_error.as_deref()
        ),
        (EmailStatus::PermanentFailure, 2, None, None, Some("550 no such mailbox"))
    );
    assert!(db.claim_emails(&claim("c", 10, t + Duration::days(10))).await.unwrap().is_empty());
    assert!(!db.record_attempt(id, "b", permanent, None, t3).await.unwrap());

    // A delivery after a temporary failure is final too, and keeps the failure's text.
    let q = delivered_with_email(&db, &s, t).await;
    let q_id = q.email.as_ref().unwrap().id;
    let claimed = db.claim_emails(&claim("a", 10, t3)).await.unwrap();
    assert_eq!(claimed.iter().map(|e| e.id).collect::<Vec<_>>(), [q_id]);
    let soon = after(EmailStatus::TemporaryFailure, Some(t3));
    assert!(db.record_attempt(q_id, "a", soon, Some("connection reset".to_owned()), t3).await.unwrap());
    assert_eq!(db.claim_emails(&claim("a", 10, t3)).await.unwrap().len(), 1);
    let delivered = after(EmailStatus::Delivered, None);
    assert!(db.record_attempt(q_id, "a", delivered, None, t3).await.unwrap());
    let stored = email_of(&db, &q).await;
    assert_eq!(
        (
            stored.status,
            stored.attempts,
            stored.delivered_at,
            stored.next_attempt_at,
            stored.last_error.as_deref()
        ),
        (EmailStatus::Delivered, 2, Some(t3), None, Some("connection reset"))
    );
    assert!(db.claim_emails(&claim("c", 10, t + Duration::days(10))).await.unwrap().is_empty());
    assert_eq!(NotificationRepository::email(&db, consular_domain::EmailId::new()).await.unwrap(), None);
}

async fn an_expired_sending_lease_is_claimed_again(db: Database) {
    let s = setting(&db).await;
    let t = now();
    let p = delivered_with_email(&db, &s, t).await;
    let id = p.email.as_ref().unwrap().id;
    assert_eq!(db.claim_emails(&claim("a", 10, t)).await.unwrap().len(), 1);
    assert!(
        db.claim_emails(&claim("b", 10, t + LEASE)).await.unwrap().is_empty(),
        "the lease runs to its end"
    );
    // a died: its lease expires, b takes the email over with one more attempt.
    let later = t + LEASE + Duration::SECOND;
    let taken = db.claim_emails(&claim("b", 10, later)).await.unwrap();
    assert_eq!(taken.iter().map(|e| (e.id, e.attempts)).collect::<Vec<_>>(), [(id, 2)]);
    let delivered = after(EmailStatus::Delivered, None);
    assert!(!db.record_attempt(id, "a", delivered, None, later).await.unwrap(), "a lost its lease");
    assert_eq!(email_of(&db, &p).await.status, EmailStatus::Sending);
    assert!(db.record_attempt(id, "b", delivered, None, later).await.unwrap());
    let stored = email_of(&db, &p).await;
    assert_eq!(
        (stored.status, stored.delivered_at, stored.attempts),
        (EmailStatus::Delivered, Some(later), 2)
    );
}

async fn a_sender_renews_an_email_lease_only_while_it_holds_it(db: Database) {
    let s = setting(&db).await;
    let t = now();
    let p = delivered_with_email(&db, &s, t).await;
    let id = p.email.as_ref().unwrap().id;
    assert!(!db.renew_email_lease(id, "a", t, t + LEASE).await.unwrap(), "pending: nobody holds it");
    assert_eq!(db.claim_emails(&claim("a", 10, t)).await.unwrap().len(), 1);
    assert!(!db.renew_email_lease(id, "b", t, t + LEASE).await.unwrap(), "leased to a, not b");
    // a renews before each send: the lease runs from then, past the claim's end.
    let renewed = t + LEASE - Duration::SECOND;
    assert!(db.renew_email_lease(id, "a", renewed, renewed + LEASE).await.unwrap());
    assert!(
        db.claim_emails(&claim("b", 10, t + LEASE + Duration::SECOND)).await.unwrap().is_empty(),
        "the renewed lease holds past the claim's"
    );
    // Expired, even with nobody having taken it yet: a may not send.
    let expired = renewed + LEASE;
    assert!(!db.renew_email_lease(id, "a", expired, expired + LEASE).await.unwrap(), "the lease ran out");
    let taken = db.claim_emails(&claim("b", 10, expired + Duration::SECOND)).await.unwrap();
    assert_eq!(taken.iter().map(|e| (e.id, e.attempts)).collect::<Vec<_>>(), [(id, 2)]);
    let later = expired + Duration::seconds(2);
    assert!(!db.renew_email_lease(id, "a", later, later + LEASE).await.unwrap(), "b holds it now");
    assert!(db.renew_email_lease(id, "b", later, later + LEASE).await.unwrap());
    let delivered = after(EmailStatus::Delivered, None);
    assert!(db.record_attempt(id, "b", delivered, None, later).await.unwrap());
    assert!(!db.renew_email_lease(id, "b", later, later + LEASE).await.unwrap(), "delivered: no lease");
    assert_eq!(email_of(&db, &p).await.status, EmailStatus::Delivered);
}

// ---------------------------------------------------------------- reminders

/// A slot starting `hours` from now serving the setting's service type.
async fn stored_slot(db: &Database, s: &Setting, hours: i64) -> Slot {
    let start = now() + Duration::hours(hours);
    let slot = Slot {
        capacity: 5,
        service_types: vec![s.service_type],
        ..consular_domain::fixtures::slot(s.mission, start, now())
    };
    let upsert = SlotUpsert { slots: vec![(slot.clone(), None)], cancelled: vec![] };
    AppointmentRepository::upsert_slots(db, &upsert, &WriteMeta::default()).await.unwrap();
    slot
}

async fn booked(db: &Database, s: &Setting, slot: &Slot) -> Appointment {
    let by = Subject { kind: PrincipalKind::Citizen, id: alice(s) };
    let a = Appointment::book(slot, s.citizen, s.service_type, None, by, now());
    let entry = AppointmentEntry::of(&a, AppointmentChange::Booked, by).unwrap();
    assert_eq!(
        AppointmentRepository::book(db, &a, &entry, None, now(), &WriteMeta::default()).await.unwrap(),
        consular_ports::BookOutcome::Booked
    );
    a
}

async fn reminders_are_scheduled_once_per_start_time(db: Database) {
    let s = setting(&db).await;
    let (soon, later, far) =
        (stored_slot(&db, &s, 20).await, stored_slot(&db, &s, 30).await, stored_slot(&db, &s, 100).await);
    // Cancelled first: a citizen holds one booking of a slot at a time.
    let mut cancelled = booked(&db, &s, &soon).await;
    cancelled.cancel(Role::Staff, &soon, now()).unwrap();
    let by = Subject { kind: PrincipalKind::Staff, id: PrincipalId::new() };
    let entry = AppointmentEntry::of(&cancelled, AppointmentChange::Cancelled, by).unwrap();
    AppointmentRepository::cancel(&db, &cancelled, &entry, 1, &WriteMeta::default()).await.unwrap();
    let first = booked(&db, &s, &soon).await;
    let second = booked(&db, &s, &later).await;
    booked(&db, &s, &far).await;

    let (from, until) = (now(), now() + Duration::hours(48));
    let candidates = db.reminder_candidates(from, until, 10).await.unwrap();
    assert_eq!(candidates, [first.clone(), second.clone()], "booked ones in the window, soonest first");
    assert_eq!(db.reminder_candidates(from, until, 1).await.unwrap(), std::slice::from_ref(&first));
    assert!(db.reminder_candidates(first.starts_at, first.starts_at, 10).await.unwrap().is_empty());
    assert_eq!(
        db.reminder_candidates(first.starts_at - Duration::MICROSECOND, first.starts_at, 10).await.unwrap(),
        std::slice::from_ref(&first),
        "(from, until]"
    );

    let reminder_of = |a: &Appointment| consular_domain::DomainEvent::AppointmentReminder {
        appointment: consular_domain::AppointmentRef::of(a),
    };
    let event = |a: &Appointment| OutboxEvent::new(&reminder_of(a), now()).unwrap();
    let reminder = event(&first);
    assert!(db.schedule_reminder(first.id, first.starts_at, &reminder).await.unwrap());
    assert!(
        !db.schedule_reminder(first.id, first.starts_at, &event(&first)).await.unwrap(),
        "scheduled once"
    );
    let stored = db.outbox_events(None, 10).await.unwrap();
    assert_eq!(stored, std::slice::from_ref(&reminder), "one event");
    assert_eq!(stored[0].event().unwrap(), reminder_of(&first), "the stored row decodes to the typed event");
    assert_eq!(db.reminder_candidates(from, until, 10).await.unwrap(), std::slice::from_ref(&second));
    // A moved appointment gets a reminder for its new time.
    let moved = event(&first);
    assert!(db.schedule_reminder(first.id, first.starts_at + Duration::hours(1), &moved).await.unwrap());
    assert_eq!(db.outbox_events(None, 10).await.unwrap(), [reminder, moved]);
    assert!(
        db.schedule_reminder(consular_domain::AppointmentId::new(), from, &event(&second)).await.is_err()
    );

    let plan = db.explain_reminder_candidates(from, until, 10).await.unwrap();
    assert_no_full_scan(db.backend(), "appointments", &plan, "reminder candidates");
    assert_ordered_by_index(&plan, "appointments_booked_starts_at_idx");
}

// ---------------------------------------------------------------- both databases

on_both_databases!(
    claims_lease_events_until_the_lease_expires,
    events_of_an_aggregate_are_claimed_in_order,
    completing_an_event_twice_stores_its_notification_once,
    the_backlog_counts_what_is_waiting,
    concurrent_claimers_share_the_events_without_overlap,
    claims_read_indexes,
    the_inbox_pages_filters_and_marks_read,
    preferences_round_trip,
    email_attempts_retry_until_final,
    an_expired_sending_lease_is_claimed_again,
    a_sender_renews_an_email_lease_only_while_it_holds_it,
    reminders_are_scheduled_once_per_start_time,
    a_fanned_out_event_stores_one_notification_per_recipient_marked_about_the_dependant,
    an_erasure_deletes_what_representatives_were_told_about_the_citizen_and_refuses_more,
);

// ---------------------------------------------------------------- representatives

async fn a_fanned_out_event_stores_one_notification_per_recipient_marked_about_the_dependant(db: Database) {
    let s = setting(&db).await;
    let alice = CitizenRepository::get(&db, s.citizen).await.unwrap().unwrap();
    let bob = stored_citizen(&db, s.mission, "BOB1").await.id;
    let t = now();
    let events = stored_events(&db, &[s.request.0]).await;
    let made = fanned_out(&s, &events[0], (s.citizen, &alice.given_name), &[bob], t);
    assert_eq!(made.len(), 2);
    let about: Vec<_> = made.iter().map(|p| p.email.as_ref().and_then(|e| e.about.clone())).collect();
    assert_eq!(about, [None, Some(alice.given_name.clone())], "Bob's email names Alice, read back below");
    assert_eq!(db.complete_events("a", &ids(&events), &made, t).await.unwrap(), 2);
    assert_eq!(db.count_rows("emails").await.unwrap(), 2, "an email each");

    let (alices, bobs) = (&made[0].notification, &made[1].notification);
    assert_eq!((alices.on_behalf_of, bobs.on_behalf_of), (None, Some(s.citizen)));
    for p in &made {
        assert_eq!(
            NotificationRepository::get(&db, p.notification.id).await.unwrap().as_ref(),
            Some(&p.notification)
        );
        assert_eq!(email_of(&db, p).await, p.email.clone().unwrap());
    }
    let inbox = |id: CitizenId| Recipient {
        id: PrincipalId(id.0),
        kind: PrincipalKind::Citizen,
        mission: Some(s.mission),
    };
    let page = PageRequest { limit: 10, after: None };
    let listed = NotificationRepository::list(&db, inbox(bob), false, page).await.unwrap();
    assert_eq!(listed.items, std::slice::from_ref(bobs), "Bob's inbox shows whom it is about");
    let listed = NotificationRepository::list(&db, inbox(s.citizen), false, page).await.unwrap();
    assert_eq!(listed.items, std::slice::from_ref(alices));
    let deliveries = NotificationRepository::for_request(&db, s.request).await.unwrap();
    let about: BTreeSet<_> =
        deliveries.iter().map(|d| (d.notification.recipient_id, d.notification.on_behalf_of)).collect();
    assert_eq!(about, BTreeSet::from([(alices.recipient_id, None), (bobs.recipient_id, Some(s.citizen))]));
    for p in &made {
        let delivery = NotificationWithEmail { notification: p.notification.clone(), email: p.email.clone() };
        assert!(deliveries.contains(&delivery), "{delivery:?} in the request's deliveries");
    }

    // Handled again: still one per (event, recipient).
    let again = fanned_out(&s, &events[0], (s.citizen, &alice.given_name), &[bob], t + Duration::SECOND);
    assert_eq!(db.complete_events("b", &ids(&events), &again, t).await.unwrap(), 0);
    assert_eq!(db.count_rows("notifications").await.unwrap(), 2);
}

async fn an_erasure_deletes_what_representatives_were_told_about_the_citizen_and_refuses_more(db: Database) {
    let s = setting(&db).await;
    let alice = CitizenRepository::get(&db, s.citizen).await.unwrap().unwrap();
    let bob = stored_citizen(&db, s.mission, "BOB2").await.id;
    let t = now();
    // Bob hears of Alice's open request, and of his own.
    let events = stored_events(&db, &[s.request.0, s.request.0]).await;
    let mut made = fanned_out(&s, &events[0], (s.citizen, &alice.given_name), &[bob], t);
    made.extend(fanned_out(&s, &events[1], (bob, "Bob"), &[], t));
    assert_eq!(db.complete_events("a", &ids(&events), &made, t).await.unwrap(), 3);

    // The open request is kept; what was told about Alice goes all the same.
    let erasure = Erasure {
        citizen: Some((consular_domain::erasure::erased(&alice, t), alice.version)),
        citizen_id: alice.id,
        requests: Vec::new(),
        at: t,
    };
    db.erase(&erasure, &WriteMeta::default()).await.unwrap();
    let left = NotificationRepository::for_request(&db, s.request).await.unwrap();
    assert_eq!(
        left.iter().map(|d| (d.notification.recipient_id, d.notification.on_behalf_of)).collect::<Vec<_>>(),
        [(PrincipalId(bob.0), None)],
        "only Bob's news of his own"
    );
    assert_eq!(db.count_rows("emails").await.unwrap(), 1);

    // A fan-out about Alice that the worker looked up before the erasure is refused.
    let late = stored_events(&db, &[s.request.0]).await;
    let about_alice: Vec<Produced> = fanned_out(&s, &late[0], (s.citizen, &alice.given_name), &[bob], t)
        .into_iter()
        .filter(|p| p.notification.recipient_id.0 == bob.0)
        .collect();
    assert_eq!(about_alice.len(), 1);
    assert!(db.complete_events("a", &ids(&late), &about_alice, t).await.is_err());
    assert_eq!(db.count_rows("notifications").await.unwrap(), 1, "nothing written about Alice");
}
