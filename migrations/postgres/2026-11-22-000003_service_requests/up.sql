-- Service requests (PostgreSQL): the transactional outbox of domain events, the requests
-- with their stage history, staff notes and citizen/staff messages. Forward-only, like
-- every migration; the SQLite tree holds the same schema with SQLite types; keep both
-- trees in step.
--
-- Constraints are named explicitly: the adapter maps a violated constraint name to a
-- stable business name (crates/adapters/db/src/error.rs).
--
-- "Open" means `status NOT IN ('completed', 'rejected', 'cancelled')`. The partial indexes
-- below use exactly that predicate, and the adapter writes it as the same literal text
-- (never as a bound parameter), so that the planner can prove a query matches them.

-- Domain events written in the same transaction as the change they describe; a
-- notification worker delivers them (oldest first, by id) and sets `delivered_at`.
CREATE TABLE outbox_events (
    id uuid NOT NULL,
    kind text NOT NULL,
    aggregate_id uuid NOT NULL,
    payload jsonb NOT NULL,
    created_at timestamptz NOT NULL,
    delivered_at timestamptz NULL,
    CONSTRAINT outbox_events_pkey PRIMARY KEY (id)
);
-- The consumer's scan: the undelivered events in id order.
CREATE INDEX outbox_events_pending_idx ON outbox_events (id) WHERE delivered_at IS NULL;

-- `stages` is the service type's stages at submission, a JSON array of
-- {name, description} objects in workflow order; `current_stage` indexes it.
CREATE TABLE service_requests (
    id uuid NOT NULL,
    mission_id uuid NOT NULL,
    citizen_id uuid NOT NULL,
    service_type_id uuid NOT NULL,
    status text NOT NULL,
    stages jsonb NOT NULL,
    current_stage integer NOT NULL,
    assignee_id uuid NULL,
    submitted_at timestamptz NOT NULL,
    sla_due_at timestamptz NOT NULL,
    closed_at timestamptz NULL,
    version bigint NOT NULL,
    updated_at timestamptz NOT NULL,
    CONSTRAINT service_requests_pkey PRIMARY KEY (id),
    CONSTRAINT service_requests_mission_id_fkey FOREIGN KEY (mission_id) REFERENCES missions (id),
    CONSTRAINT service_requests_citizen_id_fkey FOREIGN KEY (citizen_id) REFERENCES citizens (id),
    CONSTRAINT service_requests_service_type_id_fkey
        FOREIGN KEY (service_type_id) REFERENCES service_types (id),
    CONSTRAINT service_requests_assignee_id_fkey FOREIGN KEY (assignee_id) REFERENCES staff_members (id),
    CONSTRAINT service_requests_status_check CHECK (status IN (
        'submitted', 'in_review', 'action_required', 'approved', 'rejected', 'completed', 'cancelled'
    )),
    CONSTRAINT service_requests_stages_check CHECK (jsonb_typeof(stages) = 'array'),
    CONSTRAINT service_requests_current_stage_check CHECK (current_stage >= 0)
);
-- The listing is newest first (id descending, keyset on id): one index per equality
-- filter, each ending with the keyset column, so a filter and `ORDER BY id DESC LIMIT n`
-- are served by one backward index scan. They also cover the foreign keys.
CREATE INDEX service_requests_mission_id_idx ON service_requests (mission_id, id);
CREATE INDEX service_requests_citizen_id_idx ON service_requests (citizen_id, id);
CREATE INDEX service_requests_assignee_id_idx ON service_requests (assignee_id, id);
CREATE INDEX service_requests_service_type_id_idx ON service_requests (service_type_id, id);
CREATE INDEX service_requests_status_idx ON service_requests (status, id);
CREATE INDEX service_requests_submitted_at_idx ON service_requests (submitted_at);
-- Overdue requests (open and past their SLA) are few: the `overdue` filter reads them here.
CREATE INDEX service_requests_open_sla_due_at_idx ON service_requests (sla_due_at)
    WHERE status NOT IN ('completed', 'rejected', 'cancelled');
-- A staff member's open requests: their load (least-loaded assignment) and their queue
-- (grouped by service type, with the oldest submission and the overdue count).
CREATE INDEX service_requests_open_assignee_idx
    ON service_requests (assignee_id, service_type_id, submitted_at, sla_due_at)
    WHERE status NOT IN ('completed', 'rejected', 'cancelled');

-- One row per status or stage change; `id` is drawn in insertion order, which is the
-- history's order (changes to one request are serialised by its row lock).
CREATE TABLE request_history (
    id bigint GENERATED ALWAYS AS IDENTITY,
    request_id uuid NOT NULL,
    at timestamptz NOT NULL,
    actor_kind text NULL,
    actor_id uuid NULL,
    from_status text NULL,
    to_status text NOT NULL,
    from_stage integer NULL,
    to_stage integer NOT NULL,
    reason text NULL,
    CONSTRAINT request_history_pkey PRIMARY KEY (id),
    CONSTRAINT request_history_request_id_fkey FOREIGN KEY (request_id) REFERENCES service_requests (id),
    CONSTRAINT request_history_actor_check CHECK ((actor_kind IS NULL) = (actor_id IS NULL)),
    CONSTRAINT request_history_actor_kind_check CHECK (actor_kind IN ('admin', 'staff', 'citizen')),
    CONSTRAINT request_history_from_status_check CHECK (from_status IN (
        'submitted', 'in_review', 'action_required', 'approved', 'rejected', 'completed', 'cancelled'
    )),
    CONSTRAINT request_history_to_status_check CHECK (to_status IN (
        'submitted', 'in_review', 'action_required', 'approved', 'rejected', 'completed', 'cancelled'
    )),
    CONSTRAINT request_history_stage_check CHECK (from_stage >= 0 AND to_stage >= 0)
);
CREATE INDEX request_history_request_id_idx ON request_history (request_id, id);

-- Internal notes of the mission's staff on a request.
CREATE TABLE request_notes (
    id uuid NOT NULL,
    request_id uuid NOT NULL,
    author_kind text NOT NULL,
    author_id uuid NOT NULL,
    body text NOT NULL,
    created_at timestamptz NOT NULL,
    CONSTRAINT request_notes_pkey PRIMARY KEY (id),
    CONSTRAINT request_notes_request_id_fkey FOREIGN KEY (request_id) REFERENCES service_requests (id),
    CONSTRAINT request_notes_author_kind_check CHECK (author_kind IN ('admin', 'staff', 'citizen'))
);
CREATE INDEX request_notes_request_id_idx ON request_notes (request_id, id);

-- The thread between the citizen and the mission's staff on a request.
CREATE TABLE request_messages (
    id uuid NOT NULL,
    request_id uuid NOT NULL,
    author_kind text NOT NULL,
    author_id uuid NOT NULL,
    body text NOT NULL,
    created_at timestamptz NOT NULL,
    CONSTRAINT request_messages_pkey PRIMARY KEY (id),
    CONSTRAINT request_messages_request_id_fkey FOREIGN KEY (request_id) REFERENCES service_requests (id),
    CONSTRAINT request_messages_author_kind_check CHECK (author_kind IN ('admin', 'staff', 'citizen'))
);
CREATE INDEX request_messages_request_id_idx ON request_messages (request_id, id);
