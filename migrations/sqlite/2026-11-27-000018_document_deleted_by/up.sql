-- Who deleted a document (SQLite; docs/documents.md "States"), so that the request's
-- timeline keeps a `document_deleted` item with its actor after the document became a
-- tombstone: a citizen's history does not rewrite itself. Forward-only; the PostgreSQL
-- tree holds the same change with native types.
--
-- Additive: tombstones written before this migration (and by nodes of the previous build
-- during a rolling deployment) have none, and their deletion is shown without an actor.
-- Set only on a tombstone, and both columns together. SQLite adds no table constraint to
-- an existing table: the checks are the new columns' own (a column's CHECK may read the
-- other columns of the row).
ALTER TABLE documents ADD COLUMN deleted_by_kind TEXT NULL
    CONSTRAINT documents_deleted_by_kind_check CHECK (deleted_by_kind IN ('admin', 'staff', 'citizen'));
ALTER TABLE documents ADD COLUMN deleted_by_id TEXT NULL
    CONSTRAINT documents_deleted_by_check CHECK (
        (deleted_by_kind IS NULL) = (deleted_by_id IS NULL) AND (deleted_by_id IS NULL OR status = 'deleted')
    );
