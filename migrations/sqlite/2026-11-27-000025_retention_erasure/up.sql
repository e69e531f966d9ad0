-- Retention and erasure (SQLite; docs/data-protection.md "Retention and erasure").
-- Forward-only; the PostgreSQL tree holds the same change with native types.
--
-- `retention_days`: how long a request of a service type is kept after it ended
-- (completed, rejected or cancelled) before an erasure or the daily retention sweep may
-- delete it. Types created before this migration get the default, ten years.
ALTER TABLE service_types ADD COLUMN retention_days INTEGER NOT NULL DEFAULT 3650
    CONSTRAINT service_types_retention_days_check CHECK (retention_days BETWEEN 0 AND 36500);

-- `erased_at`: when the citizen was erased. The row stays as a tombstone (its personal
-- fields blanked) so that the ids of what is kept still resolve. Its
-- `registration_status` stays `deregistered` in the table (SQLite cannot change the
-- status check of 000002 without rebuilding a table that six others reference); the
-- adapter reads a row with `erased_at` as the status `erased`.
ALTER TABLE citizens ADD COLUMN erased_at TEXT NULL;

-- Nothing of an erased citizen is written again: a request, a document, an appointment
-- or an export inserted for them is refused (the adapter maps the error,
-- `citizen_erased`, to "not found"), and so is any change of their row. SQLite runs one writer at a time
-- (`BEGIN IMMEDIATE`), so an insert either commits before an erasure starts (and is
-- erased with the rest) or runs after it and is refused here.
CREATE TRIGGER service_requests_citizen_not_erased BEFORE INSERT ON service_requests
    WHEN (SELECT erased_at FROM citizens WHERE id = NEW.citizen_id) IS NOT NULL
BEGIN
    SELECT RAISE(ABORT, 'citizen_erased');
END;
CREATE TRIGGER documents_citizen_not_erased BEFORE INSERT ON documents
    WHEN (SELECT erased_at FROM citizens WHERE id = NEW.citizen_id) IS NOT NULL
BEGIN
    SELECT RAISE(ABORT, 'citizen_erased');
END;
CREATE TRIGGER appointments_citizen_not_erased BEFORE INSERT ON appointments
    WHEN (SELECT erased_at FROM citizens WHERE id = NEW.citizen_id) IS NOT NULL
BEGIN
    SELECT RAISE(ABORT, 'citizen_erased');
END;
CREATE TRIGGER exports_citizen_not_erased BEFORE INSERT ON exports
    WHEN (SELECT erased_at FROM citizens WHERE id = NEW.citizen_id) IS NOT NULL
BEGIN
    SELECT RAISE(ABORT, 'citizen_erased');
END;
-- A notification to an erased citizen is refused the same way (the outbox worker reads
-- an erased citizen as nobody).
CREATE TRIGGER notifications_recipient_not_erased BEFORE INSERT ON notifications
    WHEN NEW.recipient_kind = 'citizen'
        AND (SELECT erased_at FROM citizens WHERE id = NEW.recipient_id) IS NOT NULL
BEGIN
    SELECT RAISE(ABORT, 'citizen_erased');
END;
CREATE TRIGGER citizens_stay_erased BEFORE UPDATE ON citizens
    WHEN OLD.erased_at IS NOT NULL
BEGIN
    SELECT RAISE(ABORT, 'citizen_erased');
END;

-- The retention sweep finds ended requests by their end.
CREATE INDEX service_requests_ended_idx ON service_requests (closed_at, id)
    WHERE status IN ('completed', 'rejected', 'cancelled');
