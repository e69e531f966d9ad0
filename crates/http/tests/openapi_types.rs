//! The OpenAPI document must be typable by a generated client: every enum maps to
//! distinct identifiers the way the generators name enum members, and every closed set
//! of strings the server sends from a domain enum is an `enum` listing every value the
//! domain can produce.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use consular_domain::analytics::Granularity;
use consular_domain::notification::{EmailStatus, Language, NotificationKind};
use consular_domain::{AuditAction, CancelledBy, PrincipalKind, RequestStatus};
use serde_json::Value;
use std::collections::BTreeSet;

fn document() -> Value {
    consular_http::api_spec().document().clone()
}

/// An `enum` of strings in the document: where it is, its values other than `null` (a
/// nullable enum is a union with `None`, not a member) and its `x-enum-varnames`.
struct Enum {
    at: String,
    values: Vec<String>,
    names: Option<Vec<String>>,
}

/// Every `enum` of strings in the document: schemas, properties, items, branches,
/// parameters.
fn enums(value: &Value, at: &str, found: &mut Vec<Enum>) {
    match value {
        Value::Object(object) => {
            if let Some(Value::Array(values)) = object.get("enum") {
                let values = values.iter().filter_map(Value::as_str).map(str::to_owned).collect();
                let names = object
                    .get("x-enum-varnames")
                    .and_then(Value::as_array)
                    .map(|names| names.iter().map(|n| n.as_str().unwrap_or_default().to_owned()).collect());
                found.push(Enum { at: at.to_owned(), values, names });
            }
            for (key, inner) in object {
                enums(inner, &format!("{at}/{key}"), found);
            }
        }
        Value::Array(items) => {
            for (i, inner) in items.iter().enumerate() {
                enums(inner, &format!("{at}/{i}"), found);
            }
        }
        _ => {}
    }
}

/// openapi-python-client (0.29.0, `utils.snake_case`): characters other than letters,
/// digits, `_`, `.`, space and `-` are dropped; when the text has a capital letter, each
/// run `[A-Z]?[a-z]+` is a word of its own; words are split at `_`, `.`, space and `-`,
/// and joined with `_`; then upper-cased (`EnumProperty.values_from_list`).
fn python_member(key: &str) -> String {
    let kept: String = key.chars().filter(|c| c.is_alphanumeric() || "_. -".contains(*c)).collect();
    let mut spaced = String::new();
    if kept.chars().any(char::is_uppercase) {
        // `" ".join(re.split("([A-Z]?[a-z]+)", value))`: a space around every such run.
        let chars: Vec<char> = kept.chars().collect();
        let mut i = 0;
        while i < chars.len() {
            let start = i;
            let mut end = i;
            if chars[end].is_ascii_uppercase() && chars.get(end + 1).is_some_and(char::is_ascii_lowercase) {
                end += 1;
            }
            if chars[end].is_ascii_lowercase() {
                while end < chars.len() && chars[end].is_ascii_lowercase() {
                    end += 1;
                }
                spaced.push(' ');
                spaced.extend(&chars[start..end]);
                spaced.push(' ');
                i = end;
            } else {
                spaced.push(chars[i]);
                i += 1;
            }
        }
    } else {
        spaced = kept;
    }
    let words: Vec<&str> = spaced.split(['_', '.', ' ', '-']).filter(|w| !w.is_empty()).collect();
    words.join("_").to_lowercase().to_uppercase()
}

/// The member names openapi-python-client gives an enum's values, or why it fails
/// (`EnumProperty.values_from_list`): the key of a value is its `x-enum-varnames` entry
/// when there are as many names as values other than `null`, else the value upper-cased
/// when it starts with a letter, else `VALUE_<index>`; a key equal to a member already
/// made is "Duplicate key" (the generation stops), and two keys making one member lose a
/// value silently.
fn python_members(values: &[String], names: Option<&[String]>) -> Result<Vec<String>, String> {
    let names = names.filter(|names| names.len() == values.len());
    let mut members: Vec<String> = Vec::new();
    for (i, value) in values.iter().enumerate() {
        let key = match names {
            Some(names) => names[i].clone(),
            None if value.starts_with(|c: char| c.is_alphabetic()) => value.to_uppercase(),
            None => format!("VALUE_{i}"),
        };
        if members.contains(&key) {
            return Err(format!("Duplicate key {key} (the value `{value}`)"));
        }
        let member = python_member(&key);
        if members.contains(&member) {
            return Err(format!("`{value}` is the member {member} of another value"));
        }
        members.push(member);
    }
    Ok(members)
}

