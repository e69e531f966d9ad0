-- Staff workloads (SQLite): the number of open requests assigned to each staff member,
-- kept by the database itself (docs/requests.md "Assignment"). Forward-only; the
-- PostgreSQL tree holds the same schema and triggers, and explains them; keep both trees
-- in step.
CREATE TABLE staff_workloads (
    staff_id TEXT NOT NULL,
    open_requests INTEGER NOT NULL,
    CONSTRAINT staff_workloads_pkey PRIMARY KEY (staff_id),
    CONSTRAINT staff_workloads_staff_id_fkey
        FOREIGN KEY (staff_id) REFERENCES staff_members (id) ON DELETE CASCADE,
    CONSTRAINT staff_workloads_open_requests_check CHECK (open_requests >= 0)
) STRICT;

INSERT INTO staff_workloads (staff_id, open_requests)
SELECT s.id, count(r.id)
FROM staff_members s
LEFT JOIN service_requests r
    ON r.assignee_id = s.id AND r.status NOT IN ('completed', 'rejected', 'cancelled')
GROUP BY s.id;

CREATE TRIGGER staff_workloads_new_member AFTER INSERT ON staff_members
BEGIN
    INSERT INTO staff_workloads (staff_id, open_requests) VALUES (NEW.id, 0);
END;

CREATE TRIGGER staff_workloads_request_inserted AFTER INSERT ON service_requests
    WHEN NEW.assignee_id IS NOT NULL AND NEW.status NOT IN ('completed', 'rejected', 'cancelled')
BEGIN
    UPDATE staff_workloads SET open_requests = open_requests + 1 WHERE staff_id = NEW.assignee_id;
END;

CREATE TRIGGER staff_workloads_request_updated AFTER UPDATE OF assignee_id, status ON service_requests
    WHEN OLD.assignee_id IS NOT NEW.assignee_id
        OR (OLD.status NOT IN ('completed', 'rejected', 'cancelled'))
            <> (NEW.status NOT IN ('completed', 'rejected', 'cancelled'))
BEGIN
    UPDATE staff_workloads SET open_requests = open_requests - 1
    WHERE staff_id = OLD.assignee_id AND OLD.status NOT IN ('completed', 'rejected', 'cancelled');
    UPDATE staff_workloads SET open_requests = open_requests + 1
    WHERE staff_id = NEW.assignee_id AND NEW.status NOT IN ('completed', 'rejected', 'cancelled');
END;

CREATE TRIGGER staff_workloads_request_deleted AFTER DELETE ON service_requests
    WHEN OLD.assignee_id IS NOT NULL AND OLD.status NOT IN ('completed', 'rejected', 'cancelled')
BEGIN
    UPDATE staff_workloads SET open_requests = open_requests - 1 WHERE staff_id = OLD.assignee_id;
END;
