//! This node's memory of availability pages (docs/appointments.md "Release morning"):
//! release-morning clients poll the same few questions many times a second, and each
//! answer is kept for a short time-to-live (1 s by default, `availability_cache_ms`) so
//! that the database answers each question about once per node and per TTL.
//!
//! - **Keyed by the question as asked**: mission, service type, `from` and `to` as given
//!   (absent stays absent: "from now"), the page size and the cursor. The access check
//!   is never part of it: the use case asks the policy for every caller before it looks
//!   here, so a page is only ever handed to a caller who may read it.
//! - **A booking on this node is seen at once**: the use cases that take or free seats,
//!   change slots or change a mission (its time zone is in every page; the missions'
//!   service shares this node's cache) call [`AvailabilityCache::invalidate`], which
//!   moves the mission's generation. An entry remembers the generation read before its
//!   query; one older than the mission's is never served. So a query that overlapped
//!   the write cannot store a page from before it for later readers: it was stamped
//!   with the old generation. Other nodes see a change when their entry expires: within
//!   the TTL.
//! - **One query per question at a time**: when an entry is missing, the first reader
//!   queries and the readers arriving meanwhile wait for its answer instead of sending
//!   the same query (a reader that still finds nothing after waiting, because the first
//!   failed or an invalidation came, queries on its own, without queuing behind others).
//! - **Bounded**: at most [`CAPACITY`] pages (moka; least recently and least frequently
//!   used go first), and the generations are a fixed array that missions share by hash
//!   (two missions sharing a generation only invalidate each other's pages).
//!
//! Each page carries the fingerprint of its content (SHA-256 of the slots, the cursor to
//! the next page and the time zone), which the HTTP edge sends as a strong `ETag`.

use consular_domain::{MissionId, ServiceTypeId, Slot};
use consular_ports::{StartPage, StartPageRequest};
use futures_util::lock::Mutex;
use sha2::{Digest, Sha256};
use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;
use time::OffsetDateTime;
use uuid::Uuid;

/// How long a page is served from memory unless configured otherwise: the most a node
/// lags behind a change made on another node.
pub const DEFAULT_TTL: Duration = Duration::from_secs(1);

/// How many pages a node keeps at most: a page of 100 slots is some 40 KB, 20 slots
/// (the default page) some 8 KB.
pub const CAPACITY: u64 = 2_000;

/// How many generations the missions share.
const GENERATIONS: usize = 256;

/// What an availability page depends on besides the clock: the question as asked.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct AvailabilityKey {
    pub mission_id: MissionId,
    pub service_type_id: ServiceTypeId,
    pub from: Option<OffsetDateTime>,
    pub to: Option<OffsetDateTime>,
    pub limit: u16,
    /// The cursor's start and id.
    pub after: Option<(OffsetDateTime, Uuid)>,
}

impl AvailabilityKey {
    pub fn new(
        mission_id: MissionId,
        service_type_id: ServiceTypeId,
        from: Option<OffsetDateTime>,
        to: Option<OffsetDateTime>,
        page: StartPageRequest,
    ) -> AvailabilityKey {
        AvailabilityKey {
            mission_id,
            service_type_id,
            from,
            to,
            limit: page.limit,
            after: page.after.map(|c| (c.starts_at, c.id)),
        }
    }
}

/// A page of available slots, its mission's time zone, and the fingerprint of both.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AvailablePage {
    pub slots: StartPage<Slot>,
    pub timezone: String,
    /// 32 hex digits: the first 128 bits of the SHA-256 of the page's content. Equal
    /// pages have equal fingerprints on every node; a changed seat count, slot, cursor or
    /// time zone changes it.
    pub fingerprint: String,
}

impl AvailablePage {
    pub fn new(slots: StartPage<Slot>, timezone: String) -> Result<AvailablePage, serde_json::Error> {
        let content = serde_json::to_vec(&(&timezone, &slots.items, &slots.next_after))?;
        let digest = Sha256::digest(&content);
        let fingerprint = digest.iter().take(16).map(|b| format!("{b:02x}")).collect();
        Ok(AvailablePage { slots, timezone, fingerprint })
    }
}

#[derive(Clone)]
struct Entry {
    /// The mission's generation read before the page's query.
    generation: u64,
    page: Arc<AvailablePage>,
}

