-- SPDX-License-Identifier: MIT
-- ibpulse schema, version 9: where in the fabric (issue 19; docs/collector.md,
-- "WHERE IN THE FABRIC"). Every judged test between two registered ports
-- whose LIDs the routes know is attributed to the directed links and the
-- switches its data crossed (collector/store/store_localize.c); over a window of
-- such tests the collector names the fewest links and switches that explain
-- the bad ones (collector/localize.c) and plans so that every directed link
-- between switches carries a test each period. Written by the collector
-- only; the exporter reads fabric_suspect and fabric_link_cover (a
-- contract, like 005_evidence.sql). Times: seconds since the epoch; started
-- on the probes' clock, the rest on the collector's.

-- The judged tests of the window, with what they crossed (kept for
-- [localize] window_periods planner periods, then deleted). a_* is the
-- initiator, b_* the responder. links: the directed links between switches
-- that carried its data, 18 bytes each: the egress node GUID (8 bytes,
-- little-endian) and port (1 byte), then the ingress node GUID and port;
-- switches: the GUIDs (8 bytes each) of the switches its data crossed. A
-- round trip (latency tests, atomics) or a bidirectional test lists both
-- paths. dlid: the destination LID the initiator sent to (LMC > 0: it
-- chose the path), NULL for the responder's base LID.
CREATE TABLE localize_test (
	id INTEGER PRIMARY KEY,
	started REAL NOT NULL,
	profile TEXT NOT NULL,
	metric TEXT NOT NULL,		-- 'bandwidth' or 'latency'
	bad INTEGER NOT NULL,		-- 1: judged bad
	value REAL NOT NULL,		-- the figure judged
	baseline REAL NOT NULL,		-- what judged it
	a_host TEXT NOT NULL,
	a_device TEXT NOT NULL,
	a_port INTEGER NOT NULL,
	b_host TEXT NOT NULL,
	b_device TEXT NOT NULL,
	b_port INTEGER NOT NULL,
	dlid INTEGER,
	links BLOB NOT NULL,
	switches BLOB NOT NULL
);
CREATE INDEX localize_test_started ON localize_test(started);

-- Links and switches named as suspects, open (closed IS NULL) and closed;
-- closed ones older than retention_days are pruned. kind 'fabric_link': a
-- directed link, a_* the end the traffic leaves, b_* the end it enters;
-- kind 'switch': the whole switch in a_* (port and b_* NULL).
CREATE TABLE fabric_suspect (
	id INTEGER PRIMARY KEY,
	kind TEXT NOT NULL,
	profile TEXT NOT NULL,
	metric TEXT NOT NULL,
	a_node_guid TEXT NOT NULL,	-- "0x0002c90300a1b2c3"
	a_node_desc TEXT NOT NULL,	-- NodeDescription ("" unknown)
	a_port INTEGER,
	b_node_guid TEXT,
	b_node_desc TEXT,
	b_port INTEGER,
	since REAL NOT NULL,		-- collector's clock when it opened
	first_bad REAL NOT NULL,	-- started of its oldest bad test
	opened REAL NOT NULL,		-- started of the newest bad test then
	closed REAL,			-- collector's clock; NULL: open
	close_reason TEXT,		-- 'recovered' (good_tests good tests
					-- through it in a row), 'explained'
					-- (another suspect explains its bad
					-- tests), 'stale' (no test crossed it
					-- for a window)
	bad_tests INTEGER NOT NULL,	-- its bad tests in the window (last run)
	good_tests INTEGER NOT NULL,	-- ... and good ones
	confidence REAL NOT NULL,	-- (0, 1], localize.h
	gain REAL NOT NULL,		-- the evidence for it (a log-likelihood)
	counters TEXT,			-- what its ends' counters said over the
					-- window ("spine01/3: symbol_error +42");
					-- NULL: nothing
	baseline REAL NOT NULL,		-- median of the baselines of its bad tests
	figure REAL NOT NULL,		-- median of its bad tests
	worst REAL NOT NULL,
	last REAL NOT NULL,		-- the latest test through it
	window_from REAL,		-- closed 'recovered': its tests until
					-- this started no longer count
	updated REAL NOT NULL
);
CREATE INDEX fabric_suspect_closed ON fabric_suspect(closed);

-- Link coverage of each planned period: how many directed links between
-- switches the plan crosses ('covered'), and how many it leaves uncovered
-- and why: 'duty_cycle' (ports that could cross it had no room left),
-- 'no_route' (no probe port's path crosses it, or the routes are unknown),
-- 'no_probe' (no registered probe behind one of its ends). Replaced with
-- each plan; the last two periods are kept.
CREATE TABLE fabric_link_cover (
	period INTEGER NOT NULL,
	state TEXT NOT NULL,
	links INTEGER NOT NULL,
	PRIMARY KEY (period, state)
) WITHOUT ROWID;

-- The links a plan left uncovered, for the coverage view (at most 1,000
-- per period, the same two periods).
CREATE TABLE fabric_link_uncovered (
	period INTEGER NOT NULL,
	a_node_guid TEXT NOT NULL,
	a_port INTEGER NOT NULL,
	b_node_guid TEXT NOT NULL,
	b_port INTEGER NOT NULL,
	reason TEXT NOT NULL,
	PRIMARY KEY (period, a_node_guid, a_port)
) WITHOUT ROWID;

-- The bad results of the evidence's elements (schema/005_evidence.sql)
-- that a link or switch suspect explained: their path crossed it while
-- it was named. They count neither for nor against the element, also
-- after the link recovered or the test left the window (the cause was
-- found); deleted with their element, or after window_days.
CREATE TABLE localize_explained (
	element_id INTEGER NOT NULL REFERENCES element(id) ON DELETE CASCADE,
	started REAL NOT NULL,		-- the result's
	PRIMARY KEY (element_id, started)
) WITHOUT ROWID;
CREATE INDEX localize_explained_started ON localize_explained(started);

-- Plan entries name the destination LID a test sends to (NULL: the
-- responder's base LID).
ALTER TABLE plan_entry ADD COLUMN dlid INTEGER;
