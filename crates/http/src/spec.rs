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
use actix_web::web::Bytes;
use consular_domain::Scope;
use consular_domain::validation::{refused_in_line, refused_in_text};
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
                       accept Idempotency-Key. An operation that declares query parameters refuses an \
                       unknown one (400 invalid_query); one that declares none ignores the query string, an \
                       access_token parameter aside (401). \
                       Each operation's maturity is in x-maturity and the API-Maturity response header."
    ),
    // Relative: the deployment that served the document (`ApiSpec::build` names the
    // configured public address instead, docs/api.md "Basics").
    servers((url = "/", description = "The deployment that serves this document")),
    // Every tag an operation uses, in the order of `routes::register` (a test holds both).
    tags(
        (name = "auth", description =
            "OAuth 2.0 tokens (client credentials, refresh, revocation) and the public keys that verify \
             them"),
        (name = "clients", description =
            "API clients, each bound to one principal, and their secrets; managed by admins"),
        (name = "missions", description =
            "Embassies and consulates, read by every caller, managed by global admins"),
        (name = "services", description =
            "The service catalog shared by all missions: fees, SLA, required documents and workflow stages \
             of each service type"),
        (name = "citizens", description =
            "Citizens' profiles and their registration with a mission"),
        (name = "staff", description =
            "Staff members, the service types they handle and their queues"),
        (name = "requests", description =
            "Service requests, their workflow and the staff's internal notes"),
        (name = "messages", description =
            "The thread between the citizen who owns a request and the mission's staff"),
        (name = "documents", description =
            "Citizens' documents: streamed uploads, expiring downloads, verification and deletion"),
        (name = "exports", description =
            "A citizen's data in one zip archive, built in the background, downloadable for 7 days"),
        (name = "appointments", description =
            "A mission's availability in slots, and the appointments booked in them"),
        (name = "notifications", description =
            "The caller's in-app notifications, their email preferences, and the delivery of the emails \
             about a request"),
        (name = "analytics", description =
            "Volume, completion and SLA figures of a mission or of all, for admins"),
        (name = "audit", description =
            "Who changed what and when, across every mission (global admins)"),
        (name = "operations", description =
            "Health probes for orchestrators, and this document"),
    ),
    components(schemas(crate::problem::Problem, crate::problem::ProblemFieldError))
)]
struct BaseDoc;

pub(crate) const METHODS: [&str; 5] = ["get", "post", "put", "patch", "delete"];

pub struct ApiSpec {
    document: Value,
    /// The document as served, shared by every response rather than copied into each.
    json: Bytes,
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

/// The operations a representative's citizen token may call for a dependant, naming them
/// in `On-Behalf-Of` (docs/representation.md "Acting"): the dependant's profile, and their
/// requests, messages, documents and appointments. Elsewhere the header is refused (403:
/// not done on someone's behalf) and not declared.
pub const ACTING_OPERATIONS: [&str; 17] = [
    "get_citizen",
    "list_requests",
    "submit_request",
    "get_request",
    "cancel_request",
    "list_request_messages",
    "post_request_message",
    "list_request_documents",
    "list_documents",
    "upload_document",
    "get_document",
    "delete_document",
    "list_appointments",
    "book_appointment",
    "get_appointment",
    "reschedule_appointment",
    "cancel_appointment",
];

/// Declares `On-Behalf-Of` on an operation a representative may call for a dependant,
/// with what it may answer: 400 for a value that is no id, 404 for a citizen the caller
/// does not act for now.
fn declare_on_behalf_of(op: &mut Value) {
    let acting = op["operationId"].as_str().is_some_and(|id| ACTING_OPERATIONS.contains(&id));
    if !acting {
        return;
    }
    let header = json!({
        "name": "On-Behalf-Of",
        "in": "header",
        "required": false,
        "description": "Acts for this dependant (a citizen id), under the representations in force now \
                        between the caller's citizen and them (docs/representation.md \"Acting\")",
        "schema": { "type": "string", "format": "uuid" }
    });
    match op.get_mut("parameters").and_then(Value::as_array_mut) {
        Some(params) => params.push(header),
        None => op["parameters"] = json!([header]),
    }
    add(op, "400", problem("Malformed query string or body, or an On-Behalf-Of that is not an id"));
    add(op, "404", problem("No such resource, not visible to the caller, or no representation in force"));
}

fn complete_operation(op: &mut Value, method: &str) {
    declare_on_behalf_of(op);
    if let Some(params) = op.get_mut("parameters").and_then(Value::as_array_mut) {
        for param in params.iter_mut().filter(|p| p["name"] == "Idempotency-Key") {
            param["schema"] =
                json!({ "type": "string", "minLength": 1, "maxLength": 255, "pattern": "^[!-~]+$" });
        }
    }
    let secured = needs_token(op);
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
    // Every error the middleware renders is a problem, also at the OAuth endpoints for the
    // statuses OAuth does not define (docs/api.md "Errors"), so that a generated client
    // parses a 500 (or any status not listed) into the Problem type.
    add(op, "default", problem("Any other error, as an RFC 9457 problem (500 included)"));
}

/// Adds an `enum` to a string property (or to the string branch of a nullable one), and
/// `x-enum-varnames` when `names` are given: the identifier of each value in a generated
/// client, in the same order. The `null` of a nullable property comes last and has no
/// name: openapi-python-client pairs the names with the values other than `null`, and
/// ignores them unless there are as many (`EnumProperty.build`).
fn restrict(property: &mut Value, values: &[&str], names: Option<&[String]>) {
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
        if let Some(names) = names {
            object.insert("x-enum-varnames".into(), json!(names));
        }
    }
}

