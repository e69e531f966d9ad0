//! What an upload may be: the type is decided from the file's first bytes (its magic
//! number), never from what the client declares; a declared media type or a file-name
//! extension that disagrees with the bytes is refused as well, so that a PNG named
//! `scan.pdf` or an HTML page declared as `image/png` never gets in (docs/documents.md
//! "What is stored").

use consular_domain::document::last_path_segment;

/// How many leading bytes are enough to recognise every accepted type.
pub const SNIFF_LEN: usize = 512;

/// The media types accepted by default.
pub const DEFAULT_MEDIA_TYPES: [&str; 3] = ["application/pdf", "image/jpeg", "image/png"];

/// Why an upload's type is refused (the HTTP edge answers 415 for each).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TypeRefusal {
    /// The bytes are of no known type, or of one that is not accepted.
    #[error("the file is {}, which is not accepted (accepted: {})", .detected.as_deref().unwrap_or("of an unknown type"), .accepted.join(", "))]
    NotAccepted { detected: Option<String>, accepted: Vec<String> },
    /// The client declared another media type than the bytes are.
    #[error("the file was declared as {declared} but its content is {detected}")]
    DeclaredTypeMismatch { declared: String, detected: String },
    /// The file name's extension belongs to another type than the bytes are.
    #[error("the file name ends in .{extension} but its content is {detected}")]
    ExtensionMismatch { extension: String, detected: String },
}

/// The accepted media types (configuration: the defaults are [`DEFAULT_MEDIA_TYPES`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AcceptedTypes {
    media_types: Vec<String>,
}

impl Default for AcceptedTypes {
    fn default() -> Self {
        AcceptedTypes { media_types: DEFAULT_MEDIA_TYPES.map(str::to_owned).to_vec() }
    }
}

/// Extensions a file of `media_type` may carry, lower case.
fn extensions_of(media_type: &str) -> &'static [&'static str] {
    match media_type {
        "application/pdf" => &["pdf"],
        "image/jpeg" => &["jpg", "jpeg", "jpe", "jfif"],
        "image/png" => &["png"],
        "image/webp" => &["webp"],
        "image/tiff" => &["tif", "tiff"],
        "image/heif" => &["heif", "heic"],
        _ => &[],
    }
}

impl AcceptedTypes {
    /// Only these media types; each must be one this service can recognise and check the
    /// extension of.
    pub fn new(media_types: Vec<String>) -> Result<AcceptedTypes, String> {
        if media_types.is_empty() {
            return Err("at least one media type must be accepted".to_owned());
        }
        if let Some(unknown) = media_types.iter().find(|m| extensions_of(m).is_empty()) {
            return Err(format!("`{unknown}` is not a media type documents can be checked as"));
        }
        Ok(AcceptedTypes { media_types })
    }

    pub fn media_types(&self) -> &[String] {
        &self.media_types
    }

    /// The media type of a file that starts with `head` (at least its first [`SNIFF_LEN`]
    /// bytes, or the whole file when shorter), if it is accepted and agrees with what the
    /// client declared: `declared` is the part's `Content-Type` (absent or
    /// `application/octet-stream` declares nothing), `file_name` the name as sent, of
    /// which only the part that is kept counts (`last_path_segment`: a directory named
    /// `x.d` in `x.d/scan` is no extension, and `../../etc/passwd` has none).
    pub fn check(
        &self,
        head: &[u8],
        declared: Option<&str>,
        file_name: &str,
    ) -> Result<&'static str, TypeRefusal> {
        let detected = infer::get(head).map(|kind| kind.mime_type());
        let Some(detected) = detected.filter(|d| self.media_types.iter().any(|m| m == d)) else {
            return Err(TypeRefusal::NotAccepted {
                detected: detected.map(str::to_owned),
                accepted: self.media_types.clone(),
            });
        };
        if let Some(declared) =
            declared.map(|d| d.split(';').next().unwrap_or("").trim().to_ascii_lowercase())
            && !declared.is_empty()
            && declared != "application/octet-stream"
            && declared != detected
        {
            return Err(TypeRefusal::DeclaredTypeMismatch { declared, detected: detected.to_owned() });
        }
        if let Some((_, extension)) = last_path_segment(file_name).rsplit_once('.') {
            let extension = extension.to_ascii_lowercase();
            if !extensions_of(detected).contains(&extension.as_str()) {
                return Err(TypeRefusal::ExtensionMismatch { extension, detected: detected.to_owned() });
            }
        }
        Ok(detected)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PDF: &[u8] = b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n1 0 obj\n<< /Type /Catalog >>\nendobj\n";
    const PNG: &[u8] = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR\0\0\0\x01\0\0\0\x01\x08\x06\0\0\0\x1f\x15\xc4\x89";
    const JPEG: &[u8] = b"\xff\xd8\xff\xe0\0\x10JFIF\0\x01\x01\0\0\x01\0\x01\0\0";
    const HTML: &[u8] = b"<!DOCTYPE html><html><body><script>alert(1)</script></body></html>";
    const GIF: &[u8] = b"GIF89a\x01\0\x01\0\x80\0\0\0\0\0\xff\xff\xff!";

