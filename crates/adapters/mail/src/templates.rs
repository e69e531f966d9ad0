//! The emails' text: minijinja templates embedded in the binary, one per notification
//! kind and language (`templates/<lang>/<kind>.jinja`), rendered to a subject, a plain
//! text and an HTML body.
//!
//! A kind's template holds prose only: it extends its language's `base` (greeting and
//! footer), which extends `layout.txt` or `layout.html` (the format). Every kind template
//! is registered twice, as `<lang>/<kind>.txt` and `<lang>/<kind>.html`: minijinja picks
//! auto-escaping by the name's suffix, so the `.html` rendering escapes every value
//! (`<script>` in a reason arrives as `&lt;script&gt;`) and the `.txt` one does not. The
//! HTML layout turns blank-line-separated paragraphs into `<p>` elements.
//!
//! Adding a kind: write `templates/en/<kind>.jinja` (and its translations) and name it in
//! [`TEMPLATES`]; a language without the kind's template falls back to English.

use consular_domain::notification::{Details, Email, Language, NotificationKind};
use minijinja::{Environment, Value};
use std::sync::LazyLock;
use time::UtcOffset;
use time::macros::format_description;

/// What an email says, in its recipient's language.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rendered {
    pub subject: String,
    /// The `text/plain` alternative.
    pub text: String,
    /// The `text/html` alternative (a whole document, values escaped).
    pub html: String,
}

/// `(name, source)` of every kind and base template, embedded at compile time.
macro_rules! templates {
    ($($name:literal),+ $(,)?) => {
        &[$(($name, include_str!(concat!("../templates/", $name, ".jinja")))),+]
    };
}

const TEMPLATES: &[(&str, &str)] = templates![
    "en/base",
    "en/request_submitted",
    "en/request_status_changed",
    "en/request_stage_advanced",
    "en/request_assigned",
    "en/message_from_staff",
    "en/message_from_citizen",
    "en/document_verified",
    "en/document_rejected",
    "en/appointment_booked",
    "en/appointment_rescheduled",
    "en/appointment_cancelled",
    "en/appointment_cancelled_by_mission",
    "en/appointment_reminder",
    "fr/base",
    "fr/request_submitted",
    "fr/request_status_changed",
    "fr/request_stage_advanced",
    "fr/request_assigned",
    "fr/message_from_staff",
    "fr/message_from_citizen",
    "fr/document_verified",
    "fr/document_rejected",
    "fr/appointment_booked",
    "fr/appointment_rescheduled",
    "fr/appointment_cancelled",
    "fr/appointment_cancelled_by_mission",
    "fr/appointment_reminder",
];

/// The two formats every kind template is rendered in.
const LAYOUTS: &[(&str, &str)] = &[
    ("layout.txt", include_str!("../templates/layout.txt")),
    ("layout.html", include_str!("../templates/layout.html")),
];

static ENVIRONMENT: LazyLock<Result<Environment<'static>, String>> = LazyLock::new(environment);

fn environment() -> Result<Environment<'static>, String> {
    let mut env = Environment::new();
    // Block tags take their own line: templates stay readable without stray blank lines.
    env.set_trim_blocks(true);
    env.set_lstrip_blocks(true);
    env.add_filter("paragraphs", paragraphs);
    for (name, source) in LAYOUTS {
        env.add_template(name, source).map_err(|e| format!("template {name}: {e}"))?;
    }
    for (name, source) in TEMPLATES {
        for format in ["txt", "html"] {
            env.add_template_owned(format!("{name}.{format}"), *source)
                .map_err(|e| format!("template {name}: {e}"))?;
        }
    }
    Ok(env)
}

/// Renders `email`'s subject, text and HTML from its kind, details and language.
pub fn render(email: &Email) -> Result<Rendered, String> {
    let env = ENVIRONMENT.as_ref().map_err(Clone::clone)?;
    let name = template_name(env, email.kind, email.language);
    let failed = |e: minijinja::Error| format!("rendering {name}: {e:#}");

    let text_template = env.get_template(&format!("{name}.txt")).map_err(failed)?;
    let mut captured = text_template.render_captured(context(email, "txt", None)).map_err(failed)?;
    let subject = captured.with_state_mut(|state| state.render_block("subject")).map_err(failed)?;
    let subject = subject.split_whitespace().collect::<Vec<_>>().join(" ");
    let text = tidy(captured.output());

    let html_template = env.get_template(&format!("{name}.html")).map_err(failed)?;
    let html = tidy(&html_template.render(context(email, "html", Some(&subject))).map_err(failed)?);

    if subject.is_empty() {
        return Err(format!("{name} has an empty subject"));
    }
    Ok(Rendered { subject, text, html })
}

/// `<lang>/<kind>`, or `en/<kind>` when the language has no template for the kind.
fn template_name(env: &Environment<'_>, kind: NotificationKind, language: Language) -> String {
    let wanted = format!("{}/{}", language.as_str(), kind.as_str());
    if env.get_template(&format!("{wanted}.txt")).is_ok() {
        wanted
    } else {
        format!("{}/{}", Language::En.as_str(), kind.as_str())
    }
}