/// The identifier of a time zone in a generated client: upper case, `+` and `-` before a
/// digit spelt `PLUS` and `MINUS`, every other run of characters that are not letters or
/// digits one `_` (`Etc/GMT+1` is `ETC_GMT_PLUS_1`, `Etc/GMT-1` `ETC_GMT_MINUS_1`,
/// `America/Port-au-Prince` `AMERICA_PORT_AU_PRINCE`). A generator's own mangling loses
/// the signs: `Etc/GMT+1` and `Etc/GMT-1` are one identifier where every other character
/// becomes `_`, and `GMT+0` and `GMT0` one where it is dropped (openapi-python-client,
/// which then stops with "Duplicate key").
fn timezone_varname(zone: &str) -> String {
    let mut name = String::new();
    let mut chars = zone.chars().peekable();
    while let Some(c) = chars.next() {
        let word = match c {
            '+' => Some("PLUS"),
            '-' if chars.peek().is_some_and(char::is_ascii_digit) => Some("MINUS"),
            _ => None,
        };
        if let Some(word) = word {
            name.push('_');
            name.push_str(word);
            name.push('_');
        } else if c.is_ascii_alphanumeric() {
            name.push(c.to_ascii_uppercase());
        } else {
            name.push('_');
        }
    }
    name.split('_').filter(|part| !part.is_empty()).collect::<Vec<_>>().join("_")
}

