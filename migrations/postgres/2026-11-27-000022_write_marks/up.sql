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
    marked_at TIMESTAMPTZ NOT NULL,
    CONSTRAINT write_marks_pkey PRIMARY KEY (writer)
);
