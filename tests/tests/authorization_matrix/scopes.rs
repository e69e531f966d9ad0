//! The scopes the OpenAPI document declares against the scopes the server enforces, as
//! the matrix saw them (issue 24: generated clients read an operation's `security` to
//! know which token it takes, docs/api.md "Clients, principals and scopes").
//!
//! A scope is accepted by an operation iff no caller holding it was answered 403
//! `insufficient_scope` by it; the operation's `oauth2` requirements must name exactly
//! the accepted scopes, one requirement per scope (any one suffices), or the one
//! requirement `{"oauth2": []}` when every scope is accepted. An operation without an
//! `oauth2` requirement refuses no scope; one with `security: []` answers a caller
//! without credentials; one with only `oauth2` and client requirements refuses it 401.
//! Every operation of the document must declare its `security` and have been called by
//! the matrix with a token of every scope.

use crate::rules::Who;
use serde_json::Value;
use std::collections::BTreeSet;

/// The name of the OAuth 2.0 scheme in the document's `securitySchemes`.
pub const OAUTH2: &str = "oauth2";

/// Every scope a token may hold (crates/domain/src/scope.rs).
pub const SCOPES: [&str; 3] = ["admin", "staff", "citizen"];

impl Who {
    /// The one scope of the principal's token (`None`: no token). `check_tokens` holds
    /// it to the tokens the fixtures made.
    pub fn scope(self) -> Option<&'static str> {
        match self {
            Who::Anonymous => None,
            Who::Owner | Who::Neighbour | Who::Foreigner | Who::Impostor => Some("citizen"),
            Who::Representative | Who::OutOfScope | Who::EndedRepresentative | Who::FutureRepresentative => {
                Some("citizen")
            }
            Who::StaffM1 | Who::StaffM2 | Who::StaffImpostor => Some("staff"),
            Who::AdminM1 | Who::AdminM2 | Who::GlobalAdmin => Some("admin"),
        }
    }
}

/// How one call of an operation was answered: the status and the problem's `code` (or
/// the OAuth `error`).
#[derive(Debug, Clone)]
pub struct Seen {
    pub who: Who,
    pub status: u16,
    pub code: String,
}

impl Seen {
    fn refused_for_scope(&self) -> bool {
        self.status == 403 && self.code == "insufficient_scope"
    }
}

/// The problems with the tokens the matrix calls with: each must hold exactly its
/// principal's [`Who::scope`], or the scopes this module infers would be another's.
pub fn check_tokens(token_scope: impl Fn(Who) -> Option<String>) -> Vec<String> {
    Who::ALL
        .into_iter()
        .filter_map(|who| {
            let held = token_scope(who);
            (held.as_deref() != who.scope()).then(|| {
                format!("{}: the token holds {held:?}, the matrix counts it as {:?}", who.name(), who.scope())
            })
        })
        .collect()
}