/// The availability pages of this node (see the module's documentation); clones share
/// them.
#[derive(Clone)]
pub struct AvailabilityCache {
    /// `None` when the TTL is zero: every read queries.
    entries: Option<moka::sync::Cache<AvailabilityKey, Entry>>,
    /// The queries in flight, one lock per question.
    fills: Option<moka::sync::Cache<AvailabilityKey, Arc<Mutex<()>>>>,
    generations: Arc<[AtomicU64]>,
}

impl AvailabilityCache {
    /// Pages kept for `ttl`; none at all when it is zero.
    pub fn new(ttl: Duration) -> AvailabilityCache {
        let enabled = !ttl.is_zero();
        let entries =
            enabled.then(|| moka::sync::Cache::builder().max_capacity(CAPACITY).time_to_live(ttl).build());
        let fills = enabled.then(|| {
            moka::sync::Cache::builder()
                .max_capacity(CAPACITY)
                .time_to_idle(ttl.max(Duration::from_secs(10)))
                .build()
        });
        let generations = (0..GENERATIONS).map(|_| AtomicU64::new(0)).collect();
        AvailabilityCache { entries, fills, generations }
    }

    fn generation_of(&self, mission: MissionId) -> &AtomicU64 {
        let (_, low) = mission.0.as_u64_pair();
        // The low bits of a UUIDv7 are random; the remainder is below GENERATIONS.
        let index = usize::try_from(low % GENERATIONS as u64).unwrap_or(0);
        &self.generations[index]
    }

    /// Whatever this node served of `mission` is not served again: the next read of each
    /// of its questions queries.
    pub fn invalidate(&self, mission: MissionId) {
        self.generation_of(mission).fetch_add(1, Ordering::AcqRel);
    }

    fn current(&self, key: &AvailabilityKey) -> Option<Arc<AvailablePage>> {
        let entry = self.entries.as_ref()?.get(key)?;
        let generation = self.generation_of(key.mission_id).load(Ordering::Acquire);
        (entry.generation == generation).then_some(entry.page)
    }

