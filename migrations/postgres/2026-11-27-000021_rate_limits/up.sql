-- Attempt counters shared by every node (PostgreSQL; docs/appointments.md "Attempt
-- caps"). Forward-only; the SQLite tree holds the same table with SQLite types.
--
-- One row per key (`booking:citizen:<uuid>`, `booking:client:<id>`: namespaced, so the
-- table can count other things later), holding the count of the current fixed window of
-- one clock minute. The adapter moves every key of an attempt with one
-- `INSERT ... ON CONFLICT (key) DO UPDATE ... RETURNING` committed on its own: a newer
-- window restarts the count at 1, an older one (a node whose clock is behind) counts into
-- the stored window. Rows are never deleted: there is one per citizen or client that ever
-- booked, bounded by the population, so no sweep is needed.
CREATE TABLE rate_limits (
    key TEXT NOT NULL,
    window_start TIMESTAMPTZ NOT NULL,
    count INTEGER NOT NULL,
    CONSTRAINT rate_limits_pkey PRIMARY KEY (key),
    CONSTRAINT rate_limits_count_check CHECK (count >= 1)
);
