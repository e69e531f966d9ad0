//! What the application runs on, in one value: every area's `<Area>Ports` is built `From`
//! it in production (`services.rs` gathers the services so built). It names no area of
//! this crate (only the recorder's leaf module), so that every area can use it.

use crate::access_recorder::AccessRecorder;
use consular_ports::{BlobStore, Clock, Mailer, MalwareScanner};
use std::sync::Arc;

/// The adapters every use case is built on: the database adapter `D`, which implements
/// every repository port (each `<Area>Ports` asks of it only the ports its area uses), the
/// blob store, the optional scanner and mailer, and the one clock. `D` stays a type
/// parameter so that this crate never names an adapter.
pub struct Adapters<D> {
    pub database: Arc<D>,
    pub blobs: Arc<dyn BlobStore>,
    /// `None`: uploads are kept unscanned.
    pub scanner: Option<Arc<dyn MalwareScanner>>,
    /// `None`: notifications are in-app only.
    pub mailer: Option<Arc<dyn Mailer>>,
    pub clock: Arc<dyn Clock>,
    /// The node's one access log recorder (`AccessRecorder::new(database)`): every area
    /// that logs reads records through it, so that a graceful stop drains every entry and
    /// a log read waits for all of them.
    pub access: AccessRecorder,
}
