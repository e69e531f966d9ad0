//! The repository contracts of `consular-ports`, checked against both databases: every
//! test below is an `async fn(Database)`, and `on_both_databases!` (`common/mod.rs`) runs
//! it on a fresh SQLite file (`sqlite::<test>`) and on a fresh PostgreSQL database
//! (`postgres::<test>`). One module per area; the fixtures more than one area uses are
//! here, and the shared rows (missions, citizens, requests...) in `common/mod.rs`.
//! Documents, appointments, notifications and analytics have suites of their own.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

#[path = "../common/mod.rs"]
mod common;

mod access_log;
mod audit;
mod auth;
mod catalog;
mod citizens;
mod conversations;
mod erasure;
mod exports;
mod missions;
mod on_behalf_of;
mod rate_limits;
mod representations;
mod requests;
mod staff;

use common::*;

use consular_db::Database;
use consular_domain::{
    Action, ApiClient, AuditAction, AuditRecord, Citizen, CitizenId, ClientId, ClientStatus, HistoryEntry,
    MissionId, Money, Page, PageRequest, Principal, PrincipalId, PrincipalKind, RegistrationStatus,
    RequestId, RequestStatus, Role, ScopeSet, ServiceRequest, ServiceType, ServiceTypeId, StaffId,
    StaffMember, Stage, Subject,
};
use consular_ports::{
    AuditFilter, AuditRepository, CitizenFilter, CitizenRepository, ClientFilter, ClientRepository,
    Consistency, HealthCheck, IdempotencyRecord, IdempotencyRepository, Message, MissionRepository, Note,
    OutboxEvent, QueueGroup, RefreshOutcome, RefreshReplacement, RefreshTokenRecord, RepoError,
    RequestFilter, RequestRepository, Revocation, RevocationKind, ServiceTypeFilter, ServiceTypeRepository,
    StaffFilter, StaffRepository, StoredOutcome, TokenRepository, WriteMeta,
};
use time::macros::{date, datetime};
use time::{Duration, OffsetDateTime};
use uuid::Uuid;

// ---------------------------------------------------------------- fixtures

fn client(scopes: &str, mission: Option<MissionId>) -> ApiClient {
    let scopes = ScopeSet::parse(scopes).unwrap();
    let subject = Subject { kind: scopes.principal_kind().unwrap(), id: PrincipalId::new() };
    ApiClient::issue("portal".to_owned(), scopes, subject, mission, vec![7; 32], now())
}

fn idempotency(owner: ClientId, key: &str, expires_in: Duration) -> IdempotencyRecord {
    let now = now();
    IdempotencyRecord {
        owner,
        key: key.to_owned(),
        fingerprint: "POST /v1/missions 1f2e".to_owned(),
        outcome: StoredOutcome {
            resource_id: Uuid::now_v7(),
            snapshot: serde_json::json!({ "code": "x", "version": 1 }),
        },
        created_at: now,
        expires_at: now + expires_in,
    }
}

/// A stored active client, for the token tests (refresh tokens reference their client).
async fn stored_client(db: &Database) -> ApiClient {
    let client = client("staff", None);
    ClientRepository::insert(db, &client, &WriteMeta::default()).await.unwrap();
    client
}

/// The API client issued to a citizen or staff member (`principal`).
fn client_of(scopes: &str, mission: MissionId, principal: Uuid) -> ApiClient {
    let mut c = client(scopes, Some(mission));
    c.subject.id = PrincipalId(principal);
    c
}

fn staff_member(mission: MissionId, service_types: &[ServiceTypeId]) -> StaffMember {
    StaffMember {
        service_type_ids: service_types.to_vec(),
        ..consular_domain::fixtures::staff_member(mission, now())
    }
}

/// Ids in the order a listing must return them: ascending.
fn sorted<T: Ord + Copy>(ids: &[T]) -> Vec<T> {
    let mut ids = ids.to_vec();
    ids.sort();
    ids
}

fn with_events(events: Vec<OutboxEvent>) -> WriteMeta {
    WriteMeta { events, ..WriteMeta::default() }
}

async fn all_outbox_events(db: &Database) -> Vec<OutboxEvent> {
    db.outbox_events(None, 1000).await.unwrap()
}

fn note(request: RequestId, body: &str) -> Note {
    Note {
        id: Uuid::now_v7(),
        request_id: request,
        author: Subject { kind: PrincipalKind::Staff, id: PrincipalId::new() },
        body: body.to_owned(),
        created_at: now(),
    }
}

fn message(request: RequestId, body: &str, kind: PrincipalKind) -> Message {
    Message {
        id: Uuid::now_v7(),
        request_id: request,
        author: Subject { kind, id: PrincipalId::new() },
        on_behalf_of: None,
        body: body.to_owned(),
        created_at: now(),
    }
}
