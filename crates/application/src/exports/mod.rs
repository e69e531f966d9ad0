//! Exports of a citizen's data (docs/data-protection.md "Export"): starting one and
//! reading its state (`manage.rs`), the background build that streams the zip archive
//! into the blob store under a lease (`build.rs`, its contents in `contents.rs`, the zip
//! bridge in `archive.rs`), and the hourly sweep of expired and unreferenced archives.
//!
//! Every use case asks `consular_domain::policy::exports` first; another mission's or
//! another citizen's export is 404.

mod archive;
mod build;
mod contents;
mod manage;
mod service;
#[cfg(test)]
mod tests;

pub use build::{BuildOutcome, ExportSweep};
pub use manage::{ExportArchive, ExportView, Whose};
pub use service::{ExportConfig, ExportGrant, ExportPorts, ExportService, RESOURCE};
