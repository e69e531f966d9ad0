-- Analytics (PostgreSQL): the stage-spell projection of the requests' histories and the
-- indexes the three admin views read (docs/analytics.md). Forward-only; the SQLite tree
-- holds the same schema with SQLite types; keep both trees in step.
--
-- Every analytics read is a range scan of one of the indexes below, on columns the index
-- holds (INCLUDE), so PostgreSQL answers it with an index-only scan: over 1,000,000
-- requests, a 90-day view reads some 50,000 requests and 150,000 spells and nothing else.
--
-- Constraints are named explicitly: the adapter maps a violated constraint name to a
-- stable business name (crates/adapters/db/src/error.rs).
--
-- "Open" means `status NOT IN ('completed', 'rejected', 'cancelled')`, written as the same
-- literal text by the adapter (see 2026-11-22-000003_service_requests).

-- One row per ended stage spell of a request (docs/analytics.md "Services view"): the
-- output of `consular_domain::analytics::stage_spells` over its history, `ordinal` being
-- the spell's index in that output. The adapter maintains it in the transaction that
-- appends the history entry ending a spell, with that same function; the services view
-- reads the spells that ended in a range here rather than windowing `request_history` at
-- query time. `mission_id` and `service_type_id` are the request's (they never change);
-- `seconds` is `seconds_between(entered_at, left_at)`.
CREATE TABLE request_stage_spells (
    request_id uuid NOT NULL,
    ordinal integer NOT NULL,
    mission_id uuid NOT NULL,
    service_type_id uuid NOT NULL,
    stage integer NOT NULL,
    entered_at timestamptz NOT NULL,
    left_at timestamptz NOT NULL,
    seconds bigint NOT NULL,
    CONSTRAINT request_stage_spells_pkey PRIMARY KEY (request_id, ordinal),
    CONSTRAINT request_stage_spells_request_id_fkey FOREIGN KEY (request_id) REFERENCES service_requests (id),
    CONSTRAINT request_stage_spells_position_check CHECK (ordinal >= 0 AND stage >= 0),
    CONSTRAINT request_stage_spells_times_check CHECK (left_at >= entered_at AND seconds >= 0)
);
-- "The spells that ended in [a, b)" over all missions, and over one mission: the services
-- view's time per stage. They hold what the aggregate reads (index-only scans).
CREATE INDEX request_stage_spells_left_at_idx ON request_stage_spells (left_at)
    INCLUDE (service_type_id, stage, seconds);
CREATE INDEX request_stage_spells_mission_left_at_idx ON request_stage_spells (mission_id, left_at)
    INCLUDE (service_type_id, stage, seconds);

