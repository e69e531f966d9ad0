-- The inbox is keyed by the whole binding of its recipient (PostgreSQL; issue 23,
-- docs/api.md "Clients, principals and scopes"): a principal id, as the kind and in the
-- mission a token acts as. The inbox queries match all three, so the indexes that serve
-- them lead with all three, then give the list's order (newest first). Forward-only; the
-- SQLite tree holds the same schema.
--
-- Replaces the indexes of migration 000009 that led with the recipient id alone. Building
-- them locks writes to `notifications` for as long as the build takes (seconds per
-- million rows); docs/operations.md "Upgrades" says so.
DROP INDEX notifications_recipient_idx;
DROP INDEX notifications_unread_idx;
CREATE INDEX notifications_recipient_idx ON notifications (recipient_id, recipient_kind, mission_id, id DESC);
CREATE INDEX notifications_unread_idx ON notifications (recipient_id, recipient_kind, mission_id, id DESC)
    WHERE read_at IS NULL;
