-- Analytics (PostgreSQL): a rollup of the stage spells by UTC day, service type and stage,
-- for the services view over all missions (docs/analytics.md "Performance"). Forward-only;
-- the SQLite tree holds the same schema with SQLite types; keep both trees in step.
--
-- A 90-day view over a million requests ends some 145,000 spells. Read from
-- `request_stage_spells`, each is one index tuple to scan, aggregate and send (some 33 ms
-- on the bench machine, a third of the view's budget); here a day of one stage of one
-- service type is one row whose `spells` lists every spell of the projection that ended
-- that UTC day, as `<left_at in Unix microseconds>:<seconds>` items joined by commas, in
-- no order: the view reads some 1,500 rows. The fold still places each spell by its
-- `left_at` (a row is only where to find them), so the figures are the projection's,
-- exactly; one mission's views keep reading the projection, which its index already
-- narrows to that mission.
--
-- Maintained in the transaction that writes the projection (`record_spells`): a new spell
-- is appended to its row (`INSERT … ON CONFLICT DO UPDATE`, which locks the row, so
-- concurrent appends never lose one), and a request whose spells are rewritten has its
-- old items removed and its new ones appended under that row lock. The demo data set
-- (`consular demo seed`), which stores millions of spells in batches, marks the rollup
-- dirty in `analytics_rollups` with its first batch and rebuilds it from the projection
-- after its last; while it is dirty the view reads the projection instead.
CREATE TABLE stage_spell_days (
    day date NOT NULL,
    service_type_id uuid NOT NULL,
    stage integer NOT NULL,
    spells text NOT NULL,
    CONSTRAINT stage_spell_days_pkey PRIMARY KEY (day, service_type_id, stage),
    CONSTRAINT stage_spell_days_stage_check CHECK (stage >= 0)
);

-- The derived tables that may be out of date: one marked `dirty` is not read (its readers
-- fall back to the base tables) until it is rebuilt.
CREATE TABLE analytics_rollups (
    name text NOT NULL,
    dirty boolean NOT NULL,
    CONSTRAINT analytics_rollups_pkey PRIMARY KEY (name)
);

-- The rollup of the spells stored so far. `Database::rebuild_spell_days` runs this very
-- statement (a unit test checks that the text is the same).
INSERT INTO stage_spell_days (day, service_type_id, stage, spells)
SELECT (left_at AT TIME ZONE 'UTC')::date, service_type_id, stage,
    string_agg(CAST((extract(epoch FROM left_at) * 1000000)::bigint AS text) || ':' || CAST(seconds AS text), ',')
FROM request_stage_spells
GROUP BY 1, 2, 3;
INSERT INTO analytics_rollups (name, dirty) VALUES ('stage_spell_days', false);