/// The problems of `operation`'s declared `security` against `seen`, its calls by
/// every principal; empty when they agree.
pub fn check(operation: &Value, seen: &[Seen]) -> Vec<String> {
    let Some(requirements) = operation["security"].as_array() else {
        return vec!["declares no `security` (public operations declare `security: []`)".to_owned()];
    };
    if seen.is_empty() {
        return vec!["the matrix never called it".to_owned()];
    }
    let mut problems = Vec::new();

    // What the server enforces, scope by scope. A caller who may not see the object is
    // answered 404 before its scope is looked at (`policy::citizens::change`: staff of
    // another mission), so one refusal of a scope is enough to say it is refused. A call
    // acting for someone is refused what the citizen themself may do (their profile's
    // changes) whatever the scope: it says nothing of the scope.
    let mut accepted = BTreeSet::new();
    for scope in SCOPES {
        let calls: Vec<&Seen> =
            seen.iter().filter(|s| s.who.scope() == Some(scope) && !s.who.acts_for_owner()).collect();
        if calls.is_empty() {
            problems.push(format!("no caller with the `{scope}` scope called it"));
        } else if !calls.iter().any(|s| s.refused_for_scope()) {
            accepted.insert(scope);
        }
    }

    // What the document declares.
    let mut alternatives: Vec<BTreeSet<&str>> = Vec::new();
    let mut without_credentials = false;
    for requirement in requirements {
        let Some(schemes) = requirement.as_object() else {
            problems.push(format!("a security requirement that is not an object: {requirement}"));
            continue;
        };
        without_credentials |= schemes.is_empty();
        if let Some(scopes) = schemes.get(OAUTH2) {
            let scopes: BTreeSet<&str> =
                scopes.as_array().into_iter().flatten().filter_map(Value::as_str).collect();
            alternatives.push(scopes);
        }
    }
    let anonymous = seen.iter().find(|s| s.who == Who::Anonymous);
    if alternatives.is_empty() {
        if accepted.len() < SCOPES.len() {
            problems.push(format!("declares no `{OAUTH2}` requirement but accepts only {accepted:?}"));
        }
        if requirements.is_empty() && anonymous.is_some_and(|s| s.status == 401) {
            problems.push("declares `security: []` but refuses a caller without credentials 401".to_owned());
        }
        return problems;
    }
    if !without_credentials && anonymous.is_some_and(|s| s.status != 401) {
        let status = anonymous.map(|s| s.status).unwrap_or_default();
        problems.push(format!("declares a token required but answers a caller without one {status}"));
    }
    // The server asks for one scope among several (`policy::common::require_scope`):
    // a requirement naming two would ask for both.
    if let Some(both) = alternatives.iter().find(|scopes| scopes.len() > 1) {
        problems.push(format!("requires {both:?} together, which no operation does"));
    }
    let any = alternatives.iter().any(BTreeSet::is_empty);
    if any && alternatives.len() > 1 {
        problems.push(format!("lists scopes beside `{OAUTH2}: []`, which already accepts any"));
    }
    let declared: BTreeSet<&str> =
        if any { SCOPES.into_iter().collect() } else { alternatives.iter().flatten().copied().collect() };
    if let Some(unknown) = declared.iter().find(|scope| !SCOPES.contains(scope)) {
        problems.push(format!("names the unknown scope `{unknown}`"));
    }
    if !any && declared.len() == SCOPES.len() {
        problems.push(format!("lists every scope: `{OAUTH2}: []` says any token"));
    }
    if declared != accepted {
        let wanted: Vec<String> = if accepted.len() == SCOPES.len() {
            vec![format!("{{\"{OAUTH2}\": []}}")]
        } else {
            SCOPES
                .iter()
                .filter(|s| accepted.contains(*s))
                .map(|s| format!("{{\"{OAUTH2}\": [\"{s}\"]}}"))
                .collect()
        };
        problems.push(format!(
            "declares {declared:?} but the server accepts {accepted:?}: its security should be [{}]",
            wanted.join(", ")
        ));
    }
    problems
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn seen(refused: &[&str]) -> Vec<Seen> {
        Who::ALL
            .into_iter()
            .map(|who| match who.scope() {
                None => Seen { who, status: 401, code: "unauthorized".into() },
                Some(scope) if refused.contains(&scope) => {
                    Seen { who, status: 403, code: "insufficient_scope".into() }
                }
                Some(_) => Seen { who, status: 200, code: String::new() },
            })
            .collect()
    }

    fn op(security: Value) -> Value {
        json!({ "security": security })
    }

    #[test]
    fn the_declared_scopes_must_be_those_accepted() {
        let staff_or_admin = op(json!([{ "oauth2": ["staff"] }, { "oauth2": ["admin"] }]));
        assert!(check(&staff_or_admin, &seen(&["citizen"])).is_empty());
        assert_eq!(check(&staff_or_admin, &seen(&["citizen", "staff"])).len(), 1);
        assert_eq!(check(&staff_or_admin, &seen(&[])).len(), 1);
        assert!(check(&op(json!([{ "oauth2": [] }])), &seen(&[])).is_empty());
        assert_eq!(check(&op(json!([{ "oauth2": [] }])), &seen(&["admin"])).len(), 1);
        let every = op(json!([{ "oauth2": ["admin"] }, { "oauth2": ["staff"] }, { "oauth2": ["citizen"] }]));
        assert_eq!(check(&every, &seen(&[])).len(), 1, "any token is written `oauth2: []`");
        let together = op(json!([{ "oauth2": ["staff", "admin"] }]));
        assert_eq!(check(&together, &seen(&["citizen"])).len(), 1);
    }

    #[test]
    fn public_operations_and_missing_declarations_are_held_to_the_calls() {
        assert_eq!(check(&json!({}), &seen(&[])).len(), 1, "no security declared");
        assert_eq!(check(&op(json!([{ "oauth2": [] }])), &[]).len(), 1, "never called");
        let mut public = seen(&[]);
        assert_eq!(check(&op(json!([])), &public).len(), 1, "a public operation refused 401");
        public[0].status = 200;
        assert!(check(&op(json!([])), &public).is_empty());
        assert_eq!(check(&op(json!([])), &seen(&["staff"])).len(), 2, "public, refusing staff and 401");
        let client = op(json!([{}, { "client_basic": [] }]));
        assert!(check(&client, &seen(&[])).is_empty());
        let mut one = seen(&[]);
        one[1] = Seen { who: one[1].who, status: 403, code: "insufficient_scope".into() };
        assert_eq!(check(&op(json!([{ "oauth2": [] }])), &one).len(), 1, "one citizen refused: citizen is");
        one.retain(|s| s.who.scope() != Some("staff"));
        assert_eq!(check(&op(json!([{ "oauth2": ["admin"] }])), &one).len(), 1, "staff never called");
    }
}
