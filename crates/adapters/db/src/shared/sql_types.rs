//! Column types that are native on PostgreSQL and text on SQLite, so that one `schema.rs`
//! and one set of queries serve both databases.
//!
//! Values travel as the newtypes [`DbUuid`], [`DbTime`], [`DbDate`] and [`DbJson`]: their
//! `ToSql`/`FromSql` impls say how each backend stores them. On PostgreSQL they delegate
//! to diesel's own `uuid`/`timestamptz`/`date`/`jsonb` support; on SQLite a uuid is its
//! lower-case hyphenated text, an instant is fixed-width RFC 3339 UTC text with six
//! fractional digits and a date is `YYYY-MM-DD` (so comparing the text compares the
//! values), and a JSON document is its compact text.

use diesel::deserialize::FromSqlRow;
use diesel::deserialize::{self, FromSql};
use diesel::expression::AsExpression;
use diesel::pg::{Pg, PgValue};
use diesel::serialize::{self, IsNull, Output, ToSql};
use diesel::sql_types::Text;
use diesel::sqlite::{Sqlite, SqliteValue};
use time::format_description::BorrowedFormatItem;
use time::macros::format_description;
use time::{Date, OffsetDateTime, PrimitiveDateTime, UtcOffset};
use uuid::Uuid;

// Every PostgreSQL type here names its fixed OIDs (`postgres_type(oid = …)`), never a
// type name: a named type is looked up on a fresh connection, and a statement waiting for
// that lookup would let the statements queued after it in a pipelined `Batch` (pg.rs)
// reach the server first, breaking the order a batch's outcome depends on.

/// A UUID: `uuid` on PostgreSQL (fixed OIDs, no type lookup), `TEXT` on SQLite.
#[derive(Debug, Clone, Copy, Default, diesel::sql_types::SqlType, diesel::query_builder::QueryId)]
#[diesel(postgres_type(oid = 2950, array_oid = 2951))]
#[diesel(sqlite_type(name = "Text"))]
pub struct PortableUuid;

/// An instant: `timestamptz` on PostgreSQL, `TEXT` on SQLite. Both keep microseconds.
#[derive(Debug, Clone, Copy, Default, diesel::sql_types::SqlType, diesel::query_builder::QueryId)]
#[diesel(postgres_type(oid = 1184, array_oid = 1185))]
#[diesel(sqlite_type(name = "Text"))]
pub struct PortableTimestamp;

// Text order is time order on SQLite (fixed-width UTC text), so `MIN`/`MAX` and comparisons
// mean the same on both databases.
impl diesel::sql_types::SqlOrd for PortableTimestamp {}

/// A calendar date: `date` on PostgreSQL, `TEXT` (`YYYY-MM-DD`) on SQLite.
#[derive(Debug, Clone, Copy, Default, diesel::sql_types::SqlType, diesel::query_builder::QueryId)]
#[diesel(postgres_type(oid = 1082, array_oid = 1182))]
#[diesel(sqlite_type(name = "Text"))]
pub struct PortableDate;

/// A JSON document: `jsonb` on PostgreSQL, `TEXT` on SQLite.
#[derive(Debug, Clone, Copy, Default, diesel::sql_types::SqlType, diesel::query_builder::QueryId)]
#[diesel(postgres_type(oid = 3802, array_oid = 3807))]
#[diesel(sqlite_type(name = "Text"))]
pub struct PortableJson;

/// How the migrations declare a column of this SQL type on each database: PostgreSQL's
/// `udt_name` and SQLite's declared type. `tests/schema.rs` checks every `table!` against
/// the migrated tables with it (`crate::schema::declared_tables`).
pub(crate) trait Declared {
    const POSTGRES: &'static str;
    const SQLITE: &'static str;
    const NULLABLE: bool = false;
}

/// `Declared` for SQL types: `type => ("udt_name", "SQLite type")`.
macro_rules! declared {
    ($($sql_type:ty => ($postgres:literal, $sqlite:literal),)*) => {
        $(
            impl Declared for $sql_type {
                const POSTGRES: &'static str = $postgres;
                const SQLITE: &'static str = $sqlite;
            }
        )*
    };
}

declared! {
    diesel::sql_types::Text => ("text", "TEXT"),
    diesel::sql_types::BigInt => ("int8", "INTEGER"),
    diesel::sql_types::Integer => ("int4", "INTEGER"),
    diesel::sql_types::Bool => ("bool", "INTEGER"),
    diesel::sql_types::Binary => ("bytea", "BLOB"),
    PortableUuid => ("uuid", "TEXT"),
    PortableTimestamp => ("timestamptz", "TEXT"),
    PortableDate => ("date", "TEXT"),
    PortableJson => ("jsonb", "TEXT"),
}

