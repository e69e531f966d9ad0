//! The wire of representations (docs/representation.md): a representation with whether
//! it is in force now, the bodies that create and end one, a dependant as a
//! representative sees them, and the problems these operations document.

use crate::wire::common::{ActorBody, iso_date, problem_response, wire_enum};
use consular_application::representation::{Dependant, RepresentationView};
use consular_domain::representation::NewRepresentation;
use consular_domain::{CitizenId, DocumentId, RepresentationKind, ServiceScope, ServiceTypeId};
use serde::{Deserialize, Serialize};
use time::{Date, OffsetDateTime};
use utoipa::ToSchema;
use uuid::Uuid;

wire_enum!(
    /// What the representative is to the dependant: `parent` (of a minor, until their 18th
    /// birthday), `guardian` (at any age) or `authorised_representative` (a power of
    /// attorney, for an adult).
    RepresentationKindName mirrors RepresentationKind { Parent, Guardian, AuthorisedRepresentative }
);

/// Who may act for whom: a representative for a dependant, both citizens of one mission.
#[derive(Debug, Serialize, ToSchema)]
pub struct RepresentationBody {
    pub id: Uuid,
    /// The citizen represented.
    pub dependant_id: Uuid,
    /// The citizen who acts for them.
    pub representative_id: Uuid,
    pub mission_id: Uuid,
    pub kind: RepresentationKindName,
    /// The service types the representative acts in, sorted; null: every service.
    pub service_type_ids: Option<Vec<Uuid>>,
    /// First day in force, a date in the mission's time zone.
    #[serde(with = "iso_date")]
    #[schema(value_type = String, format = Date)]
    pub valid_from: Date,
    /// Last day in force (inclusive); null: no end date.
    #[serde(with = "iso_date::option")]
    #[schema(value_type = Option<String>, format = Date)]
    pub valid_until: Option<Date>,
    /// The document of the dependant's that the staff checked.
    pub evidence_document_id: Uuid,
    pub created_by: ActorBody,
    #[serde(with = "time::serde::rfc3339")]
    #[schema(value_type = String, format = DateTime)]
    pub created_at: OffsetDateTime,
    #[serde(with = "time::serde::rfc3339::option")]
    #[schema(value_type = Option<String>, format = DateTime)]
    pub ended_at: Option<OffsetDateTime>,
    pub ended_by: Option<ActorBody>,
    pub end_reason: Option<String>,
    /// Whether it is in force now: not ended, today (in the mission's time zone) within
    /// `valid_from`..`valid_until`, and the kind fits the dependant's age today.
    pub in_force: bool,
}

impl From<RepresentationView> for RepresentationBody {
    fn from(view: RepresentationView) -> Self {
        let r = view.representation;
        RepresentationBody {
            id: r.id.as_uuid(),
            dependant_id: r.dependant_id.as_uuid(),
            representative_id: r.representative_id.as_uuid(),
            mission_id: r.mission_id.as_uuid(),
            kind: r.kind.into(),
            service_type_ids: match r.services {
                ServiceScope::All => None,
                ServiceScope::Only(ids) => Some(ids.iter().map(|s| s.as_uuid()).collect()),
            },
            valid_from: r.valid_from,
            valid_until: r.valid_until,
            evidence_document_id: r.evidence_document_id.as_uuid(),
            created_by: r.created_by.into(),
            created_at: r.created_at,
            ended_at: r.ended_at,
            ended_by: r.ended_by.map(ActorBody::from),
            end_reason: r.end_reason,
            in_force: view.in_force,
        }
    }
}

#[derive(Debug, Serialize, ToSchema)]
pub struct RepresentationList {
    pub items: Vec<RepresentationBody>,
    pub next_cursor: Option<String>,
}

/// A representation to create, after checking its evidence.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateRepresentation {
    /// Another citizen of the dependant's mission.
    pub representative_id: Uuid,
    /// Must fit the dependant's age today: `parent` for a minor, `authorised_representative`
    /// for an adult, `guardian` for either.
    pub kind: RepresentationKindName,
    /// 1 to 50 distinct service types; absent or null: every service.
    #[schema(min_items = 1, max_items = 50)]
    pub service_type_ids: Option<Vec<Uuid>>,
    /// First day in force, a date in the mission's time zone.
    #[serde(with = "iso_date")]
    #[schema(value_type = String, format = Date)]
    pub valid_from: Date,
    /// Last day in force (inclusive), not before `valid_from`; absent or null: no end.
    #[serde(default, with = "iso_date::option")]
    #[schema(value_type = Option<String>, format = Date)]
    pub valid_until: Option<Date>,
    /// A document of the dependant's (a birth certificate, a court order, a power of
    /// attorney), not deleted.
    pub evidence_document_id: Uuid,
}

impl From<CreateRepresentation> for NewRepresentation {
    fn from(c: CreateRepresentation) -> Self {
        NewRepresentation {
            representative_id: CitizenId(c.representative_id),
            kind: c.kind.into(),
            service_type_ids: c.service_type_ids.map(|ids| ids.into_iter().map(ServiceTypeId).collect()),
            valid_from: c.valid_from,
            valid_until: c.valid_until,
            evidence_document_id: DocumentId(c.evidence_document_id),
        }
    }
}

/// Why the representation ends.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct EndRepresentation {
    #[schema(min_length = 1, max_length = 500)]
    pub reason: String,
}

/// A citizen the caller acts for now: their id and names, and the representation.
#[derive(Debug, Serialize, ToSchema)]
pub struct DependantBody {
    pub citizen_id: Uuid,
    pub given_name: String,
    pub family_name: String,
    pub representation: RepresentationBody,
}

impl From<Dependant> for DependantBody {
    fn from(d: Dependant) -> Self {
        DependantBody {
            citizen_id: d.citizen.id.as_uuid(),
            given_name: d.citizen.given_name,
            family_name: d.citizen.family_name,
            representation: d.representation.into(),
        }
    }
}

/// Every dependant the caller acts for now (not paged: a handful).
#[derive(Debug, Serialize, ToSchema)]
pub struct DependantList {
    pub items: Vec<DependantBody>,
}

problem_response! {
    /// 409 of creating a representation.
    RepresentationExists = 409, "The dependant already has a representation not ended with this representative and kind (`representation_exists`; `existing_representation_id` names it)";
    /// 409 of ending a representation.
    RepresentationEnded = 409, "The representation is already ended (`representation_ended`)";
}
