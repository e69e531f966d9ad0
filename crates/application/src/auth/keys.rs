//! The Ed25519 key set that signs access tokens. Keys live in the database so every node
//! signs and verifies with the same set; the first node to start creates the first key.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use consular_ports::{Clock, RepoError, SigningKeyRecord, SigningKeyRepository};
use jsonwebtoken::jwk::{
    AlgorithmParameters, CommonParameters, EllipticCurve, Jwk, JwkSet, KeyAlgorithm, OctetKeyPairParameters,
    OctetKeyPairType, PublicKeyUse,
};
use jsonwebtoken::{DecodingKey, EncodingKey};
use std::collections::HashMap;

pub struct KeySet {
    signing_kid: String,
    signing: EncodingKey,
    verifying: HashMap<String, DecodingKey>,
    jwks: JwkSet,
}

#[derive(Debug, thiserror::Error)]
pub enum KeyError {
    #[error(transparent)]
    Repo(#[from] RepoError),
    #[error("invalid signing key {0}")]
    Invalid(String),
    #[error("key generation failed")]
    Generation,
}

fn generate(now: time::OffsetDateTime) -> Result<SigningKeyRecord, KeyError> {
    use aws_lc_rs::signature::{Ed25519KeyPair, KeyPair};
    let rng = aws_lc_rs::rand::SystemRandom::new();
    let pkcs8 = Ed25519KeyPair::generate_pkcs8(&rng).map_err(|_| KeyError::Generation)?;
    let pair = Ed25519KeyPair::from_pkcs8(pkcs8.as_ref()).map_err(|_| KeyError::Generation)?;
    let public_key = pair.public_key().as_ref().to_vec();
    // The kid is the RFC 7638 thumbprint-like digest of the public key: stable and unique.
    let kid = URL_SAFE_NO_PAD.encode(&crate::auth::secrets::hash(&URL_SAFE_NO_PAD.encode(&public_key))[..16]);
    Ok(SigningKeyRecord { kid, private_pkcs8: pkcs8.as_ref().to_vec(), public_key, created_at: now })
}

impl KeySet {
    /// Loads the stored keys, creating the first one if there is none.
    pub async fn load_or_create(
        repo: &dyn SigningKeyRepository,
        clock: &dyn Clock,
    ) -> Result<KeySet, KeyError> {
        let mut records = repo.all().await?;
        if records.is_empty() {
            repo.insert_first(&generate(clock.now())?).await?;
            records = repo.all().await?;
        }
        KeySet::from_records(&records)
    }

    /// Builds the set from stored keys, newest first; the newest signs.
    pub fn from_records(records: &[SigningKeyRecord]) -> Result<KeySet, KeyError> {
        let newest = records.first().ok_or_else(|| KeyError::Invalid("none stored".into()))?;
        let mut verifying = HashMap::new();
        let mut keys = Vec::new();
        for record in records {
            let x = URL_SAFE_NO_PAD.encode(&record.public_key);
            let key = DecodingKey::from_ed_components(&x)
                .map_err(|e| KeyError::Invalid(format!("{}: {e}", record.kid)))?;
            verifying.insert(record.kid.clone(), key);
            keys.push(Jwk {
                common: CommonParameters {
                    public_key_use: Some(PublicKeyUse::Signature),
                    key_algorithm: Some(KeyAlgorithm::EdDSA),
                    key_id: Some(record.kid.clone()),
                    ..Default::default()
                },
                algorithm: AlgorithmParameters::OctetKeyPair(OctetKeyPairParameters {
                    key_type: OctetKeyPairType::OctetKeyPair,
                    curve: EllipticCurve::Ed25519,
                    x,
                }),
            });
        }
        Ok(KeySet {
            signing_kid: newest.kid.clone(),
            signing: EncodingKey::from_ed_der(&newest.private_pkcs8),
            verifying,
            jwks: JwkSet { keys },
        })
    }

    /// A key set that is not stored anywhere (tests, tools).
    pub fn generate_ephemeral() -> Result<KeySet, KeyError> {
        KeySet::from_records(&[generate(time::OffsetDateTime::now_utc())?])
    }

    pub fn signing(&self) -> (&str, &EncodingKey) {
        (&self.signing_kid, &self.signing)
    }

    pub fn verifying(&self, kid: &str) -> Option<&DecodingKey> {
        self.verifying.get(kid)
    }

    /// The public keys as published at `/.well-known/jwks.json`.
    pub fn jwks(&self) -> &JwkSet {
        &self.jwks
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use consular_ports::{MockSigningKeyRepository, SystemClock};
    use std::sync::{Arc, Mutex};

    #[tokio::test]
    async fn the_first_start_creates_and_stores_one_key() {
        let stored: Arc<Mutex<Vec<SigningKeyRecord>>> = Arc::default();
        let mut repo = MockSigningKeyRepository::new();
        let read = stored.clone();
        repo.expect_all().times(2).returning(move || Ok(read.lock().unwrap().clone()));
        let write = stored.clone();
        repo.expect_insert_first().times(1).returning(move |key| {
            write.lock().unwrap().push(key.clone());
            Ok(true)
        });
        let keys = KeySet::load_or_create(&repo, &SystemClock).await.unwrap();
        let kid = keys.signing().0.to_owned();
        assert_eq!(stored.lock().unwrap()[0].kid, kid);
        assert!(keys.verifying(&kid).is_some());
        assert_eq!(keys.jwks().keys.len(), 1);
        assert_eq!(keys.jwks().keys[0].common.key_id.as_deref(), Some(kid.as_str()));
    }
}
