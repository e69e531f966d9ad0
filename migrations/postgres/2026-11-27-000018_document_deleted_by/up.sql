-- Who deleted a document (PostgreSQL; docs/documents.md "States"), so that the request's
-- timeline keeps a `document_deleted` item with its actor after the document became a
-- tombstone: a citizen's history does not rewrite itself. Forward-only; the SQLite tree
-- holds the same change with SQLite types.
--
-- Additive: tombstones written before this migration (and by nodes of the previous build
-- during a rolling deployment) have none, and their deletion is shown without an actor.
-- Set only on a tombstone, and both columns together.
ALTER TABLE documents
    ADD COLUMN deleted_by_kind text NULL
        CONSTRAINT documents_deleted_by_kind_check CHECK (deleted_by_kind IN ('admin', 'staff', 'citizen')),
    ADD COLUMN deleted_by_id uuid NULL,
    ADD CONSTRAINT documents_deleted_by_check CHECK (
        (deleted_by_kind IS NULL) = (deleted_by_id IS NULL) AND (deleted_by_id IS NULL OR status = 'deleted')
    );
