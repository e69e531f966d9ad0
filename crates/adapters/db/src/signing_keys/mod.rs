//! Token signing keys shared by all nodes: the `signing_keys` table, its row, and
//! [`SigningKeyRepository`].

use crate::shared::repository;
use crate::shared::sql_types::DbTime;
use consular_ports::{SigningKeyRecord, SigningKeyRepository};
use diesel::prelude::*;

diesel::table! {
    use diesel::sql_types::*;
    use crate::shared::sql_types::PortableTimestamp;

    signing_keys (kid) {
        kid -> Text,
        private_pkcs8 -> Binary,
        public_key -> Binary,
        created_at -> PortableTimestamp,
    }
}

/// The unique constraints of `signing_keys` (see `crate::error`).
pub(crate) const UNIQUE_CONSTRAINTS: &[(&str, &str)] = &[("signing_keys_pkey", "signing_keys.kid")];

repository! {
    impl SigningKeyRepository for Database => signing_keys {
        fn all() -> Vec<SigningKeyRecord>;
        fn insert_first(key: &SigningKeyRecord) -> bool;
    }
}

#[derive(Debug, Clone, Queryable, Selectable, Insertable)]
#[diesel(table_name = signing_keys)]
#[diesel(treat_none_as_default_value = false)]
pub(crate) struct SigningKeyRow {
    pub kid: String,
    pub private_pkcs8: Vec<u8>,
    pub public_key: Vec<u8>,
    pub created_at: DbTime,
}

impl From<&SigningKeyRecord> for SigningKeyRow {
    fn from(k: &SigningKeyRecord) -> Self {
        SigningKeyRow {
            kid: k.kid.clone(),
            private_pkcs8: k.private_pkcs8.clone(),
            public_key: k.public_key.clone(),
            created_at: DbTime(k.created_at),
        }
    }
}

impl From<SigningKeyRow> for SigningKeyRecord {
    fn from(row: SigningKeyRow) -> Self {
        SigningKeyRecord {
            kid: row.kid,
            private_pkcs8: row.private_pkcs8,
            public_key: row.public_key,
            created_at: row.created_at.0,
        }
    }
}
