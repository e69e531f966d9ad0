-- Retention and erasure (PostgreSQL; docs/data-protection.md "Retention and erasure").
-- Forward-only; the SQLite tree holds the same change with SQLite types.
--
-- `retention_days`: how long a request of a service type is kept after it ended
-- (completed, rejected or cancelled) before an erasure or the daily retention sweep may
-- delete it. Types created before this migration get the default, ten years.
ALTER TABLE service_types
    ADD COLUMN retention_days integer NOT NULL DEFAULT 3650
        CONSTRAINT service_types_retention_days_check CHECK (retention_days BETWEEN 0 AND 36500);

-- `erased_at`: when the citizen was erased. The row stays as a tombstone (its personal
-- fields blanked) so that the ids of what is kept still resolve. Its
-- `registration_status` stays `deregistered` in the table (the status check of
-- 000002 cannot change on SQLite without rebuilding a table that six others reference);
-- the adapter reads a row with `erased_at` as the status `erased`.
ALTER TABLE citizens ADD COLUMN erased_at timestamptz NULL;

-- Nothing of an erased citizen is written again. A request, a document, an appointment
-- or an export inserted for them is refused (the adapter maps the error, which names
-- `citizen_erased`, to "not found"), and so is any change of their row. The insert takes
-- a key-share lock on the citizen row (what its foreign key check takes anyway): an
-- erasure locks the row FOR UPDATE first, which waits for and blocks key-share locks, so
-- an insert racing it either commits before the erasure reads the citizen's rows (and is
-- erased with them) or waits for the erasure and is refused. Not a share lock: a booking
-- holds the citizen's row FOR NO KEY UPDATE (docs/appointments.md "Bookings per
-- citizen"), which a share lock waits for, and a booking without that lock that took the
-- slot's seat first then waited for it while the locking one waited for the seat: a
-- deadlock (concurrent bookings of one citizen, found by the repository test).
CREATE FUNCTION citizen_not_erased() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    erased timestamptz;
BEGIN
    SELECT erased_at INTO erased FROM citizens WHERE id = NEW.citizen_id FOR KEY SHARE;
    IF erased IS NOT NULL THEN
        RAISE EXCEPTION 'citizen_erased: citizen % was erased', NEW.citizen_id;
    END IF;
    RETURN NEW;
END
$$;

CREATE TRIGGER service_requests_citizen_not_erased BEFORE INSERT ON service_requests
    FOR EACH ROW EXECUTE FUNCTION citizen_not_erased();
CREATE TRIGGER documents_citizen_not_erased BEFORE INSERT ON documents
    FOR EACH ROW EXECUTE FUNCTION citizen_not_erased();
CREATE TRIGGER appointments_citizen_not_erased BEFORE INSERT ON appointments
    FOR EACH ROW EXECUTE FUNCTION citizen_not_erased();
CREATE TRIGGER exports_citizen_not_erased BEFORE INSERT ON exports
    FOR EACH ROW EXECUTE FUNCTION citizen_not_erased();

-- A notification to an erased citizen is refused the same way (the outbox worker reads
-- an erased citizen as nobody; this catches one it read just before the erasure).
CREATE FUNCTION notification_recipient_not_erased() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    erased timestamptz;
BEGIN
    IF NEW.recipient_kind = 'citizen' THEN
        SELECT erased_at INTO erased FROM citizens WHERE id = NEW.recipient_id FOR KEY SHARE;
        IF erased IS NOT NULL THEN
            RAISE EXCEPTION 'citizen_erased: citizen % was erased', NEW.recipient_id;
        END IF;
    END IF;
    RETURN NEW;
END
$$;

CREATE TRIGGER notifications_recipient_not_erased BEFORE INSERT ON notifications
    FOR EACH ROW EXECUTE FUNCTION notification_recipient_not_erased();

CREATE FUNCTION citizens_stay_erased() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'citizen_erased: citizen % was erased', OLD.id;
END
$$;

CREATE TRIGGER citizens_stay_erased BEFORE UPDATE ON citizens
    FOR EACH ROW WHEN (OLD.erased_at IS NOT NULL) EXECUTE FUNCTION citizens_stay_erased();

-- The retention sweep finds ended requests by their end.
CREATE INDEX service_requests_ended_idx ON service_requests (closed_at, id)
    WHERE status IN ('completed', 'rejected', 'cancelled');
