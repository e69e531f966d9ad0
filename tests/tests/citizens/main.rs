//! `/api/v1/citizens` through the API: admins of the mission register citizens (with
//! their API client if asked), the citizen, their mission's staff and admins read them,
//! the citizen changes their contact details and admins change everything; lists are
//! for admins, a mission admin seeing only their mission.
//! One module per concern; the helpers they share are below.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod concurrency;
mod isolation;
mod lists;
mod registration;
mod updates;

use consular_tests::{
    AUDIT_EVENTS, Backend, CITIZENS, Expect, SERVICES, STAFF, TestApp, both, citizen_body, error_codes,
    error_pointers, expect_problem, header, instant, text, token_claims, with_query,
};
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};
use std::time::Duration;

const CLIENTS: &str = "/api/v1/auth/clients";

fn path_of(citizen: &Value) -> String {
    format!("{CITIZENS}/{}", text(citizen, "id"))
}

/// `body` without its `client` member (what a read of a registration answers).
fn without_client(body: &Value) -> Value {
    let mut body = body.clone();
    body.as_object_mut().unwrap().remove("client");
    body
}

/// A global admin token and the id of a new mission `fr-paris`.
async fn admin_and_mission(app: &TestApp) -> (String, String) {
    let admin = app.admin_token().await;
    let mission = app.create_mission(&admin, "fr-paris").await;
    (admin, text(&mission, "id"))
}

/// Query parameters.
type Query<'a> = Vec<(&'a str, &'a str)>;

fn sorted(mut values: Vec<String>) -> Vec<String> {
    values.sort();
    values
}
