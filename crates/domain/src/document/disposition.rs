//! Header values for downloads: a file name chosen by a citizen must never break (or
//! inject into) a `Content-Disposition` or `Content-Type` header. One rule for the
//! service's own downloads (http) and the store's presigned ones (storage).

use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, utf8_percent_encode};

/// RFC 8187 `attr-char`s stay as they are in `filename*`; everything else is encoded.
const ATTR_CHAR: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'!')
    .remove(b'#')
    .remove(b'$')
    .remove(b'&')
    .remove(b'+')
    .remove(b'-')
    .remove(b'.')
    .remove(b'^')
    .remove(b'_')
    .remove(b'`')
    .remove(b'|')
    .remove(b'~');

/// Longest file name kept, in characters; longer names are cut.
const MAX_NAME_CHARS: usize = 150;

/// Name used when nothing usable is left of the given one.
const FALLBACK_NAME: &str = "document";

/// `attachment; filename="…"; filename*=UTF-8''…` for `file_name`: only its last path
/// component is kept, control characters are dropped, the quoted ASCII form replaces
/// anything else by `_`, and the `filename*` form carries the exact UTF-8 name.
pub fn attachment_disposition(file_name: &str) -> String {
    let base = file_name.rsplit(['/', '\\']).next().unwrap_or_default();
    let cleaned: String = base.chars().filter(|c| !c.is_control()).take(MAX_NAME_CHARS).collect();
    let cleaned = cleaned.trim();
    let name = if cleaned.is_empty() || cleaned == "." || cleaned == ".." { FALLBACK_NAME } else { cleaned };
    let ascii: String = name
        .chars()
        .map(|c| if c.is_ascii_graphic() && c != '"' && c != '\\' || c == ' ' { c } else { '_' })
        .collect();
    format!("attachment; filename=\"{ascii}\"; filename*=UTF-8''{}", utf8_percent_encode(name, ATTR_CHAR))
}

/// `media_type` when it is a bare `type/subtype` made of token characters, else
/// `application/octet-stream`: the stored value is sniffed, but a header never carries
/// anything else.
pub fn safe_media_type(media_type: &str) -> &str {
    let token =
        |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_alphanumeric() || b"!#$&^_.+-".contains(&b));
    match media_type.split_once('/') {
        Some((kind, sub)) if token(kind) && token(sub) => media_type,
        _ => "application/octet-stream",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_names_pass_through() {
        assert_eq!(
            attachment_disposition("passport scan.pdf"),
            "attachment; filename=\"passport scan.pdf\"; filename*=UTF-8''passport%20scan.pdf"
        );
    }

    #[test]
    fn hostile_names_are_neutralised() {
        assert_eq!(
            attachment_disposition("../../etc/pa\"ss\r\nSet-Cookie: x.pdf"),
            "attachment; filename=\"pa_ssSet-Cookie: x.pdf\"; \
             filename*=UTF-8''pa%22ssSet-Cookie%3A%20x.pdf"
        );
        assert_eq!(
            attachment_disposition("C:\\Users\\a\\résumé.png"),
            "attachment; filename=\"r_sum_.png\"; filename*=UTF-8''r%C3%A9sum%C3%A9.png"
        );
        assert!(attachment_disposition("").contains("filename=\"document\""));
        assert!(attachment_disposition("dir/..").contains("filename=\"document\""));
        assert!(attachment_disposition("\u{7}\u{0}").contains("filename=\"document\""));
        let long = attachment_disposition(&"a".repeat(1000));
        assert!(long.len() < 2 * MAX_NAME_CHARS + 60, "{long}");
    }

    #[test]
    fn media_types() {
        assert_eq!(safe_media_type("application/pdf"), "application/pdf");
        assert_eq!(safe_media_type("image/svg+xml"), "image/svg+xml");
        assert_eq!(safe_media_type("text/html\r\nX: y"), "application/octet-stream");
        assert_eq!(safe_media_type("text/html; charset=utf-8"), "application/octet-stream");
        assert_eq!(safe_media_type("pdf"), "application/octet-stream");
        assert_eq!(safe_media_type("/"), "application/octet-stream");
    }
}
