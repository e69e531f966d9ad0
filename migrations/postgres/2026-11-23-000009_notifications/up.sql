-- Notifications (PostgreSQL): the outbox worker's leases on events, the in-app
-- notifications and emails events become, email preferences, and the appointment
-- reminders already scheduled (docs/notifications.md). Forward-only; the SQLite tree holds
-- the same schema with SQLite types; keep both trees in step.
--
-- Constraints are named explicitly: the adapter maps a violated constraint name to a
-- stable business name (crates/adapters/db/src/error.rs). The predicates of the partial
-- indexes below are written by the adapter as the same literal text (never bound
-- parameters), so that the planners can prove a query matches them.

-- A worker leases a batch of undelivered events until `locked_until` (`claimed_by`: the
-- node holding the lease, or the last one that did) and marks them delivered by a node.
ALTER TABLE outbox_events ADD COLUMN locked_until timestamptz NULL;
ALTER TABLE outbox_events ADD COLUMN claimed_by text NULL;
ALTER TABLE outbox_events ADD COLUMN delivered_by text NULL;
-- The claim's per-aggregate rule: is an earlier undelivered event of the same aggregate
-- leased? (`outbox_events_pending_idx` stays the claim's scan in id order.)
CREATE INDEX outbox_events_pending_aggregate_idx ON outbox_events (aggregate_id, id)
    WHERE delivered_at IS NULL;

-- One per (event, recipient): an event handled twice produces it once. `details` holds
-- only what the recipient may read through the API anyway.
CREATE TABLE notifications (
    id uuid NOT NULL,
    recipient_id uuid NOT NULL,
    recipient_kind text NOT NULL,
    event_id uuid NOT NULL,
    kind text NOT NULL,
    mission_id uuid NULL,
    request_id uuid NULL,
    details jsonb NOT NULL,
    created_at timestamptz NOT NULL,
    read_at timestamptz NULL,
    CONSTRAINT notifications_pkey PRIMARY KEY (id),
    CONSTRAINT notifications_event_recipient_key UNIQUE (event_id, recipient_id),
    CONSTRAINT notifications_event_id_fkey FOREIGN KEY (event_id) REFERENCES outbox_events (id),
    CONSTRAINT notifications_mission_id_fkey FOREIGN KEY (mission_id) REFERENCES missions (id),
    CONSTRAINT notifications_request_id_fkey FOREIGN KEY (request_id) REFERENCES service_requests (id),
    CONSTRAINT notifications_recipient_kind_check CHECK (recipient_kind IN ('admin', 'staff', 'citizen')),
    CONSTRAINT notifications_details_check CHECK (jsonb_typeof(details) = 'object')
);
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
    id uuid NOT NULL,
    notification_id uuid NOT NULL,
    to_address text NOT NULL,
    language text NOT NULL,
    status text NOT NULL,
    attempts integer NOT NULL,
    next_attempt_at timestamptz NULL,
    -- The lease of the sender holding a `sending` email; `sent_by`: the node of the last
    -- attempt.
    locked_until timestamptz NULL,
    sent_by text NULL,
    last_error text NULL,
    created_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL,
    delivered_at timestamptz NULL,
    CONSTRAINT emails_pkey PRIMARY KEY (id),
    CONSTRAINT emails_notification_id_key UNIQUE (notification_id),
    CONSTRAINT emails_notification_id_fkey FOREIGN KEY (notification_id) REFERENCES notifications (id),
    CONSTRAINT emails_status_check CHECK (
        status IN ('pending', 'sending', 'delivered', 'temporary_failure', 'permanent_failure')
    ),
    CONSTRAINT emails_attempts_check CHECK (attempts >= 0),
    CONSTRAINT emails_sending_check CHECK (status <> 'sending' OR (locked_until IS NOT NULL AND sent_by IS NOT NULL)),
    CONSTRAINT emails_delivered_check CHECK ((status = 'delivered') = (delivered_at IS NOT NULL))
);
-- The senders' claim, each in the order it reads: emails due an attempt, and `sending`
-- ones whose lease expired.
CREATE INDEX emails_due_idx ON emails (next_attempt_at, id) WHERE status IN ('pending', 'temporary_failure');
CREATE INDEX emails_sending_idx ON emails (locked_until, id) WHERE status = 'sending';

-- The categories a principal turned email off for (a JSON array of category names); no
-- row: nothing turned off.
CREATE TABLE notification_preferences (
    principal_id uuid NOT NULL,
    email_off jsonb NOT NULL,
    updated_at timestamptz NOT NULL,
    CONSTRAINT notification_preferences_pkey PRIMARY KEY (principal_id),
    CONSTRAINT notification_preferences_email_off_check CHECK (jsonb_typeof(email_off) = 'array')
);

-- The reminders written to the outbox, one per appointment and start time (a moved
-- appointment gets one for its new time).
CREATE TABLE appointment_reminders (
    appointment_id uuid NOT NULL,
    starts_at timestamptz NOT NULL,
    created_at timestamptz NOT NULL,
    CONSTRAINT appointment_reminders_pkey PRIMARY KEY (appointment_id, starts_at),
    CONSTRAINT appointment_reminders_appointment_id_fkey FOREIGN KEY (appointment_id) REFERENCES appointments (id)
);
-- The reminder sweep: booked appointments by start time.
CREATE INDEX appointments_booked_starts_at_idx ON appointments (starts_at, id) WHERE status = 'booked';
