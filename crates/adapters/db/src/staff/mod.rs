//! Staff members and their service assignments: the `staff_members` and
//! `staff_assignments` tables, their rows, and [`StaffRepository`]; and `staff_workloads`,
//! which the database keeps itself (triggers, see the migration `staff_workloads`).

use crate::shared::repository;
use crate::shared::sql_types::{DbTime, DbUuid};
use consular_domain::{ApiClient, Page, PageRequest, ServiceTypeId, StaffId, StaffMember};
use consular_ports::{StaffFilter, StaffRepository, WriteMeta};
use diesel::prelude::*;

diesel::table! {
    use diesel::sql_types::*;
    use crate::shared::sql_types::{PortableTimestamp, PortableUuid};

    staff_members (id) {
        id -> PortableUuid,
        mission_id -> PortableUuid,
        name -> Text,
        email -> Text,
        job_title -> Text,
        active -> Bool,
        version -> BigInt,
        created_at -> PortableTimestamp,
        updated_at -> PortableTimestamp,
    }
}

diesel::table! {
    use diesel::sql_types::*;
    use crate::shared::sql_types::PortableUuid;

    staff_assignments (staff_id, service_type_id) {
        staff_id -> PortableUuid,
        service_type_id -> PortableUuid,
        position -> Integer,
    }
}

diesel::table! {
    use crate::shared::sql_types::PortableUuid;
    use diesel::sql_types::BigInt;

    /// The number of open requests assigned to each member, one row per member, moved by
    /// triggers in the transaction of every write of `service_requests`; read-only here.
    staff_workloads (staff_id) {
        staff_id -> PortableUuid,
        open_requests -> BigInt,
    }
}

/// The unique constraints of the staff tables (see `crate::error`).
pub(crate) const UNIQUE_CONSTRAINTS: &[(&str, &str)] = &[
    ("staff_members_pkey", "staff_members.id"),
    ("staff_assignments_pkey", "staff_assignments.staff_id, staff_assignments.service_type_id"),
    ("staff_workloads_pkey", "staff_workloads.staff_id"),
];

repository! {
    impl StaffRepository for Database => staff {
        fn insert(member: &StaffMember, client: Option<ApiClient>, meta: &WriteMeta);
        fn update(member: &StaffMember, expected_version: i64, meta: &WriteMeta);
        fn get(id: StaffId) -> Option<StaffMember>;
        fn list(filter: StaffFilter, page: PageRequest) -> Page<StaffMember>;
    }
}

/// A staff member without their assignments (`staff_assignments`, see [`AssignmentRow`]).
#[derive(Debug, Clone, Queryable, Selectable, Insertable, AsChangeset)]
#[diesel(table_name = staff_members)]
#[diesel(treat_none_as_default_value = false)]
pub(crate) struct StaffRow {
    pub id: DbUuid,
    pub mission_id: DbUuid,
    pub name: String,
    pub email: String,
    pub job_title: String,
    pub active: bool,
    pub version: i64,
    pub created_at: DbTime,
    pub updated_at: DbTime,
}

impl From<&StaffMember> for StaffRow {
    fn from(m: &StaffMember) -> Self {
        StaffRow {
            id: DbUuid(m.id.0),
            mission_id: DbUuid(m.mission_id.0),
            name: m.name.clone(),
            email: m.email.clone(),
            job_title: m.job_title.clone(),
            active: m.active,
            version: m.version,
            created_at: DbTime(m.created_at),
            updated_at: DbTime(m.updated_at),
        }
    }
}

impl StaffRow {
    /// The member, with their service types in assignment order.
    pub(crate) fn into_member(self, service_type_ids: Vec<ServiceTypeId>) -> StaffMember {
        StaffMember {
            id: self.id.0.into(),
            mission_id: self.mission_id.0.into(),
            name: self.name,
            email: self.email,
            job_title: self.job_title,
            active: self.active,
            service_type_ids,
            version: self.version,
            created_at: self.created_at.0,
            updated_at: self.updated_at.0,
        }
    }
}

#[derive(Debug, Clone, Queryable, Selectable, Insertable)]
#[diesel(table_name = staff_assignments)]
#[diesel(treat_none_as_default_value = false)]
pub(crate) struct AssignmentRow {
    pub staff_id: DbUuid,
    pub service_type_id: DbUuid,
    /// The index in `StaffMember::service_type_ids`.
    pub position: i32,
}

impl AssignmentRow {
    /// One row per service type of `member`, numbered in order.
    pub(crate) fn all_of(member: &StaffMember) -> Vec<AssignmentRow> {
        (0..)
            .zip(&member.service_type_ids)
            .map(|(position, service_type)| AssignmentRow {
                staff_id: DbUuid(member.id.0),
                service_type_id: DbUuid(service_type.0),
                position,
            })
            .collect()
    }
}