-- The spells of the requests stored before this migration, computed from their histories
-- exactly as `stage_spells` does: entries in order (`at`, then `id`), up to the first one
-- with a final status; a spell starts at the first entry and at every entry whose
-- `to_stage` differs from the previous entry's, and ends at the next such entry or at the
-- first final entry (an entry that does both ends the old spell and makes a zero-length
-- spell of the new stage), or at `closed_at` when the history stops before a final entry
-- (and `closed_at` is not before the spell's start). `Database::recompute_stage_spells`
-- runs this very statement (a unit test checks that the text is the same).
INSERT INTO request_stage_spells
    (request_id, ordinal, mission_id, service_type_id, stage, entered_at, left_at, seconds)
WITH entries AS (
    SELECT request_id, id, at, to_stage,
        CASE WHEN to_status IN ('completed', 'rejected', 'cancelled') THEN 1 ELSE 0 END AS final,
        LAG(to_stage) OVER history AS previous_stage,
        COALESCE(SUM(CASE WHEN to_status IN ('completed', 'rejected', 'cancelled') THEN 1 ELSE 0 END)
            OVER (history ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING), 0) AS finals_before
    FROM request_history
    WINDOW history AS (PARTITION BY request_id ORDER BY at, id)
),
marks AS (
    SELECT request_id, id, at, to_stage, final,
        CASE WHEN previous_stage IS NULL OR to_stage <> previous_stage THEN 1 ELSE 0 END AS starts
    FROM entries
    WHERE finals_before = 0 AND (previous_stage IS NULL OR to_stage <> previous_stage OR final = 1)
),
bounds AS (
    SELECT request_id, id, at, to_stage, final, starts,
        LEAD(at) OVER (PARTITION BY request_id ORDER BY at, id) AS next_at
    FROM marks
),
spells AS (
    SELECT bounds.request_id,
        ROW_NUMBER() OVER (PARTITION BY bounds.request_id ORDER BY bounds.at, bounds.id) - 1 AS ordinal,
        service_requests.mission_id, service_requests.service_type_id, bounds.to_stage AS stage,
        bounds.at AS entered_at,
        CASE WHEN bounds.final = 1 THEN bounds.at ELSE COALESCE(bounds.next_at, service_requests.closed_at) END
            AS left_at
    FROM bounds JOIN service_requests ON service_requests.id = bounds.request_id
    WHERE bounds.starts = 1
)
SELECT request_id, ordinal, mission_id, service_type_id, stage, entered_at, left_at,
    floor(extract(epoch FROM left_at))::bigint - floor(extract(epoch FROM entered_at))::bigint
FROM spells
WHERE left_at >= entered_at;

-- The requests submitted in [a, b) (submitted, by status at the end of the range), over
-- all missions and over one mission, with every column those figures read and the `id`
-- the status lookup joins on. The covering index replaces the plain one of
-- 2026-11-22-000003_service_requests under the same name and key, so the listing's
-- `submitted_at` filters are served as before.
DROP INDEX service_requests_submitted_at_idx;
CREATE INDEX service_requests_submitted_at_idx ON service_requests (submitted_at)
    INCLUDE (mission_id, service_type_id, assignee_id, status, closed_at, id);
CREATE INDEX service_requests_mission_submitted_at_idx ON service_requests (mission_id, submitted_at)
    INCLUDE (service_type_id, assignee_id, status, closed_at, id);
-- The requests closed in [a, b) (closed by final status, on time, processing times), and
-- those closed at or after the start of the range (the backlog at its start), over all
-- missions and over one mission.
CREATE INDEX service_requests_closed_at_idx ON service_requests (closed_at)
    INCLUDE (mission_id, service_type_id, assignee_id, status, submitted_at, sla_due_at);
CREATE INDEX service_requests_mission_closed_at_idx ON service_requests (mission_id, closed_at)
    INCLUDE (service_type_id, assignee_id, status, submitted_at, sla_due_at);
-- The open requests (few): open and overdue now, and their part of the backlog at the
-- start of the range, per mission, service type or assignee, for one mission or all.
CREATE INDEX service_requests_open_mission_idx
    ON service_requests (mission_id, service_type_id, assignee_id, submitted_at, sla_due_at)
    WHERE status NOT IN ('completed', 'rejected', 'cancelled');

-- The views group the requests they read by (mission, assignee), by service type, and by
-- status. PostgreSQL estimates the number of groups of several columns as the product of
-- each column's count (missions times assignees, though an assignee works at one
-- mission), and then sorts rather than hashes to group, which costs more than the read:
-- these statistics give it the real count of every combination (filled by ANALYZE, here
-- and by autovacuum).
CREATE STATISTICS service_requests_groups_stats (ndistinct)
    ON mission_id, assignee_id, service_type_id, status FROM service_requests;
ANALYZE service_requests;
ANALYZE request_stage_spells;

-- A request's status at an instant (`status_at`: the last entry before it, ties by id):
-- one backward probe, index-only, for each request still open at the end of the range.
CREATE INDEX request_history_request_at_idx ON request_history (request_id, at, id) INCLUDE (to_status);

-- The overview's appointments over all missions: the slots and the appointments starting
-- in [a, b) (one mission reads `slots_mission_time` and `appointments_mission_idx`).
CREATE INDEX slots_starts_at_idx ON slots (starts_at) INCLUDE (is_open, booked, capacity);
CREATE INDEX appointments_starts_at_idx ON appointments (starts_at) INCLUDE (status);
