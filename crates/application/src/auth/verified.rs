//! The tokens this node has verified: a bearer check costs an Ed25519 verification
//! (some 30 µs, the largest fixed cost of a request, docs/benchmarks.md), and a client
//! presents the same token for up to its lifetime. A token whose signature and claims were
//! checked once is remembered by its exact text, with what they said; the expiry is
//! checked again at every use against the same clock and leeway as the verification
//! (`jsonwebtoken`'s, the system time), revocation is checked at every use as before, and
//! so is the presence of the key that verified it (`TokenService::authenticate_bearer`): a
//! key deleted since takes its remembered tokens with it. Remembering changes no answer.
//!
//! Bounded: at most [`CAPACITY`] tokens (least recently and least frequently used go
//! first: `moka`), and each is dropped when it expires (its `exp` plus the leeway), so a
//! remembered token never outlives its expiry. Keyed by the whole token, never a part of
//! it: the signature covers the header and the claims, and a key of the signature alone
//! would let a token with other claims and a copied signature through.

use consular_domain::Principal;
use std::time::{Duration, Instant};
use uuid::Uuid;

/// How many verified tokens a node remembers: some 7 MB at most (a token of ~500 bytes
/// with its principal), more than the clients a node serves in 15 minutes.
pub const CAPACITY: u64 = 10_000;

/// What a token's verified claims say.
#[derive(Debug, Clone)]
pub(super) struct Verified {
    pub principal: Principal,
    pub jti: Uuid,
    /// `exp`, Unix seconds.
    pub exp: i64,
    /// The key that verified the signature.
    pub kid: String,
}

/// When an entry goes: at its token's expiry.
#[derive(Clone, Copy)]
struct AtExpiry {
    leeway: u64,
}

impl AtExpiry {
    /// Whether a token expiring at `exp` still passes the verification's expiry check
    /// (`jsonwebtoken`: expired when `exp < now − leeway`).
    fn valid(&self, exp: i64) -> bool {
        exp.saturating_add_unsigned(self.leeway) >= now()
    }
}

/// The system time in Unix seconds, as `jsonwebtoken` reads it.
fn now() -> i64 {
    i64::try_from(jsonwebtoken::get_current_timestamp()).unwrap_or(i64::MAX)
}

impl moka::Expiry<String, Verified> for AtExpiry {
    fn expire_after_create(&self, _: &String, verified: &Verified, _: Instant) -> Option<Duration> {
        let left = verified.exp.saturating_add_unsigned(self.leeway).saturating_sub(now());
        Some(Duration::from_secs(u64::try_from(left).unwrap_or(0)))
    }
}

/// The verified tokens of this node (see the module's documentation); clones share them.
#[derive(Clone)]
pub(super) struct VerifiedTokens {
    cache: moka::sync::Cache<String, Verified>,
    expiry: AtExpiry,
}

impl VerifiedTokens {
    /// `leeway`: the verification's, in seconds.
    pub fn new(leeway: u64) -> VerifiedTokens {
        let cache =
            moka::sync::Cache::builder().max_capacity(CAPACITY).expire_after(AtExpiry { leeway }).build();
        VerifiedTokens { cache, expiry: AtExpiry { leeway } }
    }

    /// What `token` said when it was verified, if it was and has not expired since.
    pub fn get(&self, token: &str) -> Option<Verified> {
        let verified = self.cache.get(token)?;
        if self.expiry.valid(verified.exp) {
            Some(verified)
        } else {
            self.cache.invalidate(token);
            None
        }
    }

    /// Remembers a token that has just been verified.
    pub fn insert(&self, token: &str, verified: Verified) {
        self.cache.insert(token.to_owned(), verified);
    }

    #[cfg(test)]
    pub fn len(&self) -> u64 {
        self.cache.run_pending_tasks();
        self.cache.entry_count()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use consular_domain::{ClientId, PrincipalId, PrincipalKind, Scope, ScopeSet, Subject};

    fn verified(exp: i64) -> Verified {
        Verified {
            principal: Principal {
                subject: Subject { kind: PrincipalKind::Admin, id: PrincipalId::new() },
                client_id: ClientId::new(),
                mission: None,
                scopes: ScopeSet::only(Scope::Admin),
                address: None,
                acting_for: None,
            },
            jti: Uuid::now_v7(),
            exp,
            kid: "k1".to_owned(),
        }
    }

    #[test]
    fn a_token_is_remembered_until_it_expires_and_not_after() {
        let tokens = VerifiedTokens::new(0);
        tokens.insert("a", verified(now() + 60));
        assert!(tokens.get("a").is_some());
        assert!(tokens.get("b").is_none(), "only the exact token");
        // Expired (with the leeway): not answered, and dropped.
        tokens.insert("old", verified(now() - 1));
        assert!(tokens.get("old").is_none());
        let with_leeway = VerifiedTokens::new(30);
        with_leeway.insert("late", verified(now() - 10));
        assert!(with_leeway.get("late").is_some(), "within the leeway, as the verification");
        with_leeway.insert("later", verified(now() - 31));
        assert!(with_leeway.get("later").is_none());
    }

    #[test]
    fn the_cache_is_bounded() {
        let tokens = VerifiedTokens::new(0);
        for i in 0..(CAPACITY + 500) {
            tokens.insert(&format!("token-{i}"), verified(now() + 600));
        }
        assert!(tokens.len() <= CAPACITY, "{} entries", tokens.len());
    }
}
