//! Secrets every node shares: the `service_secrets` table and [`ServiceSecretRepository`].

use crate::shared::repository;
use consular_ports::ServiceSecretRepository;
use time::OffsetDateTime;

diesel::table! {
    use diesel::sql_types::*;
    use crate::shared::sql_types::PortableTimestamp;

    service_secrets (name) {
        name -> Text,
        value -> Binary,
        created_at -> PortableTimestamp,
    }
}

/// The unique constraints of `service_secrets` (see `crate::error`).
pub(crate) const UNIQUE_CONSTRAINTS: &[(&str, &str)] = &[("service_secrets_pkey", "service_secrets.name")];

repository! {
    impl ServiceSecretRepository for Database => service_secrets {
        fn get_or_insert(name: &str, candidate: &[u8], now: OffsetDateTime) -> Vec<u8>;
    }
}
