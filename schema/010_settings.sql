-- SPDX-License-Identifier: MIT
-- ibpulse schema, version 10: the settings the collector and the exporter
-- must agree on (issue 18; docs/exporter.md, "SETTINGS FROM THE
-- COLLECTOR"). The collector writes its own values at every start; the
-- exporter reads them at every scrape, so the two cannot disagree. The keys
-- are common/dbsettings.h's. A contract with the exporter, like
-- 001_init.sql.

CREATE TABLE setting (
	key TEXT PRIMARY KEY,
	value TEXT NOT NULL
) WITHOUT ROWID;
