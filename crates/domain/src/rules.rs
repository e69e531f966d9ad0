//! The one validation mechanism (docs/architecture.md "Validation"): every input struct
//! derives `validator::Validate`, each field carries its rules as attributes (the shared
//! ones below as `custom` functions), a rule that reads another field or the context
//! (`today`, the object changed) is a struct-level `schema` function reporting at the
//! field it judges ([`at`]), and [`flatten`] turns `validator`'s nested error map into
//! the API's flat list of JSON pointers, once. A value parsed once that travels (a
//! `Reason`, a file name) applies the same functions through [`at_field`].

use crate::ValidationErrors;
use crate::validation::{
    CONTROL_CHARACTER, NO_CONTROL_IN_LINE, NO_CONTROL_IN_TEXT, refused_in_line, refused_in_text,
};
use std::borrow::Cow;
use validator::{ValidationError, ValidationErrorsKind};

/// The parameter of a struct-level error naming the field it is reported at.
const FIELD: &str = "field";

fn error(code: &'static str, message: impl Into<Cow<'static, str>>) -> ValidationError {
    ValidationError::new(code).with_message(message.into())
}

fn too_long(max: usize) -> ValidationError {
    error("too_long", format!("must be at most {max} characters"))
}

/// Not blank: something but white space.
pub fn filled(value: &str) -> Result<(), ValidationError> {
    if value.trim().is_empty() { Err(error("required", "must not be empty")) } else { Ok(()) }
}

/// The clean-text rule of a single-line text, in the order its failures are told: not
/// blank, at most `max` characters once trimmed (when given), trimmed, and no control
/// character ([`refused_in_line`]). One failure per field.
fn single_line(value: &str, max: Option<usize>) -> Result<(), ValidationError> {
    filled(value)?;
    let trimmed = value.trim();
    if let Some(max) = max
        && trimmed.chars().count() > max
    {
        Err(too_long(max))
    } else if trimmed.len() != value.len() {
        Err(error("untrimmed", "must not start or end with white space"))
    } else if value.chars().any(refused_in_line) {
        Err(error(CONTROL_CHARACTER, NO_CONTROL_IN_LINE))
    } else {
        Ok(())
    }
}

/// A single-line text with its length as a separate `length(min = 1, max = …)` rule (the
/// catalog, citizens and staff, whose answers list a `length` failure beside this one).
pub fn clean_text(value: &str) -> Result<(), ValidationError> {
    single_line(value, None)
}

/// A single-line text of at most `MAX` characters, told as one failure (`required`,
/// `too_long`, `untrimmed` or `control_character`: missions and clients).
pub fn line<const MAX: usize>(value: &str) -> Result<(), ValidationError> {
    single_line(value, Some(MAX))
}

/// A multi-line text (a description): tab and line breaks, but no other control
/// character ([`refused_in_text`]); length limits are separate rules.
pub fn multi_line_text(value: &str) -> Result<(), ValidationError> {
    if value.chars().any(refused_in_text) {
        Err(error(CONTROL_CHARACTER, NO_CONTROL_IN_TEXT))
    } else {
        Ok(())
    }
}

/// A multi-line text of at most `MAX` characters (a reason, a note, a message).
pub fn text<const MAX: usize>(value: &str) -> Result<(), ValidationError> {
    if value.chars().count() > MAX { Err(too_long(MAX)) } else { multi_line_text(value) }
}

/// ISO 3166-1 alpha-2, upper case.
pub fn country(value: &str) -> Result<(), ValidationError> {
    let valid = value.len() == 2
        && value.bytes().all(|b| b.is_ascii_uppercase())
        && isocountry::CountryCode::for_alpha2(value).is_ok();
    if valid { Ok(()) } else { Err(error("invalid_country", "must be an ISO 3166-1 alpha-2 country code")) }
}

/// An IANA time zone name.
pub fn timezone(value: &str) -> Result<(), ValidationError> {
    if value.parse::<chrono_tz::Tz>().is_ok() {
        Ok(())
    } else {
        Err(error("invalid_timezone", "must be an IANA time zone name such as Europe/Paris"))
    }
}

