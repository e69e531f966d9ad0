-- The address a change was requested from (docs/operations.md "Proxies"): the client's,
-- as resolved behind the trusted proxies. NULL for entries of the system and the command
-- line, and for entries written before this column existed.
ALTER TABLE audit_events ADD COLUMN client_address TEXT;
