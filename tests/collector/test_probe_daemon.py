#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The real probe daemon against the real collector, on loopback: the
daemon (fixture sysfs tree, one ACTIVE rxe port, a static peer whose
responder is not there) registers, fetches its plan, runs its test, and
pushes the failed result; the collector stores the registration, the
result once, and the spool's drop counts, and the daemon's spool ends
empty. This is the wire contract of docs/api.md exercised by both ends.

usage: test_probe_daemon.py COLLECTOR PROBE SCHEMA_DIR FIXTURES_DIR
"""
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import test_collector as tc  # noqa: E402

PROBE = FIXTURES = None


class ProbeDaemonTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="ibpulse-pd-")
        self.c = tc.Collector(self.tmp, "[planner]\nperiod = 60\n"
                              "slot_seconds = 5\nduty_cycle = 0.5\n"
                              "replan_interval = 0\n").start()
        self.proc = None

    def tearDown(self):
        if self.proc and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        self.c.stop(signal.SIGKILL)
        shutil.rmtree(self.tmp, ignore_errors=True)

    def wait_for(self, what, fn, timeout=90):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if fn():
                return
            if self.proc.poll() is not None:
                break
            time.sleep(0.1)
        with open(self.log) as f:
            self.fail("%s: not seen; daemon log:\n%s" % (what, f.read()))

    def test_daemon_registers_and_results_arrive_once(self):
        tok = os.path.join(self.tmp, "token")
        with open(tok, "w") as f:
            f.write(tc.token("node1") + "\n")
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        dead = s.getsockname()[1]
        s.close()
        spool = os.path.join(self.tmp, "spool")
        cfg = os.path.join(self.tmp, "probe.ini")
        with open(cfg, "w") as f:
            f.write("[probe]\nhost = node1\nsysfs_root = %s\n"
                    "collector_url = http://127.0.0.1:%d/api/v1/report\n"
                    "token_file = %s\nnetdev_stats = false\ntimeout = 5\n"
                    "[daemon]\ncounters_interval = 1\npush_interval = 1\n"
                    "plan_interval = 5\ntest_interval = 1\njitter = 0\n"
                    "duty_cycle = 1\nresponder_port = 0\n"
                    "responder_listen = 127.0.0.1\ntest_timeout = 1\n"
                    "spool_dir = %s\ncontrol_socket = %s\n"
                    "results_batch = 5\n"
                    "[labels]\nleaf = l1\n"
                    "[peers]\nnode2 = 127.0.0.1:%d\n"
                    "[profile lat]\ntest = write_lat\nsize = 2\niters = 100\n"
                    % (os.path.join(FIXTURES, "sysfs-rxe"), self.c.port, tok,
                       spool, os.path.join(self.tmp, "ctl.sock"), dead))
        self.log = os.path.join(self.tmp, "probe.log")
        with open(self.log, "w") as log:
            self.proc = subprocess.Popen([PROBE, "daemon", "--config", cfg],
                                         stdout=subprocess.DEVNULL,
                                         stderr=log)
        self.wait_for("registration", lambda: self.c.count(
            "SELECT count(*) FROM probe WHERE host = 'node1' AND "
            "labels = '{\"leaf\":\"l1\"}' AND profiles = '[\"lat\"]'") == 1)
        self.wait_for("a result", lambda: self.c.count(
            "SELECT count(*) FROM result WHERE host = 'node1' AND "
            "peer_host = 'node2' AND outcome != 'ok'") >= 1)
        self.wait_for("an empty spool", lambda: not [
            n for n in os.listdir(spool)
            if n.endswith(".json")] if os.path.isdir(spool) else True)
        self.assertEqual(self.c.count(
            "SELECT count(*) FROM probe_port WHERE state = 4"), 1)
        self.assertEqual(self.c.count(
            "SELECT count(*) FROM probe_dropped WHERE host = 'node1'"), 1)
        # Nothing the collector refused (the probe moves those aside).
        rejected = os.path.join(spool, "rejected")
        self.assertEqual(os.listdir(rejected) if os.path.isdir(rejected)
                         else [], [])
        self.proc.send_signal(signal.SIGTERM)
        self.assertEqual(self.proc.wait(60), 0)


if __name__ == "__main__":
    tc.COLLECTOR, PROBE, tc.SCHEMA, FIXTURES = sys.argv[1:5]
    unittest.main(argv=sys.argv[:1], verbosity=2)