/// ISO 4217, upper case.
pub fn currency(value: &str) -> Result<(), ValidationError> {
    if iso_currency::Currency::from_code(value).is_some() {
        Ok(())
    } else {
        Err(error("invalid_currency", "must be an ISO 4217 currency code such as EUR"))
    }
}

/// E.164: `+`, a country code and subscriber number, 8 to 15 digits in all.
pub fn e164(value: &str) -> Result<(), ValidationError> {
    let digits = value.strip_prefix('+').unwrap_or("");
    let valid = (8..=15).contains(&digits.len())
        && digits.bytes().all(|b| b.is_ascii_digit())
        && !digits.starts_with('0');
    if valid { Ok(()) } else { Err(error("invalid_phone", "must be an E.164 number such as +33142345678")) }
}

/// A BCP 47 language tag of the common form: `fr`, `en-GB`.
pub fn language(value: &str) -> Result<(), ValidationError> {
    let mut parts = value.split('-');
    let primary_ok =
        parts.next().is_some_and(|p| (2..=3).contains(&p.len()) && p.bytes().all(|b| b.is_ascii_lowercase()));
    let region_ok = match parts.next() {
        None => true,
        Some(region) => region.len() == 2 && region.bytes().all(|b| b.is_ascii_uppercase()),
    };
    if primary_ok && region_ok && parts.next().is_none() {
        Ok(())
    } else {
        Err(error("invalid_language", "must be a language tag such as fr or en-GB"))
    }
}

/// A lower-case identifier: `passport_photo`, `birth_certificate`.
pub fn identifier(value: &str) -> Result<(), ValidationError> {
    let valid = (1..=64).contains(&value.len())
        && value.starts_with(|c: char| c.is_ascii_lowercase())
        && value.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_');
    if valid {
        Ok(())
    } else {
        Err(error("invalid_identifier", "must be lower-case letters, digits and underscores"))
    }
}

/// Every entry of a list is an identifier and none repeats.
pub fn identifiers(values: &[String]) -> Result<(), ValidationError> {
    for (i, value) in values.iter().enumerate() {
        identifier(value)?;
        if values[..i].contains(value) {
            return Err(error("duplicate", "entries must not repeat"));
        }
    }
    Ok(())
}

/// A struct-level rule's failure (`#[validate(schema(function = ...))]`), reported at
/// `field` of the struct it judges rather than at the struct itself.
pub fn at(field: &'static str, code: &'static str, message: impl Into<Cow<'static, str>>) -> ValidationError {
    let mut e = error(code, message);
    e.add_param(Cow::Borrowed(FIELD), &field);
    e
}

/// One value checked on its own (a `Reason`, a file name), reported at `field`.
pub fn at_field(field: &str, checked: Result<(), ValidationError>) -> Result<(), ValidationErrors> {
    checked.map_err(|e| ValidationErrors::single(field, &e.code, message(&e)))
}

/// `validator`'s outcome as the API answers it: every failing field at once, as JSON
/// pointers (`/address/city`, `/stages/2/name`), sorted by pointer so that responses are
/// stable; a field's failures in the order of its rules.
pub fn flatten(checked: Result<(), validator::ValidationErrors>) -> Result<(), ValidationErrors> {
    flatten_in_order(checked, &[])
}

/// The same, the top-level `fields` named first, in that order (missions, clients and the
/// demo plan have always listed their failures in the order of their fields), then the
/// others by pointer.
pub fn flatten_in_order(
    checked: Result<(), validator::ValidationErrors>,
    fields: &[&str],
) -> Result<(), ValidationErrors> {
    let Err(errors) = checked else { return Ok(()) };
    let mut out = ValidationErrors::new();
    collect(&errors, "", &mut out);
    out.0.sort_by(|a, b| a.pointer.cmp(&b.pointer));
    if !fields.is_empty() {
        let rank = |pointer: &str| {
            let top = pointer.trim_start_matches('/').split('/').next().unwrap_or("");
            fields.iter().position(|f| *f == top).unwrap_or(fields.len())
        };
        out.0.sort_by_key(|e| rank(&e.pointer));
    }
    out.into_result()
}