    /// The file's first bytes, its declared media type, its name, and the detected type or
    /// the kind of refusal expected.
    type Case<'a> = (&'a [u8], Option<&'a str>, &'a str, Result<&'a str, &'a str>);

    #[test]
    fn the_bytes_decide_and_must_agree_with_the_declared_type_and_the_extension() {
        let accepted = AcceptedTypes::default();
        let cases: &[Case] = &[
            (PDF, Some("application/pdf"), "passport.pdf", Ok("application/pdf")),
            (PDF, None, "passport", Ok("application/pdf")),
            (PDF, Some("application/octet-stream"), "PASSPORT.PDF", Ok("application/pdf")),
            (PNG, Some("image/png"), "photo.png", Ok("image/png")),
            (JPEG, Some("image/jpeg; charset=binary"), "photo.JPG", Ok("image/jpeg")),
            (JPEG, None, "photo.jpeg", Ok("image/jpeg")),
            // A PNG named .pdf, and one declared as a PDF.
            (PNG, None, "scan.pdf", Err("extension")),
            (PNG, Some("application/pdf"), "scan.png", Err("declared")),
            // An HTML page declared and named as a PNG.
            (HTML, Some("image/png"), "photo.png", Err("not accepted")),
            // Known but not accepted, and unknown.
            (GIF, Some("image/gif"), "photo.gif", Err("not accepted")),
            (b"just some text", None, "notes.txt", Err("not accepted")),
            (b"", None, "empty.pdf", Err("not accepted")),
            // The name is only metadata: a traversal-looking name changes nothing, and
            // only the segment kept has an extension (both separators).
            (PDF, None, "../../etc/passwd.pdf", Ok("application/pdf")),
            (PDF, None, "../../etc/passwd", Ok("application/pdf")),
            (PDF, None, "..\\..\\passwd", Ok("application/pdf")),
            (PDF, Some("application/pdf"), "C:\\Users\\x\\scan.pdf", Ok("application/pdf")),
            (PDF, None, "C:\\Users\\x.y\\scan", Ok("application/pdf")),
            (PDF, None, "./scans.d/passport", Ok("application/pdf")),
            (PNG, None, "C:\\Users\\x\\scan.pdf", Err("extension")),
            (PNG, None, "photos.png/scan.pdf", Err("extension")),
        ];
        for (head, declared, name, expected) in cases {
            let got = accepted.check(head, *declared, name);
            match (expected, &got) {
                (Ok(media_type), Ok(detected)) => assert_eq!(detected, media_type, "{name}"),
                (Err("extension"), Err(TypeRefusal::ExtensionMismatch { .. }))
                | (Err("declared"), Err(TypeRefusal::DeclaredTypeMismatch { .. }))
                | (Err("not accepted"), Err(TypeRefusal::NotAccepted { .. })) => {}
                _ => panic!("{name} declared {declared:?}: expected {expected:?}, got {got:?}"),
            }
        }
    }

    #[test]
    fn the_list_is_configurable_but_only_with_types_that_can_be_checked() {
        let only_pdf = AcceptedTypes::new(vec!["application/pdf".into()]).unwrap();
        assert!(matches!(only_pdf.check(PNG, None, "a.png"), Err(TypeRefusal::NotAccepted { .. })));
        assert_eq!(only_pdf.check(PDF, None, "a.pdf"), Ok("application/pdf"));
        assert!(AcceptedTypes::new(vec![]).is_err());
        assert!(AcceptedTypes::new(vec!["text/html".into()]).is_err());
        let refusal = only_pdf.check(b"zz", None, "a").unwrap_err().to_string();
        assert!(refusal.contains("unknown type") && refusal.contains("application/pdf"), "{refusal}");
    }
}
