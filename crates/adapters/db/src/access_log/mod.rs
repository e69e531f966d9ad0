//! The citizens' access logs: the `access_log` table, its row and
//! [`AccessLogRepository`] (docs/data-protection.md "Access log"). Rows are only inserted.

use crate::failure::Failure;
use crate::shared::columns::{corrupt, subject_from_db};
use crate::shared::repository;
use crate::shared::sql_types::{DbTime, DbUuid};
use consular_domain::{AccessEntry, AccessEntryId, CitizenId, Page, PageRequest};
use consular_ports::AccessLogRepository;
use diesel::{Insertable, Queryable, Selectable};

diesel::table! {
    use diesel::sql_types::*;
    use crate::shared::sql_types::{PortableTimestamp, PortableUuid};

    access_log (citizen_id, id) {
        id -> PortableUuid,
        citizen_id -> PortableUuid,
        at -> PortableTimestamp,
        actor_kind -> Text,
        actor_id -> PortableUuid,
        actor_mission_id -> Nullable<PortableUuid>,
        actor_role -> Text,
        client_id -> PortableUuid,
        what -> Text,
        object_id -> PortableUuid,
    }
}

/// The unique constraints of `access_log` (see `crate::error`).
pub(crate) const UNIQUE_CONSTRAINTS: &[(&str, &str)] =
    &[("access_log_pkey", "access_log.citizen_id, access_log.id")];

repository! {
    impl AccessLogRepository for Database => access_log {
        fn append(entries: &[AccessEntry]);
        fn list(citizen: CitizenId, page: PageRequest) -> Page<AccessEntry>;
    }
}

#[derive(Debug, Clone, Queryable, Selectable, Insertable)]
#[diesel(table_name = access_log)]
#[diesel(treat_none_as_default_value = false)]
pub(crate) struct AccessRow {
    pub id: DbUuid,
    pub citizen_id: DbUuid,
    pub at: DbTime,
    pub actor_kind: String,
    pub actor_id: DbUuid,
    pub actor_mission_id: Option<DbUuid>,
    pub actor_role: String,
    pub client_id: DbUuid,
    pub what: String,
    pub object_id: DbUuid,
}

impl From<&AccessEntry> for AccessRow {
    fn from(e: &AccessEntry) -> Self {
        AccessRow {
            id: DbUuid(e.id.0),
            citizen_id: DbUuid(e.citizen_id.0),
            at: DbTime(e.at),
            actor_kind: e.actor.kind.as_str().to_owned(),
            actor_id: DbUuid(e.actor.id.0),
            actor_mission_id: e.actor_mission.map(|m| DbUuid(m.0)),
            actor_role: e.actor_role.as_str().to_owned(),
            client_id: DbUuid(e.client_id.0),
            what: e.what.as_str().to_owned(),
            object_id: DbUuid(e.object_id),
        }
    }
}

/// A batch of entries inserted by whichever database the connection holds.
pub(crate) trait AppendRows {
    fn append_rows(&mut self, entries: &[AccessEntry]) -> impl Future<Output = Result<(), Failure>> + Send;
}

/// One statement whatever the batch's size, its columns bound as ten arrays and zipped
/// back into rows by `unnest`: one prepared statement, one round trip, one commit, where a
/// statement per entry cost PostgreSQL most of its time in statement overhead
/// (docs/benchmarks.md "Access log").
const APPEND_UNNEST: &str = "INSERT INTO access_log (id, citizen_id, at, actor_kind, actor_id, \
     actor_mission_id, actor_role, client_id, what, object_id) \
     SELECT * FROM unnest($1::uuid[], $2::uuid[], $3::timestamptz[], $4::text[], $5::uuid[], \
     $6::uuid[], $7::text[], $8::uuid[], $9::text[], $10::uuid[])";

impl AppendRows for crate::pg::Conn {
    async fn append_rows(&mut self, entries: &[AccessEntry]) -> Result<(), Failure> {
        use diesel::sql_types::{Array, Nullable, Text, Timestamptz, Uuid};
        use diesel_async::RunQueryDsl;
        fn column<T>(entries: &[AccessEntry], field: impl Fn(&AccessEntry) -> T) -> Vec<T> {
            entries.iter().map(field).collect()
        }
        diesel::sql_query(APPEND_UNNEST)
            .bind::<Array<Uuid>, _>(column(entries, |e| e.id.0))
            .bind::<Array<Uuid>, _>(column(entries, |e| e.citizen_id.0))
            .bind::<Array<Timestamptz>, _>(column(entries, |e| e.at))
            .bind::<Array<Text>, _>(column(entries, |e| e.actor.kind.as_str()))
            .bind::<Array<Uuid>, _>(column(entries, |e| e.actor.id.0))
            .bind::<Array<Nullable<Uuid>>, _>(column(entries, |e| e.actor_mission.map(|m| m.0)))
            .bind::<Array<Text>, _>(column(entries, |e| e.actor_role.as_str()))
            .bind::<Array<Uuid>, _>(column(entries, |e| e.client_id.0))
            .bind::<Array<Text>, _>(column(entries, |e| e.what.as_str()))
            .bind::<Array<Uuid>, _>(column(entries, |e| e.object_id))
            .execute(self)
            .await?;
        Ok(())
    }
}

/// SQLite runs in-process, so a statement per entry costs no round trip; diesel-async
/// does not compile its multi-row insert for SQLite. One transaction keeps the batch whole.
impl AppendRows for crate::sqlite::Conn {
    async fn append_rows(&mut self, entries: &[AccessEntry]) -> Result<(), Failure> {
        use diesel_async::RunQueryDsl;
        let rows: Vec<AccessRow> = entries.iter().map(AccessRow::from).collect();
        self.immediate_transaction(async |conn: &mut crate::sqlite::Conn| -> Result<(), Failure> {
            for row in rows {
                diesel::insert_into(access_log::table).values(row).execute(conn).await?;
            }
            Ok(())
        })
        .await
    }
}

impl TryFrom<AccessRow> for AccessEntry {
    type Error = Failure;
    fn try_from(row: AccessRow) -> Result<Self, Failure> {
        Ok(AccessEntry {
            id: AccessEntryId(row.id.0),
            citizen_id: CitizenId(row.citizen_id.0),
            at: row.at.0,
            actor: subject_from_db("access_log.actor_kind", &row.actor_kind, row.actor_id)?,
            actor_mission: row.actor_mission_id.map(|m| m.0.into()),
            actor_role: row.actor_role.parse().map_err(|e| corrupt("access_log.actor_role", e))?,
            client_id: row.client_id.0.into(),
            what: row.what.parse().map_err(|e| corrupt("access_log.what", e))?,
            object_id: row.object_id.0,
        })
    }
}
