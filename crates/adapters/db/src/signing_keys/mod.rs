//! Token signing keys shared by all nodes: the `signing_keys` table, its row, and
//! [`SigningKeyRepository`]. The private key is opaque bytes here: the application seals
//! and opens it (docs/operations.md "Signing keys").

use crate::failure::Failure;
use crate::shared::repository;
use crate::shared::sql_types::DbTime;
use consular_ports::{KeyProtection, SigningKeyRecord, SigningKeyRepository};
use diesel::prelude::*;

diesel::table! {
    use diesel::sql_types::*;
    use crate::shared::sql_types::PortableTimestamp;

    signing_keys (kid) {
        kid -> Text,
        // The column keeps the name it had when keys were always clear PKCS#8 (an
        // additive migration); it holds the key as `private_key_protection` says.
        #[sql_name = "private_pkcs8"]
        private_key -> Binary,
        public_key -> Binary,
        created_at -> PortableTimestamp,
        private_key_protection -> Text,
    }
}

/// The unique constraints of `signing_keys` (see `crate::error`).
pub(crate) const UNIQUE_CONSTRAINTS: &[(&str, &str)] = &[("signing_keys_pkey", "signing_keys.kid")];

repository! {
    impl SigningKeyRepository for Database => signing_keys {
        fn all() -> Vec<SigningKeyRecord>;
        fn kids() -> Vec<String>;
        fn insert_first(key: &SigningKeyRecord) -> bool;
        fn insert_successor(key: &SigningKeyRecord, newest_kid: &str) -> bool;
        fn protect(kid: &str, private_key: &[u8], protection: KeyProtection) -> bool;
        fn retire(kids: &[String]) -> u64;
    }
}

#[derive(Debug, Clone, Queryable, Selectable, Insertable)]
#[diesel(table_name = signing_keys)]
#[diesel(treat_none_as_default_value = false)]
pub(crate) struct SigningKeyRow {
    pub kid: String,
    pub private_key: Vec<u8>,
    pub public_key: Vec<u8>,
    pub created_at: DbTime,
    pub private_key_protection: String,
}

impl From<&SigningKeyRecord> for SigningKeyRow {
    fn from(k: &SigningKeyRecord) -> Self {
        SigningKeyRow {
            kid: k.kid.clone(),
            private_key: k.private_key.clone(),
            public_key: k.public_key.clone(),
            created_at: DbTime(k.created_at),
            private_key_protection: k.protection.as_str().to_owned(),
        }
    }
}

impl TryFrom<SigningKeyRow> for SigningKeyRecord {
    type Error = Failure;

    fn try_from(row: SigningKeyRow) -> Result<Self, Failure> {
        let protection = KeyProtection::parse(&row.private_key_protection).ok_or_else(|| {
            Failure::Corrupt(format!(
                "signing key {}: unknown private_key_protection `{}`",
                row.kid, row.private_key_protection
            ))
        })?;
        Ok(SigningKeyRecord {
            kid: row.kid,
            private_key: row.private_key,
            protection,
            public_key: row.public_key,
            created_at: row.created_at.0,
        })
    }
}
