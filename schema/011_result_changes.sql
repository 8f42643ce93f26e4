-- SPDX-License-Identifier: MIT
-- ibpulse schema, version 11: which test results left or changed, for the
-- exporter, which keeps the period's results between scrapes and reads
-- only the new ones (issue 21; docs/exporter.md, "RENDERING ONLY WHAT
-- CHANGED"). New results only add rows, with a larger id; the exporter
-- finds them by id. A row deleted (a retired host, the retention) or
-- changed in place is recorded here by the triggers below, in the same
-- transaction: the exporter reads the whole period again when a row it may
-- hold went (started at or after its period's start) or when an id it knew
-- may come again (SQLite hands out max(id) + 1, so only after the largest
-- id went). Contract with the exporter, like 001_init.sql.

-- One row. seq: rows deleted or changed so far; newest_started: the
-- latest started of any of them (-1: none); top_id: their largest id (0:
-- none). All only grow.
CREATE TABLE result_change (
	seq INTEGER NOT NULL,
	newest_started REAL NOT NULL,
	top_id INTEGER NOT NULL
);
INSERT INTO result_change VALUES (0, -1, 0);

CREATE TRIGGER result_deleted AFTER DELETE ON result
BEGIN
	UPDATE result_change
	SET seq = seq + 1,
	    newest_started = max(newest_started, OLD.started),
	    top_id = max(top_id, OLD.id);
END;

CREATE TRIGGER result_updated AFTER UPDATE ON result
BEGIN
	UPDATE result_change
	SET seq = seq + 1,
	    newest_started = max(newest_started, OLD.started, NEW.started),
	    top_id = max(top_id, OLD.id, NEW.id);
END;
