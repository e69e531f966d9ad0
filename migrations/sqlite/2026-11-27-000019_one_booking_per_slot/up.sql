-- One active booking per citizen, slot and service type for bookings without a request,
-- enforced by the database (SQLite; docs/appointments.md "The seat invariant").
-- Forward-only; the PostgreSQL tree holds the same change with native types.
--
-- Only "one active booking per citizen and request" was unique
-- (`appointments_one_per_request`), so a citizen booking without a request could take
-- every seat of a slot, one `POST` at a time. This index makes the second such booking
-- fail (SQLite reports it by its columns, "UNIQUE constraint failed:
-- appointments.citizen_id, appointments.slot_id, appointments.service_type_id", mapped to
-- `appointments_one_per_slot` in crates/adapters/db/src/appointments/mod.rs); the use case
-- answers it 409 `already_booked` naming the booking that holds the seat. "Active" is
-- what the request rule counts: `status = 'booked'`. Bookings linked to a request stay
-- under the request rule.
--
-- Before the index can exist, the duplicates already stored are resolved the way the
-- rule would have: per citizen, slot and service type, the first booking made stays
-- (the earliest `created_at`, then the smallest id); the others are cancelled by the
-- mission (`cancelled_by` `mission`, `cancelled_at` now in the stored format, a new
-- version) and their seats released first, so `slots.booked` still equals the seats
-- held. No history entry or event is written (see the PostgreSQL migration).
CREATE TEMPORARY TABLE appointments_one_per_slot_extra AS
SELECT id, slot_id FROM (
    SELECT id, slot_id, row_number() OVER (
        PARTITION BY citizen_id, slot_id, service_type_id
        ORDER BY created_at, id
    ) AS rank
    FROM appointments
    WHERE status = 'booked' AND request_id IS NULL
)
WHERE rank > 1;

UPDATE slots
SET booked = booked - (
    SELECT count(*) FROM appointments_one_per_slot_extra AS extra WHERE extra.slot_id = slots.id
)
WHERE id IN (SELECT slot_id FROM appointments_one_per_slot_extra);

UPDATE appointments
SET status = 'cancelled',
    cancelled_by = 'mission',
    cancelled_at = strftime('%Y-%m-%dT%H:%M:%S', 'now') || '.000000Z',
    updated_at = strftime('%Y-%m-%dT%H:%M:%S', 'now') || '.000000Z',
    version = version + 1
WHERE id IN (SELECT id FROM appointments_one_per_slot_extra);

DROP TABLE appointments_one_per_slot_extra;

CREATE UNIQUE INDEX appointments_one_per_slot ON appointments (citizen_id, slot_id, service_type_id)
    WHERE status = 'booked' AND request_id IS NULL;
