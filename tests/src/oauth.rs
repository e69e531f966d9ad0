//! The `oauth2` crate's HTTP client, so that token tests use a real OAuth client.

use std::future::Future;
use std::pin::Pin;

/// The `oauth2` crate's HTTP client over the project's reqwest: oauth2 is built without
/// its default features, so it brings no reqwest of its own.
#[derive(Debug, Clone)]
pub struct OAuthHttp(pub reqwest::Client);

#[derive(Debug)]
pub struct OAuthHttpError(pub String);

impl std::fmt::Display for OAuthHttpError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for OAuthHttpError {}

impl<'c> oauth2::AsyncHttpClient<'c> for OAuthHttp {
    type Error = OAuthHttpError;
    type Future = Pin<Box<dyn Future<Output = Result<oauth2::HttpResponse, OAuthHttpError>> + Send + 'c>>;

    fn call(&'c self, request: oauth2::HttpRequest) -> Self::Future {
        Box::pin(async move {
            let failed = |e: reqwest::Error| OAuthHttpError(e.to_string());
            let (parts, body) = request.into_parts();
            let response = self
                .0
                .request(parts.method, parts.uri.to_string())
                .headers(parts.headers)
                .body(body)
                .send()
                .await
                .map_err(failed)?;
            let mut builder = oauth2::http::Response::builder().status(response.status());
            if let Some(headers) = builder.headers_mut() {
                headers.extend(response.headers().clone());
            }
            let body = response.bytes().await.map_err(failed)?;
            builder.body(body.to_vec()).map_err(|e| OAuthHttpError(e.to_string()))
        })
    }
}
