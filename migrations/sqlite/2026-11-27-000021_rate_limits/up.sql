-- Attempt counters shared by every node (SQLite; docs/appointments.md "Attempt caps").
-- Forward-only; the PostgreSQL tree holds the same table with native types.
--
-- One row per key (`booking:citizen:<uuid>`, `booking:client:<id>`), holding the count
-- of the current fixed window of one clock minute; `window_start` is an instant as text
-- (fixed-width RFC 3339 UTC, so text order is time order). Rows are never deleted: one
-- per citizen or client that ever booked, bounded by the population.
CREATE TABLE rate_limits (
    key TEXT NOT NULL,
    window_start TEXT NOT NULL,
    count INTEGER NOT NULL,
    CONSTRAINT rate_limits_pkey PRIMARY KEY (key),
    CONSTRAINT rate_limits_count_check CHECK (count >= 1)
) STRICT;
