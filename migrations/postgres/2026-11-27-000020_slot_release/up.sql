-- Scheduled release of slots (PostgreSQL; docs/appointments.md "Scheduled release").
-- Forward-only; the SQLite tree holds the same change with SQLite types.
--
-- A mission may open a submission's slots at one instant: before `release_at` a slot
-- is listed by no availability read and taken by no booking. The guarded seat
-- statement and the availability query compare it with `now` (`release_at IS NULL OR
-- release_at <= now`), so the database decides when a seat can be taken, never a read.
-- NULL is released: every slot stored before this migration stays bookable as it was.
-- No index: both statements reach the slot row by its primary key.
ALTER TABLE slots ADD COLUMN release_at timestamptz;
