-- SPDX-License-Identifier: MIT
-- ibpulse schema, version 4: the fabric as fabric pollers report it (issue
-- 10; the "fabric" section of a report, docs/api.md). Keyed by node GUID,
-- so two pollers of one subnet write the same rows: the last report wins,
-- nothing is duplicated. Written by the collector only; the exporter reads
-- these tables (contract, like 001_init.sql). Times are seconds since the
-- epoch (REAL) on the collector's clock.

-- Every node a poller saw. updated: the last report that held it; a node
-- no poller reported for the retention period is deleted, with its ports,
-- series and history (a switch taken out of the fabric).
CREATE TABLE fabric_node (
	guid TEXT PRIMARY KEY,		-- "0x0002c90300a1b2c3"
	type INTEGER NOT NULL,		-- 1 CA, 2 switch, 3 router
	description TEXT NOT NULL,	-- NodeDescription
	lid INTEGER,			-- switches: the port-0 LID
	numports INTEGER NOT NULL,
	reporter TEXT NOT NULL,		-- host of the poller that sent it last
	updated REAL NOT NULL
) WITHOUT ROWID;
CREATE INDEX fabric_node_updated ON fabric_node(updated);

-- Each port as the last discovery and sweep saw it. Rewritten only when
-- something changed; its freshness is its node's.
CREATE TABLE fabric_port (
	id INTEGER PRIMARY KEY,
	node_guid TEXT NOT NULL REFERENCES fabric_node(guid) ON DELETE CASCADE,
	port INTEGER NOT NULL,
	lid INTEGER,
	state INTEGER,			-- 1 DOWN .. 4 ACTIVE, as port.state
	phys_state INTEGER,		-- 5 LinkUp, as port.phys_state
	width_active INTEGER,		-- lanes: 1, 2, 4, 8, 12
	width_enabled INTEGER,		-- the widest enabled
	speed_active TEXT,		-- "SDR" .. "NDR"
	rate_bytes INTEGER,		-- bytes per second, as port.rate_bytes
	degraded TEXT,			-- "width 1X of 4X enabled"; NULL: not
	remote_guid TEXT,		-- the node at the other end, NULL: none
	remote_port INTEGER,
	error TEXT,			-- why its counters were not read; NULL: read
	changed REAL NOT NULL,		-- when a column above last changed
	UNIQUE (node_guid, port)
);

-- The latest value of each counter of a fabric port, raw (PerfMgt's units:
-- port_xmit_data in 4-octet words), under the sysfs names: as series.
CREATE TABLE fabric_series (
	id INTEGER PRIMARY KEY,
	port_id INTEGER NOT NULL REFERENCES fabric_port(id) ON DELETE CASCADE,
	name TEXT NOT NULL,
	value INTEGER NOT NULL,
	changed REAL NOT NULL,
	UNIQUE (port_id, name)
);

-- History, as sample: a row when a counter changed plus keyframes; pruned
-- by age with the same retention.
CREATE TABLE fabric_sample (
	series_id INTEGER NOT NULL REFERENCES fabric_series(id)
		ON DELETE CASCADE,
	ts REAL NOT NULL,
	value INTEGER NOT NULL
);
CREATE INDEX fabric_sample_series_ts ON fabric_sample(series_id, ts);
