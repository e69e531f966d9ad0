//! Client secrets and refresh tokens: 256-bit random values. They carry full entropy, so a
//! slow password hash would add cost without adding safety: a SHA-256 digest, compared in
//! constant time, is what is stored and checked.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

/// A fresh 256-bit secret, base64url without padding (43 characters).
pub fn generate() -> Result<String, String> {
    let mut bytes = [0u8; 32];
    aws_lc_rs::rand::fill(&mut bytes).map_err(|_| "the system random generator failed".to_owned())?;
    Ok(URL_SAFE_NO_PAD.encode(bytes))
}

pub fn hash(secret: &str) -> Vec<u8> {
    Sha256::digest(secret.as_bytes()).to_vec()
}

/// Constant-time comparison of a presented secret with a stored hash.
pub fn verify(presented: &str, stored_hash: &[u8]) -> bool {
    hash(presented).ct_eq(stored_hash).into()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_are_random_256_bit_values_checked_against_their_hash() {
        let a = generate().unwrap();
        let b = generate().unwrap();
        assert_ne!(a, b);
        assert_eq!(URL_SAFE_NO_PAD.decode(&a).unwrap().len(), 32);
        assert!(verify(&a, &hash(&a)));
        assert!(!verify(&b, &hash(&a)));
        assert!(!verify(&a, &[]));
    }
}