    /// The page of `key` from memory, or from `fill` (which reads the database), kept
    /// for the TTL when it succeeds. Errors are not kept.
    pub async fn get_or_fill<E, F, Fut>(&self, key: AvailabilityKey, fill: F) -> Result<Arc<AvailablePage>, E>
    where
        F: FnOnce() -> Fut,
        Fut: Future<Output = Result<AvailablePage, E>>,
    {
        let (Some(entries), Some(fills)) = (&self.entries, &self.fills) else {
            return fill().await.map(Arc::new);
        };
        if let Some(page) = self.current(&key) {
            return Ok(page);
        }
        let lock = fills.get_with(key, || Arc::new(Mutex::new(())));
        let _leader = match lock.try_lock() {
            Some(guard) => Some(guard),
            None => {
                // Another reader is querying this question: wait for its answer.
                drop(lock.lock().await);
                None
            }
        };
        if let Some(page) = self.current(&key) {
            return Ok(page);
        }
        let generation = self.generation_of(key.mission_id).load(Ordering::Acquire);
        let page = Arc::new(fill().await?);
        entries.insert(key, Entry { generation, page: page.clone() });
        Ok(page)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use consular_domain::{SlotId, fixtures};
    use std::sync::atomic::AtomicUsize;

    fn key(mission: MissionId) -> AvailabilityKey {
        AvailabilityKey::new(
            mission,
            ServiceTypeId(Uuid::from_u128(9)),
            None,
            None,
            StartPageRequest::default(),
        )
    }

    fn page(booked: u32) -> AvailablePage {
        let now = OffsetDateTime::UNIX_EPOCH;
        let slot = Slot {
            id: SlotId(Uuid::from_u128(5)),
            booked,
            ..fixtures::slot(MissionId(Uuid::from_u128(1)), now, now)
        };
        AvailablePage::new(StartPage { items: vec![slot], next_after: None }, "Europe/Paris".into()).unwrap()
    }

    /// `cache.get_or_fill(key)` with a fill that counts its calls and answers `answer`.
    async fn read(
        cache: &AvailabilityCache,
        key: AvailabilityKey,
        calls: &AtomicUsize,
        answer: u32,
    ) -> String {
        let filled = cache
            .get_or_fill(key, || async {
                calls.fetch_add(1, Ordering::SeqCst);
                Ok::<_, ()>(page(answer))
            })
            .await
            .unwrap();
        filled.fingerprint.clone()
    }

    #[test]
    fn the_fingerprint_follows_the_content() {
        assert_eq!(page(1).fingerprint, page(1).fingerprint);
        assert_eq!(page(1).fingerprint.len(), 32);
        assert_ne!(page(1).fingerprint, page(2).fingerprint, "a seat taken");
        let elsewhere = AvailablePage::new(page(1).slots, "America/New_York".into()).unwrap();
        assert_ne!(page(1).fingerprint, elsewhere.fingerprint, "another time zone");
    }

    #[tokio::test]
    async fn a_page_is_kept_until_its_mission_changes_and_errors_are_not_kept() {
        let cache = AvailabilityCache::new(Duration::from_secs(60));
        let (here, there) = (MissionId(Uuid::from_u128(1)), MissionId(Uuid::from_u128(2)));
        let calls = AtomicUsize::new(0);
        let first = read(&cache, key(here), &calls, 1).await;
        assert_eq!(read(&cache, key(here), &calls, 2).await, first, "from memory");
        assert_eq!(calls.load(Ordering::SeqCst), 1);
        read(&cache, key(there), &calls, 1).await;
        assert_eq!(calls.load(Ordering::SeqCst), 2, "another question");

        cache.invalidate(here);
        assert_ne!(read(&cache, key(here), &calls, 2).await, first, "read again after a change");
        assert_eq!(calls.load(Ordering::SeqCst), 3);
        read(&cache, key(there), &calls, 1).await;
        assert_eq!(calls.load(Ordering::SeqCst), 3, "another mission's page is still served");

        let failed = cache
            .get_or_fill(key(MissionId(Uuid::from_u128(3))), || async { Err::<AvailablePage, _>("down") });
        assert_eq!(failed.await.unwrap_err(), "down");
        read(&cache, key(MissionId(Uuid::from_u128(3))), &calls, 1).await;
        assert_eq!(calls.load(Ordering::SeqCst), 4, "a failure is not kept");
    }

    #[tokio::test]
    async fn a_page_read_across_a_change_is_not_served_after_it() {
        let cache = AvailabilityCache::new(Duration::from_secs(60));
        let here = MissionId(Uuid::from_u128(1));
        // The booking commits and invalidates while the query is running.
        let stale = cache
            .get_or_fill(key(here), || async {
                cache.invalidate(here);
                Ok::<_, ()>(page(1))
            })
            .await
            .unwrap();
        let calls = AtomicUsize::new(0);
        assert_ne!(read(&cache, key(here), &calls, 2).await, stale.fingerprint);
        assert_eq!(calls.load(Ordering::SeqCst), 1, "the page read across the change was not kept");
    }

    #[tokio::test]
    async fn readers_of_one_question_share_one_query() {
        let cache = AvailabilityCache::new(Duration::from_secs(60));
        let calls = AtomicUsize::new(0);
        let readers = (0..20).map(|_| {
            cache.get_or_fill(key(MissionId(Uuid::from_u128(1))), || async {
                calls.fetch_add(1, Ordering::SeqCst);
                // The query takes a while: the other readers arrive meanwhile.
                for _ in 0..5 {
                    tokio::task::yield_now().await;
                }
                Ok::<_, ()>(page(1))
            })
        });
        let pages = futures_util::future::join_all(readers).await;
        assert!(pages.iter().all(|p| p.as_ref().unwrap().fingerprint == page(1).fingerprint));
        assert_eq!(calls.load(Ordering::SeqCst), 1, "the others waited for the first one's answer");
    }

    #[tokio::test]
    async fn a_zero_ttl_keeps_nothing() {
        let cache = AvailabilityCache::new(Duration::ZERO);
        let calls = AtomicUsize::new(0);
        read(&cache, key(MissionId(Uuid::from_u128(1))), &calls, 1).await;
        read(&cache, key(MissionId(Uuid::from_u128(1))), &calls, 1).await;
        assert_eq!(calls.load(Ordering::SeqCst), 2);
    }

    #[test]
    fn the_cache_is_bounded() {
        let cache = AvailabilityCache::new(Duration::from_secs(60));
        let entries = cache.entries.as_ref().unwrap();
        for i in 0..(CAPACITY + 500) {
            let key = key(MissionId(Uuid::from_u128(u128::from(i))));
            entries.insert(key, Entry { generation: 0, page: Arc::new(page(1)) });
        }
        entries.run_pending_tasks();
        assert!(entries.entry_count() <= CAPACITY, "{}", entries.entry_count());
    }
}
