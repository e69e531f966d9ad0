//! A node's signing keys over their life (docs/architecture.md "Signing keys: rotation
//! and retirement"): loaded at start (the first key created, keys stored in clear sealed
//! under the KEK), refreshed with the revocations every
//! [`SYNC_INTERVAL`](super::revocation::SYNC_INTERVAL) (a kid list compared, the keys
//! reloaded only when it changed), rotated on demand or when the newest key is older than
//! the rotation period, and retired once no unexpired token can carry them.

use super::kek::{self, KeyEncryptionKey, Unreadable};
use super::keys::{KeyError, KeySet, OpenedKey};
use super::rotation::{ACTIVATION_DELAY, KeyPolicy};
use consular_ports::{Clock, KeyProtection, SigningKeyRecord, SigningKeyRepository};
use std::sync::{Arc, RwLock};
use time::OffsetDateTime;

/// One stored key as an operator sees it (`consular keys list`): never private material.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyInfo {
    pub kid: String,
    pub created_at: OffsetDateTime,
    pub protection: KeyProtection,
    /// When it stops verifying and is deleted; `None` for the newest key.
    pub retires_at: Option<OffsetDateTime>,
}

/// What [`SigningKeys::rotate`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Rotation {
    /// The new key, stored; every node signs with it within seconds.
    Rotated { kid: String },
    /// Another node (or command) rotated at the same moment: its key is the new one.
    Concurrent,
}

struct Store {
    repo: Arc<dyn SigningKeyRepository>,
    clock: Arc<dyn Clock>,
    kek: Option<KeyEncryptionKey>,
    policy: KeyPolicy,
}

pub struct SigningKeys {
    current: RwLock<Arc<KeySet>>,
    /// `None` for a set kept in memory only ([`SigningKeys::ephemeral`]).
    store: Option<Store>,
}

impl Store {
    /// `key` as it is stored: sealed when there is a KEK.
    fn record(&self, key: &OpenedKey) -> Result<SigningKeyRecord, KeyError> {
        let (private_key, protection) = kek::protect(self.kek.as_ref(), &key.kid, &key.pkcs8)?;
        Ok(SigningKeyRecord {
            kid: key.kid.clone(),
            private_key,
            protection,
            public_key: key.public_key.clone(),
            created_at: key.created_at,
        })
    }

    /// The key pair of a stored record. A key stored in clear is sealed in its row on the
    /// way when there is a KEK (keys written by an earlier version, or by a node without
    /// one).
    async fn open(&self, record: &SigningKeyRecord) -> Result<OpenedKey, KeyError> {
        let revealed = kek::reveal(self.kek.as_ref(), &record.kid, &record.private_key, record.protection)
            .map_err(|e| match e {
                Unreadable::NoKek => KeyError::NoKek(record.kid.clone()),
                Unreadable::Kek(e) => KeyError::Kek(e),
            })?;
        let key = OpenedKey {
            kid: record.kid.clone(),
            pkcs8: revealed.plaintext,
            public_key: record.public_key.clone(),
            created_at: record.created_at,
        };
        key.check()?;
        if let Some(sealed) = revealed.sealed
            && self.repo.protect(&key.kid, &sealed, KeyProtection::Aes256Gcm).await?
        {
            tracing::info!(kid = %key.kid, "signing key stored in clear is now encrypted at rest");
        }
        Ok(key)
    }

    /// Every stored key, opened, each with the instant this node may sign with it:
    /// `usable_from` for keys already known, else `fresh(created_at)`.
    async fn load(
        &self,
        usable_from: impl Fn(&str) -> Option<OffsetDateTime>,
        fresh: impl Fn(OffsetDateTime) -> OffsetDateTime,
    ) -> Result<KeySet, KeyError> {
        let mut keys = Vec::new();
        for record in self.repo.all().await? {
            let from = usable_from(&record.kid).unwrap_or_else(|| fresh(record.created_at));
            keys.push((self.open(&record).await?, from));
        }
        KeySet::new(&keys)
    }

    async fn rotate(&self) -> Result<Rotation, KeyError> {
        let newest = self.repo.kids().await?.into_iter().next();
        let key = OpenedKey::generate(self.clock.now())?;
        let record = self.record(&key)?;
        let stored = match &newest {
            Some(newest) => self.repo.insert_successor(&record, newest).await?,
            None => self.repo.insert_first(&record).await?,
        };
        Ok(if stored { Rotation::Rotated { kid: key.kid } } else { Rotation::Concurrent })
    }
}

