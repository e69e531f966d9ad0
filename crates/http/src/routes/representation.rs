//! Representations (docs/representation.md): who may act for whom. The mission's staff
//! create and end them; the dependant and the mission read them; a representative lists
//! the dependants they act for now. The bodies are in `crate::wire::representation`. The
//! `/citizens/me/...` routes are registered before the `/citizens/{id}/...` ones.

use crate::extract::{ApiJson, ApiQuery, Authenticated, PageParams};
use crate::problem::ApiError;
use crate::respond::list;
use crate::state::AppState;
use crate::wire::representation::{
    CreateRepresentation, DependantBody, DependantList, EndRepresentation, RepresentationBody,
    RepresentationEnded, RepresentationExists, RepresentationList,
};
use actix_web::http::header;
use actix_web::{HttpRequest, HttpResponse, get, post, web};
use consular_application::access_log::Whose;
use consular_domain::{CitizenId, RepresentationId};
use utoipa_actix_web::service_config::ServiceConfig;
use uuid::Uuid;

/// Registers this area's operations, in the order actix tries them (`super::register`).
pub fn register(cfg: &mut ServiceConfig) {
    cfg.service(list_my_representatives)
        .service(list_my_dependants)
        .service(create_representative)
        .service(list_representatives)
        .service(get_representative)
        .service(end_representative);
}

/// List your representatives, newest first (citizen).
///
/// Who may act for you, ended representations included (`ended_at`), each with
/// `in_force` now. Tokens other than a citizen's are 403 `insufficient_scope`.
#[utoipa::path(
    tag = "citizens",
    operation_id = "list_my_representatives",
    params(PageParams),
    security(("oauth2" = ["citizen"])),
    extensions(("x-maturity" = json!("Beta"))),
    responses((status = 200, description = "A page of representations", body = RepresentationList,
        headers(("Link" = String, description = "The next page, when there is one"))))
)]
#[get("/api/v1/citizens/me/representatives")]
pub async fn list_my_representatives(
    req: HttpRequest,
    state: web::Data<AppState>,
    Authenticated(actor): Authenticated,
    ApiQuery(params): ApiQuery<PageParams>,
) -> Result<HttpResponse, ApiError> {
    let page = state.representation.list(&actor, Whose::Me, params.to_request()?).await?;
    Ok(list(&req, page, RepresentationBody::from))
}

/// List the citizens you act for now (citizen).
///
/// The representations you hold that are in force now (not ended, today within their
/// dates in the mission's time zone, and their kind fitting the dependant's age), with
/// each dependant's id and names, oldest first. Not paged: a handful. Each dependant's
/// names read this way are an entry of their access log. Tokens other than a citizen's
/// are 403 `insufficient_scope`.
#[utoipa::path(
    tag = "citizens",
    operation_id = "list_my_dependants",
    security(("oauth2" = ["citizen"])),
    extensions(("x-maturity" = json!("Beta"))),
    responses((status = 200, description = "The dependants", body = DependantList))
)]
#[get("/api/v1/citizens/me/dependants")]
pub async fn list_my_dependants(
    state: web::Data<AppState>,
    Authenticated(actor): Authenticated,
) -> Result<HttpResponse, ApiError> {
    let dependants = state.representation.dependants(&actor).await?;
    let items = dependants.into_iter().map(DependantBody::from).collect();
    Ok(HttpResponse::Ok().json(DependantList { items }))
}

/// Make a citizen someone's representative (staff and admins of the dependant's mission).
///
/// After checking `evidence_document_id`, a document of the dependant's. The
/// representative is another citizen of the mission; the kind must fit the dependant's
/// age today in the mission's time zone. Every failing field is reported at once (422);
/// a representative of another mission, an unknown document or service type are
/// `unknown`, as what does not exist. A representation not ended with the same
/// representative and kind is 409 naming it. A citizen's token is 403
/// `insufficient_scope`; another mission's staff and admins get 404.
#[utoipa::path(
    tag = "citizens",
    operation_id = "create_representative",
    request_body = CreateRepresentation,
    params(("id" = Uuid, Path, description = "The dependant's citizen id")),
    security(("oauth2" = ["staff"]), ("oauth2" = ["admin"])),
    extensions(("x-maturity" = json!("Beta"))),
    responses(
        (status = 201, description = "Created", body = RepresentationBody,
            headers(("Location" = String, description = "The new representation"))),
        RepresentationExists,
    )
)]
#[post("/api/v1/citizens/{id}/representatives")]
pub async fn create_representative(
    state: web::Data<AppState>,
    Authenticated(actor): Authenticated,
    id: web::Path<Uuid>,
    body: ApiJson<CreateRepresentation>,
) -> Result<HttpResponse, ApiError> {
    let dependant = CitizenId(id.into_inner());
    let created = state.representation.create(&actor, dependant, body.value.into()).await?;
    let location = format!("/api/v1/citizens/{dependant}/representatives/{}", created.representation.id);
    Ok(HttpResponse::Created()
        .insert_header((header::LOCATION, location))
        .json(RepresentationBody::from(created)))
}

