//! Field rules shared by the entities, as `validator` custom functions, and the bridge
//! from `validator`'s nested error map to the API's flat list of JSON pointers.

use crate::ValidationErrors;
use crate::validation::{
    CONTROL_CHARACTER, NO_CONTROL_IN_LINE, NO_CONTROL_IN_TEXT, refused_in_line, refused_in_text,
};
use std::borrow::Cow;
use validator::{ValidationError, ValidationErrorsKind};

fn error(code: &'static str, message: &'static str) -> ValidationError {
    ValidationError::new(code).with_message(Cow::Borrowed(message))
}

/// Trimmed, non-empty, no control characters (length limits are separate rules).
pub fn clean_text(value: &str) -> Result<(), ValidationError> {
    if value.trim().is_empty() {
        Err(error("required", "must not be empty"))
    } else if value.trim().len() != value.len() {
        Err(error("untrimmed", "must not start or end with white space"))
    } else if value.chars().any(refused_in_line) {
        Err(error(CONTROL_CHARACTER, NO_CONTROL_IN_LINE))
    } else {
        Ok(())
    }
}

/// A multi-line text (a description): tab and line breaks, but no other control
/// character (`validation::refused_in_text`); length limits are separate rules.
pub fn multi_line_text(value: &str) -> Result<(), ValidationError> {
    if value.chars().any(refused_in_text) {
        Err(error(CONTROL_CHARACTER, NO_CONTROL_IN_TEXT))
    } else {
        Ok(())
    }
}

/// ISO 3166-1 alpha-2, upper case.
pub fn country(value: &str) -> Result<(), ValidationError> {
    let valid = value.len() == 2
        && value.bytes().all(|b| b.is_ascii_uppercase())
        && isocountry::CountryCode::for_alpha2(value).is_ok();
    if valid { Ok(()) } else { Err(error("invalid_country", "must be an ISO 3166-1 alpha-2 country code")) }
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

/// Flattens `validator`'s nested errors into JSON pointers (`/address/city`,
/// `/stages/2/name`), sorted so that responses are stable.
pub fn flatten(errors: &validator::ValidationErrors) -> ValidationErrors {
    let mut out = ValidationErrors::new();
    collect(errors, "", &mut out);
    out.0.sort_by(|a, b| a.pointer.cmp(&b.pointer));
    out
}

fn collect(errors: &validator::ValidationErrors, prefix: &str, out: &mut ValidationErrors) {
    for (field, kind) in errors.errors() {
        let pointer = if field == "__all__" { prefix.to_owned() } else { format!("{prefix}/{field}") };
        match kind {
            ValidationErrorsKind::Field(list) => {
                for e in list {
                    let message = e.message.as_ref().map_or_else(|| default_message(e), |m| m.to_string());
                    out.add(if pointer.is_empty() { "/" } else { &pointer }, &e.code, message);
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
}
