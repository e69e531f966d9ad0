//! What every operation of the OpenAPI document carries, so that a client generated from
//! it has a name, a text and a type for everything: an `operationId`, a summary and a
//! description, declared tags, and a `default` problem response for the statuses it
//! does not list (docs/api.md "Errors"); and the server the document names
//! (docs/api.md "Basics").

use serde_json::{Value, json};
use std::collections::BTreeSet;

const METHODS: [&str; 8] = ["get", "put", "post", "delete", "options", "head", "patch", "trace"];

/// Every operation, as `METHOD path` and the operation object.
fn operations(document: &Value) -> Vec<(String, &Value)> {
    let found: Vec<(String, &Value)> = document["paths"]
        .as_object()
        .into_iter()
        .flatten()
        .flat_map(|(path, item)| {
            METHODS.iter().filter_map(move |method| {
                item.get(*method).map(|op| (format!("{} {path}", method.to_uppercase()), op))
            })
        })
        .collect();
    assert!(found.len() > 50, "{} operations", found.len());
    found
}

#[test]
fn every_operation_has_a_unique_id_a_summary_and_a_description() {
    let spec = consular_http::api_spec();
    let mut ids = BTreeSet::new();
    let mut missing = Vec::new();
    for (name, op) in operations(spec.document()) {
        let text = |key: &str| op[key].as_str().map(str::trim).unwrap_or("");
        let id = text("operationId");
        assert!(!id.is_empty(), "{name} has no operationId");
        assert!(ids.insert(id.to_owned()), "{name}: operationId {id} is used twice");
        assert!(!text("summary").is_empty(), "{name} has no summary");
        if text("description").is_empty() || text("description") == text("summary") {
            missing.push(name);
        }
    }
    assert!(missing.is_empty(), "operations without a description of their own: {missing:#?}");
}

#[test]
fn every_tag_used_is_declared_with_a_description_and_every_declared_tag_is_used() {
    let spec = consular_http::api_spec();
    let declared = spec.document()["tags"].as_array().expect("the document declares its tags");
    let mut names = BTreeSet::new();
    for tag in declared {
        let name = tag["name"].as_str().expect("a tag has a name");
        assert!(names.insert(name), "the tag {name} is declared twice");
        let description = tag["description"].as_str().unwrap_or("");
        assert!(!description.trim().is_empty(), "the tag {name} has no description");
    }
    let mut used = BTreeSet::new();
    for (name, op) in operations(spec.document()) {
        let tags = op["tags"].as_array().map(Vec::as_slice).unwrap_or_default();
        assert!(!tags.is_empty(), "{name} has no tag");
        used.extend(tags.iter().filter_map(Value::as_str));
    }
    assert_eq!(used, names, "the tags the operations use and those the document declares");
}

#[test]
fn every_operation_answers_any_other_status_as_a_problem() {
    let spec = consular_http::api_spec();
    for (name, op) in operations(spec.document()) {
        let default = &op["responses"]["default"];
        assert!(default["description"].as_str().is_some_and(|d| !d.is_empty()), "{name}: {default}");
        assert_eq!(
            default["content"],
            json!({ "application/problem+json": { "schema": { "$ref": "#/components/schemas/Problem" } } }),
            "{name}"
        );
    }
}

#[test]
fn the_server_is_the_deployment_itself_or_its_configured_public_address() {
    let spec = consular_http::api_spec();
    let servers = spec.document()["servers"].as_array().expect("the document names a server");
    assert_eq!(servers.len(), 1, "{servers:?}");
    assert_eq!(servers[0]["url"], "/", "relative: the address the document was fetched from");
    let description = servers[0]["description"].clone();

    let unchanged = consular_http::api_spec_at(None);
    assert_eq!(unchanged.json(), spec.json());

    let public = consular_http::api_spec_at(Some("https://consular.example.org/"));
    let served: Value = serde_json::from_str(public.json()).unwrap();
    assert_eq!(
        served["servers"],
        json!([{ "url": "https://consular.example.org", "description": description }])
    );
    assert_eq!(public.document(), &served, "the data and the JSON served agree");
    let mut rest = served;
    rest["servers"] = spec.document()["servers"].clone();
    assert_eq!(&rest, spec.document(), "nothing else changes");
}

/// `On-Behalf-Of` is declared on exactly the operations a representative may call for a
/// dependant, each of which exists and documents the 400 and 404 it may answer.
#[test]
fn on_behalf_of_is_declared_where_a_representative_acts() {
    let spec = consular_http::api_spec();
    let declared: Vec<String> = operations(spec.document())
        .into_iter()
        .filter(|(_, op)| {
            op["parameters"]
                .as_array()
                .is_some_and(|params| params.iter().any(|p| p["name"] == "On-Behalf-Of"))
        })
        .map(|(_, op)| {
            for status in ["400", "404"] {
                assert!(op["responses"].get(status).is_some(), "{} documents {status}", op["operationId"]);
            }
            op["operationId"].as_str().unwrap_or_default().to_owned()
        })
        .collect();
    let mut expected: Vec<String> =
        consular_http::spec::ACTING_OPERATIONS.iter().map(|s| s.to_string()).collect();
    let mut declared = declared;
    declared.sort();
    expected.sort();
    assert_eq!(declared, expected);
}