/// What the templates see: the language, the format, and only the details that are
/// present (an absent one is undefined, which renders as nothing and tests false), made
/// readable (`in_review` → "in review" / "en cours d'examen"), and whom the email is
/// about when it goes to a representative (`about`).
fn context(email: &Email, format: &str, subject: Option<&str>) -> Value {
    let Details {
        service,
        status,
        reason,
        stage,
        document_id: _,
        document_kind,
        appointment_id: _,
        starts_at,
        local_time,
        timezone,
        mission,
    } = &email.details;
    let language = email.language;
    let when = match (present(local_time), present(timezone)) {
        (Some(time), Some(zone)) => Some(format!("{time} ({zone})")),
        (Some(time), None) => Some(time.to_owned()),
        (None, _) => starts_at.and_then(|at| {
            at.to_offset(UtcOffset::UTC)
                .format(format_description!("[year]-[month]-[day] [hour]:[minute]"))
                .ok()
                .map(|at| format!("{at} (UTC)"))
        }),
    };
    let mut values: Vec<(&str, Value)> = vec![("lang", language.as_str().into()), ("format", format.into())];
    if let Some(subject) = subject {
        values.push(("subject", subject.into()));
    }
    let mut add = |key: &'static str, value: Option<String>| {
        if let Some(value) = value {
            values.push((key, value.into()));
        }
    };
    add("service", present(service).map(str::to_owned));
    add("status", present(status).map(|s| status_label(language, s)));
    add("reason", present(reason).map(str::to_owned));
    add("stage", present(stage).map(str::to_owned));
    add("document_kind", present(document_kind).map(words));
    add("mission", present(mission).map(str::to_owned));
    add("local_time", present(local_time).map(str::to_owned));
    add("timezone", present(timezone).map(str::to_owned));
    add("when", when);
    // To a representative: the dependant it is about (the bases name them first).
    add("about", present(&email.about).map(str::to_owned));
    values.into_iter().collect()
}

/// A detail with something in it.
fn present(value: &Option<String>) -> Option<&str> {
    value.as_deref().map(str::trim).filter(|v| !v.is_empty())
}

/// A request status (`crates/domain/src/request.rs`) in words; an unknown one with its
/// underscores as spaces.
fn status_label(language: Language, status: &str) -> String {
    let label = match (language, status) {
        (Language::En, "submitted") => "submitted",
        (Language::En, "in_review") => "in review",
        (Language::En, "action_required") => "action required from you",
        (Language::En, "approved") => "approved",
        (Language::En, "rejected") => "rejected",
        (Language::En, "completed") => "completed",
        (Language::En, "cancelled") => "cancelled",
        (Language::Fr, "submitted") => "soumise",
        (Language::Fr, "in_review") => "en cours d'examen",
        (Language::Fr, "action_required") => "action requise de votre part",
        (Language::Fr, "approved") => "approuvée",
        (Language::Fr, "rejected") => "refusée",
        (Language::Fr, "completed") => "terminée",
        (Language::Fr, "cancelled") => "annulée",
        _ => return words(status),
    };
    label.to_owned()
}

/// `passport_photo` → "passport photo".
fn words(code: &str) -> String {
    code.replace('_', " ")
}

/// The `paragraphs` filter of `layout.html`: blank-line-separated blocks become `<p>`
/// elements, their lines joined by `<br>`. Its input is the captured body, already
/// escaped by auto-escaping; an unescaped input is escaped here first.
fn paragraphs(value: Value) -> Value {
    let body = value.as_str().unwrap_or_default();
    let body = if value.is_safe() { body.to_owned() } else { escape_html(body) };
    let html = split_paragraphs(&body)
        .iter()
        .map(|lines| format!("<p>{}</p>", lines.join("<br>\n")))
        .collect::<Vec<_>>()
        .join("\n");
    Value::from_safe_string(html)
}

/// The non-empty lines of `text`, grouped into paragraphs at blank lines.
fn split_paragraphs(text: &str) -> Vec<Vec<&str>> {
    let mut paragraphs = vec![Vec::new()];
    for line in text.lines().map(str::trim) {
        match (line.is_empty(), paragraphs.last_mut()) {
            (false, Some(current)) => current.push(line),
            (true, Some(current)) if !current.is_empty() => paragraphs.push(Vec::new()),
            _ => {}
        }
    }
    paragraphs.retain(|p| !p.is_empty());
    paragraphs
}

fn escape_html(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#x27;"),
            c => out.push(c),
        }
    }
    out
}

/// Trailing spaces off every line (but the `-- ` signature separator), at most one blank
/// line in a row, no blank lines at either end, one final newline.
fn tidy(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut blank = false;
    for line in text.lines() {
        let line = if line == "-- " { line } else { line.trim_end() };
        if line.is_empty() {
            blank = !out.is_empty();
            continue;
        }
        if blank {
            out.push('\n');
            blank = false;
        }
        out.push_str(line);
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests;
