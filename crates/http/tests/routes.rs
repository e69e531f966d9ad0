//! Route order: actix tries routes in the order `routes::register` adds them, so a
//! template registered before a fixed path it also matches would take its requests
//! (`/api/v1/appointments/{id}` before `/api/v1/appointments/slots`). Every documented
//! fixed path, with each of its methods, must be routed to itself.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use actix_web::http::Method;
use actix_web::{App, test};
use utoipa_actix_web::AppExt;

#[actix_web::test]
async fn every_fixed_path_is_routed_to_itself_not_to_a_template() {
    let spec = consular_http::api_spec();
    let (app, _) = App::new().into_utoipa_app().configure(consular_http::routes::register).split_for_parts();
    let app = test::init_service(app).await;
    let mut checked = 0;
    for (path, item) in spec.document()["paths"].as_object().unwrap() {
        if path.contains('{') {
            continue;
        }
        for method in ["get", "post", "put", "patch", "delete"] {
            if item.get(method).is_none() {
                continue;
            }
            let method = Method::from_bytes(method.to_ascii_uppercase().as_bytes()).unwrap();
            let request = test::TestRequest::default().method(method.clone()).uri(path).to_request();
            // No application state: the handler's extractors fail, but routing has happened.
            let response = test::call_service(&app, request).await;
            assert_eq!(
                response.request().match_pattern().as_deref(),
                Some(path.as_str()),
                "{method} {path} was routed elsewhere"
            );
            checked += 1;
        }
    }
    assert!(checked >= 30, "only {checked} fixed routes checked");
}
