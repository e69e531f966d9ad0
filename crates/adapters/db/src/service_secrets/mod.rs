//! Secrets every node shares: the `service_secrets` table and [`ServiceSecretRepository`].

use crate::failure::Failure;
use crate::shared::repository;
use consular_ports::{KeyProtection, ServiceSecretRepository, StoredSecret};
use time::OffsetDateTime;

diesel::table! {
    use diesel::sql_types::*;
    use crate::shared::sql_types::PortableTimestamp;

    service_secrets (name) {
        name -> Text,
        value -> Binary,
        created_at -> PortableTimestamp,
        // How `value` is stored: 'clear' or 'aes-256-gcm' (migration 000015).
        protection -> Text,
    }
}

/// The unique constraints of `service_secrets` (see `crate::error`).
pub(crate) const UNIQUE_CONSTRAINTS: &[(&str, &str)] = &[("service_secrets_pkey", "service_secrets.name")];

repository! {
    impl ServiceSecretRepository for Database => service_secrets {
        fn get_or_insert(name: &str, candidate: &StoredSecret, now: OffsetDateTime) -> StoredSecret;
        fn protect(name: &str, sealed: &[u8]) -> bool;
    }
}

/// A stored value and its protection, read back as the port's [`StoredSecret`].
pub(crate) fn stored(name: &str, value: Vec<u8>, protection: &str) -> Result<StoredSecret, Failure> {
    let protection = KeyProtection::parse(protection).ok_or_else(|| {
        Failure::Corrupt(format!("service secret {name}: unknown protection `{protection}`"))
    })?;
    Ok(StoredSecret { value, protection })
}
