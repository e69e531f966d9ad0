//! The adapter's idea of the schema against the migrated database, on both databases:
//! every diesel `table!` (`consular_db::declared_tables`, from `src/schema.rs`) has its
//! migrated table with the same columns, each of the type and nullability the migrations
//! give it, and every migrated table is one an area declares (but diesel's own
//! `__diesel_schema_migrations`). A `table!` that drifts from its migration, or a table
//! added by a migration and named nowhere else, fails here rather than in a query.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

#[path = "common/mod.rs"]
mod common;

use common::*;

use consular_db::{Backend, Database, DeclaredColumn, DeclaredTable, MigratedColumn, declared_tables};
use std::collections::BTreeMap;

/// diesel's record of the migrations run, which no area declares.
const DIESEL_MIGRATIONS: &str = "__diesel_schema_migrations";

/// What differs between the declared tables and the migrated columns, one line each.
fn differences(backend: Backend, declared: &[DeclaredTable], migrated: &[MigratedColumn]) -> Vec<String> {
    let mut tables: BTreeMap<&str, Vec<&MigratedColumn>> = BTreeMap::new();
    for column in migrated {
        tables.entry(column.table.as_str()).or_default().push(column);
    }
    tables.remove(DIESEL_MIGRATIONS);
    let mut differences = Vec::new();
    for table in declared {
        let Some(columns) = tables.remove(table.name) else {
            differences.push(format!("{}: declared, not migrated", table.name));
            continue;
        };
        for column in &table.columns {
            let Some(found) = columns.iter().find(|c| c.name == column.name) else {
                differences.push(format!("{}.{}: declared, not migrated", table.name, column.name));
                continue;
            };
            let expected = match backend {
                Backend::Postgres => column.postgres,
                Backend::Sqlite => column.sqlite,
            };
            if !found.sql_type.eq_ignore_ascii_case(expected) {
                differences.push(format!(
                    "{}.{}: declared {expected}, migrated {}",
                    table.name, column.name, found.sql_type
                ));
            }
            if found.nullable != column.nullable {
                let null = |nullable: bool| if nullable { "nullable" } else { "not null" };
                differences.push(format!(
                    "{}.{}: declared {}, migrated {}",
                    table.name,
                    column.name,
                    null(column.nullable),
                    null(found.nullable)
                ));
            }
        }
        for found in columns {
            if !table.columns.iter().any(|c| c.name == found.name) {
                differences.push(format!("{}.{}: migrated, not declared", table.name, found.name));
            }
        }
    }
    for table in tables.keys() {
        differences.push(format!("{table}: migrated, declared by no area"));
    }
    differences
}

async fn every_table_matches_its_migration(db: Database) {
    let migrated = db.migrated_columns().await.unwrap();
    assert!(migrated.iter().any(|c| c.table == "missions"), "{migrated:?}");
    let differences = differences(db.backend(), &declared_tables(), &migrated);
    assert!(differences.is_empty(), "the tables and the migrations differ:\n{}", differences.join("\n"));
}

/// `health` knows every table (it counts only those the schema names).
async fn every_declared_table_can_be_counted(db: Database) {
    for table in declared_tables() {
        assert!(db.count_rows(table.name).await.is_ok(), "{}", table.name);
    }
    assert!(db.count_rows(DIESEL_MIGRATIONS).await.is_err());
}

on_both_databases!(every_table_matches_its_migration, every_declared_table_can_be_counted);

/// The comparison itself sees each kind of drift.
#[test]
fn a_drift_is_reported() {
    let column = |name: &'static str, nullable: bool| DeclaredColumn {
        name,
        postgres: "text",
        sqlite: "TEXT",
        nullable,
    };
    let declared = [
        DeclaredTable {
            name: "things",
            columns: vec![column("id", false), column("label", true), column("gone", false)],
        },
        DeclaredTable { name: "dropped", columns: vec![column("id", false)] },
    ];
    let migrated = |table: &str, name: &str, sql_type: &str, nullable: bool| MigratedColumn {
        table: table.to_owned(),
        name: name.to_owned(),
        sql_type: sql_type.to_owned(),
        nullable,
    };
    let found = [
        migrated("things", "id", "uuid", false),
        migrated("things", "label", "text", false),
        migrated("things", "extra", "text", true),
        migrated("strays", "id", "text", false),
        migrated(DIESEL_MIGRATIONS, "version", "varchar", false),
    ];
    assert_eq!(
        differences(Backend::Postgres, &declared, &found),
        [
            "things.id: declared text, migrated uuid",
            "things.label: declared nullable, migrated not null",
            "things.gone: declared, not migrated",
            "things.extra: migrated, not declared",
            "dropped: declared, not migrated",
            "strays: migrated, declared by no area",
        ]
    );
    let sqlite = [
        migrated("things", "id", "text", false),
        migrated("things", "label", "TEXT", true),
        migrated("things", "gone", "Text", false),
    ];
    assert_eq!(differences(Backend::Sqlite, &declared[..1], &sqlite), Vec::<String>::new());
}
