-- Read-your-writes with read replicas (docs/operations.md "Read replicas"): the marks
-- live on PostgreSQL only, where replicas exist. The table is declared here too, with
-- SQLite types, so that both trees hold the same tables; SQLite never writes it.
CREATE TABLE write_marks (
    writer TEXT NOT NULL,
    lsn INTEGER NOT NULL,
    marked_at TEXT NOT NULL,
    CONSTRAINT write_marks_pkey PRIMARY KEY (writer)
) STRICT;
