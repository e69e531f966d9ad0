-- Read-your-writes with read replicas (PostgreSQL; docs/operations.md "Read replicas").
-- Forward-only; the SQLite tree holds the same table, which SQLite never uses (it has no
-- replicas).
--
-- One row per principal (`writer`, the token's subject `kind:uuid`) that wrote lately:
-- the primary's WAL insert position (`lsn`, bytes from 0/0) right after a request of
-- theirs that may have written was answered. A tolerant read of theirs is served by a
-- replica only once the replica has replayed that far. The row `*` is the floor: the
-- furthest position among the marks the hourly sweep forgot, which every replica must
-- have reached to serve anyone.
--
-- UNLOGGED: a mark writes no WAL and waits for no flush or synchronous standby (it is
-- one small upsert per writing request), and is never replicated (a replica never reads
-- it). A crash or a failover empties it: for the minutes after one, a replica still
-- catching up may serve a principal's tolerant read without their last write, which
-- docs/operations.md says.
CREATE UNLOGGED TABLE write_marks (
    writer TEXT NOT NULL,
    lsn BIGINT NOT NULL,
    marked_at TIMESTAMPTZ NOT NULL DEFAULT now(),
    CONSTRAINT write_marks_pkey PRIMARY KEY (writer)
);

-- WAL positions as bytes from 0/0, for the adapter's statements: as functions, they are
-- prepared once per connection like every other statement (SQL text with `pg_lsn`
-- arithmetic in it is not, through diesel), and these run on every writing request and
-- every tolerant read. The primary's insert position: at or past the end of every commit
-- record inserted before it.
CREATE FUNCTION consular_wal_insert_position() RETURNS BIGINT
    LANGUAGE sql VOLATILE PARALLEL SAFE
    AS $$ SELECT (pg_current_wal_insert_lsn() - '0/0'::pg_lsn)::bigint $$;

-- Whether this server has every commit up to `upto`: a standby that has replayed that
-- far, or a server that is not in recovery (a primary has every commit it acknowledged).
CREATE FUNCTION consular_wal_replayed(upto BIGINT) RETURNS BOOLEAN
    LANGUAGE sql VOLATILE PARALLEL SAFE
    AS $$ SELECT COALESCE((pg_last_wal_replay_lsn() - '0/0'::pg_lsn)::bigint >= upto, NOT pg_is_in_recovery()) $$;
