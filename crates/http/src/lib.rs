//! HTTP delivery with actix-web: routes, the authenticated-principal extractor, DTOs,
//! the OpenAPI document and problem+json errors.
//!
//! Handlers translate HTTP to use-case calls and back; they hold no business rule and
//! never reach a database or storage adapter (this crate depends on no adapter).

pub mod extract;
pub mod metrics;
pub mod middleware;
pub mod problem;
pub mod routes;
pub mod spec;
pub mod state;

pub use metrics::Metrics;
pub use spec::ApiSpec;
pub use state::{AppState, TokenRateLimits};

use actix_web::body::MessageBody;
use actix_web::dev::{ServiceFactory, ServiceRequest, ServiceResponse};
use actix_web::{App, Error, HttpResponse, web};
use utoipa_actix_web::AppExt;
use utoipa_swagger_ui::SwaggerUi;

/// The application for one worker. `state` is shared by all workers.
pub fn app(
    state: web::Data<AppState>,
) -> App<
    impl ServiceFactory<
        ServiceRequest,
        Config = (),
        Response = ServiceResponse<impl MessageBody>,
        Error = Error,
        InitError = (),
    >,
> {
    let (app, _) = App::new().into_utoipa_app().configure(routes::register).split_for_parts();
    app.app_data(state)
        .app_data(web::PathConfig::default().error_handler(|_, _| problem::ApiError::not_found().into()))
        .app_data(web::PayloadConfig::new(extract::JSON_LIMIT))
        .route(
            "/docs",
            web::get().to(|| async {
                HttpResponse::PermanentRedirect().insert_header(("location", "/docs/")).finish()
            }),
        )
        .service(
            SwaggerUi::new("/docs/{_:.*}").url("/api/v1/openapi.json", utoipa::openapi::OpenApi::default()),
        )
        .default_service(web::to(middleware::fallback))
        .wrap(actix_web::middleware::from_fn(middleware::conventions))
}
