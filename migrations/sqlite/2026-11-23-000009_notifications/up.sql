-- Notifications (SQLite): the outbox worker's leases on events, the in-app notifications
-- and emails events become, email preferences, and the appointment reminders already
-- scheduled (docs/notifications.md). Forward-only; the PostgreSQL tree holds the same
-- schema with native types; keep both trees in step.
--
-- As before, uuids and instants are text (text order is time order), JSON documents are
-- text checked with the JSON functions. Tables are STRICT.
--
-- Constraints are named explicitly: the adapter maps a violated constraint name to a
-- stable business name (crates/adapters/db/src/error.rs). The predicates of the partial
-- indexes below are written by the adapter as the same literal text (never bound
-- parameters): SQLite uses a partial index only when the query's WHERE clause contains
-- the index's predicate term for term.

-- A worker leases a batch of undelivered events until `locked_until` (`claimed_by`: the
-- node holding the lease, or the last one that did) and marks them delivered by a node.
ALTER TABLE outbox_events ADD COLUMN locked_until TEXT NULL;
ALTER TABLE outbox_events ADD COLUMN claimed_by TEXT NULL;
ALTER TABLE outbox_events ADD COLUMN delivered_by TEXT NULL;
-- The claim's per-aggregate rule: is an earlier undelivered event of the same aggregate
-- leased? (`outbox_events_pending_idx` stays the claim's scan in id order.)
CREATE INDEX outbox_events_pending_aggregate_idx ON outbox_events (aggregate_id, id)
    WHERE delivered_at IS NULL;

-- One per (event, recipient): an event handled twice produces it once. `details` holds
-- only what the recipient may read through the API anyway.
CREATE TABLE notifications (
    id TEXT NOT NULL,
    recipient_id TEXT NOT NULL,
    recipient_kind TEXT NOT NULL,
    event_id TEXT NOT NULL,
    kind TEXT NOT NULL,
    mission_id TEXT NULL,
    request_id TEXT NULL,
    details TEXT NOT NULL,
    created_at TEXT NOT NULL,
    read_at TEXT NULL,
    CONSTRAINT notifications_pkey PRIMARY KEY (id),
    CONSTRAINT notifications_event_recipient_key UNIQUE (event_id, recipient_id),
    CONSTRAINT notifications_event_id_fkey FOREIGN KEY (event_id) REFERENCES outbox_events (id),
    CONSTRAINT notifications_mission_id_fkey FOREIGN KEY (mission_id) REFERENCES missions (id),
    CONSTRAINT notifications_request_id_fkey FOREIGN KEY (request_id) REFERENCES service_requests (id),
    CONSTRAINT notifications_recipient_kind_check CHECK (recipient_kind IN ('admin', 'staff', 'citizen')),
    CONSTRAINT notifications_details_check CHECK (json_type(details) = 'object')
) STRICT;
-- A recipient's inbox, newest first (keyset on id), and its unread part (the `unread`
-- filter and the unread count).
CREATE INDEX notifications_recipient_idx ON notifications (recipient_id, id DESC);
CREATE INDEX notifications_unread_idx ON notifications (recipient_id, id DESC) WHERE read_at IS NULL;
-- A request's notifications (staff), and the foreign key to missions.
CREATE INDEX notifications_request_id_idx ON notifications (request_id, id);
CREATE INDEX notifications_mission_id_idx ON notifications (mission_id, id);

-- The email of a notification and where its delivery stands. Its text is rendered when
-- it is sent, from the notification's kind and details (joined, not copied).
CREATE TABLE emails (
    id TEXT NOT NULL,
    notification_id TEXT NOT NULL,
    to_address TEXT NOT NULL,
    language TEXT NOT NULL,
    status TEXT NOT NULL,
    attempts INTEGER NOT NULL,
    next_attempt_at TEXT NULL,
    -- The lease of the sender holding a `sending` email; `sent_by`: the node of the last
    -- attempt.
    locked_until TEXT NULL,
    sent_by TEXT NULL,
    last_error TEXT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    delivered_at TEXT NULL,
    CONSTRAINT emails_pkey PRIMARY KEY (id),
    CONSTRAINT emails_notification_id_key UNIQUE (notification_id),
    CONSTRAINT emails_notification_id_fkey FOREIGN KEY (notification_id) REFERENCES notifications (id),
    CONSTRAINT emails_status_check CHECK (
        status IN ('pending', 'sending', 'delivered', 'temporary_failure', 'permanent_failure')
    ),
    CONSTRAINT emails_attempts_check CHECK (attempts >= 0),
    CONSTRAINT emails_sending_check CHECK (status <> 'sending' OR (locked_until IS NOT NULL AND sent_by IS NOT NULL)),
    CONSTRAINT emails_delivered_check CHECK ((status = 'delivered') = (delivered_at IS NOT NULL))
) STRICT;
-- The senders' claim, each in the order it reads: emails due an attempt, and `sending`
-- ones whose lease expired.
CREATE INDEX emails_due_idx ON emails (next_attempt_at, id) WHERE status IN ('pending', 'temporary_failure');
CREATE INDEX emails_sending_idx ON emails (locked_until, id) WHERE status = 'sending';

-- The categories a principal turned email off for (a JSON array of category names); no
-- row: nothing turned off.
CREATE TABLE notification_preferences (
    principal_id TEXT NOT NULL,
    email_off TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    CONSTRAINT notification_preferences_pkey PRIMARY KEY (principal_id),
    CONSTRAINT notification_preferences_email_off_check CHECK (json_type(email_off) = 'array')
) STRICT;

-- The reminders written to the outbox, one per appointment and start time (a moved
-- appointment gets one for its new time).
CREATE TABLE appointment_reminders (
    appointment_id TEXT NOT NULL,
    starts_at TEXT NOT NULL,
    created_at TEXT NOT NULL,
    CONSTRAINT appointment_reminders_pkey PRIMARY KEY (appointment_id, starts_at),
    CONSTRAINT appointment_reminders_appointment_id_fkey FOREIGN KEY (appointment_id) REFERENCES appointments (id)
) STRICT;
-- The reminder sweep: booked appointments by start time.
CREATE INDEX appointments_booked_starts_at_idx ON appointments (starts_at, id) WHERE status = 'booked';
