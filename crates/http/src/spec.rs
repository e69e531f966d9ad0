//! The OpenAPI 3.1 document, generated from the handlers' annotations, completed with the
//! conventions every operation shares (problem responses, security, headers), and the
//! tables derived from it: which methods each route allows (for 405 + `Allow`), each
//! operation's maturity label (for the `API-Maturity` header) and the operations whose
//! body is streamed (`multipart/form-data`: no total read deadline, `body_timeout`).
//!
//! The routes to document are passed in (the crate root passes `routes::register`), so
//! that this module, which `state` holds, does not depend on the routes, which depend on
//! `state`.

use actix_web::App;
use actix_web::dev::ResourceDef;
use serde_json::{Value, json};
use std::collections::HashMap;
use utoipa::OpenApi;
use utoipa_actix_web::AppExt;
use utoipa_actix_web::service_config::ServiceConfig;

#[derive(OpenApi)]
#[openapi(
    info(
        title = "Consular Services API",
        version = "1.0.0",
        description = "The public REST API of the consular services platform: missions, API clients and \
                       OAuth 2.0 client-credentials tokens, the service catalog, citizens, staff, service \
                       requests with their workflow, notes and messages, and the audit log. Errors are RFC \
                       9457 problems; lists use cursor pagination; PATCH needs If-Match; creating POSTs \
                       accept Idempotency-Key. Each operation's maturity is in x-maturity and the \
                       API-Maturity response header."
    ),
    components(schemas(crate::problem::Problem, crate::problem::ProblemFieldError))
)]
struct BaseDoc;

pub(crate) const METHODS: [&str; 5] = ["get", "post", "put", "patch", "delete"];

pub struct ApiSpec {
    document: Value,
    json: String,
    routes: Vec<(ResourceDef, Vec<String>)>,
    /// Route template → method → label.
    maturity: HashMap<String, HashMap<String, String>>,
    /// The operations (route, upper-case method) whose body is `multipart/form-data`.
    streamed: Vec<(ResourceDef, String)>,
}

fn problem(description: &str) -> Value {
    json!({
        "description": description,
        "content": { "application/problem+json": { "schema": { "$ref": "#/components/schemas/Problem" } } }
    })
}

fn with_retry_after(mut response: Value) -> Value {
    response["headers"] = json!({
        "Retry-After": { "description": "Seconds to wait before retrying", "schema": { "type": "integer" } }
    });
    response
}

/// Adds `response` under `status` unless the operation documents that status itself.
fn add(op: &mut Value, status: &str, response: Value) {
    if let Some(responses) = op["responses"].as_object_mut() {
        responses.entry(status.to_owned()).or_insert(response);
    }
}

fn complete_operation(op: &mut Value, method: &str) {
    if let Some(params) = op.get_mut("parameters").and_then(Value::as_array_mut) {
        for param in params.iter_mut().filter(|p| p["name"] == "Idempotency-Key") {
            param["schema"] =
                json!({ "type": "string", "minLength": 1, "maxLength": 255, "pattern": "^[!-~]+$" });
        }
    }
    let secured = op
        .get("security")
        .and_then(Value::as_array)
        .is_some_and(|s| s.iter().any(|r| r.get("bearer").is_some()));
    let has_body = op.get("requestBody").is_some();
    let params = op.get("parameters").and_then(Value::as_array).cloned().unwrap_or_default();
    let has_path = params.iter().any(|p| p["in"] == "path");
    let has_query = params.iter().any(|p| p["in"] == "query");
    let oauth = op.get("x-oauth").is_some();
    if secured {
        let mut unauthorized = problem("Missing, malformed, expired or revoked bearer token");
        unauthorized["headers"] = json!({
            "WWW-Authenticate": { "description": "The Bearer challenge (RFC 6750)", "schema": { "type": "string" } }
        });
        add(op, "401", unauthorized);
        add(op, "403", problem("The token lacks the required scope, or the principal may not do this"));
    }
    if has_path {
        add(op, "404", problem("No such resource, or not visible to the caller"));
    }
    if (has_query || has_body) && !oauth {
        add(op, "400", problem("Malformed query string or body"));
    }
    if has_body {
        add(
            op,
            "408",
            problem("The body stopped arriving, or took too long in all (docs/api.md \"Slow clients\")"),
        );
    }
    if has_body && !oauth {
        add(op, "413", problem("The body is too large"));
        add(op, "415", problem("The body is not application/json"));
        add(
            op,
            "422",
            problem("The body is well-formed JSON but invalid; `errors` lists every failing field"),
        );
    }
    if method != "get" || secured {
        add(op, "503", with_retry_after(problem("The database is unavailable or saturated; retry later")));
    }
}

