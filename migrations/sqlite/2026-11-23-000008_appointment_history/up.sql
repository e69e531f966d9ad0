-- One row per stored change of an appointment (its version after the change), written in
-- the transaction of the change: the linked request's timeline lists them
-- (docs/appointments.md "History").
CREATE TABLE appointment_history (
    appointment_id TEXT NOT NULL,
    version INTEGER NOT NULL,
    request_id TEXT NULL,
    change TEXT NOT NULL,
    actor_kind TEXT NOT NULL,
    actor_id TEXT NOT NULL,
    at TEXT NOT NULL,
    slot_id TEXT NOT NULL,
    starts_at TEXT NOT NULL,
    ends_at TEXT NOT NULL,
    CONSTRAINT appointment_history_pkey PRIMARY KEY (appointment_id, version),
    CONSTRAINT appointment_history_appointment_id_fkey FOREIGN KEY (appointment_id) REFERENCES appointments (id),
    CONSTRAINT appointment_history_request_id_fkey FOREIGN KEY (request_id) REFERENCES service_requests (id),
    CONSTRAINT appointment_history_slot_id_fkey FOREIGN KEY (slot_id) REFERENCES slots (id),
    CONSTRAINT appointment_history_change_check CHECK (
        change IN ('booked', 'rescheduled', 'cancelled', 'cancelled_by_mission', 'attended', 'no_show')
    ),
    CONSTRAINT appointment_history_actor_kind_check CHECK (actor_kind IN ('admin', 'staff', 'citizen'))
) STRICT;
-- A request's timeline reads its appointments' entries in time order.
CREATE INDEX appointment_history_request_idx ON appointment_history (request_id, at)
    WHERE request_id IS NOT NULL;
CREATE INDEX appointment_history_slot_id_idx ON appointment_history (slot_id);

-- Appointments stored before this table: their booking, as far as it is known (the slot
-- they hold now, by whoever booked them).
INSERT INTO appointment_history
    (appointment_id, version, request_id, change, actor_kind, actor_id, at, slot_id, starts_at, ends_at)
SELECT id, 1, request_id, 'booked', booked_by_kind, booked_by_id, created_at, slot_id, starts_at, ends_at
FROM appointments;