/// Adds the failures of `errors` under `prefix`: the fields in name order, then the
/// struct-level ones (at their [`at`] field, or at the struct), so that failures sharing
/// a pointer keep one order.
fn collect(errors: &validator::ValidationErrors, prefix: &str, out: &mut ValidationErrors) {
    let mut entries: Vec<_> = errors.errors().iter().collect();
    entries.sort_by(|(a, _), (b, _)| (*a == "__all__", a.as_ref()).cmp(&(*b == "__all__", b.as_ref())));
    for (field, kind) in entries {
        let pointer = if field == "__all__" { prefix.to_owned() } else { format!("{prefix}/{field}") };
        match kind {
            ValidationErrorsKind::Field(list) => {
                for e in list {
                    let pointer = match e.params.get(FIELD).and_then(|f| f.as_str()) {
                        Some(at) if field == "__all__" => format!("{pointer}/{at}"),
                        _ => pointer.clone(),
                    };
                    out.add(if pointer.is_empty() { "/" } else { &pointer }, &e.code, message(e));
                }
            }
            ValidationErrorsKind::Struct(inner) => collect(inner, &pointer, out),
            ValidationErrorsKind::List(items) => {
                for (index, inner) in items {
                    collect(inner, &format!("{pointer}/{index}"), out);
                }
            }
        }
    }
}

fn message(e: &ValidationError) -> String {
    e.message.as_ref().map_or_else(|| default_message(e), |m| m.to_string())
}

