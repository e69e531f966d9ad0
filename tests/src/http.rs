//! The HTTP client of the tests and the checks of a response's headers and problems.

use reqwest::Response;
use reqwest::header::HeaderMap;
use serde_json::Value;
use std::time::Duration;

/// A plain HTTP client: no proxy, no redirects, so that tests see exactly what the server says.
pub fn http_client() -> reqwest::Client {
    reqwest::Client::builder()
        .no_proxy()
        .redirect(reqwest::redirect::Policy::none())
        .timeout(Duration::from_secs(30))
        .build()
        .expect("a reqwest client")
}

/// A header as text ("" when absent).
pub fn header(headers: &HeaderMap, name: &str) -> String {
    headers.get(name).map(|v| v.to_str().expect("a text header").to_owned()).unwrap_or_default()
}

/// Checks that `response` is an RFC 9457 problem with `status` and `code`, and returns it.
pub async fn expect_problem(response: Response, status: u16, code: &str) -> (HeaderMap, Value) {
    let actual = response.status().as_u16();
    let headers = response.headers().clone();
    let text = response.text().await.expect("a body");
    assert_eq!(actual, status, "unexpected status; body: {text}");
    assert_eq!(header(&headers, "content-type"), "application/problem+json", "body: {text}");
    let problem: Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("not JSON ({e}): {text}"));
    assert_eq!(problem["status"], status, "{problem}");
    assert_eq!(problem["code"], code, "{problem}");
    for member in ["type", "title", "detail", "instance", "request_id"] {
        assert!(problem[member].is_string(), "problem without `{member}`: {problem}");
    }
    assert!(problem["type"].as_str().unwrap_or_default().starts_with('/'), "{problem}");
    assert_eq!(problem["request_id"].as_str(), Some(header(&headers, "x-request-id").as_str()), "{problem}");
    (headers, problem)
}
