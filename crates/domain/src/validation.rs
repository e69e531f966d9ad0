//! Field-level validation failures, reported all at once (never only the first), and
//! the control characters text may not contain. The rules themselves are `validator`
//! attributes and the functions of `rules` (docs/architecture.md "Validation").

use serde::Serialize;

/// Whether no text may contain `c`: every Unicode control character (C0 `U+0000`–`U+001F`,
/// DEL `U+007F`, C1 `U+0080`–`U+009F`) except tab, line feed and carriage return, which
/// multi-line texts (messages, notes, reasons, descriptions) hold. PostgreSQL cannot
/// store NUL in text at all; the others are invisible, reorder or cut what people read
/// and break the logs and the exports. This is the rule of every multi-line text and of
/// every string of a JSON body (docs/api.md "Text").
pub fn refused_in_text(c: char) -> bool {
    c.is_control() && !matches!(c, '\t' | '\n' | '\r')
}

/// Whether a single-line text (a name, a code, a query parameter, a form value) may not
/// contain `c`: every control character, tab and line breaks included.
pub fn refused_in_line(c: char) -> bool {
    c.is_control()
}

/// The field error code of a text holding a character it may not contain.
pub const CONTROL_CHARACTER: &str = "control_character";
/// Its message for a single-line text.
pub const NO_CONTROL_IN_LINE: &str = "must not contain control characters";
/// Its message for a multi-line text.
pub const NO_CONTROL_IN_TEXT: &str = "must not contain control characters other than tab and line breaks";

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

    /// Records that `pointer` (a JSON pointer, `/mission_id`) names nothing the caller may
    /// see: something that does not exist, or is another mission's (the two answer alike,
    /// docs/api.md "Errors"). The one spelling of the `unknown` code.
    pub fn unknown(&mut self, pointer: &str, message: impl Into<String>) {
        debug_assert!(pointer.starts_with('/'), "`{pointer}` is not a JSON pointer");
        self.add(pointer, "unknown", message);
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
}
