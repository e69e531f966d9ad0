//! Parsing of `CONSULAR_STORAGE_URL` into a backend location, without any I/O.

use std::path::PathBuf;

use object_store::path::Path as StorePath;
use url::Url;

/// Where blobs live, as parsed from the configured URL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Location {
    /// A directory on the local file system (absolute or relative to the working directory).
    Local(PathBuf),
    /// An S3 bucket (the URL as given) and a key prefix inside it (possibly empty).
    S3 { url: String, prefix: StorePath },
}

impl Location {
    pub(crate) fn backend(&self) -> &'static str {
        match self {
            Location::Local(_) => "file",
            Location::S3 { .. } => "s3",
        }
    }
}

/// Parses a storage URL:
/// - `file:///abs/path`, `file://./relative`, `file://relative/path` or a bare path (no
///   `scheme://`) → a local directory;
/// - `s3://bucket` or `s3://bucket/prefix` → S3 (endpoint, region and credentials come from
///   the `AWS_*` environment when the store is built).
pub(crate) fn parse(url: &str) -> Result<Location, String> {
    let url = url.trim();
    if url.is_empty() {
        return Err("storage URL is empty".to_owned());
    }
    let Some((scheme, rest)) = url.split_once("://") else {
        return Ok(Location::Local(PathBuf::from(url)));
    };
    match scheme.to_ascii_lowercase().as_str() {
        "file" => parse_file(url, rest),
        "s3" => parse_s3(url),
        other => Err(format!(
            "unsupported storage URL scheme `{other}` (expected `file://`, `s3://` or a bare path)"
        )),
    }
}

fn parse_file(url: &str, rest: &str) -> Result<Location, String> {
    if rest.is_empty() {
        return Err(format!("storage URL `{url}` names no directory"));
    }
    if rest.starts_with('/') || rest.starts_with("localhost/") {
        // Absolute: let the URL parser handle percent-decoding and `localhost`.
        let parsed = Url::parse(url).map_err(|e| format!("invalid storage URL `{url}`: {e}"))?;
        let path = parsed.to_file_path().map_err(|()| format!("storage URL `{url}` is not a local path"))?;
        return Ok(Location::Local(path));
    }
    // `file://./relative` and `file://relative/dir`: the rest is a path relative to the
    // working directory, taken as written.
    Ok(Location::Local(PathBuf::from(rest)))
}

fn parse_s3(url: &str) -> Result<Location, String> {
    let parsed = Url::parse(url).map_err(|e| format!("invalid storage URL `{url}`: {e}"))?;
    match parsed.host_str() {
        Some(bucket) if !bucket.is_empty() => {}
        _ => return Err(format!("storage URL `{url}` names no bucket (expected `s3://bucket/prefix`)")),
    }
    if parsed.query().is_some() || parsed.fragment().is_some() {
        return Err(format!("storage URL `{url}` must not carry a query or fragment"));
    }
    let prefix = StorePath::from_url_path(parsed.path())
        .map_err(|e| format!("invalid key prefix in storage URL `{url}`: {e}"))?;
    Ok(Location::S3 { url: url.to_owned(), prefix })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_urls() {
        assert_eq!(parse("file:///var/lib/blobs").unwrap(), Location::Local("/var/lib/blobs".into()));
        assert_eq!(parse("file:///tmp/a%20b").unwrap(), Location::Local("/tmp/a b".into()));
        assert_eq!(parse("file://./data/blobs").unwrap(), Location::Local("./data/blobs".into()));
        assert_eq!(parse("file://data/blobs").unwrap(), Location::Local("data/blobs".into()));
        assert_eq!(parse("./data/blobs").unwrap(), Location::Local("./data/blobs".into()));
        assert_eq!(parse("/srv/blobs").unwrap(), Location::Local("/srv/blobs".into()));
        assert!(parse("file://").is_err());
        assert!(parse("").is_err());
    }

    #[test]
    fn s3_urls() {
        let loc = parse("s3://bucket/some/prefix").unwrap();
        assert_eq!(
            loc,
            Location::S3 { url: "s3://bucket/some/prefix".into(), prefix: StorePath::from("some/prefix") }
        );
        let loc = parse("s3://bucket").unwrap();
        assert_eq!(loc, Location::S3 { url: "s3://bucket".into(), prefix: StorePath::default() });
        assert!(parse("s3:///prefix").is_err());
        assert!(parse("s3://bucket/p?x=1").is_err());
    }

    #[test]
    fn unknown_scheme_is_named() {
        let err = parse("gs://bucket/x").unwrap_err();
        assert!(err.contains("`gs`"), "{err}");
    }
}