impl SigningKeys {
    /// Loads the stored keys, creating the first one if there is none. Without a KEK the
    /// keys are stored in clear, which the log says once.
    pub async fn load(
        repo: Arc<dyn SigningKeyRepository>,
        clock: Arc<dyn Clock>,
        kek: Option<KeyEncryptionKey>,
        policy: KeyPolicy,
    ) -> Result<SigningKeys, KeyError> {
        if kek.is_none() {
            tracing::warn!(
                "no key_encryption_key configured: the private signing keys are stored in clear in the database"
            );
        }
        let store = Store { repo, clock, kek, policy };
        if store.repo.kids().await?.is_empty() {
            let first = OpenedKey::generate(store.clock.now())?;
            store.repo.insert_first(&store.record(&first)?).await?;
        }
        // Keys that exist when the node starts: usable once they are ACTIVATION_DELAY old
        // (by then every node that runs has them).
        let set = store.load(|_| None, |created| created + ACTIVATION_DELAY).await?;
        Ok(SigningKeys { current: RwLock::new(Arc::new(set)), store: Some(store) })
    }

    /// A set kept in memory only (tests, tools): [`refresh`](Self::refresh) keeps it as it is.
    pub fn ephemeral(set: KeySet) -> SigningKeys {
        SigningKeys { current: RwLock::new(Arc::new(set)), store: None }
    }

