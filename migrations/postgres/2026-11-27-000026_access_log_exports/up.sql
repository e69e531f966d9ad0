-- The access log (docs/data-protection.md "Access log"), two changes to 000023:
--
-- 1. An admin reading a citizen's export (its state and download URL) is logged as
--    `export`: the archive holds the citizen's whole record.
-- 2. One index instead of two. The primary key becomes (citizen_id, id), the order a
--    citizen's log is read in, and replaces both the key on `id` and the index on
--    (citizen_id, id): every logged read inserts a row, and the second index was a third
--    of the insert's work (docs/benchmarks.md "Access log"). Ids are UUIDv7 drawn by the
--    server; nothing looks an entry up by its id alone.
ALTER TABLE access_log
    DROP CONSTRAINT access_log_what_check,
    ADD CONSTRAINT access_log_what_check CHECK (what IN ('profile', 'request', 'document',
        'appointment', 'request_notifications', 'citizen_list', 'export'));
ALTER TABLE access_log DROP CONSTRAINT access_log_pkey;
DROP INDEX access_log_citizen_idx;
ALTER TABLE access_log ADD CONSTRAINT access_log_pkey PRIMARY KEY (citizen_id, id);
