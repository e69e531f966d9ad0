-- Analytics (SQLite): a rollup of the stage spells by UTC day, service type and stage,
-- for the services view over all missions (docs/analytics.md "Performance"). Forward-only;
-- the PostgreSQL tree holds the same schema, and explains it; keep both trees in step.
CREATE TABLE stage_spell_days (
    day TEXT NOT NULL,
    service_type_id TEXT NOT NULL,
    stage INTEGER NOT NULL,
    spells TEXT NOT NULL,
    CONSTRAINT stage_spell_days_pkey PRIMARY KEY (day, service_type_id, stage),
    CONSTRAINT stage_spell_days_stage_check CHECK (stage >= 0)
) STRICT;

CREATE TABLE analytics_rollups (
    name TEXT NOT NULL,
    dirty INTEGER NOT NULL,
    CONSTRAINT analytics_rollups_pkey PRIMARY KEY (name)
) STRICT;

-- The rollup of the spells stored so far (instants are stored as fixed-width
-- `YYYY-MM-DDTHH:MM:SS.ffffffZ`). `Database::rebuild_spell_days` runs this very statement
-- (a unit test checks that the text is the same).
INSERT INTO stage_spell_days (day, service_type_id, stage, spells)
SELECT substr(left_at, 1, 10), service_type_id, stage,
    group_concat(CAST(CAST(strftime('%s', substr(left_at, 1, 19)) AS INTEGER) * 1000000 + CAST(substr(left_at, 21, 6) AS INTEGER) AS TEXT) || ':' || CAST(seconds AS TEXT), ',')
FROM request_stage_spells
GROUP BY 1, 2, 3;
INSERT INTO analytics_rollups (name, dirty) VALUES ('stage_spell_days', 0);
