//! Exports of a citizen's data (docs/data-protection.md "Export"): start one, read its
//! state (with the archive's download URL once ready), and download the archive through
//! its signed URL. The bodies are in `crate::wire::exports`. The `/citizens/me/...`
//! routes are registered before the `/citizens/{id}/...` ones, which would otherwise take
//! `me` for an id.

use crate::extract::{ApiQuery, Authenticated};
use crate::problem::ApiError;
use crate::state::AppState;
use crate::wire::exports::{ArchiveGone, ArchiveParams, BadArchiveUrl, ExportBody, ExportRunning};
use actix_web::http::StatusCode;
use actix_web::http::header;
use actix_web::{HttpResponse, get, post, web};
use consular_application::exports::{ExportGrant, ExportView, Whose};
use consular_domain::{CitizenId, Export, ExportId};
use time::OffsetDateTime;
use utoipa_actix_web::service_config::ServiceConfig;
use uuid::Uuid;

/// Registers this area's operations, in the order actix tries them (`super::register`).
pub fn register(cfg: &mut ServiceConfig) {
    cfg.service(start_my_export)
        .service(get_my_export)
        .service(start_citizen_export)
        .service(get_citizen_export)
        .service(download_export_archive);
}

fn accepted(export: Export, location: String) -> HttpResponse {
    let body = ExportBody::from(ExportView { state: export.state, export, download: None });
    HttpResponse::Accepted().insert_header((header::LOCATION, location)).json(body)
}

/// Start an export of your data (citizen).
///
/// One zip archive of your profile, requests with their history and messages, documents
/// and their files, appointments and notifications, built in the background: follow
/// `Location` until its `state` is `ready`. One export runs at a time: another while it
/// is `pending` or `running` is 409 naming it.
#[utoipa::path(
    tag = "exports",
    operation_id = "start_my_export",
    security(("oauth2" = ["citizen"])),
    extensions(("x-maturity" = json!("Beta"))),
    responses(
        (status = 202, description = "Started", body = ExportBody,
            headers(("Location" = String, description = "The export, to follow"))),
        ExportRunning,
    )
)]
#[post("/api/v1/citizens/me/export")]
pub async fn start_my_export(
    state: web::Data<AppState>,
    Authenticated(actor): Authenticated,
) -> Result<HttpResponse, ApiError> {
    let export = state.exports.start(&actor, Whose::Me).await?;
    let location = format!("/api/v1/citizens/me/exports/{}", export.id);
    Ok(accepted(export, location))
}

/// Read one of your exports (citizen).
///
/// Its state and, once `ready`, the archive's download URL (it expires; read the export
/// again for a new one). Past the archive's own expiry the state reads `expired`.
#[utoipa::path(
    tag = "exports",
    operation_id = "get_my_export",
    params(("export_id" = Uuid, Path, description = "Export id")),
    security(("oauth2" = ["citizen"])),
    extensions(("x-maturity" = json!("Beta"))),
    responses((status = 200, description = "The export", body = ExportBody))
)]
#[get("/api/v1/citizens/me/exports/{export_id}")]
pub async fn get_my_export(
    state: web::Data<AppState>,
    Authenticated(actor): Authenticated,
    export_id: web::Path<Uuid>,
) -> Result<HttpResponse, ApiError> {
    let view = state.exports.get(&actor, Whose::Me, ExportId(export_id.into_inner())).await?;
    Ok(HttpResponse::Ok().json(ExportBody::from(view)))
}

