//! Logging: human-readable lines by default, JSON lines with `log_format = "json"`. The
//! request span carries the request id, so every line logged while serving a request
//! names it.

use crate::config::{LogFormat, Settings};
use tracing_subscriber::EnvFilter;

pub fn init(settings: &Settings) {
    let filter = EnvFilter::try_new(&settings.log_level).unwrap_or_else(|_| EnvFilter::new("info"));
    let colours = std::io::IsTerminal::is_terminal(&std::io::stderr());
    let builder =
        tracing_subscriber::fmt().with_env_filter(filter).with_writer(std::io::stderr).with_ansi(colours);
    // A second initialisation (tests) is not an error worth stopping for.
    let _ = match settings.log_format {
        LogFormat::Json => builder.json().with_current_span(true).with_span_list(false).try_init(),
        LogFormat::Text => builder.try_init(),
    };
}
