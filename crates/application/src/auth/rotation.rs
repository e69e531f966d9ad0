//! When a signing key starts signing, when it may be retired, and when the next rotation
//! is due: pure rules over key creation times (docs/architecture.md "Signing keys: rotation
//! and retirement").

use time::{Duration, OffsetDateTime};

/// A node starts signing with a key this long after it first saw it (and after the key's
/// creation). Every node reloads the keys within a
/// [`SYNC_INTERVAL`](super::revocation::SYNC_INTERVAL) (250 ms) of a rotation, so by the
/// time any node signs with a new key every healthy node can verify it: no node ever hands
/// out a token another node would refuse for want of its key.
pub const ACTIVATION_DELAY: Duration = Duration::seconds(2);

/// Slack added to a retired key's last possible use: nodes that reloaded late (a slow
/// database) and clocks that disagree a little.
pub const RETIREMENT_MARGIN: Duration = Duration::minutes(1);

/// The rules' settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KeyPolicy {
    /// The access tokens' lifetime: the longest a token signed by a key is accepted.
    pub access_ttl: Duration,
    /// The clock skew tolerated on `exp`.
    pub leeway: Duration,
    /// A new key once the newest is this old; `None`: only on demand.
    pub rotation_period: Option<Duration>,
}

impl KeyPolicy {
    /// How long a key is still needed after its successor was created: the successor
    /// starts signing everywhere within [`ACTIVATION_DELAY`] (plus a late reload, within the
    /// margin), and the last token the old key signed expires `access_ttl` later, accepted
    /// for `leeway` more.
    pub fn retention(&self) -> Duration {
        ACTIVATION_DELAY + self.access_ttl + self.leeway + RETIREMENT_MARGIN
    }

    /// When a key whose successor was created at `successor_created` is retired.
    pub fn retires_at(&self, successor_created: OffsetDateTime) -> OffsetDateTime {
        successor_created + self.retention()
    }

    /// Whether the newest key, created at `newest_created`, is due for replacement.
    pub fn rotation_due(&self, newest_created: OffsetDateTime, now: OffsetDateTime) -> bool {
        self.rotation_period.is_some_and(|period| newest_created + period <= now)
    }

    /// The kids of `keys` (newest first, with their creation times) that no unexpired
    /// token can have been signed with at `now`. The newest key is never among them.
    pub fn retirable<'a>(&self, keys: &[(&'a str, OffsetDateTime)], now: OffsetDateTime) -> Vec<&'a str> {
        keys.windows(2).filter(|pair| self.retires_at(pair[0].1) <= now).map(|pair| pair[1].0).collect()
    }
}

/// Which of the keys (given newest first by the instant each becomes usable on this node)
/// signs at `now`: the newest usable one; when none is usable yet (a first start, or a
/// node that started during a rotation), the oldest, which every node already has.
pub fn signer(usable_from: impl IntoIterator<Item = OffsetDateTime>, now: OffsetDateTime) -> usize {
    let mut oldest = 0;
    for (index, from) in usable_from.into_iter().enumerate() {
        if from <= now {
            return index;
        }
        oldest = index;
    }
    oldest
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(seconds: i64) -> OffsetDateTime {
        OffsetDateTime::UNIX_EPOCH + Duration::seconds(seconds)
    }

    fn policy(rotation_days: Option<i64>) -> KeyPolicy {
        KeyPolicy {
            access_ttl: Duration::minutes(15),
            leeway: Duration::seconds(30),
            rotation_period: rotation_days.map(Duration::days),
        }
    }

    #[test]
    fn a_key_is_kept_until_every_token_it_signed_has_expired() {
        let p = policy(None);
        // 2 s activation + 900 s tokens + 30 s leeway + 60 s margin.
        assert_eq!(p.retention(), Duration::seconds(992));
        let keys = [("k3", at(5_000)), ("k2", at(1_000)), ("k1", at(0))];
        // k1's successor k2 came at 1000.
        assert_eq!(p.retirable(&keys, at(1_991)), Vec::<&str>::new());
        assert_eq!(p.retirable(&keys, at(1_992)), ["k1"]);
        assert_eq!(p.retirable(&keys, at(5_991)), ["k1"]);
        assert_eq!(p.retirable(&keys, at(5_992)), ["k2", "k1"]);
        // The newest key is never retired, however old.
        assert_eq!(p.retirable(&keys[..1], at(1_000_000)), Vec::<&str>::new());
        assert_eq!(p.retirable(&[], at(0)), Vec::<&str>::new());
    }

    #[test]
    fn a_longer_token_lifetime_keeps_old_keys_longer() {
        let long = KeyPolicy { access_ttl: Duration::hours(24), ..policy(None) };
        let keys = [("k2", at(0)), ("k1", at(-10))];
        assert_eq!(long.retirable(&keys, at(86_400)), Vec::<&str>::new());
        assert_eq!(long.retires_at(at(0)), at(86_400 + 92));
        assert_eq!(long.retirable(&keys, at(86_492)), ["k1"]);
    }

    #[test]
    fn rotation_is_due_once_the_newest_key_is_as_old_as_the_period() {
        let day = 86_400;
        assert!(!policy(None).rotation_due(at(0), at(10_000 * day)));
        let p = policy(Some(90));
        assert!(!p.rotation_due(at(0), at(90 * day - 1)));
        assert!(p.rotation_due(at(0), at(90 * day)));
    }

    #[test]
    fn the_newest_usable_key_signs_else_the_oldest() {
        // Newest first: k3 usable from 20, k2 from 10, k1 from 0.
        let usable = [at(20), at(10), at(0)];
        assert_eq!(signer(usable, at(25)), 0);
        assert_eq!(signer(usable, at(15)), 1);
        assert_eq!(signer(usable, at(5)), 2);
        // Nothing usable yet: the oldest.
        assert_eq!(signer(usable, at(-5)), 2);
        assert_eq!(signer([at(100)], at(0)), 0);
    }
}
