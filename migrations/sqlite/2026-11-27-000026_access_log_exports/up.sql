-- The access log (docs/data-protection.md "Access log"), two changes to 000023:
--
-- 1. An admin reading a citizen's export (its state and download URL) is logged as
--    `export`: the archive holds the citizen's whole record.
-- 2. One b-tree instead of two. The primary key becomes (citizen_id, id), the order a
--    citizen's log is read in, and the table is stored WITHOUT ROWID, clustered on it:
--    every logged read inserts a row, and the second index was a third of the insert's
--    work (docs/benchmarks.md "Access log"). Ids are UUIDv7 drawn by the server; nothing
--    looks an entry up by its id alone.
--
-- SQLite cannot change a CHECK or a primary key in place: the table is rebuilt (no other
-- table refers to it, and it has no trigger).
CREATE TABLE access_log_new (
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
    CONSTRAINT access_log_pkey PRIMARY KEY (citizen_id, id),
    CONSTRAINT access_log_actor_kind_check CHECK (actor_kind IN ('admin', 'staff', 'citizen')),
    CONSTRAINT access_log_actor_role_check CHECK (actor_role IN ('admin', 'staff', 'citizen')),
    CONSTRAINT access_log_what_check CHECK (what IN ('profile', 'request', 'document',
        'appointment', 'request_notifications', 'citizen_list', 'export'))
) STRICT, WITHOUT ROWID;
INSERT INTO access_log_new (id, citizen_id, at, actor_kind, actor_id, actor_mission_id, actor_role,
    client_id, what, object_id)
SELECT id, citizen_id, at, actor_kind, actor_id, actor_mission_id, actor_role, client_id, what,
    object_id
FROM access_log;
DROP TABLE access_log;
ALTER TABLE access_log_new RENAME TO access_log;
