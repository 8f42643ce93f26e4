#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Two probe daemons against the real collector, across a kill -9.

Both daemons (node01, node02) run on the rxe fixture tree, register with
ibpulse-collector (planner period 10 s, slots of 1 s) and run the plan it
gives them; without a verbs device every test ends with an error result
quickly, which is all the spool needs. The collector is killed with
SIGKILL while results keep coming, left down for a while (results pile up
in the spools), and started again on the same port and database. Checked:
every result either daemon measured arrives exactly once (results in the
database == tests run, ids unique), results carry their plan ids, the
daemons registered with their labels, and the spools end empty.

usage: test_daemon_collector.py PROBE COLLECTOR SCHEMA_DIR FIXTURES_DIR
"""
import json
import os
import signal
import socket
import sqlite3
import subprocess
import sys
import tempfile
import time
import unittest

import daemonlib

PROBE = COLLECTOR = SCHEMA = FIXTURES = None
TOKENS = {"node01": "tok-node01-0123456789abcdef",
          "node02": "tok-node02-0123456789abcdef"}


class DaemonCollector(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        t = self.tmp.name
        self.db = os.path.join(t, "ibpulse.db")
        self.port = daemonlib.free_port()
        self.ccfg = os.path.join(t, "collector.ini")
        with open(self.ccfg, "w") as f:
            f.write("[collector]\nlisten = 127.0.0.1\nport = %d\ndb = %s\n"
                    "schema_dir = %s\n"
                    "[planner]\nperiod = 10\nslot_seconds = 1\n"
                    "duty_cycle = 1\nreplan_interval = 0\n"
                    "[tokens]\n%s\n"
                    % (self.port, self.db, SCHEMA,
                       "\n".join("%s = %s" % kv for kv in TOKENS.items())))
        self.procs, self.logs = {}, {}
        self.start_collector()
        for host in TOKENS:
            self.start_daemon(host)

    def tearDown(self):
        for p in self.procs.values():
            if p.poll() is None:
                p.kill()
                p.wait()
        for f in self.logs.values():
            f.close()
        self.tmp.cleanup()

    def log(self, name):
        f = self.logs[name]
        f.flush()
        f.seek(0)
        return f.read()

    def spawn(self, name, argv):
        if name in self.logs:
            self.logs[name].close()
        self.logs[name] = open(os.path.join(self.tmp.name, name + ".log"),
                               "w+")
        self.procs[name] = subprocess.Popen(argv, stdout=subprocess.DEVNULL,
                                            stderr=self.logs[name])

    def start_collector(self):
        self.spawn("collector", [COLLECTOR, "serve", "--config", self.ccfg])
        self.wait_for(lambda: self.connects(), "the collector listening")

    def connects(self):
        try:
            socket.create_connection(("127.0.0.1", self.port), 1).close()
            return True
        except OSError:
            return False

    def start_daemon(self, host):
        d = os.path.join(self.tmp.name, host)
        os.makedirs(d, exist_ok=True)
        tok = os.path.join(d, "token")
        with open(tok, "w") as f:
            f.write(TOKENS[host] + "\n")
        cfg = os.path.join(d, "probe.ini")
        with open(cfg, "w") as f:
            f.write("[probe]\nhost = %s\nsysfs_root = %s\n"
                    "collector_url = http://127.0.0.1:%d/api/v1/report\n"
                    "token_file = %s\nnetdev_stats = false\ntimeout = 5\n"
                    "connect_timeout = 1\n"
                    "[daemon]\ncounters_interval = 1\npush_interval = 2\n"
                    "plan_interval = 5\nduty_cycle = 1\nresponder_port = 0\n"
                    "responder_listen = 127.0.0.1\n"
                    "responder_address = 127.0.0.1\ntest_timeout = 1\n"
                    "spool_dir = %s/spool\ncontrol_socket = %s/sock\n"
                    "backoff_min = 0.1\nbackoff_max = 1\n"
                    "[labels]\nleaf = leaf-%s\n"
                    % (host, os.path.join(FIXTURES, "sysfs-rxe"), self.port,
                       tok, d, d, host))
        self.spawn(host, [PROBE, "daemon", "--config", cfg])

    def wait_for(self, cond, what, timeout=90):
        deadline = time.monotonic() + timeout
        while not cond():
            for name, p in self.procs.items():
                if p.poll() is not None and not (
                        name == "collector" and getattr(self, "killed", 0)):
                    self.fail("%s exited waiting for %s:\n%s"
                              % (name, what, self.log(name)))
            if time.monotonic() > deadline:
                self.fail("timed out waiting for %s:\n%s"
                          % (what, "\n".join(self.log(n) for n in self.logs)))
            time.sleep(0.1)

    def ctl(self, host, cmd):
        out = subprocess.run(
            [PROBE, cmd, "--socket",
             os.path.join(self.tmp.name, host, "sock")],
            capture_output=True, text=True, timeout=30)
        self.assertEqual(out.returncode, 0, out.stderr)
        return json.loads(out.stdout)

    def query(self, sql):
        db = sqlite3.connect("file:%s?mode=ro" % self.db, uri=True)
        try:
            return db.execute(sql).fetchall()
        finally:
            db.close()

    def stored(self):
        try:
            return self.query("SELECT count(*) FROM result")[0][0]
        except sqlite3.Error:
            return 0

    def run_total(self):
        return sum(self.ctl(h, "status")["tests_run"] for h in TOKENS)

    def spooled(self):
        return sum(self.ctl(h, "status")["spooled"] for h in TOKENS)

    def test_exactly_once_across_kill(self):
        self.wait_for(lambda: self.stored() >= 1, "a first stored result")
        self.killed = 1
        self.procs["collector"].send_signal(signal.SIGKILL)
        self.procs["collector"].wait()
        # Results measured while the collector is down wait in the spools.
        self.wait_for(lambda: self.spooled() >= 2,
                      "results spooled during the outage")
        before = self.stored()
        self.killed = 0
        self.start_collector()
        self.wait_for(lambda: self.stored() > before,
                      "the spooled results after the restart")
        for h in TOKENS:
            self.ctl(h, "pause")
        # Paused: no new tests; what is spooled drains.
        self.wait_for(lambda: self.spooled() == 0 and
                      not any(self.ctl(h, "status")["running"]
                              for h in TOKENS), "empty spools")
        total = self.run_total()
        rows = self.query("SELECT count(*), count(DISTINCT result_id), "
                          "count(plan_id) FROM result")[0]
        self.assertEqual(rows[0], total, "tests run vs results stored")
        self.assertEqual(rows[1], total)
        self.assertEqual(rows[2], total, "every result has its plan id")
        # The plan makes one of each pair the initiator.
        hosts = {h for (h,) in self.query("SELECT DISTINCT host FROM result")}
        self.assertTrue(hosts and hosts <= set(TOKENS), hosts)
        labels = self.query("SELECT p.host, l.value FROM probe_label l "
                            "JOIN probe p ON p.id = l.probe_id "
                            "WHERE l.key = 'leaf' ORDER BY p.host")
        self.assertEqual(labels, [("node01", "leaf-node01"),
                                  ("node02", "leaf-node02")])
        for h in TOKENS:
            self.procs[h].send_signal(signal.SIGTERM)
            self.assertEqual(self.procs[h].wait(60), 0, self.log(h))
            spool = os.path.join(self.tmp.name, h, "spool")
            self.assertEqual([f for f in os.listdir(spool)
                              if f.endswith(".json")], [])


if __name__ == "__main__":
    PROBE, COLLECTOR, SCHEMA, FIXTURES = sys.argv[1:5]
    unittest.main(argv=sys.argv[:1], verbosity=2)