impl<T: Declared> Declared for diesel::sql_types::Nullable<T> {
    const POSTGRES: &'static str = T::POSTGRES;
    const SQLITE: &'static str = T::SQLITE;
    const NULLABLE: bool = true;
}

/// A uuid bound to or read from a [`PortableUuid`] column. (diesel's blanket impls forbid
/// implementing `AsExpression` for `uuid::Uuid` itself outside diesel, hence the newtype.)
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, AsExpression, FromSqlRow)]
#[diesel(sql_type = PortableUuid)]
pub(crate) struct DbUuid(pub Uuid);

/// An instant bound to or read from a [`PortableTimestamp`] column.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, AsExpression, FromSqlRow)]
#[diesel(sql_type = PortableTimestamp)]
pub(crate) struct DbTime(pub OffsetDateTime);

/// A date bound to or read from a [`PortableDate`] column.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, AsExpression, FromSqlRow)]
#[diesel(sql_type = PortableDate)]
pub(crate) struct DbDate(pub Date);

/// A document bound to or read from a [`PortableJson`] column, as JSON text. Rows convert
/// their typed fields to and from it (in their areas, `columns::to_json` / `from_json`), so
/// the column's shape is decided in one place; the text is parsed straight into the typed
/// field, never through a `serde_json::Value` (a request's stages are read on every row of
/// a list: building the generic tree first cost some 10 % of the server's CPU there).
#[derive(Debug, Clone, PartialEq, AsExpression, FromSqlRow)]
#[diesel(sql_type = PortableJson)]
pub(crate) struct DbJson(pub String);

impl From<Uuid> for DbUuid {
    fn from(value: Uuid) -> Self {
        DbUuid(value)
    }
}

impl From<OffsetDateTime> for DbTime {
    fn from(value: OffsetDateTime) -> Self {
        DbTime(value)
    }
}

impl ToSql<PortableUuid, Pg> for DbUuid {
    fn to_sql<'b>(&'b self, out: &mut Output<'b, '_, Pg>) -> serialize::Result {
        <Uuid as ToSql<diesel::sql_types::Uuid, Pg>>::to_sql(&self.0, out)
    }
}

impl FromSql<PortableUuid, Pg> for DbUuid {
    fn from_sql(bytes: PgValue<'_>) -> deserialize::Result<Self> {
        <Uuid as FromSql<diesel::sql_types::Uuid, Pg>>::from_sql(bytes).map(DbUuid)
    }
}

impl ToSql<PortableUuid, Sqlite> for DbUuid {
    fn to_sql<'b>(&'b self, out: &mut Output<'b, '_, Sqlite>) -> serialize::Result {
        out.set_value(self.0.hyphenated().to_string());
        Ok(IsNull::No)
    }
}

impl FromSql<PortableUuid, Sqlite> for DbUuid {
    fn from_sql(value: SqliteValue<'_, '_, '_>) -> deserialize::Result<Self> {
        let text = <String as FromSql<Text, Sqlite>>::from_sql(value)?;
        Ok(DbUuid(Uuid::parse_str(&text)?))
    }
}

/// `2026-11-22T10:00:00.123456Z`: fixed width as long as the year has four digits.
const SQLITE_INSTANT: &[BorrowedFormatItem<'static>] =
    format_description!("[year]-[month]-[day]T[hour]:[minute]:[second].[subsecond digits:6]Z");

/// The text an instant is stored as on SQLite (sub-microsecond digits are dropped, as
/// PostgreSQL drops them).
pub(crate) fn sqlite_instant(at: OffsetDateTime) -> Result<String, time::error::Format> {
    at.to_offset(UtcOffset::UTC).format(SQLITE_INSTANT)
}

impl ToSql<PortableTimestamp, Pg> for DbTime {
    fn to_sql<'b>(&'b self, out: &mut Output<'b, '_, Pg>) -> serialize::Result {
        <OffsetDateTime as ToSql<diesel::sql_types::Timestamptz, Pg>>::to_sql(&self.0, out)
    }
}

impl FromSql<PortableTimestamp, Pg> for DbTime {
    fn from_sql(bytes: PgValue<'_>) -> deserialize::Result<Self> {
        <OffsetDateTime as FromSql<diesel::sql_types::Timestamptz, Pg>>::from_sql(bytes).map(DbTime)
    }
}