/// The usual rule of the other generators (openapi-generator, Speakeasy's basic
/// conversion): upper case, every run of characters that are not letters or digits one
/// `_`, `VALUE_` before a leading digit; an `x-enum-varnames` entry is taken as it is.
fn common_member(key: &str) -> String {
    let mut member = String::new();
    for c in key.chars() {
        if c.is_alphanumeric() {
            member.extend(c.to_uppercase());
        } else if !member.ends_with('_') {
            member.push('_');
        }
    }
    let member = member.trim_matches('_').to_owned();
    if member.starts_with(|c: char| c.is_ascii_digit()) { format!("VALUE_{member}") } else { member }
}

fn is_identifier(name: &str) -> bool {
    name.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

#[test]
fn every_enum_maps_to_distinct_identifiers() {
    let mut found = Vec::new();
    enums(&document(), "", &mut found);
    assert!(found.len() > 20, "the walk found {} enums", found.len());
    let mut failures = Vec::new();
    for Enum { at, values, names } in &found {
        if let Some(names) = names {
            if names.len() != values.len() {
                failures.push(format!("{at}: {} x-enum-varnames for {} values", names.len(), values.len()));
            }
            let invalid: Vec<&String> = names.iter().filter(|n| !is_identifier(n)).collect();
            if !invalid.is_empty() {
                failures.push(format!("{at}: x-enum-varnames that are not identifiers: {invalid:?}"));
            }
        }
        match python_members(values, names.as_deref()) {
            Ok(members) => {
                if let Some(member) = members.iter().find(|m| !is_identifier(m)) {
                    failures
                        .push(format!("{at}: openapi-python-client member `{member}` is not an identifier"));
                }
            }
            Err(why) => failures.push(format!("{at}: openapi-python-client: {why}")),
        }
        let keys: Vec<String> = match names {
            Some(names) => names.clone(),
            None => values.iter().map(|v| common_member(v)).collect(),
        };
        let distinct: BTreeSet<&String> = keys.iter().collect();
        if distinct.len() != keys.len() || keys.iter().any(|k| k.is_empty()) {
            failures.push(format!("{at}: values share an identifier under the common rule"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn the_rules_name_members_as_the_generators_do() {
    // As openapi-python-client 0.29.0 names them: the signs are dropped.
    assert_eq!(python_member("ETC/GMT+1"), "ETCGMT1");
    assert_eq!(python_member("ETC/GMT-1"), "ETCGMT_1");
    assert_eq!(python_member("AMERICA/PORT-AU-PRINCE"), "AMERICAPORT_AU_PRINCE");
    assert_eq!(python_member("appointmentCancelled"), "APPOINTMENT_CANCELLED");
    assert_eq!(python_member("NO_SHOW"), "NO_SHOW");
    let zones = ["GMT+0", "GMT0"].map(str::to_owned);
    assert!(python_members(&zones, None).is_err());
    assert!(python_members(&zones, Some(&["GMT_PLUS_0".to_owned(), "GMT0".to_owned()])).is_ok());
    assert_eq!(common_member("Etc/GMT+1"), common_member("Etc/GMT-1"));
    assert_eq!(common_member("2fa"), "VALUE_2FA");
}

/// The string enum a property of a component schema has, following a `$ref` and the
/// branches of a nullable property.
fn enum_of(document: &Value, schema: &str, property: &str) -> BTreeSet<String> {
    let mut node = document["components"]["schemas"][schema].clone();
    if let Some(parts) = node["allOf"].as_array() {
        node = parts.iter().find(|p| p["properties"][property].is_object()).cloned().unwrap_or(Value::Null);
    }
    let mut node = node["properties"][property].clone();
    if let Some(branches) = node["oneOf"].as_array() {
        node = branches.iter().find(|b| b["type"] != "null").cloned().unwrap_or(Value::Null);
    }
    if let Some(name) = node["$ref"].as_str() {
        let name = name.trim_start_matches("#/components/schemas/");
        node = document["components"]["schemas"][name].clone();
    }
    let values = node["enum"].as_array().unwrap_or_else(|| panic!("{schema}.{property} has no enum: {node}"));
    values.iter().filter_map(Value::as_str).map(str::to_owned).collect()
}

fn texts(values: impl IntoIterator<Item = &'static str>) -> BTreeSet<String> {
    values.into_iter().map(str::to_owned).collect()
}

#[test]
fn the_closed_sets_list_every_value_the_domain_can_produce() {
    let document = document();
    let principal_kinds = texts(PrincipalKind::ALL.map(PrincipalKind::as_str));
    let cases: [(&str, &str, BTreeSet<String>); 9] = [
        ("ActorBody", "kind", principal_kinds.clone()),
        ("RequestNotification", "recipient_kind", principal_kinds),
        ("AppointmentBody", "cancelled_by", texts(CancelledBy::ALL.map(CancelledBy::as_str))),
        ("AuditEventBody", "action", texts(AuditAction::ALL.map(AuditAction::as_str))),
        ("NotificationBody", "kind", texts(NotificationKind::ALL.map(NotificationKind::as_str))),
        ("NotificationDetails", "status", texts(RequestStatus::ALL.map(RequestStatus::as_str))),
        ("EmailDelivery", "language", texts(Language::ALL.map(Language::as_str))),
        ("EmailDelivery", "status", texts(EmailStatus::ALL.map(EmailStatus::as_str))),
        ("ScopeBody", "granularity", texts(Granularity::ALL.map(Granularity::as_str))),
    ];
    for (schema, property, domain) in cases {
        assert_eq!(enum_of(&document, schema, property), domain, "{schema}.{property}");
    }
    // The sets the server sends from an enum of the wire: the enum is the schema.
    assert_eq!(enum_of(&document, "HealthBody", "status"), texts(["ok", "ready", "unavailable"]));
    assert_eq!(
        document["components"]["schemas"]["HealthBody"]["properties"]["checks"]["additionalProperties"]["$ref"],
        "#/components/schemas/CheckStatus"
    );
    assert_eq!(enum_of(&document, "TokenResponse", "token_type"), texts(["Bearer"]));
    assert!(enum_of(&document, "OAuthErrorResponse", "error").contains("invalid_client"));
}

#[test]
fn excluded_dates_are_dates() {
    let document = document();
    let items = &document["components"]["schemas"]["ScheduleBody"]["properties"]["excluded_dates"]["items"];
    assert_eq!(items["format"], "date", "{items}");
}

#[test]
fn the_served_document_and_key_set_have_what_their_schemas_require() {
    let document = document();
    let schemas = &document["components"]["schemas"];
    for member in schemas["OpenApiDocument"]["required"].as_array().unwrap() {
        assert!(document.get(member.as_str().unwrap()).is_some(), "the document has no `{member}`");
    }
    for member in schemas["OpenApiInfo"]["required"].as_array().unwrap() {
        assert!(
            document["info"][member.as_str().unwrap()].is_string(),
            "the document's info has no `{member}`"
        );
    }
    assert!(document["openapi"].as_str().unwrap().starts_with("3.1."));
    let key = &schemas["JsonWebKey"];
    let required: BTreeSet<&str> =
        key["required"].as_array().unwrap().iter().filter_map(Value::as_str).collect();
    assert_eq!(required, BTreeSet::from(["use", "alg", "kid", "kty", "crv", "x"]));
    // Every member the server sends is a string, and so is each one's schema.
    for (member, schema) in key["properties"].as_object().unwrap() {
        assert_eq!(schema["type"], "string", "JsonWebKey.{member}: {schema}");
    }
}

/// utoipa documents a described `inline` field as an `allOf` of its schema and an object
/// holding the description, which every value fails (a string is not an object).
#[test]
fn no_schema_is_joined_with_a_bare_described_object() {
    fn walk(value: &Value, at: &str, found: &mut Vec<String>) {
        match value {
            Value::Object(object) => {
                let bare = |branch: &Value| {
                    branch["type"] == "object"
                        && branch
                            .as_object()
                            .is_some_and(|b| b.keys().all(|k| k == "type" || k == "description"))
                };
                if object.get("allOf").and_then(Value::as_array).is_some_and(|parts| parts.iter().any(bare)) {
                    found.push(at.to_owned());
                }
                object.iter().for_each(|(key, inner)| walk(inner, &format!("{at}/{key}"), found));
            }
            Value::Array(items) => {
                items.iter().enumerate().for_each(|(i, inner)| walk(inner, &format!("{at}/{i}"), found))
            }
            _ => {}
        }
    }
    let mut found = Vec::new();
    walk(&document(), "", &mut found);
    assert!(found.is_empty(), "{found:?}");
}
