//! The key-encryption key (KEK) that seals secrets at rest: the private signing keys and
//! the download-URL key (docs/operations.md "Signing keys", "Encryption at rest"), both
//! stored with [`protect`] and read back with [`reveal`]. AES-256-GCM from aws-lc-rs, the
//! library that already makes the Ed25519 keys. Each seal draws a fresh random 96-bit
//! nonce (a secret is sealed a handful of times in its life, far from the 2^32 messages a
//! random nonce allows), and the secret's name (a kid) is the associated data, so a
//! sealed value moved to another row does not open.

use aws_lc_rs::aead::{AES_256_GCM, Aad, NONCE_LEN, Nonce, RandomizedNonceKey};
use base64::Engine;
use base64::alphabet;
use base64::engine::{DecodePaddingMode, GeneralPurpose, GeneralPurposeConfig};
use consular_ports::KeyProtection;
use std::sync::Arc;

/// The KEK's length in bytes.
pub const KEK_LEN: usize = 32;

/// Cloning is cheap and shares the key: one KEK read at start serves every secret it
/// seals (the signing keys, the download-URL key).
#[derive(Clone)]
pub struct KeyEncryptionKey {
    key: Arc<RandomizedNonceKey>,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum KekError {
    /// The configured text is not a KEK; the message says why, without the text.
    #[error("{0}")]
    Malformed(String),
    /// Wrong key, altered bytes, or bytes sealed for another kid: GCM cannot tell which.
    #[error("cannot decrypt signing key {kid}: wrong key_encryption_key?")]
    Open { kid: String },
    #[error("encrypting a signing key failed")]
    Seal,
}

/// Base64 with or without padding, in the standard or the URL-safe alphabet: whatever
/// `openssl rand -base64 32` or `head -c 32 /dev/urandom | base64` gave the operator.
fn decode(text: &str) -> Option<Vec<u8>> {
    let config = GeneralPurposeConfig::new().with_decode_padding_mode(DecodePaddingMode::Indifferent);
    [alphabet::STANDARD, alphabet::URL_SAFE]
        .iter()
        .find_map(|alphabet| GeneralPurpose::new(alphabet, config).decode(text).ok())
}

impl KeyEncryptionKey {
    /// The KEK written as base64 of 32 bytes (surrounding white space, such as a file's
    /// final newline, is ignored).
    pub fn from_base64(text: &str) -> Result<KeyEncryptionKey, KekError> {
        let bytes = decode(text.trim())
            .ok_or_else(|| KekError::Malformed("must be base64 (of 32 random bytes)".into()))?;
        if bytes.len() != KEK_LEN {
            return Err(KekError::Malformed(format!(
                "must be the base64 of {KEK_LEN} bytes, not of {} bytes",
                bytes.len()
            )));
        }
        KeyEncryptionKey::from_bytes(&bytes)
    }

    fn from_bytes(bytes: &[u8]) -> Result<KeyEncryptionKey, KekError> {
        let key = RandomizedNonceKey::new(&AES_256_GCM, bytes)
            .map_err(|_| KekError::Malformed(format!("must be {KEK_LEN} bytes")))?;
        Ok(KeyEncryptionKey { key: Arc::new(key) })
    }

    /// A fresh random KEK, as base64 (for tests and tools).
    pub fn generate_base64() -> Result<String, KekError> {
        let mut bytes = [0u8; KEK_LEN];
        aws_lc_rs::rand::fill(&mut bytes).map_err(|_| KekError::Seal)?;
        Ok(base64::engine::general_purpose::STANDARD.encode(bytes))
    }

    /// `nonce ‖ ciphertext ‖ tag` of `plaintext`, bound to `kid`.
    pub fn seal(&self, kid: &str, plaintext: &[u8]) -> Result<Vec<u8>, KekError> {
        let mut in_out = plaintext.to_vec();
        let nonce = self
            .key
            .seal_in_place_append_tag(Aad::from(kid.as_bytes()), &mut in_out)
            .map_err(|_| KekError::Seal)?;
        let mut sealed = Vec::with_capacity(NONCE_LEN + in_out.len());
        sealed.extend_from_slice(nonce.as_ref());
        sealed.extend_from_slice(&in_out);
        Ok(sealed)
    }