/// List a citizen's representatives, newest first (the citizen, staff and admins of
/// their mission).
///
/// As `list_my_representatives`, for citizen `id`. Anyone else gets 404.
#[utoipa::path(
    tag = "citizens",
    operation_id = "list_representatives",
    params(("id" = Uuid, Path, description = "The dependant's citizen id"), PageParams),
    security(("oauth2" = [])),
    extensions(("x-maturity" = json!("Beta"))),
    responses((status = 200, description = "A page of representations", body = RepresentationList,
        headers(("Link" = String, description = "The next page, when there is one"))))
)]
#[get("/api/v1/citizens/{id}/representatives")]
pub async fn list_representatives(
    req: HttpRequest,
    state: web::Data<AppState>,
    Authenticated(actor): Authenticated,
    id: web::Path<Uuid>,
    ApiQuery(params): ApiQuery<PageParams>,
) -> Result<HttpResponse, ApiError> {
    let whose = Whose::Citizen(CitizenId(id.into_inner()));
    let page = state.representation.list(&actor, whose, params.to_request()?).await?;
    Ok(list(&req, page, RepresentationBody::from))
}

/// Get one of a citizen's representations (the citizen, staff and admins of their
/// mission).
///
/// With `in_force` now. Under another citizen's id, or for anyone else, 404.
#[utoipa::path(
    tag = "citizens",
    operation_id = "get_representative",
    params(
        ("id" = Uuid, Path, description = "The dependant's citizen id"),
        ("rid" = Uuid, Path, description = "Representation id"),
    ),
    security(("oauth2" = [])),
    extensions(("x-maturity" = json!("Beta"))),
    responses((status = 200, description = "The representation", body = RepresentationBody))
)]
#[get("/api/v1/citizens/{id}/representatives/{rid}")]
pub async fn get_representative(
    state: web::Data<AppState>,
    Authenticated(actor): Authenticated,
    path: web::Path<(Uuid, Uuid)>,
) -> Result<HttpResponse, ApiError> {
    let (citizen, rid) = path.into_inner();
    let view =
        state.representation.get(&actor, Whose::Citizen(CitizenId(citizen)), RepresentationId(rid)).await?;
    Ok(HttpResponse::Ok().json(RepresentationBody::from(view)))
}

/// End a representation (staff and admins of the dependant's mission).
///
/// With a `reason` (1 to 500 characters); the representation is kept, ended. Ending an
/// ended one is 409 `representation_ended`. A citizen's token is 403
/// `insufficient_scope`.
#[utoipa::path(
    tag = "citizens",
    operation_id = "end_representative",
    request_body = EndRepresentation,
    params(
        ("id" = Uuid, Path, description = "The dependant's citizen id"),
        ("rid" = Uuid, Path, description = "Representation id"),
    ),
    security(("oauth2" = ["staff"]), ("oauth2" = ["admin"])),
    extensions(("x-maturity" = json!("Beta"))),
    responses(
        (status = 200, description = "Ended", body = RepresentationBody),
        RepresentationEnded,
    )
)]
#[post("/api/v1/citizens/{id}/representatives/{rid}/end")]
pub async fn end_representative(
    state: web::Data<AppState>,
    Authenticated(actor): Authenticated,
    path: web::Path<(Uuid, Uuid)>,
    body: ApiJson<EndRepresentation>,
) -> Result<HttpResponse, ApiError> {
    let (citizen, rid) = path.into_inner();
    let ended = state
        .representation
        .end(&actor, CitizenId(citizen), RepresentationId(rid), body.value.reason)
        .await?;
    Ok(HttpResponse::Ok().json(RepresentationBody::from(ended)))
}
