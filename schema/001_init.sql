-- SPDX-License-Identifier: MIT
-- ibpulse schema, version 1. Applied in order by the collector at start-up
-- (schema/NNN_*.sql, tracked with PRAGMA user_version = NNN).
--
-- Contract with the exporter: host, device, port, port_gid, port_pkey and
-- series are what /metrics is made of; the exporter only reads them.
-- Times are seconds since the epoch (REAL), from the collector's clock
-- unless the column says probe_.

-- Every host that ever reported, until an operator retires it. A host that
-- goes silent stays here (and alerts); retiring deletes it and, through
-- the cascades, all its rows.
CREATE TABLE host (
	id INTEGER PRIMARY KEY,
	name TEXT NOT NULL UNIQUE,
	first_seen REAL NOT NULL,
	last_report REAL NOT NULL,	-- when the last accepted report arrived
	probe_timestamp REAL,		-- the probe's own clock in that report
	probe_version TEXT
);

CREATE TABLE device (
	id INTEGER PRIMARY KEY,
	host_id INTEGER NOT NULL REFERENCES host(id) ON DELETE CASCADE,
	name TEXT NOT NULL,
	node_guid TEXT,
	sys_image_guid TEXT,
	fw_ver TEXT,
	hca_type TEXT,
	board_id TEXT,
	node_desc TEXT,
	numa_node INTEGER,
	netdevs TEXT,			-- comma-separated
	pcie_address TEXT,
	pcie_cur_speed_gts REAL,
	pcie_max_speed_gts REAL,
	pcie_cur_width INTEGER,
	pcie_max_width INTEGER,
	aer_correctable INTEGER,
	aer_nonfatal INTEGER,
	aer_fatal INTEGER,
	updated REAL NOT NULL,
	UNIQUE (host_id, name)
);

CREATE TABLE port (
	id INTEGER PRIMARY KEY,
	host_id INTEGER NOT NULL REFERENCES host(id) ON DELETE CASCADE,
	device_id INTEGER NOT NULL REFERENCES device(id) ON DELETE CASCADE,
	port INTEGER NOT NULL,
	state INTEGER,			-- 1 DOWN, 2 INIT, 3 ARMED, 4 ACTIVE, 5 ACTIVE_DEFER
	phys_state INTEGER,		-- 1 Sleep .. 5 LinkUp .. 7 PhyTest
	rate_bytes INTEGER,		-- bytes per second
	link_layer TEXT,
	lid INTEGER,
	sm_lid INTEGER,
	lmc INTEGER,
	cap_mask INTEGER,
	port_guid TEXT,
	netdev TEXT,
	updated REAL NOT NULL,
	UNIQUE (device_id, port)
);
CREATE INDEX port_host ON port(host_id);

CREATE TABLE port_gid (
	port_id INTEGER NOT NULL REFERENCES port(id) ON DELETE CASCADE,
	idx INTEGER NOT NULL,
	gid TEXT NOT NULL,
	type TEXT,
	netdev TEXT,
	PRIMARY KEY (port_id, idx)
) WITHOUT ROWID;

CREATE TABLE port_pkey (
	port_id INTEGER NOT NULL REFERENCES port(id) ON DELETE CASCADE,
	idx INTEGER NOT NULL,
	pkey INTEGER NOT NULL,		-- bit 15 set: full member
	PRIMARY KEY (port_id, idx)
) WITHOUT ROWID;

-- The latest value of every counter: what the exporter serves. A row is
-- written when a counter first appears and whenever its value changes;
-- freshness comes from host.last_report, so unchanged counters cost no
-- write. source: 0 counters/ (IB), 1 hw_counters/, 2 netdev.
CREATE TABLE series (
	id INTEGER PRIMARY KEY,
	port_id INTEGER NOT NULL REFERENCES port(id) ON DELETE CASCADE,
	source INTEGER NOT NULL,
	name TEXT NOT NULL,
	value INTEGER NOT NULL,		-- raw, as the kernel shows it
	changed REAL NOT NULL,		-- when value last changed
	UNIQUE (port_id, source, name)
);

-- History: a row when a counter changed, plus a keyframe of every counter
-- every few minutes. Pruned by age (rowid order is arrival order).
CREATE TABLE sample (
	series_id INTEGER NOT NULL REFERENCES series(id) ON DELETE CASCADE,
	ts REAL NOT NULL,
	value INTEGER NOT NULL
);
CREATE INDEX sample_series_ts ON sample(series_id, ts);
