//! The schema as the adapter knows it: every area's tables, listed once below (`tables!`),
//! and the joins between them. Each table is declared with `diesel::table!` in the
//! `mod.rs` of the area that owns it (as in `migrations/{postgres,sqlite}`, written by hand
//! once for both databases; uuid, instant, date and JSON columns use the portable types of
//! [`crate::shared::sql_types`]), with the area's unique constraints beside it.
//!
//! The list reads as imports, one line per area: `crate::<area>::{<table>, …};`. From it
//! come diesel's permission for any two tables to appear in one query, the unique
//! constraints a database error is matched against ([`UNIQUE_CONSTRAINTS`], by `error.rs`),
//! the tables `health` may count ([`TABLES`]), and each table's columns as its `table!`
//! declares them ([`declared_tables`]), which `tests/schema.rs` compares with the migrated
//! database on both databases. A new column changes only its area; a new table is also
//! named on its area's line, and a new area adds its line (and its joins).
//!
//! No area uses this module: it uses them all.

use crate::shared::sql_types::Declared;
use diesel::{Column, Table};

/// `crate::area::{table, …};` for every area that owns tables: imports each table, lets
/// any two appear in the same query, and lists them with their areas' unique constraints.
macro_rules! tables {
    ($(crate::$area:ident::{$($table:ident),+ $(,)?};)+) => {
        $($(use crate::$area::$table;)+)+

        diesel::allow_tables_to_appear_in_same_query!($($($table),+),+);

        /// Every area's unique constraints: the name PostgreSQL reports (also the business
        /// name callers see) and the columns SQLite lists in "UNIQUE constraint failed: …".
        pub(crate) const UNIQUE_CONSTRAINTS: &[&[(&str, &str)]] = &[$(crate::$area::UNIQUE_CONSTRAINTS),+];

        /// The name of every table.
        pub(crate) const TABLES: &[&str] = &[$($(stringify!($table)),+),+];

        /// Every table with its columns, as the `table!`s declare them (for `tests/schema.rs`).
        #[doc(hidden)]
        pub fn declared_tables() -> Vec<DeclaredTable> {
            vec![$($(declared::<$table::table>(stringify!($table))),+),+]
        }
    };
}

tables! {
    crate::access_log::{access_log};
    crate::analytics::{request_stage_spells, stage_spell_days, analytics_rollups};
    crate::appointments::{slots, slot_service_types, appointments, appointment_history};
    crate::audit::{audit_events};
    crate::catalog::{service_types};
    crate::citizens::{citizens};
    crate::clients::{api_clients};
    crate::documents::{documents};
    crate::exports::{exports};
    crate::idempotency::{idempotency_keys};
    crate::markers::{bootstrap_markers};
    crate::missions::{missions};
    crate::notifications::{notifications, emails, notification_preferences, appointment_reminders};
    crate::outbox::{outbox_events};
    crate::rate_limits::{rate_limits};
    crate::reads::{write_marks};
    crate::representations::{representations};
    crate::requests::{service_requests, request_history, request_notes, request_messages};
    crate::service_secrets::{service_secrets};
    crate::signing_keys::{signing_keys};
    crate::staff::{staff_members, staff_assignments, staff_workloads};
    crate::tokens::{refresh_tokens, revocations};
}

diesel::joinable!(api_clients -> missions (mission_id));
diesel::joinable!(access_log -> citizens (citizen_id));
diesel::joinable!(refresh_tokens -> api_clients (client_id));
diesel::joinable!(citizens -> missions (mission_id));
diesel::joinable!(staff_members -> missions (mission_id));
diesel::joinable!(staff_assignments -> staff_members (staff_id));
diesel::joinable!(staff_assignments -> service_types (service_type_id));
diesel::joinable!(staff_workloads -> staff_members (staff_id));
diesel::joinable!(service_requests -> missions (mission_id));
diesel::joinable!(service_requests -> citizens (citizen_id));
diesel::joinable!(service_requests -> service_types (service_type_id));
diesel::joinable!(request_history -> service_requests (request_id));
diesel::joinable!(request_notes -> service_requests (request_id));
diesel::joinable!(request_messages -> service_requests (request_id));
diesel::joinable!(documents -> missions (mission_id));
diesel::joinable!(documents -> citizens (citizen_id));
diesel::joinable!(documents -> service_requests (request_id));
diesel::joinable!(slots -> missions (mission_id));
diesel::joinable!(slot_service_types -> slots (slot_id));
diesel::joinable!(slot_service_types -> service_types (service_type_id));
diesel::joinable!(appointments -> slots (slot_id));
diesel::joinable!(appointments -> missions (mission_id));
diesel::joinable!(appointments -> citizens (citizen_id));
diesel::joinable!(appointments -> service_types (service_type_id));
diesel::joinable!(appointments -> service_requests (request_id));
diesel::joinable!(appointment_history -> appointments (appointment_id));
diesel::joinable!(notifications -> outbox_events (event_id));
diesel::joinable!(notifications -> missions (mission_id));
diesel::joinable!(notifications -> service_requests (request_id));
diesel::joinable!(emails -> notifications (notification_id));
diesel::joinable!(appointment_reminders -> appointments (appointment_id));
diesel::joinable!(request_stage_spells -> service_requests (request_id));

/// A table as its `table!` declares it.
#[doc(hidden)]
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeclaredTable {
    pub name: &'static str,
    pub columns: Vec<DeclaredColumn>,
}

/// A column as its `table!` declares it: its name in SQL, and the type the migrations give
/// it on each database (PostgreSQL's `udt_name`, SQLite's declared type).
#[doc(hidden)]
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeclaredColumn {
    pub name: &'static str,
    pub postgres: &'static str,
    pub sqlite: &'static str,
    pub nullable: bool,
}

fn declared<T: Table>(name: &'static str) -> DeclaredTable
where
    T::AllColumns: Columns,
{
    let mut columns = Vec::new();
    <T::AllColumns as Columns>::declare(&mut columns);
    DeclaredTable { name, columns }
}

/// A tuple of columns (a table's `AllColumns`), read back one column at a time.
trait Columns {
    fn declare(out: &mut Vec<DeclaredColumn>);
}

/// Implements [`Columns`] for the tuples of every length up to the number of identifiers
/// given (diesel's `32-column-tables`).
macro_rules! columns {
    () => {};
    ($first:ident $($rest:ident)*) => {
        impl<$first: Column, $($rest: Column),*> Columns for ($first, $($rest,)*)
        where
            $first::SqlType: Declared,
            $($rest::SqlType: Declared,)*
        {
            fn declare(out: &mut Vec<DeclaredColumn>) {
                out.push(column::<$first>());
                $(out.push(column::<$rest>());)*
            }
        }
        columns!($($rest)*);
    };
}

columns!(
    C1 C2 C3 C4 C5 C6 C7 C8 C9 C10 C11 C12 C13 C14 C15 C16 C17 C18 C19 C20 C21 C22 C23 C24 C25 C26 C27 C28
    C29 C30 C31 C32
);

fn column<C: Column>() -> DeclaredColumn
where
    C::SqlType: Declared,
{
    DeclaredColumn {
        name: C::NAME,
        postgres: <C::SqlType as Declared>::POSTGRES,
        sqlite: <C::SqlType as Declared>::SQLITE,
        nullable: <C::SqlType as Declared>::NULLABLE,
    }
}
