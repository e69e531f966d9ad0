//! The recorder's group commit (batches, waiting for the commit, failures) and who reads a
//! log, against mocks.

use super::*;
use crate::fixtures::{admin_with, principal};
use async_trait::async_trait;
use consular_domain::{AccessedData, Citizen, MissionId, PrincipalKind, fixtures};
use consular_ports::{MockAccessLogRepository, MockCitizenRepository, RepoError};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};
use time::OffsetDateTime;
use tokio::sync::Semaphore;
use uuid::Uuid;

fn entry() -> AccessEntry {
    let staff = principal(PrincipalKind::Staff, Uuid::now_v7(), "staff", Some(MissionId::new()));
    AccessEntry::of_read(
        &staff,
        CitizenId::new(),
        AccessedData::Profile,
        Uuid::now_v7(),
        OffsetDateTime::UNIX_EPOCH,
    )
    .unwrap()
}

/// Polls `condition` until it holds, failing after five seconds.
async fn until(what: &str, condition: impl Fn() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(5);
    while !condition() {
        assert!(Instant::now() < deadline, "timed out waiting until {what}");
        tokio::task::yield_now().await;
    }
}

/// A log whose first transaction waits for the test to let it commit; it keeps every
/// batch it was given.
struct HeldLog {
    calls: AtomicUsize,
    commit_first: Semaphore,
    batches: Mutex<Vec<Vec<AccessEntry>>>,
}

impl HeldLog {
    fn new() -> Self {
        HeldLog {
            calls: AtomicUsize::new(0),
            commit_first: Semaphore::new(0),
            batches: Mutex::new(Vec::new()),
        }
    }
}

#[async_trait]
impl AccessLogRepository for HeldLog {
    async fn append(&self, entries: &[AccessEntry]) -> Result<(), RepoError> {
        if self.calls.fetch_add(1, Ordering::SeqCst) == 0 {
            self.commit_first.acquire().await.map_err(|e| RepoError::Other(e.to_string()))?.forget();
        }
        self.batches.lock().unwrap().push(entries.to_vec());
        Ok(())
    }
    async fn list(&self, _: CitizenId, _: PageRequest) -> Result<Page<AccessEntry>, RepoError> {
        unreachable!("the recorder only appends")
    }
}

#[tokio::test]
async fn reads_that_arrive_during_a_flush_are_committed_together_by_the_next() {
    let log = Arc::new(HeldLog::new());
    let recorder = AccessRecorder::new(log.clone());
    let record = |entries: Vec<AccessEntry>| {
        let recorder = recorder.clone();
        tokio::spawn(async move { recorder.record(entries).await })
    };
    let first = record(vec![entry()]);
    until("the first flush is in its transaction", || log.calls.load(Ordering::SeqCst) == 1).await;
    let later: Vec<_> = (0..4).map(|_| record(vec![entry(), entry()])).collect();
    until("four reads wait behind it", || recorder.waiting() == 4).await;
    // Nobody has an answer before their entries are committed.
    assert!(!first.is_finished() && later.iter().all(|r| !r.is_finished()));

    log.commit_first.add_permits(1);
    first.await.unwrap().unwrap();
    for read in later {
        read.await.unwrap().unwrap();
    }
    let sizes: Vec<usize> = log.batches.lock().unwrap().iter().map(Vec::len).collect();
    assert_eq!(sizes, [1, 8], "one transaction for the first read, one for the four that queued");
    assert_eq!(log.calls.load(Ordering::SeqCst), 2);

    // Idle again: the next read starts a flush of its own.
    recorder.record(vec![entry()]).await.unwrap();
    assert_eq!(log.calls.load(Ordering::SeqCst), 3);
}

