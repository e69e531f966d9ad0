//! A node's signing keys over their life (docs/architecture.md "Signing keys: rotation
//! and retirement"): loaded at start (the first key created, keys stored in clear sealed
//! under the KEK), refreshed with the revocations every
//! [`SYNC_INTERVAL`](super::revocation::SYNC_INTERVAL) (a kid list compared, the keys
//! reloaded only when it changed), rotated on demand or when the newest key is older than
//! the rotation period, and retired once no unexpired token can carry them.

use super::kek::KeyEncryptionKey;
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
        let (private_key, protection) = match &self.kek {
            Some(kek) => (kek.seal(&key.kid, &key.pkcs8)?, KeyProtection::Aes256Gcm),
            None => (key.pkcs8.clone(), KeyProtection::Clear),
        };
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
        let pkcs8 = match (record.protection, &self.kek) {
            (KeyProtection::Aes256Gcm, Some(kek)) => kek.open(&record.kid, &record.private_key)?,
            (KeyProtection::Aes256Gcm, None) => return Err(KeyError::NoKek(record.kid.clone())),
            (KeyProtection::Clear, _) => record.private_key.clone(),
        };
        let key = OpenedKey {
            kid: record.kid.clone(),
            pkcs8,
            public_key: record.public_key.clone(),
            created_at: record.created_at,
        };
        key.check()?;
        if let (KeyProtection::Clear, Some(kek)) = (record.protection, &self.kek) {
            let sealed = kek.seal(&key.kid, &key.pkcs8)?;
            if self.repo.protect(&key.kid, &sealed, KeyProtection::Aes256Gcm).await? {
                tracing::info!(kid = %key.kid, "signing key stored in clear is now encrypted at rest");
            }
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
