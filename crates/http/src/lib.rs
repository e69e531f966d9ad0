//! HTTP delivery with actix-web: routes, the authenticated-principal extractor, DTOs,
//! the OpenAPI document and problem+json errors.
//!
//! Handlers translate HTTP to use-case calls and back; they hold no business rule and
//! never reach a database or storage adapter (this crate depends on no adapter).
//!
//! The modules form layers, without cycles (a test in `tests/module_graph.rs` keeps it
//! so): `problem`, `metrics` and `body_timeout` at the bottom; `wire` (what the API reads
//! and writes, one file per area, and the problem responses operations document); `spec`
//! (the document as data); `state`; `extract` and `respond`; then one module per area
//! under `routes`, handlers only, each using only the layers below and never another
//! area. This root ties the routes to the spec and to the app.

pub mod body_timeout;
pub mod edge;
pub mod extract;
pub mod metrics;
pub mod middleware;
pub mod problem;
pub mod respond;
pub mod routes;
pub mod spec;
pub mod state;
pub mod wire;

pub use body_timeout::BodyTimeouts;
pub use edge::{EdgePolicy, ProxyHeader};
pub use metrics::Metrics;
pub use spec::ApiSpec;
pub use state::{AppState, TokenRateLimits};

use actix_web::body::MessageBody;
use actix_web::dev::{ServiceFactory, ServiceRequest, ServiceResponse};
use actix_web::{App, Error, HttpResponse, web};
use utoipa_actix_web::AppExt;
use utoipa_swagger_ui::SwaggerUi;

/// The OpenAPI document of every route [`app`] serves, with the tables derived from it,
/// its server the relative `/` ([`api_spec_at`] for a configured public address).
pub fn api_spec() -> ApiSpec {
    api_spec_at(None)
}

/// [`api_spec`] of a deployment whose public address is `public_base_url` when one is
/// configured (docs/api.md "Basics"); built once per process and held by [`AppState`].
pub fn api_spec_at(public_base_url: Option<&str>) -> ApiSpec {
    ApiSpec::build(routes::register, public_base_url)
}

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
    let cors = state.edge.cors();
    app.app_data(state)
        .app_data(web::PathConfig::default().error_handler(|_, req| middleware::bad_path(req).into()))
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
        // Inside the conventions, so that a refused preflight is a problem too.
        .wrap(cors)
        .wrap(actix_web::middleware::from_fn(middleware::conventions))
}

/// The metrics listener's application, for one worker (`metrics_bind`, docs/operations.md
/// "Metrics"): `/metrics`, and the health probes for a scraper or an orchestrator on the
/// same network; every other path is 404. It shares `state` (and so the figures) with
/// [`app`], and the same middleware (request ids, logs, problem+json).
pub fn metrics_app(
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
    App::new()
        .app_data(state)
        .service(routes::ops::metrics)
        .service(routes::ops::live)
        .service(routes::ops::ready)
        // Not the API's fallback, which would answer 405 for the API's paths.
        .default_service(web::to(|| async { Err::<HttpResponse, _>(problem::ApiError::not_found()) }))
        .wrap(actix_web::middleware::from_fn(middleware::conventions))
}

#[cfg(test)]
mod tests {
    use super::api_spec;
    use crate::spec::{METHODS, OAUTH2, needs_token};

    #[test]
    fn every_operation_has_a_maturity_label_and_documents_its_errors() {
        let spec = api_spec();
        assert_eq!(spec.document()["openapi"].as_str().map(|v| &v[..3]), Some("3.1"));
        let paths = spec.document()["paths"].as_object().unwrap();
        assert!(paths.len() >= 10, "{:?}", paths.keys());
        for (path, item) in paths {
            for method in METHODS {
                let Some(op) = item.get(method) else { continue };
                let label =
                    op["x-maturity"].as_str().unwrap_or_else(|| panic!("{method} {path} has no x-maturity"));
                assert!(["Available", "Beta", "Coming Soon"].contains(&label), "{method} {path}: {label}");
                assert!(op["operationId"].is_string(), "{method} {path}");
                if needs_token(op) {
                    assert!(op["responses"].get("401").is_some(), "{method} {path}");
                    assert!(op["responses"].get("403").is_some(), "{method} {path}");
                }
            }
        }
    }

    /// Every operation says how it is called (`security: []` when public), with schemes the
    /// document declares and, for `oauth2`, scopes of the scheme: a generated client learns
    /// from it which token each operation takes (docs/api.md "Clients, principals and
    /// scopes"). That the scopes are those the server enforces is the authorization
    /// matrix's (tests/tests/authorization_matrix/scopes.rs).
    #[test]
    fn every_operation_declares_its_security_with_declared_schemes_and_scopes() {
        let spec = api_spec();
        let document = spec.document();
        let schemes = document["components"]["securitySchemes"].as_object().unwrap();
        let scopes = schemes[OAUTH2]["flows"]["clientCredentials"]["scopes"].as_object().unwrap();
        let mut names: Vec<&str> = scopes.keys().map(String::as_str).collect();
        names.sort_unstable();
        assert_eq!(names, ["admin", "citizen", "staff"]);
        let (mut public, mut secured) = (0, 0);
        for (path, item) in document["paths"].as_object().unwrap() {
            for method in METHODS {
                let Some(op) = item.get(method) else { continue };
                let requirements = op["security"]
                    .as_array()
                    .unwrap_or_else(|| panic!("{method} {path} does not declare its security"));
                for requirement in requirements {
                    for (scheme, wanted) in requirement.as_object().unwrap() {
                        assert!(schemes.contains_key(scheme), "{method} {path}: undeclared scheme {scheme}");
                        let wanted = wanted.as_array().unwrap();
                        if scheme == OAUTH2 {
                            let unknown = wanted.iter().find(|s| !scopes.contains_key(s.as_str().unwrap()));
                            assert!(unknown.is_none(), "{method} {path}: unknown scope {unknown:?}");
                        } else {
                            assert!(wanted.is_empty(), "{method} {path}: scopes of {scheme}");
                        }
                    }
                }
                if requirements.is_empty() {
                    public += 1;
                }
                if needs_token(op) {
                    secured += 1;
                }
            }
        }
        assert!(public >= 4 && secured >= 50, "{public} public and {secured} secured operations");
    }

    #[test]
    fn routes_answer_which_methods_they_allow() {
        let spec = api_spec();
        let methods = spec.allowed_methods("/api/v1/missions/0190c7f4-0000-7000-8000-000000000000").unwrap();
        assert!(methods.contains(&"GET".to_owned()) && methods.contains(&"PATCH".to_owned()));
        assert!(spec.allowed_methods("/nowhere").is_none());
        assert_eq!(spec.maturity("POST", "/api/v1/auth/token"), Some("Available"));
    }
}