/// Start an export of a citizen's data (admins of the citizen's mission, global admins).
///
/// As `POST /api/v1/citizens/me/export`, for the citizen named (the citizen themself may
/// use it too).
#[utoipa::path(
    tag = "exports",
    operation_id = "start_citizen_export",
    params(("id" = Uuid, Path, description = "Citizen id")),
    security(("oauth2" = ["admin"]), ("oauth2" = ["citizen"])),
    extensions(("x-maturity" = json!("Beta"))),
    responses(
        (status = 202, description = "Started", body = ExportBody,
            headers(("Location" = String, description = "The export, to follow"))),
        ExportRunning,
    )
)]
#[post("/api/v1/citizens/{id}/export")]
pub async fn start_citizen_export(
    state: web::Data<AppState>,
    Authenticated(actor): Authenticated,
    id: web::Path<Uuid>,
) -> Result<HttpResponse, ApiError> {
    let citizen = CitizenId(id.into_inner());
    let export = state.exports.start(&actor, Whose::Citizen(citizen)).await?;
    let location = format!("/api/v1/citizens/{citizen}/exports/{}", export.id);
    Ok(accepted(export, location))
}

/// Read an export of a citizen's data (admins of the citizen's mission, global admins).
///
/// As `GET /api/v1/citizens/me/exports/{export_id}`, for the citizen named (the
/// citizen themself may use it too). Each download URL handed out is an audit entry.
#[utoipa::path(
    tag = "exports",
    operation_id = "get_citizen_export",
    params(
        ("id" = Uuid, Path, description = "Citizen id"),
        ("export_id" = Uuid, Path, description = "Export id"),
    ),
    security(("oauth2" = ["admin"]), ("oauth2" = ["citizen"])),
    extensions(("x-maturity" = json!("Beta"))),
    responses((status = 200, description = "The export", body = ExportBody))
)]
#[get("/api/v1/citizens/{id}/exports/{export_id}")]
pub async fn get_citizen_export(
    state: web::Data<AppState>,
    Authenticated(actor): Authenticated,
    path: web::Path<(Uuid, Uuid)>,
) -> Result<HttpResponse, ApiError> {
    let (citizen, export) = path.into_inner();
    let view = state.exports.get(&actor, Whose::Citizen(CitizenId(citizen)), ExportId(export)).await?;
    Ok(HttpResponse::Ok().json(ExportBody::from(view)))
}

/// Download an export's archive through its signed URL (no bearer token).
///
/// The URL comes from reading the export and expires.
#[utoipa::path(
    tag = "exports",
    operation_id = "download_export_archive",
    security(),
    params(("export_id" = Uuid, Path, description = "Export id"), ArchiveParams),
    extensions(("x-maturity" = json!("Beta"))),
    responses(
        // Declared as the documents' files are (`application/zip` matches `*/*`): the
        // Python client generator refuses a response of a media type it does not know.
        (status = 200, description = "The zip archive (`application/zip`), as an attachment",
            content(
                (inline(crate::wire::exports::ArchiveBytes) = "application/octet-stream"),
                (inline(crate::wire::exports::ArchiveBytes) = "*/*"),
            )),
        BadArchiveUrl,
        ArchiveGone,
    )
)]
#[get("/api/v1/exports/{export_id}/archive")]
pub async fn download_export_archive(
    state: web::Data<AppState>,
    export_id: web::Path<Uuid>,
    ApiQuery(params): ApiQuery<ArchiveParams>,
) -> Result<HttpResponse, ApiError> {
    let expires_at = OffsetDateTime::from_unix_timestamp(params.expires).map_err(|_| {
        ApiError::new(StatusCode::FORBIDDEN, "invalid_download_url", "the download URL is not valid")
    })?;
    let grant = ExportGrant { export: ExportId(export_id.into_inner()), expires_at };
    let archive = state.exports.archive(grant, &params.signature).await?;
    let (export, read) = (archive.export, archive.read);
    Ok(HttpResponse::Ok()
        .insert_header((header::CONTENT_TYPE, "application/zip"))
        .insert_header((
            header::CONTENT_DISPOSITION,
            format!("attachment; filename=\"export-{}.zip\"", export.id),
        ))
        .insert_header((header::X_CONTENT_TYPE_OPTIONS, "nosniff"))
        .insert_header((header::CACHE_CONTROL, "no-store"))
        .no_chunking(read.size)
        .streaming(read.chunks))
}
