//! The Ed25519 key set that signs access tokens, as one node holds it in memory. Keys live
//! in the database so every node signs and verifies with the same set
//! ([`SigningKeys`](super::signing::SigningKeys) loads and refreshes it); the newest usable
//! key signs (see [`rotation::signer`]), all verify, and the JWKS publishes them all.

use super::rotation;
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use consular_ports::RepoError;
use jsonwebtoken::jwk::{
    AlgorithmParameters, CommonParameters, EllipticCurve, Jwk, JwkSet, KeyAlgorithm, OctetKeyPairParameters,
    OctetKeyPairType, PublicKeyUse,
};
use jsonwebtoken::{DecodingKey, EncodingKey};
use std::collections::HashMap;
use time::OffsetDateTime;

#[derive(Debug, thiserror::Error)]
pub enum KeyError {
    #[error(transparent)]
    Repo(#[from] RepoError),
    #[error("invalid signing key {0}")]
    Invalid(String),
    #[error("key generation failed")]
    Generation,
    #[error(transparent)]
    Kek(#[from] super::kek::KekError),
    /// A sealed key and no KEK to open it.
    #[error(
        "signing key {0} is encrypted but no key_encryption_key (or key_encryption_key_file) is configured"
    )]
    NoKek(String),
}

/// A key pair in clear, as generated or opened.
#[derive(Clone)]
pub struct OpenedKey {
    pub kid: String,
    /// PKCS#8 DER of the private key.
    pub pkcs8: Vec<u8>,
    /// The raw 32-byte public key.
    pub public_key: Vec<u8>,
    pub created_at: OffsetDateTime,
}

impl std::fmt::Debug for OpenedKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OpenedKey").field("kid", &self.kid).field("created_at", &self.created_at).finish()
    }
}

impl OpenedKey {
    /// A fresh key pair created at `now`.
    pub fn generate(now: OffsetDateTime) -> Result<OpenedKey, KeyError> {
        use aws_lc_rs::signature::{Ed25519KeyPair, KeyPair};
        let rng = aws_lc_rs::rand::SystemRandom::new();
        let pkcs8 = Ed25519KeyPair::generate_pkcs8(&rng).map_err(|_| KeyError::Generation)?;
        let pair = Ed25519KeyPair::from_pkcs8(pkcs8.as_ref()).map_err(|_| KeyError::Generation)?;
        let public_key = pair.public_key().as_ref().to_vec();
        // A digest of the public key: stable and unique.
        let kid =
            URL_SAFE_NO_PAD.encode(&crate::auth::secrets::hash(&URL_SAFE_NO_PAD.encode(&public_key))[..16]);
        Ok(OpenedKey { kid, pkcs8: pkcs8.as_ref().to_vec(), public_key, created_at: now })
    }

    /// Checks that the private key parses and belongs to the public key stored beside it
    /// (a row whose halves were mixed up, or bytes that are not a key, stop the load).
    pub fn check(&self) -> Result<(), KeyError> {
        use aws_lc_rs::signature::{Ed25519KeyPair, KeyPair};
        let pair = Ed25519KeyPair::from_pkcs8(&self.pkcs8).map_err(|_| {
            KeyError::Invalid(format!("{}: the private key is not an Ed25519 PKCS#8 key", self.kid))
        })?;
        if pair.public_key().as_ref() != self.public_key.as_slice() {
            return Err(KeyError::Invalid(format!(
                "{}: the private key does not match the public key",
                self.kid
            )));
        }
        Ok(())
    }
}

struct Entry {
    kid: String,
    created_at: OffsetDateTime,
    usable_from: OffsetDateTime,
    signing: EncodingKey,
}

pub struct KeySet {
    /// Newest first.
    entries: Vec<Entry>,
    verifying: HashMap<String, DecodingKey>,
    jwks: JwkSet,
}

impl KeySet {
    /// Builds the set from opened keys, newest first, each with the instant this node may
    /// start signing with it.
    pub fn new(keys: &[(OpenedKey, OffsetDateTime)]) -> Result<KeySet, KeyError> {
        if keys.is_empty() {
            return Err(KeyError::Invalid("none stored".into()));
        }
        let mut verifying = HashMap::new();
        let mut entries = Vec::new();
        let mut jwks = Vec::new();
        for (key, usable_from) in keys {
            let x = URL_SAFE_NO_PAD.encode(&key.public_key);
            let decoding = DecodingKey::from_ed_components(&x)
                .map_err(|e| KeyError::Invalid(format!("{}: {e}", key.kid)))?;
            verifying.insert(key.kid.clone(), decoding);
            entries.push(Entry {
                kid: key.kid.clone(),
                created_at: key.created_at,
                usable_from: *usable_from,
                signing: EncodingKey::from_ed_der(&key.pkcs8),
            });
            jwks.push(Jwk {
                common: CommonParameters {
                    public_key_use: Some(PublicKeyUse::Signature),
                    key_algorithm: Some(KeyAlgorithm::EdDSA),
                    key_id: Some(key.kid.clone()),
                    ..Default::default()
                },
                algorithm: AlgorithmParameters::OctetKeyPair(OctetKeyPairParameters {
                    key_type: OctetKeyPairType::OctetKeyPair,
                    curve: EllipticCurve::Ed25519,
                    x,
                }),
            });
        }
        Ok(KeySet { entries, verifying, jwks: JwkSet { keys: jwks } })
    }

    /// A key set that is not stored anywhere (tests, tools): one key, signing at once.
    pub fn generate_ephemeral() -> Result<KeySet, KeyError> {
        let key = OpenedKey::generate(OffsetDateTime::now_utc())?;
        let usable_from = key.created_at;
        KeySet::new(&[(key, usable_from)])
    }

    /// The kid and key that sign at `now`.
    pub fn signing(&self, now: OffsetDateTime) -> (&str, &EncodingKey) {
        let entry = &self.entries[rotation::signer(self.entries.iter().map(|e| e.usable_from), now)];
        (&entry.kid, &entry.signing)
    }

    pub fn verifying(&self, kid: &str) -> Option<&DecodingKey> {
        self.verifying.get(kid)
    }

    /// `(kid, created_at)` of every key, newest first.
    pub fn keys(&self) -> impl Iterator<Item = (&str, OffsetDateTime)> {
        self.entries.iter().map(|e| (e.kid.as_str(), e.created_at))
    }

    /// When this node may start signing with `kid`.
    pub fn usable_from(&self, kid: &str) -> Option<OffsetDateTime> {
        self.entries.iter().find(|e| e.kid == kid).map(|e| e.usable_from)
    }

    /// The public keys as published at `/.well-known/jwks.json`.
    pub fn jwks(&self) -> &JwkSet {
        &self.jwks
    }
}
