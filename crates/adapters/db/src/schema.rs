//! The tables of `migrations/{postgres,sqlite}`, written by hand once for both databases:
//! uuid and instant columns use the portable types of [`crate::sql_types`].

diesel::table! {
    use diesel::sql_types::*;
    use crate::sql_types::{PortableTimestamp, PortableUuid};

    missions (id) {
        id -> PortableUuid,
        code -> Text,
        name -> Text,
        country -> Text,
        city -> Text,
        timezone -> Text,
        version -> BigInt,
        created_at -> PortableTimestamp,
        updated_at -> PortableTimestamp,
    }
}

diesel::table! {
    use diesel::sql_types::*;
    use crate::sql_types::{PortableTimestamp, PortableUuid};

    api_clients (id) {
        id -> PortableUuid,
        name -> Text,
        principal_kind -> Text,
        principal_id -> PortableUuid,
        mission_id -> Nullable<PortableUuid>,
        scopes -> Text,
        secret_hash -> Binary,
        status -> Text,
        version -> BigInt,
        created_at -> PortableTimestamp,
        updated_at -> PortableTimestamp,
    }
}

diesel::table! {
    use diesel::sql_types::*;
    use crate::sql_types::PortableTimestamp;

    bootstrap_markers (name) {
        name -> Text,
        created_at -> PortableTimestamp,
    }
}

diesel::table! {
    use diesel::sql_types::*;
    use crate::sql_types::{PortableTimestamp, PortableUuid};

    refresh_tokens (hash) {
        hash -> Binary,
        client_id -> PortableUuid,
        family_id -> PortableUuid,
        scopes -> Text,
        access_jti -> PortableUuid,
        access_expires_at -> PortableTimestamp,
        issued_at -> PortableTimestamp,
        expires_at -> PortableTimestamp,
        spent_at -> Nullable<PortableTimestamp>,
        revoked_at -> Nullable<PortableTimestamp>,
    }
}

diesel::table! {
    use diesel::sql_types::*;
    use crate::sql_types::{PortableTimestamp, PortableUuid};

    revocations (id) {
        id -> PortableUuid,
        kind -> Text,
        subject -> PortableUuid,
        expires_at -> Nullable<PortableTimestamp>,
        created_at -> PortableTimestamp,
    }
}

diesel::table! {
    use diesel::sql_types::*;
    use crate::sql_types::{PortableTimestamp, PortableUuid};

    idempotency_keys (owner, key) {
        owner -> PortableUuid,
        key -> Text,
        fingerprint -> Text,
        status -> Integer,
        headers -> Text,
        body -> Text,
        created_at -> PortableTimestamp,
        expires_at -> PortableTimestamp,
    }
}

diesel::table! {
    use diesel::sql_types::*;
    use crate::sql_types::{PortableTimestamp, PortableUuid};

    audit_events (id) {
        id -> PortableUuid,
        at -> PortableTimestamp,
        actor_kind -> Nullable<Text>,
        actor_id -> Nullable<PortableUuid>,
        client_id -> Nullable<PortableUuid>,
        action -> Text,
        resource_type -> Text,
        resource_id -> PortableUuid,
        changed_fields -> Text,
    }
}

diesel::table! {
    use diesel::sql_types::*;
    use crate::sql_types::PortableTimestamp;

    signing_keys (kid) {
        kid -> Text,
        private_pkcs8 -> Binary,
        public_key -> Binary,
        created_at -> PortableTimestamp,
    }
}

diesel::joinable!(api_clients -> missions (mission_id));
diesel::joinable!(refresh_tokens -> api_clients (client_id));

diesel::allow_tables_to_appear_in_same_query!(
    missions,
    api_clients,
    bootstrap_markers,
    refresh_tokens,
    revocations,
    idempotency_keys,
    audit_events,
    signing_keys,
);
