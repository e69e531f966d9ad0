//! One-time bootstrap steps: the `bootstrap_markers` table (used by `clients` and
//! `signing_keys` through `markers/queries.rs`).

diesel::table! {
    use diesel::sql_types::*;
    use crate::shared::sql_types::PortableTimestamp;

    bootstrap_markers (name) {
        name -> Text,
        created_at -> PortableTimestamp,
    }
}

/// The unique constraints of `bootstrap_markers` (see `crate::error`).
pub(crate) const UNIQUE_CONSTRAINTS: &[(&str, &str)] =
    &[("bootstrap_markers_pkey", "bootstrap_markers.name")];
