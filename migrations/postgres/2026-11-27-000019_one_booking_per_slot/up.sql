-- One active booking per citizen, slot and service type for bookings without a request,
-- enforced by the database (PostgreSQL; docs/appointments.md "The seat invariant").
-- Forward-only; the SQLite tree holds the same change with SQLite types.
--
-- Only "one active booking per citizen and request" was unique
-- (`appointments_one_per_request`), so a citizen booking without a request could take
-- every seat of a slot, one `POST` at a time. This index makes the second such booking
-- fail (`appointments_one_per_slot`, mapped to its business name in
-- crates/adapters/db/src/appointments/mod.rs); the use case answers it 409
-- `already_booked` naming the booking that holds the seat. "Active" is what the request
-- rule counts: `status = 'booked'` (an attended or missed appointment is over, a
-- cancelled one holds nothing). Bookings linked to a request stay under the request rule.
--
-- Before the index can exist, the duplicates already stored are resolved the way the
-- rule would have: per citizen, slot and service type, the first booking made stays
-- (the earliest `created_at`, then the smallest id); the others are cancelled by the
-- mission (as a mission cancels the bookings a slot no longer holds: `cancelled_by`
-- `mission`, `cancelled_at` now, a new version) and their seats are released in the
-- same statement, so `slots.booked` still equals the seats held. The citizen keeps a
-- seat at the same time for the same service, so nothing they can use is lost; no
-- history entry or event is written (no one made the change, and a booking without a
-- request is in no request's timeline). docs/operations.md "Migrations" says how to
-- list them beforehand.
WITH ranked AS (
    SELECT id, row_number() OVER (
        PARTITION BY citizen_id, slot_id, service_type_id
        ORDER BY created_at, id
    ) AS rank
    FROM appointments
    WHERE status = 'booked' AND request_id IS NULL
), cancelled AS (
    UPDATE appointments
    SET status = 'cancelled', cancelled_by = 'mission', cancelled_at = now(), updated_at = now(),
        version = version + 1
    WHERE id IN (SELECT id FROM ranked WHERE rank > 1)
    RETURNING slot_id
)
UPDATE slots
SET booked = slots.booked - released.seats
FROM (SELECT slot_id, count(*) AS seats FROM cancelled GROUP BY slot_id) AS released
WHERE slots.id = released.slot_id;

CREATE UNIQUE INDEX appointments_one_per_slot ON appointments (citizen_id, slot_id, service_type_id)
    WHERE status = 'booked' AND request_id IS NULL;
