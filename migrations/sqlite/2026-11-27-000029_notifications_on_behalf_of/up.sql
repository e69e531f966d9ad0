-- A citizen's notifications fan out to their representatives (SQLite; issue 28,
-- docs/representation.md "Notifications"). Forward-only; the PostgreSQL tree holds the
-- same schema.
--
-- Each representative who hears of an event gets a notification of their own (their
-- inbox, their language, their address, their preferences), still one per (event,
-- recipient) (`notifications_event_recipient_key`), with `on_behalf_of` the citizen it is
-- about (the dependant); NULL when it is about its recipient themself or went to staff.
-- The email joins its notification, so it needs no column of its own. No foreign key, as
-- for `recipient_id`: the trigger below reads the citizen's row anyway.
ALTER TABLE notifications ADD COLUMN on_behalf_of TEXT NULL;

-- An erasure deletes the notifications told to the citizen's representatives about them
-- too (docs/data-protection.md "Retention and erasure").
CREATE INDEX notifications_on_behalf_of_idx ON notifications (on_behalf_of) WHERE on_behalf_of IS NOT NULL;

-- Nothing is written about an erased citizen (migration 000025): a notification about one
-- is refused as one to them is.
CREATE TRIGGER notifications_about_not_erased BEFORE INSERT ON notifications
    WHEN NEW.on_behalf_of IS NOT NULL
        AND (SELECT erased_at FROM citizens WHERE id = NEW.on_behalf_of) IS NOT NULL
BEGIN
    SELECT RAISE(ABORT, 'citizen_erased');
END;
