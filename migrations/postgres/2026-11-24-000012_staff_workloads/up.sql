-- Staff workloads (PostgreSQL): the number of open requests assigned to each staff member,
-- kept by the database itself, so that a submission picks its assignee from a few rows
-- (docs/requests.md "Assignment"). Forward-only; the SQLite tree holds the same schema and
-- triggers with SQLite types; keep both trees in step.
--
-- Counting the open requests of every member assigned to a service type, at each
-- submission, read every one of them (some 22,000 index tuples, 6 ms of PostgreSQL, at
-- 100,000 requests on the bench machine), and grew with the backlog. Here each member has
-- one row, created with the member, and triggers on `service_requests` move the count in
-- the transaction of the request's insert, assignee change or status change: every write
-- counts, whichever code (or SQL) makes it, and a rollback takes the change back.
--
-- The request triggers are deferred to the commit (constraint triggers, `INITIALLY
-- DEFERRED`). Moving a count locks the member's row until the transaction ends, and
-- submissions that arrive together all pick the same least-loaded member: moved at the
-- insert, the count's lock was held through the rest of the transaction's round trips
-- (history, commit), and those submissions queued behind one another (893 us per insert,
-- most of it waiting, against 164 us in pgbench). Moved at the commit, the lock is held
-- for the commit alone. A change of assignee moves both members' counts in one
-- statement. "Open" is `status NOT IN ('completed', 'rejected', 'cancelled')`, as in the
-- partial indexes of `service_requests`.
CREATE TABLE staff_workloads (
    staff_id uuid NOT NULL,
    open_requests bigint NOT NULL,
    CONSTRAINT staff_workloads_pkey PRIMARY KEY (staff_id),
    CONSTRAINT staff_workloads_staff_id_fkey
        FOREIGN KEY (staff_id) REFERENCES staff_members (id) ON DELETE CASCADE,
    CONSTRAINT staff_workloads_open_requests_check CHECK (open_requests >= 0)
);

-- The counts of the data stored so far. A test rebuilds them the same way after a mix of
-- writes and compares (crates/adapters/db/tests/repositories.rs).
INSERT INTO staff_workloads (staff_id, open_requests)
SELECT s.id, count(r.id)
FROM staff_members s
LEFT JOIN service_requests r
    ON r.assignee_id = s.id AND r.status NOT IN ('completed', 'rejected', 'cancelled')
GROUP BY s.id;

CREATE FUNCTION staff_workloads_new_member() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO staff_workloads (staff_id, open_requests) VALUES (NEW.id, 0);
    RETURN NULL;
END
$$;

CREATE TRIGGER staff_workloads_new_member AFTER INSERT ON staff_members
    FOR EACH ROW EXECUTE FUNCTION staff_workloads_new_member();

-- One function for the three triggers below: the request's old row stops counting for its
-- assignee if it counted, the new row starts counting if it counts; one statement.
CREATE FUNCTION staff_workloads_follow_request() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    counted_for uuid;
    counts_for uuid;
BEGIN
    IF TG_OP IN ('UPDATE', 'DELETE') THEN
        IF OLD.status NOT IN ('completed', 'rejected', 'cancelled') THEN
            counted_for := OLD.assignee_id;
        END IF;
    END IF;
    IF TG_OP IN ('INSERT', 'UPDATE') THEN
        IF NEW.status NOT IN ('completed', 'rejected', 'cancelled') THEN
            counts_for := NEW.assignee_id;
        END IF;
    END IF;
    UPDATE staff_workloads
    SET open_requests = open_requests
        + CASE WHEN staff_id = counts_for THEN 1 ELSE 0 END
        - CASE WHEN staff_id = counted_for THEN 1 ELSE 0 END
    WHERE staff_id IN (counted_for, counts_for);
    RETURN NULL;
END
$$;

CREATE CONSTRAINT TRIGGER staff_workloads_request_inserted AFTER INSERT ON service_requests
    DEFERRABLE INITIALLY DEFERRED
    FOR EACH ROW
    WHEN (NEW.assignee_id IS NOT NULL AND NEW.status NOT IN ('completed', 'rejected', 'cancelled'))
    EXECUTE FUNCTION staff_workloads_follow_request();

-- Every update of a request sets all its columns (an optimistic replace), so the trigger
-- fires only when the assignee or whether the request is open actually changed.
CREATE CONSTRAINT TRIGGER staff_workloads_request_updated AFTER UPDATE OF assignee_id, status ON service_requests
    DEFERRABLE INITIALLY DEFERRED
    FOR EACH ROW
    WHEN (OLD.assignee_id IS DISTINCT FROM NEW.assignee_id
        OR (OLD.status NOT IN ('completed', 'rejected', 'cancelled'))
            <> (NEW.status NOT IN ('completed', 'rejected', 'cancelled')))
    EXECUTE FUNCTION staff_workloads_follow_request();

CREATE CONSTRAINT TRIGGER staff_workloads_request_deleted AFTER DELETE ON service_requests
    DEFERRABLE INITIALLY DEFERRED
    FOR EACH ROW
    WHEN (OLD.assignee_id IS NOT NULL AND OLD.status NOT IN ('completed', 'rejected', 'cancelled'))
    EXECUTE FUNCTION staff_workloads_follow_request();
