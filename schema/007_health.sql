-- SPDX-License-Identifier: MIT
-- ibpulse schema, version 7: one health verdict per host (issue 20;
-- docs/health.md). Written by the collector in the transaction that
-- stores a host's report, a fabric sweep that touches the switch port
-- facing it, or a change of its suspects (collector/store/store_health.c); the
-- exporter and GET /api/v1/hosts/NAME/health read these tables (a
-- contract, like 003_baselines.sql). Times are seconds since the epoch on
-- the collector's clock. `retire` deletes a host's rows.

-- The verdict of each host evaluated at least once. verdict: 'healthy',
-- 'degraded' (keep running, look soon) or 'failed' (take it out). It is
-- the worst severity among the host's reasons below: a reason enters at
-- once and holds the verdict until it has been gone for [health]
-- quiet_seconds (sticky).
CREATE TABLE host_health (
	host TEXT PRIMARY KEY,
	verdict TEXT NOT NULL,
	since REAL NOT NULL,		-- when the verdict last changed
	updated REAL NOT NULL		-- when the verdict was last written
) WITHOUT ROWID;

-- The reasons behind a host's verdict, current (active = 1: seen in the
-- latest evaluation) and past ones still inside the quiet window (active
-- = 0, last_seen older); deleted once quiet_seconds past last_seen.
-- key: the reason's identity ("port_down/mlx5_0/1", "symbol_errors/
-- switch/0x.../7"...), stable across evaluations.
CREATE TABLE health_reason (
	host TEXT NOT NULL,
	key TEXT NOT NULL,
	kind TEXT NOT NULL,		-- port_down, link_degraded, ... (docs)
	severity TEXT NOT NULL,		-- 'degraded' or 'failed'
	device TEXT,			-- the host's device, NULL: none
	port INTEGER,			-- its port, NULL: the device itself
	reason TEXT NOT NULL,		-- one line for people and Slurm
	evidence TEXT NOT NULL,		-- JSON object: the figures behind it
	active INTEGER NOT NULL,
	first_seen REAL NOT NULL,
	last_seen REAL NOT NULL,
	PRIMARY KEY (host, key)
) WITHOUT ROWID;

-- What a host's ports have been: a port that was ACTIVE and is not now
-- (or no longer in the host's reports) is down; one below the best rate
-- it ever ran at ACTIVE is degraded. Written only on a change (a port
-- turning ACTIVE or not, running faster than before, leaving or coming
-- back to the reports); kept until the host is retired.
CREATE TABLE health_port (
	host TEXT NOT NULL,
	device TEXT NOT NULL,
	port INTEGER NOT NULL,
	active_seen REAL,		-- when it last turned ACTIVE; NULL: never
	down_since REAL,		-- when it left ACTIVE after that
	missing_since REAL,		-- when reports stopped holding it
	best_rate INTEGER,		-- bytes/s, the fastest it ran ACTIVE
	PRIMARY KEY (host, device, port)
) WITHOUT ROWID;

-- The switch port facing a host's port (GET the hosts behind a leaf port
-- from the fabric pollers' link data, schema/004_fabric.sql).
CREATE INDEX fabric_port_remote ON fabric_port(remote_guid, remote_port);
-- ... and the host behind a switch port: a device's node_guid as the
-- fabric tables spell it ("b859:9f03:00d4:0a1c" is "0xb8599f0300d40a1c").
CREATE INDEX device_guid_hex ON device('0x' || replace(node_guid, ':', ''));
