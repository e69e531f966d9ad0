//! Why a request changed, parsed once: the reason a status change, a stage advance or a
//! document rejection records.

use crate::{ValidationErrors, rules};

/// The longest reason, internal note or message, in characters.
pub const MAX_TEXT: usize = 4000;

/// Why a request changed, as its history records it: at most `MAX_TEXT` characters, and
/// present and not blank where the change requires one (a status change through the
/// workflow). Parsed once, when the change is asked for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reason(String);

impl Reason {
    /// The reason of a change that requires one.
    pub fn required(raw: Option<String>) -> Result<Reason, ValidationErrors> {
        match raw {
            Some(text) if !text.trim().is_empty() => Self::parse(text),
            _ => Err(ValidationErrors::single("/reason", "required", "a status change needs a reason")),
        }
    }

    /// The reason of a change that may come without one.
    pub fn optional(raw: Option<String>) -> Result<Option<Reason>, ValidationErrors> {
        raw.map(Self::parse).transpose()
    }

    /// A reason as it was stored: it was checked when it was given, by the rules of its
    /// day, and is read back as it is (a rule made stricter since, like the refusal of
    /// control characters, must not make earlier rows unreadable).
    pub fn stored(text: String) -> Reason {
        Reason(text)
    }

    fn parse(text: String) -> Result<Reason, ValidationErrors> {
        rules::at_field("reason", rules::text::<MAX_TEXT>(&text)).map(|()| Reason(text))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl From<Reason> for String {
    fn from(reason: Reason) -> String {
        reason.0
    }
}
