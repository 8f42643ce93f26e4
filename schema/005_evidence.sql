-- SPDX-License-Identifier: MIT
-- ibpulse schema, version 5: evidence per element and suspects (issue 17;
-- docs/collector.md, "WHICH ELEMENT IS AT FAULT"). Written by the
-- collector in the transaction that stores a result
-- (collector/store/store_evidence.c); the exporter and operators' tools read
-- these tables (a contract, like 003_baselines.sql).
--
-- An element is a port (host, device, port) or a device (host, device;
-- port 0): the HCA and its PCIe link. Every judged result is evidence about
-- four elements, each end's port and each end's device, whatever the
-- peer. metric: 'bandwidth' or 'latency', as in link_state.

-- One row per element, profile and metric: its judgement window's summary.
CREATE TABLE element (
	id INTEGER PRIMARY KEY,
	kind TEXT NOT NULL,		-- 'port' or 'device'
	host TEXT NOT NULL,
	device TEXT NOT NULL,
	port INTEGER NOT NULL,		-- 0 for a device
	profile TEXT NOT NULL,
	metric TEXT NOT NULL,
	status TEXT NOT NULL DEFAULT 'ok',	-- 'ok': no bad result in its
					-- window; 'watch': bad results not
					-- (yet) enough; 'suspect'
	confirm INTEGER NOT NULL DEFAULT 0,	-- 1: the planner adds
					-- confirmation tests for it
	judged INTEGER NOT NULL DEFAULT 0,	-- results in the window
	bad INTEGER NOT NULL DEFAULT 0,		-- of which bad
	peers_bad INTEGER NOT NULL DEFAULT 0,	-- distinct peers of those
	peers_exonerating INTEGER NOT NULL DEFAULT 0, -- of which fine
					-- with others (exoneration)
	good_run INTEGER NOT NULL DEFAULT 0,	-- good results in a row,
					-- newest first
	last_started REAL,		-- the newest judged result
	window_from REAL NOT NULL DEFAULT 0,	-- results after this count
	suspect_id INTEGER,		-- the open suspect; NULL: none
	updated REAL NOT NULL,
	UNIQUE (kind, host, device, port, profile, metric)
);
CREATE INDEX element_status ON element(status) WHERE status != 'ok';
CREATE INDEX element_confirm ON element(confirm) WHERE confirm != 0;
CREATE INDEX element_host ON element(host);

-- The newest judgements of an element ([suspect] judged_results kept).
CREATE TABLE element_recent (
	element_id INTEGER NOT NULL REFERENCES element(id) ON DELETE CASCADE,
	started REAL NOT NULL,		-- the result's (probe's clock)
	peer_id INTEGER NOT NULL,	-- the element at the other end, of
					-- the same kind
	via_port INTEGER NOT NULL,	-- the port of this element's device
					-- that took the test
	value REAL NOT NULL,
	baseline REAL NOT NULL,		-- what judged it
	bad INTEGER NOT NULL
);
CREATE INDEX element_recent_el ON element_recent(element_id, started);
CREATE INDEX element_recent_peer ON element_recent(peer_id) WHERE bad = 1;

-- Suspects, open (closed IS NULL) and closed; closed ones older than
-- retention_days are pruned.
CREATE TABLE suspect (
	id INTEGER PRIMARY KEY,
	kind TEXT NOT NULL,		-- 'port' or 'device'
	host TEXT NOT NULL,
	device TEXT NOT NULL,
	port INTEGER NOT NULL,		-- 0 for a device
	profile TEXT NOT NULL,
	metric TEXT NOT NULL,
	since REAL NOT NULL,		-- collector's clock when it opened
	first_bad REAL NOT NULL,	-- started of the window's first bad
					-- result
	opened REAL NOT NULL,		-- started of the result that opened it
	closed REAL,			-- collector's clock; NULL: open
	close_reason TEXT,		-- 'recovered' (good_results in a row),
					-- 'device' (its device is the
					-- suspect), 'explained' (its bad
					-- results are its peers' or a group
					-- pair's), 'stale' (not judged for
					-- a window)
	judged_results INTEGER NOT NULL, -- in the window that opened it
	bad_results INTEGER NOT NULL,	-- the results "for": bad, in the
					-- window that opened it and while open
	good_results INTEGER NOT NULL,	-- the results "against": good, the
					-- same
	peers_bad INTEGER NOT NULL,
	peers_exonerating INTEGER NOT NULL,
	baseline REAL NOT NULL,		-- median of the baselines that judged
					-- its bad results
	figure REAL NOT NULL,		-- median of its bad results
	worst REAL NOT NULL,
	last REAL NOT NULL,		-- the latest result while open
	updated REAL NOT NULL
);
CREATE INDEX suspect_closed ON suspect(closed);
CREATE INDEX suspect_host ON suspect(host);

-- Port suspects come from the evidence now, not from link regressions:
-- the old table becomes a view of the open port suspects with its columns
-- (links_regressed: distinct peers of the bad results, links_judged: the
-- judged results, peers_fine: peers exonerating), so that its readers
-- keep working.
DROP TABLE port_suspect;
CREATE VIEW port_suspect AS
	SELECT host, device, port, profile, metric, since,
	       peers_bad AS links_regressed, judged_results AS links_judged,
	       peers_exonerating AS peers_fine
	FROM suspect WHERE kind = 'port' AND closed IS NULL;

-- Confirmation tests are marked in the plan; the coverage view counts
-- them.
ALTER TABLE plan_entry ADD COLUMN confirm INTEGER NOT NULL DEFAULT 0;