/// A `pattern` matching the strings without a character `refused` refuses, made from the
/// rule itself so that the document and the server cannot disagree (every control
/// character is below U+00A0, so `\xNN` names each).
fn pattern_without(refused: fn(char) -> bool) -> String {
    let mut runs: Vec<(u32, u32)> = Vec::new();
    for code in (0..0xA0u32).filter(|&c| char::from_u32(c).is_some_and(refused)) {
        match runs.last_mut() {
            Some((_, last)) if *last + 1 == code => *last = code,
            _ => runs.push((code, code)),
        }
    }
    let class: String = runs
        .iter()
        .map(|&(first, last)| match last - first {
            0 => format!("\\x{first:02x}"),
            1 => format!("\\x{first:02x}\\x{last:02x}"),
            _ => format!("\\x{first:02x}-\\x{last:02x}"),
        })
        .collect();
    format!("^[^{class}]*$")
}
/// Gives every free string of the requests a `pattern` saying which control characters
/// are refused (docs/api.md "Text"), so that the document tells what the boundary checks
/// (`extract::controls_in_json`, `ApiQuery`, the form readers) refuse: query parameters
/// and form fields refuse every control character (`validation::refused_in_line`), JSON
/// bodies all but tab, line feed and carriage return (`validation::refused_in_text`), the
/// schemas they refer to included. A string with an `enum`, a `const`, a `format` or a pattern of its own is
/// left as it is. Done on the whole document, so that no new field can be forgotten.
fn forbid_control_characters(document: &mut Value) {
    let line_pattern = pattern_without(refused_in_line);
    let text_pattern = pattern_without(refused_in_text);
    fn refs(schema: &Value, found: &mut Vec<String>) {
        match schema {
            Value::Object(object) => {
                if let Some(name) = object.get("$ref").and_then(Value::as_str) {
                    found.extend(name.strip_prefix("#/components/schemas/").map(str::to_owned));
                }
                object.values().for_each(|v| refs(v, found));
            }
            Value::Array(items) => items.iter().for_each(|v| refs(v, found)),
            _ => {}
        }
    }
    fn annotate(schema: &mut Value, pattern: &str) {
        let Some(object) = schema.as_object_mut() else { return };
        let is_string = match object.get("type") {
            Some(Value::String(kind)) => kind == "string",
            Some(Value::Array(kinds)) => kinds.iter().any(|k| k == "string"),
            _ => false,
        };
        let constrained = ["enum", "const", "format", "pattern"].iter().any(|k| object.contains_key(*k));
        if is_string && !constrained {
            object.insert("pattern".into(), json!(pattern));
        }
        for key in ["items", "additionalProperties", "not"] {
            if let Some(inner) = object.get_mut(key) {
                annotate(inner, pattern);
            }
        }
        if let Some(properties) = object.get_mut("properties").and_then(Value::as_object_mut) {
            properties.values_mut().for_each(|v| annotate(v, pattern));
        }
        for key in ["oneOf", "anyOf", "allOf", "prefixItems"] {
            if let Some(inner) = object.get_mut(key).and_then(Value::as_array_mut) {
                inner.iter_mut().for_each(|v| annotate(v, pattern));
            }
        }
    }
    // The components each pattern applies to: those a request refers to, transitively;
    // a component a form and a JSON body share takes the stricter pattern.
    let mut line: Vec<String> = Vec::new();
    let mut text: Vec<String> = Vec::new();
    if let Some(paths) = document["paths"].as_object_mut() {
        for op in paths.values_mut().filter_map(Value::as_object_mut).flat_map(|item| item.values_mut()) {
            if let Some(params) = op.get_mut("parameters").and_then(Value::as_array_mut) {
                for param in params.iter_mut().filter(|p| p["in"] == "query") {
                    refs(&param["schema"], &mut line);
                    annotate(&mut param["schema"], &line_pattern);
                }
            }
            if let Some(content) = op.pointer_mut("/requestBody/content").and_then(Value::as_object_mut) {
                for (media_type, body) in content.iter_mut() {
                    let (pattern, found) = if media_type.contains("json") {
                        (&text_pattern, &mut text)
                    } else {
                        (&line_pattern, &mut line)
                    };
                    refs(&body["schema"], found);
                    annotate(&mut body["schema"], pattern);
                }
            }
        }
    }
    let Some(schemas) = document.pointer_mut("/components/schemas").and_then(Value::as_object_mut) else {
        return;
    };
    for (found, pattern) in [(&mut line, &line_pattern), (&mut text, &text_pattern)] {
        let mut seen = std::collections::HashSet::new();
        while let Some(name) = found.pop() {
            if seen.insert(name.clone())
                && let Some(schema) = schemas.get_mut(&name)
            {
                refs(schema, found);
                annotate(schema, pattern);
            }
        }
    }
}

/// The name of the security scheme of bearer tokens, which every operation that reads one
/// lists with the scopes it accepts.
pub(crate) const OAUTH2: &str = "oauth2";

/// What a scope lets a token do, for the `oauth2` scheme's `scopes` (docs/api.md
/// "Clients, principals and scopes").
fn scope_description(scope: Scope) -> &'static str {
    match scope {
        Scope::Admin => {
            "Administration: the clients, staff, citizens, slots and analytics of the admin's \
             mission, and the staff's work on its requests; a global admin (a client without a \
             mission) also manages the missions and the service catalog and reads the audit log"
        }
        Scope::Staff => {
            "Staff work on the requests of the staff member's mission: status changes, notes, \
             messages, document verification, attendance"
        }
        Scope::Citizen => {
            "A citizen's own profile, requests, messages, documents, appointments and \
             notifications (citizen portals); never combined with another scope"
        }
    }
}