fn default_message(e: &ValidationError) -> String {
    let param = |name: &str| e.params.get(name).map(|v| v.to_string());
    match e.code.as_ref() {
        "length" => match (param("min"), param("max")) {
            (Some(min), Some(max)) => format!("length must be between {min} and {max}"),
            (Some(min), None) => format!("length must be at least {min}"),
            (None, Some(max)) => format!("length must be at most {max}"),
            _ => "invalid length".to_owned(),
        },
        "range" => match (param("min"), param("max")) {
            (Some(min), Some(max)) => format!("must be between {min} and {max}"),
            _ => "out of range".to_owned(),
        },
        "email" => "must be an email address".to_owned(),
        other => format!("invalid ({other})"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use validator::Validate;

    #[test]
    fn field_rules() {
        assert!(e164("+33142345678").is_ok());
        for bad in ["0033142345678", "+0123456789", "+33 1 42", "+1234567", "+1234567890123456"] {
            assert!(e164(bad).is_err(), "{bad}");
        }
        assert!(language("fr").is_ok() && language("en-GB").is_ok());
        assert!(language("EN").is_err() && language("en-gb").is_err() && language("e").is_err());
        assert!(currency("EUR").is_ok() && currency("EURO").is_err() && currency("eur").is_err());
        assert!(country("FR").is_ok() && country("XX").is_err());
        assert!(identifiers(&["photo".into(), "passport_copy".into()]).is_ok());
        assert!(identifiers(&["photo".into(), "photo".into()]).is_err());
        assert!(identifiers(&["Photo".into()]).is_err());
        assert!(clean_text(" x").is_err() && clean_text("").is_err() && clean_text("a\u{7}").is_err());
    }

    fn failure(checked: Result<(), ValidationError>) -> Option<(String, String)> {
        checked.err().map(|e| (e.code.to_string(), message(&e)))
    }

    #[test]
    fn a_single_line_text_fails_once_in_the_order_of_its_rules() {
        let failure_of = |value: &str| failure(line::<5>(value)).map(|(code, _)| code);
        for (value, expected) in [
            ("Paris", None),
            ("", Some("required")),
            (" \t ", Some("required")),
            (" Paris long ", Some("too_long")),
            ("éééééé", Some("too_long")),
            (" Pa ", Some("untrimmed")),
            ("Pa\tr", Some("control_character")),
            ("Pa\u{9f}", Some("control_character")),
            ("Pa\u{85}", Some("untrimmed")),
        ] {
            assert_eq!(failure_of(value).as_deref(), expected, "{value:?}");
        }
        assert_eq!(
            failure(line::<5>("toolong")),
            Some(("too_long".to_owned(), "must be at most 5 characters".to_owned()))
        );
        assert_eq!(failure(clean_text(&"x".repeat(500))), None, "its length is a separate rule");
        assert_eq!(
            failure(clean_text("a\nb")),
            Some(("control_character".to_owned(), "must not contain control characters".to_owned()))
        );
    }

    #[test]
    fn a_multi_line_text_keeps_tabs_and_line_breaks() {
        assert_eq!(failure(text::<10>("a\tb\r\nc")), None);
        assert_eq!(failure(text::<10>("")), None, "blank is the caller's rule");
        assert_eq!(
            failure(text::<3>("abcd")),
            Some(("too_long".to_owned(), "must be at most 3 characters".to_owned()))
        );
        assert_eq!(
            failure(text::<10>("a\u{0}")),
            Some((
                "control_character".to_owned(),
                "must not contain control characters other than tab and line breaks".to_owned()
            ))
        );
        assert_eq!(failure(filled(" \n")), Some(("required".to_owned(), "must not be empty".to_owned())));
    }

    #[derive(Validate)]
    #[allow(clippy::duplicated_attributes)]
    #[validate(schema(function = "b_after_a", skip_on_field_errors = false))]
    #[validate(schema(function = "never", skip_on_field_errors = false))]
    struct Pair {
        #[validate(custom(function = "line::<3>"))]
        a: String,
        #[validate(length(min = 1), custom(function = "clean_text"))]
        b: String,
        #[validate(nested)]
        items: Vec<Item>,
    }

    #[derive(Validate)]
    #[validate(schema(function = "item_at_name", skip_on_field_errors = false))]
    struct Item {
        #[validate(custom(function = "identifier"))]
        name: String,
    }

    fn b_after_a(pair: &Pair) -> Result<(), ValidationError> {
        if pair.b < pair.a { Err(at("b", "before_a", "must not sort before a")) } else { Ok(()) }
    }

    fn never(_: &Pair) -> Result<(), ValidationError> {
        Err(error("whole", "the whole body"))
    }

    fn item_at_name(item: &Item) -> Result<(), ValidationError> {
        if item.name.is_empty() { Err(at("name", "required", "must not be empty")) } else { Ok(()) }
    }

    fn found(checked: Result<(), ValidationErrors>) -> Vec<(String, String)> {
        checked.unwrap_err().0.into_iter().map(|e| (e.pointer, e.code)).collect()
    }

    #[test]
    fn flatten_lists_every_failure_by_pointer_and_struct_rules_at_their_field() {
        let pair = Pair {
            a: "long".into(),
            b: String::new(),
            items: vec![Item { name: "ok".into() }, Item { name: String::new() }],
        };
        let expected = [
            ("/", "whole"),
            ("/a", "too_long"),
            ("/b", "length"),
            ("/b", "required"),
            ("/b", "before_a"),
            ("/items/1/name", "invalid_identifier"),
            ("/items/1/name", "required"),
        ];
        let expected: Vec<(String, String)> =
            expected.iter().map(|(p, c)| ((*p).to_owned(), (*c).to_owned())).collect();
        for _ in 0..20 {
            assert_eq!(found(flatten(pair.validate())), expected, "the same order every time");
        }
        let in_order = found(flatten_in_order(pair.validate(), &["items", "b", "a"]));
        let pointers: Vec<&str> = in_order.iter().map(|(p, _)| p.as_str()).collect();
        assert_eq!(pointers, ["/items/1/name", "/items/1/name", "/b", "/b", "/b", "/a", "/"]);
        assert_eq!(flatten(Item { name: "ok".into() }.validate()), Ok(()));
        assert_eq!(
            at_field("reason", text::<1>("ab")),
            Err(ValidationErrors::single("/reason", "too_long", "must be at most 1 characters"))
        );
    }
}