impl ToSql<PortableTimestamp, Sqlite> for DbTime {
    fn to_sql<'b>(&'b self, out: &mut Output<'b, '_, Sqlite>) -> serialize::Result {
        out.set_value(sqlite_instant(self.0)?);
        Ok(IsNull::No)
    }
}

impl FromSql<PortableTimestamp, Sqlite> for DbTime {
    fn from_sql(value: SqliteValue<'_, '_, '_>) -> deserialize::Result<Self> {
        let text = <String as FromSql<Text, Sqlite>>::from_sql(value)?;
        Ok(DbTime(PrimitiveDateTime::parse(&text, SQLITE_INSTANT)?.assume_utc()))
    }
}

/// `2026-11-22`: fixed width as long as the year has four digits.
const SQLITE_DATE: &[BorrowedFormatItem<'static>] = format_description!("[year]-[month]-[day]");

impl ToSql<PortableDate, Pg> for DbDate {
    fn to_sql<'b>(&'b self, out: &mut Output<'b, '_, Pg>) -> serialize::Result {
        <Date as ToSql<diesel::sql_types::Date, Pg>>::to_sql(&self.0, out)
    }
}

impl FromSql<PortableDate, Pg> for DbDate {
    fn from_sql(bytes: PgValue<'_>) -> deserialize::Result<Self> {
        <Date as FromSql<diesel::sql_types::Date, Pg>>::from_sql(bytes).map(DbDate)
    }
}

impl ToSql<PortableDate, Sqlite> for DbDate {
    fn to_sql<'b>(&'b self, out: &mut Output<'b, '_, Sqlite>) -> serialize::Result {
        out.set_value(self.0.format(SQLITE_DATE)?);
        Ok(IsNull::No)
    }
}

impl FromSql<PortableDate, Sqlite> for DbDate {
    fn from_sql(value: SqliteValue<'_, '_, '_>) -> deserialize::Result<Self> {
        let text = <String as FromSql<Text, Sqlite>>::from_sql(value)?;
        Ok(DbDate(Date::parse(&text, SQLITE_DATE)?))
    }
}

/// `jsonb`'s binary format: a version byte, then the text.
const JSONB_VERSION: u8 = 1;

impl ToSql<PortableJson, Pg> for DbJson {
    fn to_sql<'b>(&'b self, out: &mut Output<'b, '_, Pg>) -> serialize::Result {
        use std::io::Write;
        out.write_all(&[JSONB_VERSION])?;
        out.write_all(self.0.as_bytes())?;
        Ok(IsNull::No)
    }
}

impl FromSql<PortableJson, Pg> for DbJson {
    fn from_sql(bytes: PgValue<'_>) -> deserialize::Result<Self> {
        match bytes.as_bytes().split_first() {
            Some((&JSONB_VERSION, text)) => Ok(DbJson(std::str::from_utf8(text)?.to_owned())),
            _ => Err("unsupported jsonb encoding version".into()),
        }
    }
}

impl ToSql<PortableJson, Sqlite> for DbJson {
    fn to_sql<'b>(&'b self, out: &mut Output<'b, '_, Sqlite>) -> serialize::Result {
        out.set_value(self.0.as_str());
        Ok(IsNull::No)
    }
}

impl FromSql<PortableJson, Sqlite> for DbJson {
    fn from_sql(value: SqliteValue<'_, '_, '_>) -> deserialize::Result<Self> {
        Ok(DbJson(<String as FromSql<Text, Sqlite>>::from_sql(value)?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use time::macros::datetime;

    #[test]
    fn sqlite_instants_are_fixed_width_utc_with_microseconds() {
        let at = datetime!(2026-11-22 11:00:00.123456789 +01:00);
        assert_eq!(sqlite_instant(at).unwrap(), "2026-11-22T10:00:00.123456Z");
        assert_eq!(
            sqlite_instant(datetime!(2026-01-02 03:04:05 UTC)).unwrap(),
            "2026-01-02T03:04:05.000000Z"
        );
    }

    #[test]
    fn sqlite_dates_are_fixed_width_and_parse_back() {
        let day = time::macros::date!(0987 - 01 - 02);
        let text = day.format(SQLITE_DATE).unwrap();
        assert_eq!(text, "0987-01-02");
        assert_eq!(Date::parse(&text, SQLITE_DATE).unwrap(), day);
    }

    #[test]
    fn sqlite_instant_text_parses_back() {
        let parsed =
            PrimitiveDateTime::parse("2026-11-22T10:00:00.123456Z", SQLITE_INSTANT).unwrap().assume_utc();
        assert_eq!(parsed, datetime!(2026-11-22 10:00:00.123456 UTC));
    }
}