/// The security schemes: `oauth2`, the client-credentials grant whose access token every
/// secured operation takes as a bearer token (each operation lists the scopes it accepts,
/// any one of them sufficing), and `client_basic`, the client authentication of the
/// token endpoints (docs/api.md "Authentication").
fn security_schemes() -> Value {
    let scopes: serde_json::Map<String, Value> =
        Scope::ALL.iter().map(|&s| (s.as_str().to_owned(), json!(scope_description(s)))).collect();
    json!({
        OAUTH2: {
            "type": "oauth2",
            "description": "OAuth 2.0 client credentials (RFC 6749 section 4.4): the access token from \
                            POST /api/v1/auth/token, an EdDSA-signed JWT (RFC 9068), sent as \
                            `Authorization: Bearer <token>`. An operation that lists several \
                            requirements accepts a token holding any one of their scopes.",
            "flows": { "clientCredentials": {
                "tokenUrl": "/api/v1/auth/token",
                "refreshUrl": "/api/v1/auth/refresh",
                "scopes": scopes,
            } }
        },
        "client_basic": { "type": "http", "scheme": "basic",
                          "description": "client_id and client_secret (client_secret_basic)" }
    })
}

/// The document as JSON text, as served.
fn serialised(document: &Value) -> Bytes {
    Bytes::from(serde_json::to_vec(document).unwrap_or_default())
}

/// Whether the operation takes a bearer token: one of its security requirements is the
/// `oauth2` scheme's.
pub(crate) fn needs_token(op: &Value) -> bool {
    op.get("security").and_then(Value::as_array).is_some_and(|s| s.iter().any(|r| r.get(OAUTH2).is_some()))
}

impl ApiSpec {
    /// Builds the document from `register`, the same route registration the server uses.
    /// A deployment whose public address is configured (`public_base_url`,
    /// `https://api.example.org`) names it as its server rather than the relative `/`
    /// (docs/api.md "Basics"); `None` keeps the relative one.
    pub fn build(register: impl FnOnce(&mut ServiceConfig), public_base_url: Option<&str>) -> ApiSpec {
        let (_, api) =
            App::new().into_utoipa_app().openapi(BaseDoc::openapi()).configure(register).split_for_parts();
        let mut document = serde_json::to_value(&api).unwrap_or(Value::Null);
        if let Some(url) = public_base_url
            && let Some(server) = document.pointer_mut("/servers/0")
        {
            server["url"] = json!(url.trim_end_matches('/'));
        }
        document["components"]["securitySchemes"] = security_schemes();
        // Enumerations the domain validates against, so that clients (and contract tests)
        // know the accepted values without trial and error.
        // Time zones get names of their own in generated clients (`timezone_varname`);
        // country codes are two capital letters, distinct identifiers as they are.
        let countries: Vec<&str> = consular_domain::mission::country_codes().collect();
        let timezones: Vec<&str> = consular_domain::mission::timezone_names().collect();
        let timezone_names: Vec<String> = timezones.iter().map(|zone| timezone_varname(zone)).collect();
        for schema in ["CreateMission", "UpdateMission"] {
            let properties = &mut document["components"]["schemas"][schema]["properties"];
            if properties.is_object() {
                restrict(&mut properties["country"], &countries, None);
                restrict(&mut properties["timezone"], &timezones, Some(&timezone_names));
            }
        }
        forbid_control_characters(&mut document);
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
        let json = serialised(&document);
        ApiSpec { document, json, routes, maturity, streamed }
    }

    pub fn document(&self) -> &Value {
        &self.document
    }

    pub fn json(&self) -> &str {
        std::str::from_utf8(&self.json).unwrap_or_default()
    }

    /// The served bytes of [`ApiSpec::json`], shared (a reference count, no copy).
    pub fn body(&self) -> Bytes {
        self.json.clone()
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn time_zones_are_named_with_their_signs() {
        let names = ["Etc/GMT+1", "Etc/GMT-1", "GMT0", "GMT+0", "GMT-0", "America/Port-au-Prince", "EST5EDT"]
            .map(timezone_varname);
        assert_eq!(
            names,
            [
                "ETC_GMT_PLUS_1",
                "ETC_GMT_MINUS_1",
                "GMT0",
                "GMT_PLUS_0",
                "GMT_MINUS_0",
                "AMERICA_PORT_AU_PRINCE",
                "EST5EDT"
            ]
        );
    }

    #[test]
    fn the_text_patterns_are_the_rules_of_the_boundary() {
        assert_eq!(pattern_without(refused_in_line), r"^[^\x00-\x1f\x7f-\x9f]*$");
        assert_eq!(pattern_without(refused_in_text), r"^[^\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]*$");
    }
}
