-- Appointments (SQLite): slots of a mission's counter time and the bookings of their
-- seats (docs/appointments.md). Forward-only; the PostgreSQL tree holds the same schema with
-- native types; keep both trees in step.
--
-- The seat invariant: `slots.booked` is the number of the slot's appointments holding a
-- seat (every status but `cancelled`). It changes only through guarded statements in the
-- transaction that books, moves or cancels (`booked = booked + 1 ... WHERE booked <
-- capacity`); the CHECKs below are the last line of defence, so no code path can store
-- more bookings than seats, or bookings in a closed slot.
--
-- As before, uuids and instants are text (text order is time order), booleans 0/1
-- integers; tables are STRICT. `slots_booking_closes_at_check` exists on PostgreSQL only
-- (instants are text here).
--
-- Constraints are named explicitly: the adapter maps a violated constraint name to a
-- stable business name (crates/adapters/db/src/error.rs).
CREATE TABLE slots (
    id TEXT NOT NULL,
    mission_id TEXT NOT NULL,
    starts_at TEXT NOT NULL,
    ends_at TEXT NOT NULL,
    capacity INTEGER NOT NULL,
    booked INTEGER NOT NULL,
    is_open INTEGER NOT NULL,
    booking_cutoff_minutes INTEGER NOT NULL,
    cancellation_cutoff_minutes INTEGER NOT NULL,
    -- starts_at minus the booking cut-off: what the availability query and the guarded
    -- booking statement compare `now` with.
    booking_closes_at TEXT NOT NULL,
    version INTEGER NOT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    CONSTRAINT slots_pkey PRIMARY KEY (id),
    -- The identity by content: submitting the same availability again finds these rows.
    -- Also serves a mission's slots in start order.
    CONSTRAINT slots_mission_time UNIQUE (mission_id, starts_at, ends_at),
    CONSTRAINT slots_mission_id_fkey FOREIGN KEY (mission_id) REFERENCES missions (id),
    CONSTRAINT slots_seats_check CHECK (booked >= 0 AND booked <= capacity),
    CONSTRAINT slots_closed_check CHECK (is_open = 1 OR booked = 0),
    CONSTRAINT slots_capacity_check CHECK (capacity BETWEEN 0 AND 1000),
    CONSTRAINT slots_times_check CHECK (ends_at > starts_at),
    CONSTRAINT slots_cutoffs_check CHECK (
        booking_cutoff_minutes BETWEEN 0 AND 43200 AND cancellation_cutoff_minutes BETWEEN 0 AND 43200
    ),
    CONSTRAINT slots_is_open_check CHECK (is_open IN (0, 1))
) STRICT;

-- The service types a slot serves, with the slot's mission and start copied (they never
-- change: they are the slot's identity) so that availability is one range scan of
-- `slot_service_types_availability_idx` from `max(from, now)`: past slots are never read.
CREATE TABLE slot_service_types (
    slot_id TEXT NOT NULL,
    service_type_id TEXT NOT NULL,
    mission_id TEXT NOT NULL,
    starts_at TEXT NOT NULL,
    CONSTRAINT slot_service_types_pkey PRIMARY KEY (slot_id, service_type_id),
    CONSTRAINT slot_service_types_slot_id_fkey FOREIGN KEY (slot_id) REFERENCES slots (id),
    CONSTRAINT slot_service_types_service_type_id_fkey FOREIGN KEY (service_type_id) REFERENCES service_types (id)
) STRICT;
CREATE INDEX slot_service_types_availability_idx
    ON slot_service_types (mission_id, service_type_id, starts_at, slot_id);
CREATE INDEX slot_service_types_service_type_id_idx ON slot_service_types (service_type_id);

CREATE TABLE appointments (
    id TEXT NOT NULL,
    slot_id TEXT NOT NULL,
    mission_id TEXT NOT NULL,
    citizen_id TEXT NOT NULL,
    service_type_id TEXT NOT NULL,
    request_id TEXT NULL,
    -- The slot's times, copied and moved by a reschedule: the lists are ordered by them.
    starts_at TEXT NOT NULL,
    ends_at TEXT NOT NULL,
    status TEXT NOT NULL,
    booked_by_kind TEXT NOT NULL,
    booked_by_id TEXT NOT NULL,
    cancelled_by TEXT NULL,
    cancelled_at TEXT NULL,
    version INTEGER NOT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    CONSTRAINT appointments_pkey PRIMARY KEY (id),
    CONSTRAINT appointments_slot_id_fkey FOREIGN KEY (slot_id) REFERENCES slots (id),
    CONSTRAINT appointments_mission_id_fkey FOREIGN KEY (mission_id) REFERENCES missions (id),
    CONSTRAINT appointments_citizen_id_fkey FOREIGN KEY (citizen_id) REFERENCES citizens (id),
    CONSTRAINT appointments_service_type_id_fkey FOREIGN KEY (service_type_id) REFERENCES service_types (id),
    CONSTRAINT appointments_request_id_fkey FOREIGN KEY (request_id) REFERENCES service_requests (id),
    CONSTRAINT appointments_status_check CHECK (status IN ('booked', 'attended', 'no_show', 'cancelled')),
    CONSTRAINT appointments_booked_by_kind_check CHECK (booked_by_kind IN ('admin', 'staff', 'citizen')),
    CONSTRAINT appointments_cancelled_by_check CHECK (cancelled_by IN ('citizen', 'staff', 'mission')),
    -- Who cancelled and when are set exactly for a cancelled appointment.
    CONSTRAINT appointments_cancelled_check CHECK (
        (status = 'cancelled') = (cancelled_by IS NOT NULL) AND (cancelled_by IS NULL) = (cancelled_at IS NULL)
    ),
    CONSTRAINT appointments_times_check CHECK (ends_at > starts_at)
) STRICT;
-- One active booking per citizen and request.
CREATE UNIQUE INDEX appointments_one_per_request ON appointments (citizen_id, request_id)
    WHERE status = 'booked' AND request_id IS NOT NULL;
-- The lists are in start order (then id): one index per filter, each ending with the
-- keyset columns. They also cover the foreign keys.
CREATE INDEX appointments_mission_idx ON appointments (mission_id, starts_at, id);
CREATE INDEX appointments_citizen_idx ON appointments (citizen_id, starts_at, id);
CREATE INDEX appointments_slot_idx ON appointments (slot_id, starts_at, id);
CREATE INDEX appointments_request_id_idx ON appointments (request_id);
CREATE INDEX appointments_service_type_id_idx ON appointments (service_type_id);
