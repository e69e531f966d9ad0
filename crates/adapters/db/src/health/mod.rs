//! Probes: [`HealthCheck`], and for tests [`Database::count_rows`](crate::Database::count_rows)
//! and [`Database::migrated_columns`](crate::Database::migrated_columns), the columns the
//! migrations made, read from the database's own catalog (`tests/schema.rs` compares them
//! with the `table!`s, `crate::schema::declared_tables`).

use crate::Database;
use crate::failure::Failure;
use crate::shared::{repository, run};
use async_trait::async_trait;
use consular_ports::HealthCheck;
use diesel::QueryableByName;
use diesel::sql_types::{Bool, Text};
use diesel_async::RunQueryDsl;

// `name` is not a query: this port is written by hand rather than with `repository!`.
#[async_trait]
impl HealthCheck for Database {
    fn name(&self) -> &'static str {
        "database"
    }

    async fn check(&self) -> Result<(), String> {
        run!(self, health::ping()).map_err(|e| e.to_string())
    }
}

repository! {
    impl Database => health {
        /// The number of rows in `table` (one of the schema's tables); for tests.
        #[doc(hidden)]
        pub fn count_rows(table: &str) -> i64;
        /// Every column of every table the migrations made (SQLite's own tables left
        /// out), in table order then column order; for tests.
        #[doc(hidden)]
        pub fn migrated_columns() -> Vec<MigratedColumn>;
    }
}

/// A column of a migrated table, as the database describes it: PostgreSQL's `udt_name`
/// (`information_schema.columns`), SQLite's declared type (`pragma_table_info`).
#[doc(hidden)]
#[derive(Debug, Clone, PartialEq, Eq, QueryableByName)]
pub struct MigratedColumn {
    #[diesel(sql_type = Text)]
    pub table: String,
    #[diesel(sql_type = Text)]
    pub name: String,
    #[diesel(sql_type = Text)]
    pub sql_type: String,
    #[diesel(sql_type = Bool)]
    pub nullable: bool,
}

/// Reads the catalog, which each database keeps its own way.
pub(crate) trait Catalog {
    async fn migrated_columns(&mut self) -> Result<Vec<MigratedColumn>, Failure>;
}

impl Catalog for crate::pg::Conn {
    async fn migrated_columns(&mut self) -> Result<Vec<MigratedColumn>, Failure> {
        Ok(diesel::sql_query(
            "SELECT c.table_name::text AS \"table\", c.column_name::text AS name, c.udt_name::text AS sql_type, \
             c.is_nullable = 'YES' AS nullable \
             FROM information_schema.columns c \
             JOIN information_schema.tables t USING (table_schema, table_name) \
             WHERE c.table_schema = current_schema() AND t.table_type = 'BASE TABLE' \
             ORDER BY c.table_name, c.ordinal_position",
        )
        .load(self)
        .await?)
    }
}

impl Catalog for crate::sqlite::Conn {
    async fn migrated_columns(&mut self) -> Result<Vec<MigratedColumn>, Failure> {
        // A lone `INTEGER` primary key is the rowid, never NULL whatever `notnull` says.
        Ok(diesel::sql_query(
            "SELECT m.name AS \"table\", p.name AS name, p.type AS sql_type, \
             p.\"notnull\" = 0 AND NOT (p.pk = 1 AND upper(p.type) = 'INTEGER' \
             AND (SELECT count(*) FROM pragma_table_info(m.name) k WHERE k.pk > 0) = 1) AS nullable \
             FROM sqlite_master m JOIN pragma_table_info(m.name) p \
             WHERE m.type = 'table' AND m.name NOT LIKE 'sqlite\\_%' ESCAPE '\\' \
             ORDER BY m.name, p.cid",
        )
        .load(self)
        .await?)
    }
}