    /// The plaintext of what [`seal`](Self::seal) made for `kid`.
    pub fn open(&self, kid: &str, sealed: &[u8]) -> Result<Vec<u8>, KekError> {
        let fail = || KekError::Open { kid: kid.to_owned() };
        if sealed.len() < NONCE_LEN + AES_256_GCM.tag_len() {
            return Err(fail());
        }
        let (nonce, ciphertext) = sealed.split_at(NONCE_LEN);
        let nonce = Nonce::try_assume_unique_for_key(nonce).map_err(|_| fail())?;
        let mut in_out = ciphertext.to_vec();
        let plaintext =
            self.key.open_in_place(nonce, Aad::from(kid.as_bytes()), &mut in_out).map_err(|_| fail())?;
        Ok(plaintext.to_vec())
    }
}

/// A secret as it is stored (`name` is the associated data): sealed when a KEK is
/// configured, else in clear. The signing keys and the download-URL key both go through
/// here and through [`reveal`].
pub fn protect(
    kek: Option<&KeyEncryptionKey>,
    name: &str,
    plaintext: &[u8],
) -> Result<(Vec<u8>, KeyProtection), KekError> {
    Ok(match kek {
        Some(kek) => (kek.seal(name, plaintext)?, KeyProtection::Aes256Gcm),
        None => (plaintext.to_vec(), KeyProtection::Clear),
    })
}

/// A stored secret in clear, with what to store in its place when it was found in clear
/// and a KEK is configured now (the caller seals its row in place).
pub struct Revealed {
    pub plaintext: Vec<u8>,
    pub sealed: Option<Vec<u8>>,
}

/// Why a stored secret cannot be read.
#[derive(Debug)]
pub enum Unreadable {
    /// Sealed, and no KEK is configured.
    NoKek,
    /// The wrong KEK or altered bytes (or a failure to seal one found in clear).
    Kek(KekError),
}

/// The plaintext of a secret stored under `protection`, as [`protect`] stored it.
pub fn reveal(
    kek: Option<&KeyEncryptionKey>,
    name: &str,
    stored: &[u8],
    protection: KeyProtection,
) -> Result<Revealed, Unreadable> {
    match (protection, kek) {
        (KeyProtection::Aes256Gcm, Some(kek)) => {
            Ok(Revealed { plaintext: kek.open(name, stored).map_err(Unreadable::Kek)?, sealed: None })
        }
        (KeyProtection::Aes256Gcm, None) => Err(Unreadable::NoKek),
        (KeyProtection::Clear, None) => Ok(Revealed { plaintext: stored.to_vec(), sealed: None }),
        (KeyProtection::Clear, Some(kek)) => Ok(Revealed {
            plaintext: stored.to_vec(),
            sealed: Some(kek.seal(name, stored).map_err(Unreadable::Kek)?),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kek() -> KeyEncryptionKey {
        KeyEncryptionKey::from_base64(&KeyEncryptionKey::generate_base64().unwrap()).unwrap()
    }

    #[test]
    fn a_sealed_key_opens_with_the_same_kek_and_kid_only() {
        let kek = kek();
        let sealed = kek.seal("kid-1", b"private key bytes").unwrap();
        assert_eq!(sealed.len(), NONCE_LEN + 17 + 16);
        assert!(!sealed.windows(17).any(|w| w == b"private key bytes"));
        assert_eq!(kek.open("kid-1", &sealed).unwrap(), b"private key bytes");
        // A fresh nonce each time: the same key sealed twice gives other bytes.
        assert_ne!(kek.seal("kid-1", b"private key bytes").unwrap(), sealed);
        assert_eq!(kek.open("kid-2", &sealed), Err(KekError::Open { kid: "kid-2".into() }));
    }

    #[test]
    fn a_wrong_kek_says_so_and_names_the_key() {
        let sealed = kek().seal("kid-1", b"secret").unwrap();
        let error = kek().open("kid-1", &sealed).unwrap_err();
        assert_eq!(error.to_string(), "cannot decrypt signing key kid-1: wrong key_encryption_key?");
    }

    #[test]
    fn tampered_or_truncated_ciphertext_is_refused() {
        let kek = kek();
        let sealed = kek.seal("kid-1", b"secret").unwrap();
        for at in [0, NONCE_LEN, sealed.len() - 1] {
            let mut tampered = sealed.clone();
            tampered[at] ^= 1;
            assert!(kek.open("kid-1", &tampered).is_err(), "byte {at}");
        }
        assert!(kek.open("kid-1", &sealed[..NONCE_LEN + 15]).is_err());
        assert!(kek.open("kid-1", &[]).is_err());
    }

    #[test]
    fn the_kek_is_base64_of_32_bytes_in_either_alphabet() {
        let bytes = [0xfbu8; 32];
        let standard = base64::engine::general_purpose::STANDARD.encode(bytes);
        let url_safe = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes);
        assert!(standard.contains('+') && url_safe.contains('-'));
        let sealed =
            KeyEncryptionKey::from_base64(&format!("{standard}\n")).unwrap().seal("k", b"x").unwrap();
        assert_eq!(KeyEncryptionKey::from_base64(&url_safe).unwrap().open("k", &sealed).unwrap(), b"x");
        let short = base64::engine::general_purpose::STANDARD.encode([1u8; 16]);
        assert_eq!(
            KeyEncryptionKey::from_base64(&short).err(),
            Some(KekError::Malformed("must be the base64 of 32 bytes, not of 16 bytes".into()))
        );
        assert!(matches!(KeyEncryptionKey::from_base64("not base64!"), Err(KekError::Malformed(_))));
    }
}
