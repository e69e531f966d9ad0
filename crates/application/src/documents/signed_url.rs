//! The service's own signed download URLs, for blob stores that cannot presign (the local
//! file system; S3 presigns its own). A URL names a document, the version it was issued
//! for and an expiry, and carries an HMAC-SHA256 over the three under a key every node
//! shares (docs/api.md "Downloads"). Checking it needs no bearer token, no database
//! and no storage: a tampered or expired URL is refused before anything is read.

use aws_lc_rs::hmac;
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use consular_domain::DocumentId;
use time::OffsetDateTime;

/// The shortest key accepted: HMAC-SHA256's block size is 64 bytes; 32 random bytes are
/// the usual floor for a SHA-256 MAC key.
pub const MIN_KEY_LEN: usize = 32;

/// Domain separation: a MAC made for another purpose with the same key never verifies here.
const CONTEXT: &str = "consular-document-download-v1";

/// What a valid signed URL grants: reading `document` as it was at `version`, until
/// `expires_at`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DownloadGrant {
    pub document: DocumentId,
    pub version: i64,
    pub expires_at: OffsetDateTime,
}

/// Why a signed URL is refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum SignatureError {
    /// The signature does not match: altered, or made with another key.
    #[error("the download URL's signature is not valid")]
    Invalid,
    /// The signature matches but the URL's time is up.
    #[error("the download URL has expired")]
    Expired,
}

/// What a signed URL grants, as the message its MAC covers and the instant it ends. Each
/// kind of grant starts its message with a context of its own, so that a URL made for
/// one kind (a document) never verifies as another (an export's archive).
pub trait Grant {
    fn message(&self) -> String;
    fn expires_at(&self) -> OffsetDateTime;
}

impl Grant for DownloadGrant {
    fn message(&self) -> String {
        format!("{CONTEXT}\n{}\n{}\n{}", self.document, self.version, self.expires_at.unix_timestamp())
    }

    fn expires_at(&self) -> OffsetDateTime {
        self.expires_at
    }
}

/// Signs and checks download URLs with one HMAC-SHA256 key.
pub struct UrlSigner {
    key: hmac::Key,
}

impl std::fmt::Debug for UrlSigner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("UrlSigner { key: <redacted> }")
    }
}

impl UrlSigner {
    /// A signer over `key`, which must be at least [`MIN_KEY_LEN`] bytes.
    pub fn new(key: &[u8]) -> Result<UrlSigner, String> {
        if key.len() < MIN_KEY_LEN {
            return Err(format!("a download URL key needs at least {MIN_KEY_LEN} bytes, got {}", key.len()));
        }
        Ok(UrlSigner { key: hmac::Key::new(hmac::HMAC_SHA256, key) })
    }

    /// The signature of `grant`, URL-safe base64 without padding.
    pub fn sign(&self, grant: &impl Grant) -> String {
        URL_SAFE_NO_PAD.encode(hmac::sign(&self.key, grant.message().as_bytes()).as_ref())
    }

    /// Checks `signature` for `grant` (in constant time), then the expiry against `now`.
    /// The expiry is checked only after the signature, so an attacker learns nothing
    /// from the answer about URLs they did not get from the service.
    pub fn verify(
        &self,
        grant: &impl Grant,
        signature: &str,
        now: OffsetDateTime,
    ) -> Result<(), SignatureError> {
        let tag = URL_SAFE_NO_PAD.decode(signature).map_err(|_| SignatureError::Invalid)?;
        hmac::verify(&self.key, grant.message().as_bytes(), &tag).map_err(|_| SignatureError::Invalid)?;
        if now >= grant.expires_at() { Err(SignatureError::Expired) } else { Ok(()) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use time::Duration;

    fn signer(fill: u8) -> UrlSigner {
        UrlSigner::new(&[fill; 32]).unwrap()
    }

    fn grant() -> DownloadGrant {
        DownloadGrant {
            document: DocumentId::new(),
            version: 3,
            expires_at: OffsetDateTime::UNIX_EPOCH + Duration::minutes(5),
        }
    }

    #[test]
    fn a_signed_grant_verifies_until_it_expires() {
        let (signer, grant) = (signer(7), grant());
        let signature = signer.sign(&grant);
        let before = grant.expires_at - Duration::seconds(1);
        assert_eq!(signer.verify(&grant, &signature, before), Ok(()));
        assert_eq!(signer.verify(&grant, &signature, grant.expires_at), Err(SignatureError::Expired));
    }

    #[test]
    fn any_change_to_the_grant_or_the_signature_or_the_key_is_refused() {
        let (signer, grant) = (signer(7), grant());
        let signature = signer.sign(&grant);
        let now = OffsetDateTime::UNIX_EPOCH;
        let altered = [
            DownloadGrant { document: DocumentId::new(), ..grant },
            DownloadGrant { version: grant.version + 1, ..grant },
            DownloadGrant { expires_at: grant.expires_at + Duration::hours(1), ..grant },
        ];
        for other in altered {
            assert_eq!(signer.verify(&other, &signature, now), Err(SignatureError::Invalid), "{other:?}");
        }
        let mut flipped = signature.clone().into_bytes();
        flipped[0] = if flipped[0] == b'A' { b'B' } else { b'A' };
        let flipped = String::from_utf8(flipped).unwrap();
        assert_eq!(signer.verify(&grant, &flipped, now), Err(SignatureError::Invalid));
        assert_eq!(signer.verify(&grant, "not base64!", now), Err(SignatureError::Invalid));
        assert_eq!(signer.verify(&grant, "", now), Err(SignatureError::Invalid));
        assert_eq!(self::signer(8).verify(&grant, &signature, now), Err(SignatureError::Invalid));
    }

    #[test]
    fn short_keys_are_refused() {
        assert!(UrlSigner::new(&[1; MIN_KEY_LEN - 1]).is_err());
        assert!(UrlSigner::new(&[1; MIN_KEY_LEN]).is_ok());
    }
}
