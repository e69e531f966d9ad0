//! The tables of `migrations/{postgres,sqlite}`, written by hand once for both databases:
//! uuid, instant, date and JSON columns use the portable types of [`crate::sql_types`].

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

diesel::table! {
    use diesel::sql_types::*;
    use crate::sql_types::{PortableJson, PortableTimestamp, PortableUuid};

    service_types (id) {
        id -> PortableUuid,
        code -> Text,
        name -> Text,
        description -> Text,
        fee_amount_minor -> BigInt,
        fee_currency -> Text,
        sla_days -> Integer,
        required_documents -> PortableJson,
        stages -> PortableJson,
        active -> Bool,
        version -> BigInt,
        created_at -> PortableTimestamp,
        updated_at -> PortableTimestamp,
    }
}

diesel::table! {
    use diesel::sql_types::*;
    use crate::sql_types::{PortableDate, PortableJson, PortableTimestamp, PortableUuid};

    citizens (id) {
        id -> PortableUuid,
        mission_id -> PortableUuid,
        given_name -> Text,
        family_name -> Text,
        date_of_birth -> PortableDate,
        place_of_birth -> Text,
        nationality -> Text,
        passport_number -> Text,
        passport_expiry -> PortableDate,
        email -> Text,
        phone -> Text,
        address -> PortableJson,
        emergency_contact -> Nullable<PortableJson>,
        preferred_language -> Text,
        registration_status -> Text,
        registered_at -> PortableTimestamp,
        activated_at -> Nullable<PortableTimestamp>,
        deregistered_at -> Nullable<PortableTimestamp>,
        version -> BigInt,
        created_at -> PortableTimestamp,
        updated_at -> PortableTimestamp,
    }
}

diesel::table! {
    use diesel::sql_types::*;
    use crate::sql_types::{PortableTimestamp, PortableUuid};

    staff_members (id) {
        id -> PortableUuid,
        mission_id -> PortableUuid,
        name -> Text,
        email -> Text,
        job_title -> Text,
        active -> Bool,
        version -> BigInt,
        created_at -> PortableTimestamp,
        updated_at -> PortableTimestamp,
    }
}

diesel::table! {
    use diesel::sql_types::*;
    use crate::sql_types::PortableUuid;

    staff_assignments (staff_id, service_type_id) {
        staff_id -> PortableUuid,
        service_type_id -> PortableUuid,
        position -> Integer,
    }
}

diesel::table! {
    use diesel::sql_types::*;
    use crate::sql_types::{PortableJson, PortableTimestamp, PortableUuid};

    outbox_events (id) {
        id -> PortableUuid,
        kind -> Text,
        aggregate_id -> PortableUuid,
        payload -> PortableJson,
        created_at -> PortableTimestamp,
        delivered_at -> Nullable<PortableTimestamp>,
    }
}

diesel::table! {
    use diesel::sql_types::*;
    use crate::sql_types::{PortableJson, PortableTimestamp, PortableUuid};

    service_requests (id) {
        id -> PortableUuid,
        mission_id -> PortableUuid,
        citizen_id -> PortableUuid,
        service_type_id -> PortableUuid,
        status -> Text,
        stages -> PortableJson,
        current_stage -> Integer,
        assignee_id -> Nullable<PortableUuid>,
        submitted_at -> PortableTimestamp,
        sla_due_at -> PortableTimestamp,
        closed_at -> Nullable<PortableTimestamp>,
        version -> BigInt,
        updated_at -> PortableTimestamp,
    }
}

diesel::table! {
    use diesel::sql_types::*;
    use crate::sql_types::{PortableTimestamp, PortableUuid};

    /// `id` is generated by the database (an identity on PostgreSQL, the rowid on SQLite).
    request_history (id) {
        id -> BigInt,
        request_id -> PortableUuid,
        at -> PortableTimestamp,
        actor_kind -> Nullable<Text>,
        actor_id -> Nullable<PortableUuid>,
        from_status -> Nullable<Text>,
        to_status -> Text,
        from_stage -> Nullable<Integer>,
        to_stage -> Integer,
        reason -> Nullable<Text>,
    }
}

diesel::table! {
    use diesel::sql_types::*;
    use crate::sql_types::{PortableTimestamp, PortableUuid};

    request_notes (id) {
        id -> PortableUuid,
        request_id -> PortableUuid,
        author_kind -> Text,
        author_id -> PortableUuid,
        body -> Text,
        created_at -> PortableTimestamp,
    }
}

diesel::table! {
    use diesel::sql_types::*;
    use crate::sql_types::{PortableTimestamp, PortableUuid};

    request_messages (id) {
        id -> PortableUuid,
        request_id -> PortableUuid,
        author_kind -> Text,
        author_id -> PortableUuid,
        body -> Text,
        created_at -> PortableTimestamp,
    }
}

diesel::joinable!(api_clients -> missions (mission_id));
diesel::joinable!(refresh_tokens -> api_clients (client_id));
diesel::joinable!(citizens -> missions (mission_id));
diesel::joinable!(staff_members -> missions (mission_id));
diesel::joinable!(staff_assignments -> staff_members (staff_id));
diesel::joinable!(staff_assignments -> service_types (service_type_id));
diesel::joinable!(service_requests -> missions (mission_id));
diesel::joinable!(service_requests -> citizens (citizen_id));
diesel::joinable!(service_requests -> service_types (service_type_id));
diesel::joinable!(request_history -> service_requests (request_id));
diesel::joinable!(request_notes -> service_requests (request_id));
diesel::joinable!(request_messages -> service_requests (request_id));

diesel::allow_tables_to_appear_in_same_query!(
    missions,
    api_clients,
    bootstrap_markers,
    refresh_tokens,
    revocations,
    idempotency_keys,
    audit_events,
    signing_keys,
    service_types,
    citizens,
    staff_members,
    staff_assignments,
    outbox_events,
    service_requests,
    request_history,
    request_notes,
    request_messages,
);