#[tokio::test]
async fn a_failed_append_fails_the_read_and_the_next_read_is_recorded() {
    let mut log = MockAccessLogRepository::new();
    let mut calls = 0;
    log.expect_append().times(2).returning(move |_| {
        calls += 1;
        if calls == 1 { Err(RepoError::Unavailable("down".into())) } else { Ok(()) }
    });
    let recorder = AccessRecorder::new(Arc::new(log));
    let failed = recorder.record(vec![entry()]).await;
    assert!(matches!(failed, Err(ServiceError::Unavailable(_))), "{failed:?}");
    recorder.record(vec![entry()]).await.unwrap();
}

/// A log whose first transaction panics (a broken adapter).
struct PanicsOnce(AtomicUsize);

#[async_trait]
impl AccessLogRepository for PanicsOnce {
    async fn append(&self, _: &[AccessEntry]) -> Result<(), RepoError> {
        if self.0.fetch_add(1, Ordering::SeqCst) == 0 {
            panic!("the adapter broke");
        }
        Ok(())
    }
    async fn list(&self, _: CitizenId, _: PageRequest) -> Result<Page<AccessEntry>, RepoError> {
        unreachable!("the recorder only appends")
    }
}

#[tokio::test]
async fn a_flush_that_panics_fails_its_reads_instead_of_leaving_them_waiting() {
    let log = Arc::new(PanicsOnce(AtomicUsize::new(0)));
    let recorder = AccessRecorder::new(log.clone());
    let failed = recorder.record(vec![entry()]).await;
    assert!(matches!(failed, Err(ServiceError::Unavailable(_))), "{failed:?}");
    recorder.record(vec![entry()]).await.unwrap();
    assert_eq!(log.0.load(Ordering::SeqCst), 2);
}

#[tokio::test]
async fn nothing_to_record_writes_nothing() {
    let mut log = MockAccessLogRepository::new();
    log.expect_append().never();
    AccessRecorder::new(Arc::new(log)).record(None).await.unwrap();
}

fn service(citizen: Citizen, listed: usize) -> AccessLogService {
    let mut citizens = MockCitizenRepository::new();
    citizens.expect_get().returning(move |id| Ok((id == citizen.id).then(|| citizen.clone())));
    let mut log = MockAccessLogRepository::new();
    log.expect_list().times(listed).returning(|_, _| Ok(Page { items: vec![entry()], next_after: None }));
    AccessLogService::new(AccessLogPorts { log: Arc::new(log), citizens: Arc::new(citizens) })
}

#[tokio::test]
async fn the_citizen_and_the_missions_admins_read_the_log_others_are_refused() {
    let mission = MissionId::new();
    let citizen = fixtures::citizen(mission, OffsetDateTime::UNIX_EPOCH);
    let me = principal(PrincipalKind::Citizen, citizen.id.0, "citizen", Some(mission));
    let page = PageRequest::default;

    let own = service(citizen.clone(), 1).list(&me, Whose::Me, page()).await.unwrap();
    assert_eq!(own.items.len(), 1);
    let admin = admin_with("admin", Some(mission));
    service(citizen.clone(), 1).list(&admin, Whose::Citizen(citizen.id), page()).await.unwrap();

    let refused = [
        (admin_with("admin", Some(MissionId::new())), Whose::Citizen(citizen.id), "404"),
        (admin_with("admin", None), Whose::Citizen(CitizenId::new()), "404"),
        (
            principal(PrincipalKind::Staff, Uuid::now_v7(), "staff", Some(mission)),
            Whose::Citizen(citizen.id),
            "403",
        ),
        (admin_with("admin", None), Whose::Me, "403"),
        (principal(PrincipalKind::Citizen, Uuid::now_v7(), "citizen", Some(mission)), Whose::Me, "404"),
    ];
    for (actor, whose, expected) in refused {
        let answer = service(citizen.clone(), 0).list(&actor, whose, page()).await;
        let got = match answer {
            Err(ServiceError::NotFound) => "404",
            Err(ServiceError::Forbidden(_) | ServiceError::InsufficientScope { .. }) => "403",
            other => panic!("{actor:?} {whose:?}: {other:?}"),
        };
        assert_eq!(got, expected, "{actor:?} {whose:?}");
    }
}
