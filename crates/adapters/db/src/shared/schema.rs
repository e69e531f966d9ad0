//! How the areas' tables relate. Each table is declared with `diesel::table!` in the
//! `mod.rs` of the area that owns it (as in `migrations/{postgres,sqlite}`, written by
//! hand once for both databases; uuid, instant, date and JSON columns use the portable
//! types of [`crate::shared::sql_types`]). A new column changes only its area; a new table
//! is also listed here, so that it may appear in a query with any other.

use crate::analytics::request_stage_spells;
use crate::appointments::{appointment_history, appointments, slot_service_types, slots};
use crate::audit::audit_events;
use crate::citizens::citizens;
use crate::clients::api_clients;
use crate::documents::documents;
use crate::idempotency::idempotency_keys;
use crate::markers::bootstrap_markers;
use crate::missions::missions;
use crate::notifications::{appointment_reminders, emails, notification_preferences, notifications};
use crate::outbox::outbox_events;
use crate::requests::{request_history, request_messages, request_notes, service_requests};
use crate::service_secrets::service_secrets;
use crate::service_types::service_types;
use crate::signing_keys::signing_keys;
use crate::staff::{staff_assignments, staff_members, staff_workloads};
use crate::tokens::{refresh_tokens, revocations};

diesel::joinable!(api_clients -> missions (mission_id));
diesel::joinable!(refresh_tokens -> api_clients (client_id));
diesel::joinable!(citizens -> missions (mission_id));
diesel::joinable!(staff_members -> missions (mission_id));
diesel::joinable!(staff_assignments -> staff_members (staff_id));
diesel::joinable!(staff_assignments -> service_types (service_type_id));
diesel::joinable!(staff_workloads -> staff_members (staff_id));
diesel::joinable!(service_requests -> missions (mission_id));
diesel::joinable!(service_requests -> citizens (citizen_id));
diesel::joinable!(service_requests -> service_types (service_type_id));
diesel::joinable!(request_history -> service_requests (request_id));
diesel::joinable!(request_notes -> service_requests (request_id));
diesel::joinable!(request_messages -> service_requests (request_id));
diesel::joinable!(documents -> missions (mission_id));
diesel::joinable!(documents -> citizens (citizen_id));
diesel::joinable!(documents -> service_requests (request_id));
diesel::joinable!(slots -> missions (mission_id));
diesel::joinable!(slot_service_types -> slots (slot_id));
diesel::joinable!(slot_service_types -> service_types (service_type_id));
diesel::joinable!(appointments -> slots (slot_id));
diesel::joinable!(appointments -> missions (mission_id));
diesel::joinable!(appointments -> citizens (citizen_id));
diesel::joinable!(appointments -> service_types (service_type_id));
diesel::joinable!(appointments -> service_requests (request_id));
diesel::joinable!(appointment_history -> appointments (appointment_id));
diesel::joinable!(notifications -> outbox_events (event_id));
diesel::joinable!(notifications -> missions (mission_id));
diesel::joinable!(notifications -> service_requests (request_id));
diesel::joinable!(emails -> notifications (notification_id));
diesel::joinable!(appointment_reminders -> appointments (appointment_id));
diesel::joinable!(request_stage_spells -> service_requests (request_id));

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
    staff_workloads,
    outbox_events,
    service_requests,
    request_history,
    request_notes,
    request_messages,
    documents,
    service_secrets,
    slots,
    slot_service_types,
    appointments,
    appointment_history,
    notifications,
    emails,
    notification_preferences,
    appointment_reminders,
    request_stage_spells,
);
