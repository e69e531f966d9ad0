//! The per-node view of revoked tokens. Checking a bearer must not cost a database round
//! trip, yet a token revoked on any node must be refused everywhere within a second: each
//! node keeps the revocations in memory and pulls new ones every [`SYNC_INTERVAL`]. When
//! the view is older than [`MAX_STALENESS`] (database slow or down), callers fall back to
//! asking the database, so a stale cache never lets a revoked token through.

use consular_domain::ClientId;
use consular_ports::{RepoError, Revocation, RevocationKind, TokenRepository};
use std::collections::{HashMap, HashSet};
use std::sync::RwLock;
use time::{Duration, OffsetDateTime};
use uuid::Uuid;

/// How often a node pulls new revocations.
pub const SYNC_INTERVAL: std::time::Duration = std::time::Duration::from_millis(250);
/// The oldest view the bearer check trusts.
pub const MAX_STALENESS: Duration = Duration::seconds(1);
/// Rows are fetched again for this long after they were first seen, so that a row
/// written by a transaction that committed late (or by a node whose clock lags) is
/// still picked up.
const OVERLAP: Duration = Duration::seconds(30);

#[derive(Default)]
struct State {
    tokens: HashMap<Uuid, OffsetDateTime>,
    clients: HashSet<ClientId>,
    /// The newest `created_at` seen; `None` before the first full load.
    high_water: Option<OffsetDateTime>,
    /// When the last successful sync started.
    synced_at: Option<OffsetDateTime>,
}

#[derive(Default)]
pub struct RevocationCache {
    state: RwLock<State>,
}

impl RevocationCache {
    pub fn new() -> Self {
        Self::default()
    }

    /// Pulls revocations from the database: all active ones the first time, then those
    /// recorded since the last pull (with an overlap). `now` is taken before the query.
    pub async fn sync(&self, repo: &dyn TokenRepository, now: OffsetDateTime) -> Result<(), RepoError> {
        let high_water = self.read(|s| s.high_water);
        let rows = match high_water {
            None => repo.active_revocations(now).await?,
            Some(mark) => repo.revocations_since(mark - OVERLAP).await?,
        };
        let mut state = self.state.write().unwrap_or_else(|e| e.into_inner());
        for revocation in &rows {
            apply(&mut state, revocation);
        }
        let newest = rows.iter().map(|r| r.created_at).max();
        state.high_water = match (state.high_water, newest) {
            (Some(a), Some(b)) => Some(a.max(b)),
            (a, b) => a.or(b).or(Some(now)),
        };
        state.tokens.retain(|_, expires_at| *expires_at > now - MAX_STALENESS);
        state.synced_at = Some(now);
        Ok(())
    }

    /// Records a revocation made by this node at once, before the next sync.
    pub fn record(&self, revocation: &Revocation) {
        let mut state = self.state.write().unwrap_or_else(|e| e.into_inner());
        apply(&mut state, revocation);
    }

    /// `Some(revoked)` when the view is fresh enough to answer; `None` when the caller
    /// must ask the database.
    pub fn check(&self, jti: Uuid, client: ClientId, now: OffsetDateTime) -> Option<bool> {
        self.read(|s| {
            let fresh = s.synced_at.is_some_and(|at| now - at <= MAX_STALENESS);
            fresh.then(|| s.tokens.contains_key(&jti) || s.clients.contains(&client))
        })
    }

    fn read<T>(&self, f: impl FnOnce(&State) -> T) -> T {
        f(&self.state.read().unwrap_or_else(|e| e.into_inner()))
    }
}

fn apply(state: &mut State, revocation: &Revocation) {
    match revocation.kind {
        RevocationKind::AccessToken { jti, expires_at } => {
            state.tokens.insert(jti, expires_at);
        }
        RevocationKind::Client { client_id } => {
            state.clients.insert(client_id);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use consular_ports::MockTokenRepository;

    fn at(seconds: i64) -> OffsetDateTime {
        OffsetDateTime::UNIX_EPOCH + Duration::seconds(seconds)
    }

    fn token_revocation(jti: Uuid, created: i64) -> Revocation {
        Revocation {
            id: Uuid::now_v7(),
            kind: RevocationKind::AccessToken { jti, expires_at: at(1_000) },
            created_at: at(created),
        }
    }

    #[tokio::test]
    async fn a_never_synced_cache_defers_to_the_database() {
        assert_eq!(RevocationCache::new().check(Uuid::now_v7(), ClientId::new(), at(0)), None);
    }

    #[tokio::test]
    async fn the_first_sync_loads_everything_then_only_news_with_an_overlap() {
        let old = Uuid::now_v7();
        let new = Uuid::now_v7();
        let client = ClientId::new();
        let mut repo = MockTokenRepository::new();
        repo.expect_active_revocations().times(1).returning(move |_| Ok(vec![token_revocation(old, 100)]));
        repo.expect_revocations_since().withf(|since| *since == at(100) - OVERLAP).times(1).returning(
            move |_| {
                Ok(vec![
                    token_revocation(new, 110),
                    Revocation {
                        id: Uuid::now_v7(),
                        kind: RevocationKind::Client { client_id: client },
                        created_at: at(111),
                    },
                ])
            },
        );
        let cache = RevocationCache::new();
        cache.sync(&repo, at(105)).await.unwrap();
        assert_eq!(cache.check(old, ClientId::new(), at(105)), Some(true));
        assert_eq!(cache.check(new, ClientId::new(), at(105)), Some(false));
        cache.sync(&repo, at(112)).await.unwrap();
        assert_eq!(cache.check(new, ClientId::new(), at(112)), Some(true));
        assert_eq!(cache.check(Uuid::now_v7(), client, at(112)), Some(true));
    }

    #[tokio::test]
    async fn a_stale_view_answers_nothing() {
        let mut repo = MockTokenRepository::new();
        repo.expect_active_revocations().returning(|_| Ok(vec![]));
        let cache = RevocationCache::new();
        cache.sync(&repo, at(10)).await.unwrap();
        assert_eq!(cache.check(Uuid::now_v7(), ClientId::new(), at(11)), Some(false));
        assert_eq!(cache.check(Uuid::now_v7(), ClientId::new(), at(12)), None);
    }

    #[tokio::test]
    async fn local_revocations_apply_before_the_next_sync() {
        let mut repo = MockTokenRepository::new();
        repo.expect_active_revocations().returning(|_| Ok(vec![]));
        let cache = RevocationCache::new();
        cache.sync(&repo, at(10)).await.unwrap();
        let jti = Uuid::now_v7();
        cache.record(&token_revocation(jti, 10));
        assert_eq!(cache.check(jti, ClientId::new(), at(10)), Some(true));
    }
}
