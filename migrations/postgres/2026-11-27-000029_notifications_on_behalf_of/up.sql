-- A citizen's notifications fan out to their representatives (PostgreSQL; issue 28,
-- docs/representation.md "Notifications"). Forward-only; the SQLite tree holds the same
-- schema.
--
-- Each representative who hears of an event gets a notification of their own (their
-- inbox, their language, their address, their preferences), still one per (event,
-- recipient) (`notifications_event_recipient_key`), with `on_behalf_of` the citizen it is
-- about (the dependant); NULL when it is about its recipient themself or went to staff.
-- The email joins its notification, so it needs no column of its own. No foreign key, as
-- for `recipient_id`: the trigger below reads the citizen's row anyway. Adding a nullable
-- column is instant; the index is built on a column that is NULL everywhere.
ALTER TABLE notifications ADD COLUMN on_behalf_of uuid NULL;

-- An erasure deletes the notifications told to the citizen's representatives about them
-- too (docs/data-protection.md "Retention and erasure").
CREATE INDEX notifications_on_behalf_of_idx ON notifications (on_behalf_of) WHERE on_behalf_of IS NOT NULL;

-- Nothing is written about an erased citizen (migration 000025): a notification about one
-- is refused as one to them is, with a key-share lock on the citizen's row (000025 says
-- why not a share lock), so a fan-out racing the erasure is erased with the rest or
-- refused.
CREATE FUNCTION notification_about_not_erased() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    erased timestamptz;
BEGIN
    SELECT erased_at INTO erased FROM citizens WHERE id = NEW.on_behalf_of FOR KEY SHARE;
    IF erased IS NOT NULL THEN
        RAISE EXCEPTION 'citizen_erased: citizen % was erased', NEW.on_behalf_of;
    END IF;
    RETURN NEW;
END
$$;

CREATE TRIGGER notifications_about_not_erased BEFORE INSERT ON notifications
    FOR EACH ROW WHEN (NEW.on_behalf_of IS NOT NULL) EXECUTE FUNCTION notification_about_not_erased();
