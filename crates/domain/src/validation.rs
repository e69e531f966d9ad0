//! Field-level validation failures, reported all at once (never only the first).

use serde::Serialize;

/// One failing field: an RFC 6901 JSON pointer into the request body, a stable code and a
/// sentence for people.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FieldError {
    pub pointer: String,
    pub code: String,
    pub message: String,
}

/// Applies one field of a partial update: replaces `field` when `value` is given and
/// differs, and records `name` among the changed fields. Every entity's `apply` uses it.
pub(crate) fn set<T: PartialEq>(
    field: &mut T,
    value: Option<T>,
    name: &'static str,
    changed: &mut Vec<String>,
) {
    if let Some(value) = value
        && *field != value
    {
        *field = value;
        changed.push(name.to_owned());
    }
}

#[derive(Debug, Clone, Default, PartialEq, Eq, thiserror::Error)]
#[error("{} invalid field(s)", .0.len())]
pub struct ValidationErrors(pub Vec<FieldError>);

impl ValidationErrors {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn single(field: &str, code: &str, message: impl Into<String>) -> Self {
        let mut errors = Self::new();
        errors.add(field, code, message);
        errors
    }

    /// Records a failure of `field` (a top-level field name or a pointer starting with `/`).
    pub fn add(&mut self, field: &str, code: &str, message: impl Into<String>) {
        let pointer = if field.starts_with('/') { field.to_owned() } else { format!("/{field}") };
        self.0.push(FieldError { pointer, code: code.to_owned(), message: message.into() });
    }

    /// Adds the failures of another check (if it failed), keeping the list sorted by
    /// pointer so that responses are stable.
    pub fn extend(&mut self, other: Result<(), ValidationErrors>) {
        if let Err(mut other) = other {
            self.0.append(&mut other.0);
            self.0.sort_by(|a, b| a.pointer.cmp(&b.pointer));
        }
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// `Ok(())` when nothing failed, the collected errors otherwise.
    pub fn into_result(self) -> Result<(), ValidationErrors> {
        if self.0.is_empty() { Ok(()) } else { Err(self) }
    }

    /// Checks that a trimmed text field is non-empty and at most `max` characters.
    pub fn validate_text(&mut self, field: &str, value: &str, max: usize) {
        let trimmed = value.trim();
        if trimmed.is_empty() {
            self.add(field, "required", "must not be empty");
        } else if trimmed.chars().count() > max {
            self.add(field, "too_long", format!("must be at most {max} characters"));
        } else if trimmed.len() != value.len() {
            self.add(field, "untrimmed", "must not start or end with white space");
        } else if value.chars().any(char::is_control) {
            self.add(field, "control_character", "must not contain control characters");
        }
    }
}
