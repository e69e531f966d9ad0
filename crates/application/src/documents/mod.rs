//! Documents: citizens' identity documents, uploaded as streams, checked by their bytes,
//! scanned, stored in the blob store and downloaded through expiring signed URLs
//! (docs/documents.md). This module holds the parts of the upload and download paths that
//! need no port: deciding what a file is ([`accept`]) and the service's own signed URLs
//! ([`signed_url`]).

pub mod accept;
pub mod signed_url;