/// Adds an `enum` to a string property (or to the string branch of a nullable one).
fn restrict(property: &mut Value, values: &[&str]) {
    let property = match property.get_mut("oneOf").and_then(Value::as_array_mut) {
        Some(branches) => match branches.iter_mut().find(|b| b["type"] == "string") {
            Some(branch) => branch,
            None => return,
        },
        None => property,
    };
    let nullable = property["type"].as_array().is_some_and(|types| types.iter().any(|t| t == "null"));
    if let Some(object) = property.as_object_mut() {
        object.remove("pattern");
        let mut values = json!(values);
        if nullable && let Some(list) = values.as_array_mut() {
            list.push(Value::Null);
        }
        object.insert("enum".into(), values);
    }
}

impl ApiSpec {
    /// Builds the document from `register`, the same route registration the server uses.
    pub fn build(register: impl FnOnce(&mut ServiceConfig)) -> ApiSpec {
        let (_, api) =
            App::new().into_utoipa_app().openapi(BaseDoc::openapi()).configure(register).split_for_parts();
        let mut document = serde_json::to_value(&api).unwrap_or(Value::Null);
        document["components"]["securitySchemes"] = json!({
            "bearer": { "type": "http", "scheme": "bearer", "bearerFormat": "JWT",
                        "description": "An access token from POST /api/v1/auth/token" },
            "client_basic": { "type": "http", "scheme": "basic",
                              "description": "client_id and client_secret (client_secret_basic)" }
        });
        // Enumerations the domain validates against, so that clients (and contract tests)
        // know the accepted values without trial and error.
        let countries: Vec<&str> = consular_domain::mission::country_codes().collect();
        let timezones: Vec<&str> = consular_domain::mission::timezone_names().collect();
        for schema in ["CreateMission", "UpdateMission"] {
            let properties = &mut document["components"]["schemas"][schema]["properties"];
            if properties.is_object() {
                restrict(&mut properties["country"], &countries);
                restrict(&mut properties["timezone"], &timezones);
            }
        }
        let mut routes = Vec::new();
        let mut maturity: HashMap<String, HashMap<String, String>> = HashMap::new();
        let mut streamed = Vec::new();
        if let Some(paths) = document["paths"].as_object_mut() {
            for (path, item) in paths.iter_mut() {
                let mut allowed = Vec::new();
                for method in METHODS {
                    if let Some(op) = item.get_mut(method) {
                        if op["requestBody"]["content"].get("multipart/form-data").is_some() {
                            streamed.push((ResourceDef::new(path.as_str()), method.to_uppercase()));
                        }
                        complete_operation(op, method);
                        if op.get("x-optional-body").is_some() {
                            op["requestBody"]["required"] = json!(false);
                        }
                        if let Some(op) = op.as_object_mut() {
                            op.remove("x-oauth");
                            op.remove("x-optional-body");
                        }
                        allowed.push(method.to_uppercase());
                        if method == "get" {
                            allowed.push("HEAD".to_owned());
                        }
                        if let Some(label) = op["x-maturity"].as_str() {
                            maturity
                                .entry(path.clone())
                                .or_default()
                                .insert(method.to_uppercase(), label.to_owned());
                        }
                    }
                }
                routes.push((ResourceDef::new(path.as_str()), allowed));
            }
        }
        let json = serde_json::to_string(&document).unwrap_or_default();
        ApiSpec { document, json, routes, maturity, streamed }
    }

    pub fn document(&self) -> &Value {
        &self.document
    }

    pub fn json(&self) -> &str {
        &self.json
    }

    /// The methods of the documented route matching `path`, if any route matches.
    pub fn allowed_methods(&self, path: &str) -> Option<&[String]> {
        // A literal route (`/api/v1/documents/upload`) wins over a template that matches
        // the same path (`/api/v1/documents/{id}`).
        let literal = |def: &ResourceDef| !def.pattern().is_some_and(|p| p.contains('{'));
        let mut matching = self.routes.iter().filter(|(def, _)| def.is_match(path));
        let first = matching.next()?;
        let chosen =
            if literal(&first.0) { first } else { matching.find(|(def, _)| literal(def)).unwrap_or(first) };
        Some(chosen.1.as_slice())
    }

    /// Whether the operation `method` `path` streams its body (an upload), rather than
    /// reading it whole.
    pub fn streams_body(&self, method: &str, path: &str) -> bool {
        self.streamed.iter().any(|(def, m)| m == method && def.is_match(path))
    }

    /// The maturity label of an operation, by method and route template.
    pub fn maturity(&self, method: &str, template: &str) -> Option<&str> {
        // Looked up on every response: borrowed keys, no allocation.
        self.maturity.get(template).and_then(|by_method| by_method.get(method)).map(String::as_str)
    }
}
