-- Reference data (SQLite): the service catalog, citizens, staff members and the service
-- types they handle. Forward-only, like every migration; the PostgreSQL tree holds the
-- same schema with native types; keep both trees in step.
--
-- As in the foundation, uuids and instants are text; dates are `YYYY-MM-DD` text (text
-- order is date order); JSON documents are text checked with the JSON functions; booleans
-- are 0/1 integers. Tables are STRICT.
--
-- Constraints are named explicitly: the adapter maps a violated constraint name to a
-- stable business name (crates/adapters/db/src/error.rs).

-- `required_documents` is a JSON array of document kinds, `stages` a JSON array of
-- {name, description} objects, in workflow order.
CREATE TABLE service_types (
    id TEXT NOT NULL,
    code TEXT NOT NULL,
    name TEXT NOT NULL,
    description TEXT NOT NULL,
    fee_amount_minor INTEGER NOT NULL,
    fee_currency TEXT NOT NULL,
    sla_days INTEGER NOT NULL,
    required_documents TEXT NOT NULL,
    stages TEXT NOT NULL,
    active INTEGER NOT NULL,
    version INTEGER NOT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    CONSTRAINT service_types_pkey PRIMARY KEY (id),
    CONSTRAINT service_types_code UNIQUE (code),
    CONSTRAINT service_types_required_documents_check CHECK (json_type(required_documents) = 'array'),
    CONSTRAINT service_types_stages_check CHECK (json_type(stages) = 'array'),
    CONSTRAINT service_types_active_check CHECK (active IN (0, 1))
) STRICT;
CREATE INDEX service_types_active_idx ON service_types (active, id);

-- `address` and `emergency_contact` are JSON objects; no emergency contact is NULL.
CREATE TABLE citizens (
    id TEXT NOT NULL,
    mission_id TEXT NOT NULL,
    given_name TEXT NOT NULL,
    family_name TEXT NOT NULL,
    date_of_birth TEXT NOT NULL,
    place_of_birth TEXT NOT NULL,
    nationality TEXT NOT NULL,
    passport_number TEXT NOT NULL,
    passport_expiry TEXT NOT NULL,
    email TEXT NOT NULL,
    phone TEXT NOT NULL,
    address TEXT NOT NULL,
    emergency_contact TEXT NULL,
    preferred_language TEXT NOT NULL,
    registration_status TEXT NOT NULL,
    registered_at TEXT NOT NULL,
    activated_at TEXT NULL,
    deregistered_at TEXT NULL,
    version INTEGER NOT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    CONSTRAINT citizens_pkey PRIMARY KEY (id),
    CONSTRAINT citizens_mission_id_fkey FOREIGN KEY (mission_id) REFERENCES missions (id),
    -- A passport number is registered once per mission.
    CONSTRAINT citizens_passport UNIQUE (mission_id, passport_number),
    CONSTRAINT citizens_registration_status_check
        CHECK (registration_status IN ('pending', 'active', 'deregistered')),
    CONSTRAINT citizens_date_of_birth_check
        CHECK (date_of_birth GLOB '[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]'),
    CONSTRAINT citizens_passport_expiry_check
        CHECK (passport_expiry GLOB '[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]'),
    CONSTRAINT citizens_address_check CHECK (json_type(address) = 'object'),
    CONSTRAINT citizens_emergency_contact_check CHECK (json_type(emergency_contact) = 'object')
) STRICT;
-- One per listing filter, each ending with the keyset column.
CREATE INDEX citizens_mission_id_idx ON citizens (mission_id, id);
CREATE INDEX citizens_registration_status_idx ON citizens (registration_status, id);
CREATE INDEX citizens_nationality_idx ON citizens (nationality, id);
CREATE INDEX citizens_registered_at_idx ON citizens (registered_at);

CREATE TABLE staff_members (
    id TEXT NOT NULL,
    mission_id TEXT NOT NULL,
    name TEXT NOT NULL,
    email TEXT NOT NULL,
    job_title TEXT NOT NULL,
    active INTEGER NOT NULL,
    version INTEGER NOT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    CONSTRAINT staff_members_pkey PRIMARY KEY (id),
    CONSTRAINT staff_members_mission_id_fkey FOREIGN KEY (mission_id) REFERENCES missions (id),
    CONSTRAINT staff_members_active_check CHECK (active IN (0, 1))
) STRICT;
CREATE INDEX staff_members_mission_id_idx ON staff_members (mission_id, id);

-- The service types a staff member handles; `position` keeps the order they were given in.
CREATE TABLE staff_assignments (
    staff_id TEXT NOT NULL,
    service_type_id TEXT NOT NULL,
    position INTEGER NOT NULL,
    CONSTRAINT staff_assignments_pkey PRIMARY KEY (staff_id, service_type_id),
    CONSTRAINT staff_assignments_staff_id_fkey
        FOREIGN KEY (staff_id) REFERENCES staff_members (id) ON DELETE CASCADE,
    CONSTRAINT staff_assignments_service_type_id_fkey
        FOREIGN KEY (service_type_id) REFERENCES service_types (id)
) STRICT;
-- Listing the members of a service type, and checking the foreign key when a service
-- type is deleted.
CREATE INDEX staff_assignments_service_type_id_idx ON staff_assignments (service_type_id, staff_id);

-- The audit log is listed newest first (id descending) with optional filters: by
-- resource type alone or resource id alone (resource type + id and actor id are indexed
-- by the foundation).
CREATE INDEX audit_events_resource_type_idx ON audit_events (resource_type, id);
CREATE INDEX audit_events_resource_id_idx ON audit_events (resource_id, id);
