-- SPDX-License-Identifier: MIT
-- ibpulse schema, version 2: scheduled fabric tests (issue 5). Probe
-- registration, the test plan, test results stored once by id, and what
-- the probes' spools had to drop. Written by the collector only; the
-- exporter reads these tables (contract, like 001_init.sql): it may rely
-- on every column and index below. Times are seconds since the epoch
-- (REAL); "received"/"registered"/"updated" are the collector's clock,
-- "started" is the probe's. Hosts are keyed by name here (a probe may
-- register before its first counter report); `retire` deletes a host's
-- rows in these tables too.

-- A probe that registered (POST /api/v1/register): where its responder
-- listens and the operator's labels. Rewritten on each registration.
CREATE TABLE probe (
	id INTEGER PRIMARY KEY,
	host TEXT NOT NULL UNIQUE,
	address TEXT NOT NULL,		-- responder address peers connect to
	port INTEGER NOT NULL,		-- responder TCP port
	labels TEXT NOT NULL,		-- JSON object {"leaf": "leaf03", ...}
	profiles TEXT NOT NULL,		-- JSON array of profile names
	registered REAL NOT NULL,	-- first registration
	updated REAL NOT NULL		-- last registration
);

-- The same labels, one row each, for joins (group of a host: the row
-- whose key is the collector's planner group_label).
CREATE TABLE probe_label (
	probe_id INTEGER NOT NULL REFERENCES probe(id) ON DELETE CASCADE,
	key TEXT NOT NULL,
	value TEXT NOT NULL,
	PRIMARY KEY (probe_id, key)
) WITHOUT ROWID;

-- The ports a probe registered, as it last registered them. Only ports
-- with state 4 (ACTIVE) are planned.
CREATE TABLE probe_port (
	probe_id INTEGER NOT NULL REFERENCES probe(id) ON DELETE CASCADE,
	device TEXT NOT NULL,
	port INTEGER NOT NULL,
	state INTEGER,			-- 1 DOWN .. 4 ACTIVE
	link_layer TEXT,		-- "InfiniBand" | "Ethernet"
	lid INTEGER,
	subnet_prefix TEXT,		-- "fe80:0000:0000:0000"
	pkeys TEXT NOT NULL,		-- JSON array of P_Key values (bit 15: full)
	PRIMARY KEY (probe_id, device, port)
) WITHOUT ROWID;

-- Pause state per host (POST /api/v1/hosts/NAME/pause|resume). A paused
-- host is left out of the plan. No row: not paused.
CREATE TABLE host_pause (
	host TEXT PRIMARY KEY,
	paused INTEGER NOT NULL,	-- 0 or 1
	since REAL NOT NULL,		-- when it last changed
	by_admin INTEGER NOT NULL	-- 1: admin token, 0: the host's own
) WITHOUT ROWID;

-- What a probe's result spool had to drop, cumulative as the probe last
-- reported it (counters: the exporter serves them as *_total).
CREATE TABLE probe_dropped (
	host TEXT PRIMARY KEY,
	spool_full INTEGER NOT NULL,
	expired INTEGER NOT NULL,
	updated REAL NOT NULL
) WITHOUT ROWID;

-- One row per test result, stored once per result_id (the probe's UUID):
-- a retry after a lost answer is INSERT ... ON CONFLICT DO NOTHING. The
-- figures are NULL when unknown (a failed test has none). "host" is the
-- initiator (the probe that posted it); local_* its port, peer_* the
-- responder's. outcome: ok, control_error, verbs_error, timeout, refused,
-- aborted. Units are in the column names (bytes/s, seconds, 1/s).
CREATE TABLE result (
	id INTEGER PRIMARY KEY,
	result_id TEXT NOT NULL UNIQUE,
	host TEXT NOT NULL,
	plan_id TEXT,
	profile TEXT NOT NULL,
	test TEXT NOT NULL,
	started REAL NOT NULL,
	duration_seconds REAL,
	local_device TEXT,
	local_port INTEGER,
	peer_host TEXT,
	peer_device TEXT,
	peer_port INTEGER,
	outcome TEXT NOT NULL,
	error TEXT,
	wc_status TEXT,
	busy INTEGER NOT NULL,		-- 1: taken on a busy link
	busy_reason TEXT,
	bw_avg_bytes_per_second REAL,
	bw_peak_bytes_per_second REAL,
	bw_min_bytes_per_second REAL,
	msg_rate_per_second REAL,
	lat_min_seconds REAL,
	lat_median_seconds REAL,
	lat_mean_seconds REAL,
	lat_p99_seconds REAL,
	lat_p999_seconds REAL,
	lat_max_seconds REAL,
	lat_stdev_seconds REAL,
	cpu_seconds REAL,
	params TEXT,			-- JSON object, as the probe sent it
	received REAL NOT NULL
);
-- Latest result per local port (and per port and profile):
-- WHERE host = ? AND local_device = ? AND local_port = ? ORDER BY started DESC
CREATE INDEX result_port ON result(host, local_device, local_port, profile,
				   started);
-- Latest result per pair: the same plus peer_host, peer_device, peer_port.
CREATE INDEX result_pair ON result(host, local_device, local_port,
				   peer_host, peer_device, peer_port, started);
-- Results of the last period, for aggregates: WHERE started >= ?.
CREATE INDEX result_started ON result(started);
-- Results as the peer (responder side of a port): latest per peer port.
CREATE INDEX result_peer ON result(peer_host, peer_device, peer_port, started);

-- The plan of a period: one row per planned test. period = period_start /
-- period_seconds. a_* is the initiator (whose plan lists the test), b_*
-- the responder. group_a/group_b: the hosts' group_label values (NULL:
-- unlabelled). Replaced whenever the collector replans the period.
CREATE TABLE plan_entry (
	id TEXT PRIMARY KEY,		-- "p<period_start>-<16 hex>", unique
	period INTEGER NOT NULL,
	profile TEXT NOT NULL,
	a_host TEXT NOT NULL,
	a_device TEXT NOT NULL,
	a_port INTEGER NOT NULL,
	b_host TEXT NOT NULL,
	b_device TEXT NOT NULL,
	b_port INTEGER NOT NULL,
	group_a TEXT,
	group_b TEXT,
	not_before REAL NOT NULL,
	deadline REAL NOT NULL
) WITHOUT ROWID;
CREATE INDEX plan_entry_period ON plan_entry(period, a_host);

-- The last measurement per unordered port pair (a < b by
-- "host/device/port"), from any result with a known peer, whatever its
-- outcome. last_ok: the last one whose outcome was ok.
CREATE TABLE pair_seen (
	a_host TEXT NOT NULL,
	a_device TEXT NOT NULL,
	a_port INTEGER NOT NULL,
	b_host TEXT NOT NULL,
	b_device TEXT NOT NULL,
	b_port INTEGER NOT NULL,
	last_measured REAL NOT NULL,	-- "started" of the newest result
	last_outcome TEXT NOT NULL,
	last_ok REAL,
	PRIMARY KEY (a_host, a_device, a_port, b_host, b_device, b_port)
) WITHOUT ROWID;
