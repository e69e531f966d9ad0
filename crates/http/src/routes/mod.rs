//! The routes, one module per area, and the one registration that both serves them and
//! documents them. Route modules share wire types through `crate::wire` and response
//! helpers through `crate::respond`, never through each other.

pub mod analytics;
pub mod appointments;
pub mod audit;
pub mod auth;
pub mod citizens;
pub mod clients;
pub mod documents;
pub mod missions;
pub mod notifications;
pub mod ops;
pub mod requests;
pub mod services;
pub mod slots;
pub mod staff;

use utoipa_actix_web::service_config::ServiceConfig;

/// Registers every documented route; the OpenAPI document is generated from the same call.
/// `/metrics` is not one: it is served on its own listener ([`crate::metrics_app`]).
pub fn register(cfg: &mut ServiceConfig) {
    cfg.service(auth::create_token)
        .service(auth::refresh_token)
        .service(auth::revoke_token)
        .service(auth::jwks)
        .service(clients::list_clients)
        .service(clients::create_client)
        .service(clients::get_client)
        .service(clients::disable_client)
        .service(clients::rotate_client_secret)
        .service(missions::list_missions)
        .service(missions::create_mission)
        .service(missions::get_mission)
        .service(missions::update_mission)
        .service(services::list_services)
        .service(services::create_service)
        .service(services::get_service)
        .service(services::update_service)
        .service(citizens::list_citizens)
        .service(citizens::register_citizen)
        .service(citizens::get_citizen)
        .service(citizens::update_citizen)
        .service(staff::list_staff)
        .service(staff::create_staff)
        .service(staff::get_staff)
        .service(staff::update_staff_assignments)
        .service(requests::list_requests)
        .service(requests::submit_request)
        .service(requests::get_request)
        .service(requests::change_request_status)
        .service(requests::cancel_request)
        .service(requests::add_request_note)
        .service(requests::list_request_notes)
        .service(requests::list_request_messages)
        .service(requests::post_request_message)
        .service(requests::get_staff_queue)
        .service(documents::list_documents)
        .service(documents::upload_document)
        .service(documents::get_document)
        .service(documents::delete_document)
        .service(documents::download_document_content)
        .service(documents::verify_document)
        .service(documents::list_request_documents)
        .service(slots::submit_slots)
        .service(slots::list_slots)
        .service(appointments::list_appointments)
        .service(appointments::book_appointment)
        .service(appointments::get_appointment)
        .service(appointments::reschedule_appointment)
        .service(appointments::cancel_appointment)
        .service(appointments::record_attendance)
        .service(notifications::list_notifications)
        .service(notifications::mark_notification_read)
        .service(notifications::mark_all_notifications_read)
        .service(notifications::get_notification_preferences)
        .service(notifications::update_notification_preferences)
        .service(notifications::list_request_notifications)
        .service(analytics::analytics_overview)
        .service(analytics::analytics_services)
        .service(analytics::analytics_staff)
        .service(audit::list_audit_events)
        .service(ops::live)
        .service(ops::ready)
        .service(ops::openapi);
}
