//! API clients: the `api_clients` table, its row, and [`ClientRepository`].

use crate::failure::Failure;
use crate::shared::columns::corrupt;
use crate::shared::repository;
use crate::shared::sql_types::{DbTime, DbUuid};
use consular_domain::{ApiClient, ClientId, Page, PageRequest, ScopeSet, Subject};
use consular_ports::{ClientFilter, ClientRepository, WriteMeta};
use diesel::prelude::*;
use time::OffsetDateTime;

diesel::table! {
    use diesel::sql_types::*;
    use crate::shared::sql_types::{PortableTimestamp, PortableUuid};

    api_clients (id) {
        id -> PortableUuid,
        name -> Text,
        principal_kind -> Text,
        principal_id -> PortableUuid,
        mission_id -> Nullable<PortableUuid>,
        scopes -> Text,
        secret_hash -> Binary,
        status -> Text,
        version -> BigInt,
        created_at -> PortableTimestamp,
        updated_at -> PortableTimestamp,
    }
}

/// The unique constraints of `api_clients` (see `crate::error`).
pub(crate) const UNIQUE_CONSTRAINTS: &[(&str, &str)] = &[("api_clients_pkey", "api_clients.id")];

repository! {
    impl ClientRepository for Database => clients {
        fn insert(client: &ApiClient, meta: &WriteMeta);
        fn insert_first(client: &ApiClient, meta: &WriteMeta) -> bool;
        fn update(client: &ApiClient, expected_version: i64, now: OffsetDateTime, meta: &WriteMeta);
        fn get(id: ClientId) -> Option<ApiClient>;
        fn list(filter: ClientFilter, page: PageRequest) -> Page<ApiClient>;
    }
}

#[derive(Debug, Clone, Queryable, Selectable, Insertable, AsChangeset)]
#[diesel(table_name = api_clients)]
#[diesel(treat_none_as_default_value = false)]
// Without this, a client moved out of its mission (`None`) would keep the old mission_id.
#[diesel(treat_none_as_null = true)]
pub(crate) struct ClientRow {
    pub id: DbUuid,
    pub name: String,
    pub principal_kind: String,
    pub principal_id: DbUuid,
    pub mission_id: Option<DbUuid>,
    pub scopes: String,
    pub secret_hash: Vec<u8>,
    pub status: String,
    pub version: i64,
    pub created_at: DbTime,
    pub updated_at: DbTime,
}

impl From<&ApiClient> for ClientRow {
    fn from(c: &ApiClient) -> Self {
        ClientRow {
            id: DbUuid(c.id.0),
            name: c.name.clone(),
            principal_kind: c.subject.kind.as_str().to_owned(),
            principal_id: DbUuid(c.subject.id.0),
            mission_id: c.mission.map(|m| DbUuid(m.0)),
            scopes: c.scopes.to_string(),
            secret_hash: c.secret_hash.clone(),
            status: c.status.as_str().to_owned(),
            version: c.version,
            created_at: DbTime(c.created_at),
            updated_at: DbTime(c.updated_at),
        }
    }
}

impl TryFrom<ClientRow> for ApiClient {
    type Error = Failure;
    fn try_from(row: ClientRow) -> Result<Self, Failure> {
        Ok(ApiClient {
            id: row.id.0.into(),
            name: row.name,
            subject: Subject {
                kind: row.principal_kind.parse().map_err(|e| corrupt("api_clients.principal_kind", e))?,
                id: row.principal_id.0.into(),
            },
            mission: row.mission_id.map(|m| m.0.into()),
            scopes: ScopeSet::parse(&row.scopes).map_err(|e| corrupt("api_clients.scopes", e))?,
            secret_hash: row.secret_hash,
            status: row.status.parse().map_err(|e| corrupt("api_clients.status", e))?,
            version: row.version,
            created_at: row.created_at.0,
            updated_at: row.updated_at.0,
        })
    }
}
