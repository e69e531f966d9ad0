//! Representations, who acts for whom: the `representations` table, its row and
//! [`RepresentationRepository`] (docs/representation.md). Rows are inserted and ended,
//! never updated otherwise; an erasure of either party deletes them (`crate::erasure`).

use crate::failure::Failure;
use crate::shared::columns::{actor_from_db, actor_to_db, corrupt, from_json, subject_from_db, to_json};
use crate::shared::repository;
use crate::shared::sql_types::{DbDate, DbJson, DbTime, DbUuid};
use consular_domain::{
    CitizenId, Page, PageRequest, Representation, RepresentationId, ServiceScope, Subject,
};
use consular_ports::{ActingFacts, ONE_REPRESENTATION, RepresentationRepository, WriteMeta};
use diesel::prelude::*;
use time::OffsetDateTime;
use uuid::Uuid;

diesel::table! {
    use diesel::sql_types::*;
    use crate::shared::sql_types::{PortableDate, PortableJson, PortableTimestamp, PortableUuid};

    representations (id) {
        id -> PortableUuid,
        dependant_id -> PortableUuid,
        representative_id -> PortableUuid,
        mission_id -> PortableUuid,
        kind -> Text,
        service_type_ids -> Nullable<PortableJson>,
        valid_from -> PortableDate,
        valid_until -> Nullable<PortableDate>,
        evidence_document_id -> PortableUuid,
        created_by_kind -> Text,
        created_by_id -> PortableUuid,
        created_at -> PortableTimestamp,
        ended_at -> Nullable<PortableTimestamp>,
        ended_by_kind -> Nullable<Text>,
        ended_by_id -> Nullable<PortableUuid>,
        end_reason -> Nullable<Text>,
    }
}

/// The unique constraints of `representations` (see `crate::error`). The one-open index
/// is a partial index on three columns, which SQLite reports by those columns.
pub(crate) const UNIQUE_CONSTRAINTS: &[(&str, &str)] = &[
    ("representations_pkey", "representations.id"),
    (
        ONE_REPRESENTATION,
        "representations.dependant_id, representations.representative_id, representations.kind",
    ),
];

repository! {
    impl RepresentationRepository for Database => representations {
        fn insert(representation: &Representation, meta: &WriteMeta);
        fn get(id: RepresentationId) -> Option<Representation>;
        fn for_dependant(dependant: CitizenId, page: PageRequest) -> Page<Representation>;
        fn held_by(representative: CitizenId) -> Vec<Representation>;
        fn between(representative: CitizenId, dependant: CitizenId) -> Vec<Representation>;
        fn acting(representative: CitizenId, dependant: CitizenId) -> Option<ActingFacts>;
        fn end(id: RepresentationId, at: OffsetDateTime, by: Subject, reason: &str, meta: &WriteMeta)
            -> Option<Representation>;
    }
}

#[derive(Debug, Clone, Queryable, Selectable, Insertable)]
#[diesel(table_name = representations)]
#[diesel(treat_none_as_default_value = false)]
pub(crate) struct RepresentationRow {
    pub id: DbUuid,
    pub dependant_id: DbUuid,
    pub representative_id: DbUuid,
    pub mission_id: DbUuid,
    pub kind: String,
    /// `NULL` for every service, else a JSON array of ids ([`ServicesDoc`]).
    pub service_type_ids: Option<DbJson>,
    pub valid_from: DbDate,
    pub valid_until: Option<DbDate>,
    pub evidence_document_id: DbUuid,
    pub created_by_kind: String,
    pub created_by_id: DbUuid,
    pub created_at: DbTime,
    pub ended_at: Option<DbTime>,
    pub ended_by_kind: Option<String>,
    pub ended_by_id: Option<DbUuid>,
    pub end_reason: Option<String>,
}

/// The stored shape of `service_type_ids`: the ids, as the domain keeps them (sorted).
type ServicesDoc = Vec<Uuid>;

impl TryFrom<&Representation> for RepresentationRow {
    type Error = Failure;
    fn try_from(r: &Representation) -> Result<Self, Failure> {
        let service_type_ids = match &r.services {
            ServiceScope::All => None,
            ServiceScope::Only(ids) => {
                let doc: ServicesDoc = ids.iter().map(|id| id.0).collect();
                Some(to_json("representation services", &doc)?)
            }
        };
        let (ended_by_kind, ended_by_id) = actor_to_db(r.ended_by);
        Ok(RepresentationRow {
            id: DbUuid(r.id.0),
            dependant_id: DbUuid(r.dependant_id.0),
            representative_id: DbUuid(r.representative_id.0),
            mission_id: DbUuid(r.mission_id.0),
            kind: r.kind.as_str().to_owned(),
            service_type_ids,
            valid_from: DbDate(r.valid_from),
            valid_until: r.valid_until.map(DbDate),
            evidence_document_id: DbUuid(r.evidence_document_id.0),
            created_by_kind: r.created_by.kind.as_str().to_owned(),
            created_by_id: DbUuid(r.created_by.id.0),
            created_at: DbTime(r.created_at),
            ended_at: r.ended_at.map(DbTime),
            ended_by_kind,
            ended_by_id,
            end_reason: r.end_reason.clone(),
        })
    }
}

impl TryFrom<RepresentationRow> for Representation {
    type Error = Failure;
    fn try_from(row: RepresentationRow) -> Result<Self, Failure> {
        let services = match row.service_type_ids {
            None => ServiceScope::All,
            Some(json) => {
                let ids: ServicesDoc = from_json("representations.service_type_ids", json)?;
                if ids.is_empty() {
                    return Err(corrupt("representations.service_type_ids", "an empty list of services"));
                }
                ServiceScope::Only(ids.into_iter().map(Into::into).collect())
            }
        };
        Ok(Representation {
            id: RepresentationId(row.id.0),
            dependant_id: CitizenId(row.dependant_id.0),
            representative_id: CitizenId(row.representative_id.0),
            mission_id: row.mission_id.0.into(),
            kind: row.kind.parse().map_err(|e| corrupt("representations.kind", e))?,
            services,
            valid_from: row.valid_from.0,
            valid_until: row.valid_until.map(|d| d.0),
            evidence_document_id: row.evidence_document_id.0.into(),
            created_by: subject_from_db(
                "representations.created_by_kind",
                &row.created_by_kind,
                row.created_by_id,
            )?,
            created_at: row.created_at.0,
            ended_at: row.ended_at.map(|t| t.0),
            ended_by: actor_from_db("representations.ended_by_kind", row.ended_by_kind, row.ended_by_id)?,
            end_reason: row.end_reason,
        })
    }
}
