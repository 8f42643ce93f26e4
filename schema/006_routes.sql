-- SPDX-License-Identifier: MIT
-- ibpulse schema, version 6: the routes (issue 19). A fabric poller reads
-- every switch's linear forwarding table (LFT: the egress port of each
-- destination LID) and sends it with the switch in the report's fabric
-- section (docs/api.md, "Fabric"); with each port's LMC, the LIDs of every
-- port are known, and common/route.h walks the path of any source port and
-- destination LID. Written by the collector only (contract, like
-- 001_init.sql); times are seconds since the epoch (REAL).

-- A port owns LIDs lid .. lid + 2^lmc - 1 (CA ports: PortInfo's LMC; a
-- switch's ports carry its port 0's LID and LMC). NULL: not reported.
ALTER TABLE fabric_port ADD COLUMN lmc INTEGER;

-- One row per switch: its table as the last report that carried it gave
-- it, replaced whole when a newer read comes (a poller reads them again
-- after a discovery that changed anything, and every route_interval).
-- runs: 3 bytes a run, ascending: the run's first LID (unsigned 16-bit,
-- little-endian) and its egress port (8 bits; 255: no entry, 0: the switch
-- itself); the first run starts at LID 0 and each runs up to the next one's
-- first LID - 1, the last up to top. error: why the poller could not read
-- the table (top and runs are then NULL). With adaptive routing (OpenSM's
-- ar_updn) the LFT is the default path only.
CREATE TABLE fabric_lft (
	switch_guid TEXT PRIMARY KEY
		REFERENCES fabric_node(guid) ON DELETE CASCADE,
	top INTEGER,			-- the table's last LID
	runs BLOB,			-- see above
	error TEXT,
	routed REAL NOT NULL,		-- when the poller read it (its clock)
	reporter TEXT NOT NULL,		-- host of that poller
	updated REAL NOT NULL		-- when the collector stored it
) WITHOUT ROWID;
