-- Reference data (PostgreSQL): the service catalog, citizens, staff members and the
-- service types they handle. Forward-only, like every migration; the SQLite tree holds
-- the same schema with SQLite types; keep both trees in step.
--
-- Constraints are named explicitly: the adapter maps a violated constraint name to a
-- stable business name (crates/adapters/db/src/error.rs).

-- `required_documents` is a JSON array of document kinds, `stages` a JSON array of
-- {name, description} objects, in workflow order.
CREATE TABLE service_types (
    id uuid NOT NULL,
    code text NOT NULL,
    name text NOT NULL,
    description text NOT NULL,
    fee_amount_minor bigint NOT NULL,
    fee_currency text NOT NULL,
    sla_days integer NOT NULL,
    required_documents jsonb NOT NULL,
    stages jsonb NOT NULL,
    active boolean NOT NULL,
    version bigint NOT NULL,
    created_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL,
    CONSTRAINT service_types_pkey PRIMARY KEY (id),
    CONSTRAINT service_types_code UNIQUE (code),
    CONSTRAINT service_types_required_documents_check CHECK (jsonb_typeof(required_documents) = 'array'),
    CONSTRAINT service_types_stages_check CHECK (jsonb_typeof(stages) = 'array')
);
CREATE INDEX service_types_active_idx ON service_types (active, id);

-- `address` and `emergency_contact` are JSON objects; no emergency contact is NULL.
CREATE TABLE citizens (
    id uuid NOT NULL,
    mission_id uuid NOT NULL,
    given_name text NOT NULL,
    family_name text NOT NULL,
    date_of_birth date NOT NULL,
    place_of_birth text NOT NULL,
    nationality text NOT NULL,
    passport_number text NOT NULL,
    passport_expiry date NOT NULL,
    email text NOT NULL,
    phone text NOT NULL,
    address jsonb NOT NULL,
    emergency_contact jsonb NULL,
    preferred_language text NOT NULL,
    registration_status text NOT NULL,
    registered_at timestamptz NOT NULL,
    activated_at timestamptz NULL,
    deregistered_at timestamptz NULL,
    version bigint NOT NULL,
    created_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL,
    CONSTRAINT citizens_pkey PRIMARY KEY (id),
    CONSTRAINT citizens_mission_id_fkey FOREIGN KEY (mission_id) REFERENCES missions (id),
    -- A passport number is registered once per mission.
    CONSTRAINT citizens_passport UNIQUE (mission_id, passport_number),
    CONSTRAINT citizens_registration_status_check
        CHECK (registration_status IN ('pending', 'active', 'deregistered')),
    CONSTRAINT citizens_address_check CHECK (jsonb_typeof(address) = 'object'),
    CONSTRAINT citizens_emergency_contact_check CHECK (jsonb_typeof(emergency_contact) = 'object')
);
-- One per listing filter, each ending with the keyset column.
CREATE INDEX citizens_mission_id_idx ON citizens (mission_id, id);
CREATE INDEX citizens_registration_status_idx ON citizens (registration_status, id);
CREATE INDEX citizens_nationality_idx ON citizens (nationality, id);
CREATE INDEX citizens_registered_at_idx ON citizens (registered_at);

CREATE TABLE staff_members (
    id uuid NOT NULL,
    mission_id uuid NOT NULL,
    name text NOT NULL,
    email text NOT NULL,
    job_title text NOT NULL,
    active boolean NOT NULL,
    version bigint NOT NULL,
    created_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL,
    CONSTRAINT staff_members_pkey PRIMARY KEY (id),
    CONSTRAINT staff_members_mission_id_fkey FOREIGN KEY (mission_id) REFERENCES missions (id)
);
CREATE INDEX staff_members_mission_id_idx ON staff_members (mission_id, id);

-- The service types a staff member handles; `position` keeps the order they were given in.
CREATE TABLE staff_assignments (
    staff_id uuid NOT NULL,
    service_type_id uuid NOT NULL,
    position integer NOT NULL,
    CONSTRAINT staff_assignments_pkey PRIMARY KEY (staff_id, service_type_id),
    CONSTRAINT staff_assignments_staff_id_fkey
        FOREIGN KEY (staff_id) REFERENCES staff_members (id) ON DELETE CASCADE,
    CONSTRAINT staff_assignments_service_type_id_fkey
        FOREIGN KEY (service_type_id) REFERENCES service_types (id)
);
-- Listing the members of a service type, and checking the foreign key when a service
-- type is deleted.
CREATE INDEX staff_assignments_service_type_id_idx ON staff_assignments (service_type_id, staff_id);

-- The audit log is listed newest first (id descending) with optional filters: by
-- resource type alone or resource id alone (resource type + id and actor id are indexed
-- by the foundation).
CREATE INDEX audit_events_resource_type_idx ON audit_events (resource_type, id);
CREATE INDEX audit_events_resource_id_idx ON audit_events (resource_id, id);
