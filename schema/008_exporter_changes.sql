-- SPDX-License-Identifier: MIT
-- ibpulse schema, version 8: which hosts changed, for the exporter's block
-- cache (issue 21; docs/exporter.md, "RENDERING ONLY WHAT CHANGED"). The
-- collector writes change-only rows; when a report changes any row of a
-- host's device, port, port_gid, port_pkey or series tables, the same
-- transaction sets that host's host_change.seq to a fresh value of
-- change_seq. The exporter keeps each host's rendered block keyed by that
-- value and re-reads only the hosts whose value moved. Contract with the
-- exporter, like 001_init.sql.

-- One row: the last value handed out. It only grows (never reused, even
-- when a host is retired and its id comes back), so (host id, seq) names
-- one state of a host's rows.
CREATE TABLE change_seq (
	seq INTEGER NOT NULL
);
INSERT INTO change_seq VALUES (1);

-- The seq of each host's last change. A host without a row (a database an
-- older collector wrote) is read on every scrape.
CREATE TABLE host_change (
	host_id INTEGER PRIMARY KEY REFERENCES host(id) ON DELETE CASCADE,
	seq INTEGER NOT NULL
);
INSERT INTO host_change (host_id, seq) SELECT id, 1 FROM host;
