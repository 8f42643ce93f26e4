-- SPDX-License-Identifier: MIT
-- ibpulse schema, version 3: learned baselines, expected figures,
-- regressions and suspects (issue 11; docs/collector.md, "BASELINES AND
-- REGRESSIONS"). Written by the collector in the transaction that stores
-- a result (collector/store/store_regress.c); the exporter reads these tables
-- (contract, like 002_tests.sql): it may rely on every column below.
--
-- A link is (initiator host, device, port) -> (responder host, device,
-- port) for one profile: a_* is the initiator, b_* the responder, as in
-- result (host, local_*) -> (peer_*). metric: 'bandwidth'
-- (bw_avg_bytes_per_second, bytes/s) or 'latency' (lat_median_seconds,
-- seconds). "started" columns are the probe's clock of the result
-- concerned; "updated", "since" the collector's. `retire` deletes a
-- host's rows at either end of a link.

-- One row per link and metric: the state the next result is judged by.
CREATE TABLE link_state (
	id INTEGER PRIMARY KEY,
	a_host TEXT NOT NULL,
	a_device TEXT NOT NULL,
	a_port INTEGER NOT NULL,
	b_host TEXT NOT NULL,
	b_device TEXT NOT NULL,
	b_port INTEGER NOT NULL,
	profile TEXT NOT NULL,
	metric TEXT NOT NULL,
	a_group TEXT,			-- the hosts' group_label values
	b_group TEXT,			-- (as of the latest result)
	baseline REAL,			-- median the next result is judged by;
					-- NULL: too few results, not judged
	spread REAL,			-- 1.4826 x MAD of the same results
	threshold REAL,			-- bad below (bandwidth) / above (latency)
	baseline_source TEXT,		-- 'link', 'port' (its ports' pooled
					-- baselines) or 'frozen' (regression)
	samples INTEGER NOT NULL DEFAULT 0,	-- the link's own accepted results
	judged INTEGER NOT NULL DEFAULT 0,	-- results judged, ever
	last_value REAL,		-- the latest ok, not busy result
	last_started REAL,
	last_bad INTEGER NOT NULL DEFAULT 0,	-- it was judged bad
	regression_id INTEGER,		-- the open regression; NULL: none
	window_from REAL NOT NULL DEFAULT 0,	-- judgements after this count
	expected REAL,			-- bandwidth: the hardware's figure
	expected_limit TEXT,		-- what limits it: 'initiator link'...
	efficiency REAL,		-- last_value / expected
	under_since REAL,		-- under the efficiency floor since
					-- (started); NULL: not under
	under_from REAL NOT NULL DEFAULT 0,	-- as window_from, for that
	updated REAL NOT NULL,
	UNIQUE (a_host, a_device, a_port, b_host, b_device, b_port, profile,
		metric)
);
CREATE INDEX link_state_b ON link_state(b_host, b_device, b_port, profile,
					metric);
CREATE INDEX link_state_open ON link_state(profile, metric)
	WHERE regression_id IS NOT NULL;
CREATE INDEX link_state_groups ON link_state(profile, metric, a_group,
					     b_group);
CREATE INDEX link_state_last ON link_state(last_started);
CREATE INDEX link_state_under ON link_state(under_since)
	WHERE under_since IS NOT NULL;

-- The accepted results of a link (ok, not busy, not judged bad, no
-- regression open): the newest `results` within `window_days`.
CREATE TABLE baseline_sample (
	link_id INTEGER NOT NULL REFERENCES link_state(id) ON DELETE CASCADE,
	started REAL NOT NULL,
	value REAL NOT NULL
);
CREATE INDEX baseline_sample_link ON baseline_sample(link_id, started);

-- The latest judgements of a link, newest `judged_results` (or
-- `good_results`, the larger) kept: the K-of-M window. bad: 1 when below
-- (above) the threshold; under: 1 below the efficiency floor, 0 above,
-- NULL without an expected figure.
CREATE TABLE link_recent (
	link_id INTEGER NOT NULL REFERENCES link_state(id) ON DELETE CASCADE,
	started REAL NOT NULL,
	value REAL NOT NULL,
	bad INTEGER,			-- NULL: not judged (no baseline)
	under INTEGER
);
CREATE INDEX link_recent_link ON link_recent(link_id, started);

-- A port's baseline, pooling the accepted results of every link it is an
-- end of (the newest `results` within the window); what a link with too
-- few results of its own is judged by.
CREATE TABLE port_baseline (
	host TEXT NOT NULL,
	device TEXT NOT NULL,
	port INTEGER NOT NULL,
	profile TEXT NOT NULL,
	metric TEXT NOT NULL,
	baseline REAL,			-- NULL: fewer than min_results
	spread REAL,
	samples INTEGER NOT NULL,
	updated REAL NOT NULL,
	PRIMARY KEY (host, device, port, profile, metric)
) WITHOUT ROWID;

-- Regressions, open (closed IS NULL) and closed; closed ones older than
-- retention_days are pruned.
CREATE TABLE regression (
	id INTEGER PRIMARY KEY,
	a_host TEXT NOT NULL,
	a_device TEXT NOT NULL,
	a_port INTEGER NOT NULL,
	b_host TEXT NOT NULL,
	b_device TEXT NOT NULL,
	b_port INTEGER NOT NULL,
	profile TEXT NOT NULL,
	metric TEXT NOT NULL,
	started REAL NOT NULL,		-- the first bad result of the window
	opened REAL NOT NULL,		-- the result that opened it
	closed REAL,			-- the result that closed it
	close_reason TEXT,		-- 'recovered', 'expired' (open a whole
					-- window: relearnt), 'stale' (the
					-- link was not measured for a window)
	baseline REAL NOT NULL,		-- frozen while open
	threshold REAL NOT NULL,
	baseline_source TEXT NOT NULL,	-- 'link' or 'port'
	figure REAL NOT NULL,		-- median of the bad results that opened it
	worst REAL NOT NULL,		-- while open
	last REAL NOT NULL,		-- the latest result while open
	bad_results INTEGER NOT NULL,	-- judged bad while open (K included)
	results INTEGER NOT NULL,	-- judged while open
	updated REAL NOT NULL
);
CREATE INDEX regression_closed ON regression(closed);
CREATE INDEX regression_a ON regression(a_host);
CREATE INDEX regression_b ON regression(b_host);

-- Regressions opened, ever (never decreases; a counter for /metrics).
CREATE TABLE regression_count (
	profile TEXT NOT NULL,
	metric TEXT NOT NULL,
	opened INTEGER NOT NULL,
	PRIMARY KEY (profile, metric)
) WITHOUT ROWID;

-- Ports the regressions around them point at (collector/suspect.h says
-- how), replaced whenever a result of that profile and metric is stored.
CREATE TABLE port_suspect (
	host TEXT NOT NULL,
	device TEXT NOT NULL,
	port INTEGER NOT NULL,
	profile TEXT NOT NULL,
	metric TEXT NOT NULL,
	since REAL NOT NULL,
	links_regressed INTEGER NOT NULL,	-- distinct peers in regression
	links_judged INTEGER NOT NULL,		-- distinct peers judged
	peers_fine INTEGER NOT NULL,		-- regressed peers fine elsewhere
	PRIMARY KEY (host, device, port, profile, metric)
) WITHOUT ROWID;

-- The same for pairs of groups (group_a < group_b): the path between two
-- leaves.
CREATE TABLE group_pair_suspect (
	group_a TEXT NOT NULL,
	group_b TEXT NOT NULL,
	profile TEXT NOT NULL,
	metric TEXT NOT NULL,
	since REAL NOT NULL,
	links_regressed INTEGER NOT NULL,
	links_judged INTEGER NOT NULL,
	PRIMARY KEY (group_a, group_b, profile, metric)
) WITHOUT ROWID;
