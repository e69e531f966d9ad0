//! The recorder (batches behind the reads, retries, refusing reads when the log is behind,
//! draining) and who reads a log, against mocks.

use super::*;
use crate::fixtures::{admin_with, principal};
use async_trait::async_trait;
use consular_domain::{AccessedData, Citizen, MissionId, PrincipalKind, fixtures};
use consular_ports::{MockAccessLogRepository, MockCitizenRepository, RepoError};
use std::sync::Mutex;
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

/// A log that keeps every batch it is given; its first append waits until the test
/// lets it commit when `held`, and its first `fail` appends fail (or, with `panics`,
/// panic).
struct TestLog {
    calls: AtomicUsize,
    commit_first: Semaphore,
    held: bool,
    fail: usize,
    panics: bool,
    batches: Mutex<Vec<Vec<AccessEntry>>>,
}

impl TestLog {
    fn new() -> Self {
        TestLog {
            calls: AtomicUsize::new(0),
            commit_first: Semaphore::new(0),
            held: false,
            fail: 0,
            panics: false,
            batches: Mutex::new(Vec::new()),
        }
    }

    fn calls(&self) -> usize {
        self.calls.load(Ordering::SeqCst)
    }

    fn sizes(&self) -> Vec<usize> {
        self.batches.lock().unwrap().iter().map(Vec::len).collect()
    }

    fn stored(&self) -> Vec<AccessEntry> {
        self.batches.lock().unwrap().concat()
    }
}

#[async_trait]
impl AccessLogRepository for TestLog {
    async fn append(&self, entries: &[AccessEntry]) -> Result<(), RepoError> {
        let call = self.calls.fetch_add(1, Ordering::SeqCst);
        if call == 0 && self.held {
            self.commit_first.acquire().await.map_err(|e| RepoError::Other(e.to_string()))?.forget();
        }
        if call < self.fail {
            assert!(!self.panics, "the adapter broke");
            return Err(RepoError::Unavailable("the database is down".into()));
        }
        self.batches.lock().unwrap().push(entries.to_vec());
        Ok(())
    }
    async fn list(&self, _: CitizenId, _: PageRequest) -> Result<Page<AccessEntry>, RepoError> {
        unreachable!("the recorder only appends")
    }
}

fn timing(linger_ms: u64, max_lag_ms: u64) -> RecorderTiming {
    RecorderTiming {
        linger: Duration::from_millis(linger_ms),
        max_lag: Duration::from_millis(max_lag_ms),
        retry: Duration::from_millis(10),
        ..RecorderTiming::default()
    }
}

#[tokio::test]
async fn reads_are_answered_at_once_and_their_entries_written_together_after_the_linger() {
    let log = Arc::new(TestLog::new());
    let recorder = AccessRecorder::with_timing(log.clone(), timing(50, 5_000));
    for _ in 0..3 {
        recorder.record(vec![entry(), entry()]).unwrap();
    }
    assert_eq!(log.calls(), 0, "nothing is written before the linger");
    until("the flush has written", || log.calls() == 1).await;
    assert_eq!(log.sizes(), [6], "one statement for the three reads");

    // Idle again: the next read schedules a flush of its own.
    recorder.record(vec![entry()]).unwrap();
    until("the next flush has written", || log.calls() == 2).await;
    assert_eq!(log.sizes(), [6, 1]);
}

#[tokio::test]
async fn reads_that_arrive_during_a_write_go_together_in_the_next() {
    let log = Arc::new(TestLog { held: true, ..TestLog::new() });
    let recorder = AccessRecorder::with_timing(log.clone(), timing(1, 5_000));
    recorder.record(vec![entry()]).unwrap();
    until("the first write is in its transaction", || log.calls() == 1).await;
    for _ in 0..4 {
        recorder.record(vec![entry(), entry()]).unwrap();
    }
    log.commit_first.add_permits(1);
    recorder.flushed().await.unwrap();
    assert_eq!(log.sizes(), [1, 8], "one statement for the first read, one for the four that queued");
}

#[tokio::test]
async fn flushed_waits_for_what_was_queued_without_the_linger() {
    let log = Arc::new(TestLog::new());
    let recorder = AccessRecorder::with_timing(log.clone(), timing(60_000, 120_000));
    recorder.flushed().await.unwrap();
    assert_eq!(log.calls(), 0, "nothing queued: nothing to wait for");
    let read = entry();
    recorder.record(vec![read.clone()]).unwrap();
    // A minute's linger, cut short by whoever waits for the queue (a log read back).
    tokio::time::timeout(Duration::from_secs(5), recorder.flushed()).await.unwrap().unwrap();
    assert_eq!(log.stored(), [read]);
}