    /// The keys in force on this node.
    pub fn current(&self) -> Arc<KeySet> {
        self.current.read().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// Picks up rotations and retirements made by any node (one cheap query when nothing
    /// changed), then retires the keys no token can need any more and rotates when the
    /// newest key has reached the rotation period.
    pub async fn refresh(&self) -> Result<(), KeyError> {
        let Some(store) = &self.store else { return Ok(()) };
        let stored = store.repo.kids().await?;
        let current = self.current();
        if !stored.iter().map(String::as_str).eq(current.keys().map(|(kid, _)| kid)) {
            let now = store.clock.now();
            // A key new to this node signs ACTIVATION_DELAY after this node saw it, whatever
            // the clocks say about its creation.
            let set = store
                .load(|kid| current.usable_from(kid), |created| created.max(now) + ACTIVATION_DELAY)
                .await?;
            *self.current.write().unwrap_or_else(|e| e.into_inner()) = Arc::new(set);
            return Ok(());
        }
        let now = store.clock.now();
        let keys: Vec<(&str, OffsetDateTime)> = current.keys().collect();
        let retirable: Vec<String> =
            store.policy.retirable(&keys, now).into_iter().map(str::to_owned).collect();
        if !retirable.is_empty() {
            let retired = store.repo.retire(&retirable).await?;
            if retired > 0 {
                tracing::info!(kids = ?retirable, "signing keys retired: every token they signed has expired");
            }
        }
        if let Some((_, newest_created)) = keys.first()
            && store.policy.rotation_due(*newest_created, now)
            && let Rotation::Rotated { kid } = store.rotate().await?
        {
            tracing::info!(%kid, "signing key rotated (signing_key_rotation_days)");
        }
        Ok(())
    }

    /// Stores a new key that every node starts signing with within seconds (`consular
    /// keys rotate`); the previous ones keep verifying until they are retired.
    pub async fn rotate(&self) -> Result<Rotation, KeyError> {
        match &self.store {
            Some(store) => store.rotate().await,
            None => Err(KeyError::Invalid("an in-memory key set cannot be rotated".into())),
        }
    }

    /// Every stored key, newest first, with when it retires (`consular keys list`).
    pub async fn list(&self) -> Result<Vec<KeyInfo>, KeyError> {
        let Some(store) = &self.store else { return Ok(Vec::new()) };
        let records = store.repo.all().await?;
        let successors = std::iter::once(None).chain(records.iter().map(|r| Some(r.created_at)));
        Ok(records
            .iter()
            .zip(successors)
            .map(|(record, successor)| KeyInfo {
                kid: record.kid.clone(),
                created_at: record.created_at,
                protection: record.protection,
                retires_at: successor.map(|created| store.policy.retires_at(created)),
            })
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::auth::rotation::RETIREMENT_MARGIN;
    use consular_ports::MockSigningKeyRepository;
    use std::sync::Mutex;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use time::Duration;

    /// The `signing_keys` table, newest first, shared by the "nodes" of a test.
    #[derive(Clone, Default)]
    struct Table {
        rows: Arc<Mutex<Vec<SigningKeyRecord>>>,
        full_reads: Arc<AtomicUsize>,
    }

    impl Table {
        fn rows(&self) -> Vec<SigningKeyRecord> {
            self.rows.lock().unwrap().clone()
        }

        fn kids(&self) -> Vec<String> {
            self.rows().into_iter().map(|r| r.kid).collect()
        }

        fn repo(&self) -> Arc<dyn SigningKeyRepository> {
            let mut repo = MockSigningKeyRepository::new();
            let t = self.clone();
            repo.expect_all().returning(move || {
                t.full_reads.fetch_add(1, Ordering::SeqCst);
                Ok(t.rows())
            });
            let t = self.clone();
            repo.expect_kids().returning(move || Ok(t.kids()));
            let t = self.clone();
            repo.expect_insert_first().returning(move |key| {
                let mut rows = t.rows.lock().unwrap();
                Ok(rows.is_empty() && {
                    rows.push(key.clone());
                    true
                })
            });
            let t = self.clone();
            repo.expect_insert_successor().returning(move |key, newest| {
                let mut rows = t.rows.lock().unwrap();
                Ok(rows.first().is_some_and(|r| r.kid == newest) && {
                    rows.insert(0, key.clone());
                    true
                })
            });
            let t = self.clone();
            repo.expect_protect().returning(move |kid, bytes, protection| {
                let mut rows = t.rows.lock().unwrap();
                let row = rows.iter_mut().find(|r| r.kid == kid && r.protection == KeyProtection::Clear);
                Ok(row
                    .map(|row| {
                        row.private_key = bytes.to_vec();
                        row.protection = protection;
                    })
                    .is_some())
            });
            let t = self.clone();
            repo.expect_retire().returning(move |kids| {
                let mut rows = t.rows.lock().unwrap();
                let before = rows.len();
                let newest = rows.first().map(|r| r.kid.clone());
                rows.retain(|r| Some(&r.kid) == newest.as_ref() || !kids.contains(&r.kid));
                Ok((before - rows.len()) as u64)
            });
            Arc::new(repo)
        }
    }

    struct TestClock(Mutex<OffsetDateTime>);

    impl Clock for TestClock {
        fn now(&self) -> OffsetDateTime {
            *self.0.lock().unwrap()
        }
    }

    impl TestClock {
        fn start() -> Arc<TestClock> {
            Arc::new(TestClock(Mutex::new(OffsetDateTime::UNIX_EPOCH + Duration::days(20_000))))
        }

        fn advance(&self, by: Duration) {
            *self.0.lock().unwrap() += by;
        }
    }

    fn policy(rotation_period: Option<Duration>) -> KeyPolicy {
        KeyPolicy { access_ttl: Duration::minutes(15), leeway: Duration::seconds(30), rotation_period }
    }

    fn kek_text() -> String {
        KeyEncryptionKey::generate_base64().unwrap()
    }

    fn kek(text: &str) -> Option<KeyEncryptionKey> {
        Some(KeyEncryptionKey::from_base64(text).unwrap())
    }

    async fn node(table: &Table, clock: &Arc<TestClock>, kek_text: &str, policy: KeyPolicy) -> SigningKeys {
        SigningKeys::load(table.repo(), clock.clone(), kek(kek_text), policy).await.unwrap()
    }

    fn signer(keys: &SigningKeys, clock: &TestClock) -> String {
        keys.current().signing(clock.now()).0.to_owned()
    }

    fn jwks_kids(keys: &SigningKeys) -> Vec<String> {
        keys.current().jwks().keys.iter().filter_map(|k| k.common.key_id.clone()).collect()
    }

    /// The 32-byte Ed25519 seed inside a PKCS#8 document (after `04 20`).
    fn seed(pkcs8: &[u8]) -> Vec<u8> {
        let at = pkcs8.windows(2).position(|w| w == [0x04, 0x20]).unwrap();
        pkcs8[at + 2..at + 34].to_vec()
    }

    #[tokio::test]
    async fn the_first_start_stores_one_sealed_key_that_opens_with_the_kek_only() {
        let (table, clock, text) = (Table::default(), TestClock::start(), kek_text());
        let keys = node(&table, &clock, &text, policy(None)).await;
        let rows = table.rows();
        assert_eq!(rows.len(), 1);
        let row = &rows[0];
        assert_eq!(row.protection, KeyProtection::Aes256Gcm);
        assert_eq!(signer(&keys, &clock), row.kid);
        assert_eq!(jwks_kids(&keys), [row.kid.as_str()]);
        let pkcs8 = kek(&text).unwrap().open(&row.kid, &row.private_key).unwrap();
        assert!(!row.private_key.windows(32).any(|w| w == seed(&pkcs8)), "the seed is stored in clear");

        // Another node with the same KEK opens it; another KEK, or none, stops the start.
        assert_eq!(signer(&node(&table, &clock, &text, policy(None)).await, &clock), row.kid);
        let wrong = SigningKeys::load(table.repo(), clock.clone(), kek(&kek_text()), policy(None)).await;
        assert_eq!(
            wrong.err().map(|e| e.to_string()),
            Some(format!("cannot decrypt signing key {}: wrong key_encryption_key?", row.kid))
        );
        let none = SigningKeys::load(table.repo(), clock.clone(), None, policy(None)).await;
        assert!(none.err().is_some_and(
            |e| e.to_string().contains(&row.kid) && e.to_string().contains("no key_encryption_key")
        ),);
    }

    #[tokio::test]
    async fn a_tampered_sealed_key_stops_the_start() {
        let (table, clock, text) = (Table::default(), TestClock::start(), kek_text());
        node(&table, &clock, &text, policy(None)).await;
        table.rows.lock().unwrap()[0].private_key[20] ^= 0x40;
        let error =
            SigningKeys::load(table.repo(), clock.clone(), kek(&text), policy(None)).await.err().unwrap();
        assert!(error.to_string().starts_with("cannot decrypt signing key"), "{error}");
    }

    #[tokio::test]
    async fn keys_stored_in_clear_are_sealed_once_a_kek_is_configured() {
        let (table, clock) = (Table::default(), TestClock::start());
        // An earlier version (or a node without a KEK) stored its key in clear.
        let clear = SigningKeys::load(table.repo(), clock.clone(), None, policy(None)).await.unwrap();
        let row = table.rows()[0].clone();
        assert_eq!(row.protection, KeyProtection::Clear);
        // What was stored is the PKCS#8 document itself.
        let pair = OpenedKey {
            kid: row.kid.clone(),
            pkcs8: row.private_key.clone(),
            public_key: row.public_key.clone(),
            created_at: row.created_at,
        };
        pair.check().unwrap();
        let text = kek_text();
        let sealed = node(&table, &clock, &text, policy(None)).await;
        assert_eq!(signer(&sealed, &clock), signer(&clear, &clock));
        let stored = table.rows()[0].clone();
        assert_eq!(stored.protection, KeyProtection::Aes256Gcm);
        assert_eq!(kek(&text).unwrap().open(&row.kid, &stored.private_key).unwrap(), row.private_key);
        assert!(!stored.private_key.windows(32).any(|w| w == seed(&row.private_key)));
    }

    #[tokio::test]
    async fn a_mismatched_key_pair_is_refused() {
        let (table, clock) = (Table::default(), TestClock::start());
        SigningKeys::load(table.repo(), clock.clone(), None, policy(None)).await.unwrap();
        table.rows.lock().unwrap()[0].public_key = OpenedKey::generate(clock.now()).unwrap().public_key;
        let error = SigningKeys::load(table.repo(), clock.clone(), None, policy(None)).await.err().unwrap();
        assert!(error.to_string().contains("does not match the public key"), "{error}");
    }

    #[tokio::test]
    async fn another_node_verifies_a_new_key_before_anyone_signs_with_it() {
        let (table, clock, text) = (Table::default(), TestClock::start(), kek_text());
        let a = node(&table, &clock, &text, policy(None)).await;
        let b = node(&table, &clock, &text, policy(None)).await;
        let old = signer(&a, &clock);
        clock.advance(Duration::minutes(10));
        let Rotation::Rotated { kid: new } = a.rotate().await.unwrap() else { panic!("not rotated") };
        assert_eq!(table.kids(), [new.clone(), old.clone()]);
        // Nothing changes on a node before its refresh; the refresh reloads the keys.
        assert_eq!(jwks_kids(&b), [old.as_str()]);
        let reads = table.full_reads.load(Ordering::SeqCst);
        b.refresh().await.unwrap();
        a.refresh().await.unwrap();
        assert_eq!(table.full_reads.load(Ordering::SeqCst), reads + 2);
        for node in [&a, &b] {
            assert_eq!(jwks_kids(node), [new.clone(), old.clone()]);
            assert!(node.current().verifying(&new).is_some());
            // The old key signs for ACTIVATION_DELAY more, then the new one.
            assert_eq!(signer(node, &clock), old);
        }
        clock.advance(ACTIVATION_DELAY);
        assert_eq!(signer(&a, &clock), new);
        assert_eq!(signer(&b, &clock), new);
        // Nothing changed: one cheap query, no reload.
        b.refresh().await.unwrap();
        assert_eq!(table.full_reads.load(Ordering::SeqCst), reads + 2);
    }

    #[tokio::test]
    async fn a_node_started_during_a_rotation_signs_with_the_key_everyone_has() {
        let (table, clock, text) = (Table::default(), TestClock::start(), kek_text());
        let a = node(&table, &clock, &text, policy(None)).await;
        let old = signer(&a, &clock);
        clock.advance(Duration::hours(1));
        a.rotate().await.unwrap();
        let late = node(&table, &clock, &text, policy(None)).await;
        assert_eq!(signer(&late, &clock), old);
        clock.advance(ACTIVATION_DELAY);
        assert_ne!(signer(&late, &clock), old);
    }

    #[tokio::test]
    async fn the_old_key_is_retired_once_its_last_token_has_expired() {
        let (table, clock, text) = (Table::default(), TestClock::start(), kek_text());
        let a = node(&table, &clock, &text, policy(None)).await;
        let b = node(&table, &clock, &text, policy(None)).await;
        let old = signer(&a, &clock);
        a.rotate().await.unwrap();
        let new = table.kids()[0].clone();
        let rotated_at = clock.now();
        a.refresh().await.unwrap();
        b.refresh().await.unwrap();
        let list = a.list().await.unwrap();
        assert_eq!(list.iter().map(|k| k.kid.as_str()).collect::<Vec<_>>(), [new.as_str(), old.as_str()]);
        let retires_at =
            rotated_at + ACTIVATION_DELAY + Duration::minutes(15) + Duration::seconds(30) + RETIREMENT_MARGIN;
        assert_eq!(list[0].retires_at, None);
        assert_eq!(list[1].retires_at, Some(retires_at));
        assert!(list.iter().all(|k| k.protection == KeyProtection::Aes256Gcm));

        // Until then the old key keeps verifying everywhere.
        clock.advance(retires_at - clock.now() - Duration::seconds(1));
        a.refresh().await.unwrap();
        b.refresh().await.unwrap();
        assert_eq!(table.kids(), [new.clone(), old.clone()]);
        assert!(b.current().verifying(&old).is_some());

        clock.advance(Duration::seconds(1));
        a.refresh().await.unwrap();
        assert_eq!(table.kids(), [new.as_str()]);
        // Every node drops it at its next refresh.
        b.refresh().await.unwrap();
        assert_eq!(jwks_kids(&b), [new.as_str()]);
        assert!(b.current().verifying(&old).is_none());
    }

    #[tokio::test]
    async fn a_due_rotation_makes_one_key_however_many_nodes_notice() {
        let (table, clock, text) = (Table::default(), TestClock::start(), kek_text());
        let every_day = policy(Some(Duration::days(1)));
        let a = node(&table, &clock, &text, every_day).await;
        let b = node(&table, &clock, &text, every_day).await;
        clock.advance(Duration::days(1) - Duration::seconds(1));
        a.refresh().await.unwrap();
        b.refresh().await.unwrap();
        assert_eq!(table.kids().len(), 1);
        clock.advance(Duration::seconds(1));
        a.refresh().await.unwrap();
        b.refresh().await.unwrap();
        assert_eq!(table.kids().len(), 2);
        // Two nodes that both still see the old key as newest: the guarded insert lets one through.
        let c = node(&table, &clock, &text, every_day).await;
        let d = node(&table, &clock, &text, every_day).await;
        clock.advance(Duration::days(1));
        let stale = table.kids()[0].clone();
        assert!(matches!(c.rotate().await.unwrap(), Rotation::Rotated { .. }));
        assert_ne!(table.kids()[0], stale);
        let racing = OpenedKey::generate(clock.now()).unwrap();
        let record = d.store.as_ref().unwrap().record(&racing).unwrap();
        assert!(!table.repo().insert_successor(&record, &stale).await.unwrap());
        assert_eq!(table.kids().len(), 3);
    }

    #[tokio::test]
    async fn an_in_memory_set_neither_refreshes_nor_rotates() {
        let keys = SigningKeys::ephemeral(KeySet::generate_ephemeral().unwrap());
        let kid = keys.current().signing(OffsetDateTime::now_utc()).0.to_owned();
        keys.refresh().await.unwrap();
        assert_eq!(jwks_kids(&keys), [kid]);
        assert!(keys.rotate().await.is_err());
        assert_eq!(keys.list().await.unwrap(), vec![]);
    }
}
