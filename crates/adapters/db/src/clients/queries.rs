//! The queries of API clients.

use super::{Conn, markers, tokens, write_meta};
use crate::clients::{ClientRow, api_clients};
use crate::failure::Failure;
use crate::shared::sql_types::{DbTime, DbUuid};
use crate::shared::update_versioned;
use crate::tokens::{RevocationRow, refresh_tokens};
use consular_domain::{ApiClient, ClientId, ClientStatus, Page, PageRequest};
use consular_ports::{ClientFilter, RevocationKind, WriteMeta};
use diesel::prelude::*;
use diesel_async::RunQueryDsl;
use time::OffsetDateTime;

pub(crate) async fn insert(conn: &mut Conn, client: &ApiClient, meta: &WriteMeta) -> Result<(), Failure> {
    let row = ClientRow::from(client);
    write_tx!(conn, async |conn: &mut Conn| -> Result<(), Failure> {
        write_meta::store(conn, meta).await?;
        insert_row(conn, &row).await
    })
    .await
}

/// Inserts a client inside the caller's transaction: citizens and staff members are
/// stored together with the client issued to them.
pub(crate) async fn insert_row(conn: &mut Conn, row: &ClientRow) -> Result<(), Failure> {
    diesel::insert_into(api_clients::table).values(row).execute(conn).await?;
    Ok(())
}

/// The bootstrap marker makes this happen once per database, even when several nodes
/// start together; an existing client also means there is nothing to bootstrap.
pub(crate) async fn insert_first(
    conn: &mut Conn,
    client: &ApiClient,
    meta: &WriteMeta,
) -> Result<bool, Failure> {
    let row = ClientRow::from(client);
    write_tx!(conn, async |conn: &mut Conn| -> Result<bool, Failure> {
        if !markers::claim(conn, markers::FIRST_ADMIN_CLIENT, row.created_at.0).await? {
            return Ok(false);
        }
        let any_client = diesel::select(diesel::dsl::exists(api_clients::table.select(api_clients::id)))
            .get_result::<bool>(conn)
            .await?;
        if any_client {
            return Ok(false);
        }
        write_meta::store(conn, meta).await?;
        insert_row(conn, &row).await?;
        Ok(true)
    })
    .await
}

pub(crate) async fn update(
    conn: &mut Conn,
    client: &ApiClient,
    expected_version: i64,
    now: OffsetDateTime,
    meta: &WriteMeta,
) -> Result<(), Failure> {
    let row = ClientRow::from(client);
    let disabled = client.status == ClientStatus::Disabled;
    write_tx!(conn, async |conn: &mut Conn| -> Result<(), Failure> {
        write_meta::store(conn, meta).await?;
        update_versioned!(conn, api_clients, &row, expected_version).await?;
        if disabled {
            diesel::update(
                refresh_tokens::table
                    .filter(refresh_tokens::client_id.eq(row.id))
                    .filter(refresh_tokens::revoked_at.is_null()),
            )
            .set(refresh_tokens::revoked_at.eq(DbTime(now)))
            .execute(conn)
            .await?;
            let revocation =
                RevocationRow::new(RevocationKind::Client { client_id: ClientId(row.id.0) }, now);
            tokens::record_revocation(conn, &revocation).await?;
        }
        Ok(())
    })
    .await
}

pub(crate) async fn get(conn: &mut Conn, id: ClientId) -> Result<Option<ApiClient>, Failure> {
    let row: Option<ClientRow> =
        api_clients::table.find(DbUuid(id.0)).select(ClientRow::as_select()).first(conn).await.optional()?;
    row.map(ApiClient::try_from).transpose()
}

pub(crate) async fn list(
    conn: &mut Conn,
    filter: ClientFilter,
    page: PageRequest,
) -> Result<Page<ApiClient>, Failure> {
    let mut query = api_clients::table
        .select(ClientRow::as_select())
        .order(api_clients::id.asc())
        .limit(page.fetch_limit())
        .into_boxed();
    if let Some(mission) = filter.mission {
        query = query.filter(api_clients::mission_id.eq(DbUuid(mission.0)));
    }
    if let Some(principal) = filter.principal {
        query = query.filter(api_clients::principal_id.eq(DbUuid(principal.0)));
    }
    if let Some(after) = page.after {
        query = query.filter(api_clients::id.gt(DbUuid(after)));
    }
    let rows: Vec<ClientRow> = query.load(conn).await?;
    let clients = rows.into_iter().map(ApiClient::try_from).collect::<Result<Vec<_>, _>>()?;
    Ok(Page::from_rows(clients, &page, |c| c.id.0))
}
