-- Who read a citizen's personal data (docs/data-protection.md "Access log"): one row per
-- read by a principal other than the citizen, appended in batches by each node's
-- recorder; no statement of the API updates or deletes a row. `citizen_id` has no foreign
-- key on purpose: a citizen row is never deleted (erasure keeps a tombstone), and the check
-- would lock the citizen's row at every insert (FOR KEY SHARE), which concurrent reads of
-- one citizen turn into contended multixacts on the hot path of every logged read.
CREATE TABLE access_log (
    id TEXT NOT NULL,
    citizen_id TEXT NOT NULL,
    at TEXT NOT NULL,
    actor_kind TEXT NOT NULL,
    actor_id TEXT NOT NULL,
    -- NULL for a global admin.
    actor_mission_id TEXT NULL,
    actor_role TEXT NOT NULL,
    client_id TEXT NOT NULL,
    what TEXT NOT NULL,
    object_id TEXT NOT NULL,
    CONSTRAINT access_log_pkey PRIMARY KEY (id),
    CONSTRAINT access_log_actor_kind_check CHECK (actor_kind IN ('admin', 'staff', 'citizen')),
    CONSTRAINT access_log_actor_role_check CHECK (actor_role IN ('admin', 'staff', 'citizen')),
    CONSTRAINT access_log_what_check CHECK (what IN ('profile', 'request', 'document', 'appointment',
        'request_notifications', 'citizen_list'))
) STRICT;
-- A citizen's log, newest first.
CREATE INDEX access_log_citizen_idx ON access_log (citizen_id, id);
