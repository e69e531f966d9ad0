-- Whom a change was made for (SQLite; docs/representation.md "Traceability").
-- Forward-only; the PostgreSQL tree holds the same change with native types.
--
-- A representative acting for a dependant (`On-Behalf-Of`) is the actor every trace
-- records, as before; `on_behalf_of` is the dependant's citizen id beside it, NULL when
-- the actor acted for themself (and on every row written before this migration, or by a
-- node of the previous build during a rolling deployment). On a document it is whom the
-- upload was made for. No foreign key, as the actor columns have none: the ids outlive
-- an erasure, which keeps the citizen's row as a tombstone (docs/data-protection.md).
-- Only a citizen's token acts for someone: set only beside a citizen actor.
-- (A column's CHECK may read the other columns of the row, as in 000018.)
ALTER TABLE audit_events ADD COLUMN on_behalf_of TEXT NULL
    CONSTRAINT audit_events_on_behalf_of_check CHECK (on_behalf_of IS NULL OR (actor_kind IS NOT NULL AND actor_kind = 'citizen'));
ALTER TABLE request_history ADD COLUMN on_behalf_of TEXT NULL
    CONSTRAINT request_history_on_behalf_of_check CHECK (on_behalf_of IS NULL OR (actor_kind IS NOT NULL AND actor_kind = 'citizen'));
ALTER TABLE request_messages ADD COLUMN on_behalf_of TEXT NULL
    CONSTRAINT request_messages_on_behalf_of_check CHECK (on_behalf_of IS NULL OR author_kind = 'citizen');
ALTER TABLE documents ADD COLUMN on_behalf_of TEXT NULL
    CONSTRAINT documents_on_behalf_of_check CHECK (on_behalf_of IS NULL OR uploaded_by_kind = 'citizen');
ALTER TABLE appointment_history ADD COLUMN on_behalf_of TEXT NULL
    CONSTRAINT appointment_history_on_behalf_of_check CHECK (on_behalf_of IS NULL OR actor_kind = 'citizen');