#[tokio::test]
async fn a_failed_write_keeps_its_entries_first_in_line_and_is_retried() {
    let log = Arc::new(TestLog { held: true, fail: 2, ..TestLog::new() });
    let recorder = AccessRecorder::with_timing(log.clone(), timing(1, 5_000));
    let first = entry();
    recorder.record(vec![first.clone()]).unwrap();
    until("the first write is in its transaction", || log.calls() == 1).await;
    let later = entry();
    recorder.record(vec![later.clone()]).unwrap();
    log.commit_first.add_permits(1);
    recorder.flushed().await.unwrap();
    assert_eq!(log.calls(), 3, "two failures, then the write");
    assert_eq!(log.stored(), [first, later], "nothing lost, and in the order of the reads");
}

#[tokio::test]
async fn reads_fail_once_the_oldest_entry_waits_longer_than_max_lag() {
    let log = Arc::new(TestLog { fail: usize::MAX, ..TestLog::new() });
    let recorder = AccessRecorder::with_timing(log.clone(), timing(1, 100));
    recorder.record(vec![entry()]).unwrap();
    until("a write has failed", || log.calls() >= 1).await;
    // Within max_lag the reads still go out, their entries queued behind the failing one.
    recorder.record(vec![entry()]).unwrap();
    tokio::time::sleep(Duration::from_millis(150)).await;
    let refused = recorder.record(vec![entry()]);
    assert!(
        matches!(&refused, Err(ServiceError::Unavailable(why)) if why.contains("the database is down")),
        "{refused:?}"
    );
    let waited = recorder.flushed().await;
    assert!(matches!(waited, Err(ServiceError::Unavailable(_))), "{waited:?}");
    assert!(log.stored().is_empty());
    // A read that logs nothing (the citizen's own) is not refused.
    recorder.record(None).unwrap();
}

#[tokio::test]
async fn a_full_queue_refuses_reads() {
    let log = Arc::new(TestLog { held: true, ..TestLog::new() });
    let small = RecorderTiming { max_queued: 2, ..timing(1, 60_000) };
    let recorder = AccessRecorder::with_timing(log.clone(), small);
    recorder.record(vec![entry()]).unwrap();
    until("the first write is in its transaction", || log.calls() == 1).await;
    recorder.record(vec![entry(), entry()]).unwrap();
    assert!(matches!(recorder.record(vec![entry()]), Err(ServiceError::Unavailable(_))));
    log.commit_first.add_permits(1);
    recorder.flushed().await.unwrap();
    assert_eq!(log.sizes(), [1, 2]);
    recorder.record(vec![entry()]).unwrap();
}

#[tokio::test]
async fn a_flush_that_panics_keeps_its_entries_for_the_next() {
    let log = Arc::new(TestLog { fail: 1, panics: true, ..TestLog::new() });
    let recorder = AccessRecorder::with_timing(log.clone(), timing(1, 60_000));
    let first = entry();
    recorder.record(vec![first.clone()]).unwrap();
    until("the first write has panicked", || log.calls() == 1).await;
    let next = entry();
    recorder.record(vec![next.clone()]).unwrap();
    recorder.flushed().await.unwrap();
    assert_eq!(log.stored(), [first, next]);
}

#[tokio::test]
async fn drain_writes_what_is_queued_before_the_node_stops() {
    let log = Arc::new(TestLog::new());
    let recorder = AccessRecorder::with_timing(log.clone(), timing(60_000, 120_000));
    let read = entry();
    recorder.record(vec![read.clone()]).unwrap();
    recorder.drain(tokio::time::Instant::now() + Duration::from_secs(5)).await;
    assert_eq!(log.stored(), [read]);
}

#[tokio::test]
async fn nothing_to_record_writes_nothing() {
    let mut log = MockAccessLogRepository::new();
    log.expect_append().never();
    let recorder = AccessRecorder::new(Arc::new(log));
    recorder.record(None).unwrap();
    recorder.flushed().await.unwrap();
}

fn service(citizen: Citizen, listed: usize) -> AccessLogService {
    let mut citizens = MockCitizenRepository::new();
    citizens.expect_get().returning(move |id| Ok((id == citizen.id).then(|| citizen.clone())));
    let mut log = MockAccessLogRepository::new();
    log.expect_list().times(listed).returning(|_, _| Ok(Page { items: vec![entry()], next_after: None }));
    let log = Arc::new(log);
    let access = AccessRecorder::new(log.clone());
    AccessLogService::new(AccessLogPorts { log, citizens: Arc::new(citizens), access })
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
