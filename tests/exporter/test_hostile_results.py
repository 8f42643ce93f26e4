#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""What one host's token can do to /metrics through POST /api/v1/results,
with the real collector and the real exporter on loopback ports.

Checked (issue 12, item 1):
  - a result whose "started" lies outside the collector's window
    (results_max_ahead, results_max_age) is refused with a 400 naming it,
    and nothing of the batch is stored;
  - per host and planner period, at most results_max_peers distinct peer
    ports and results_max_profiles distinct profiles: the batch that would
    pass a cap is refused with a 400 naming the setting, nothing stored;
    the caps hold across a collector restart (loaded from the table);
  - a result with an invented peer is stored (it is the probe's
    measurement) but names no pair (pair_seen) and makes no series: the
    exporter only serves registered probe ports;
  - a database that already holds what an attacker posted before these
    limits (20,000 results with invented peers and one dated 9e10) is
    served in a small body (the old exporter answered 500, past
    max_body_bytes) without those series;
  - a family past max_family_series is cut, not the scrape: the rest is
    counted in ibpulse_exporter_series_dropped_total{family}, cumulative,
    and promtool accepts the body.

usage: test_hostile_results.py COLLECTOR EXPORTER SCHEMA_DIR PROMTOOL
"""
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
import unittest
import urllib.request
import uuid

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "collector"))
import harness as H  # noqa: E402
import test_collector as tc  # noqa: E402

COLLECTOR = EXPORTER = SCHEMA = PROMTOOL = None
CAPS = "results_max_peers = 40\nresults_max_profiles = 3\n"


def registration(host, n):
    return {"version": 1, "host": host,
            "responder": {"address": "10.0.0.%d" % n, "port": 18515},
            "labels": {"leaf": "leaf%d" % n}, "profiles": ["bw", "lat"],
            "ports": [{"device": "mlx5_0", "port": 1, "state": 4,
                       "link_layer": "InfiniBand", "lid": n,
                       "subnet_prefix": "fe80:0000:0000:0000",
                       "pkeys": [65535], "gids": []}]}


def result(peer, profile="bw", started=None):
    return {"id": str(uuid.uuid4()), "plan_id": None, "profile": profile,
            "test": "write_bw", "started": started or time.time() - 5,
            "duration_seconds": 1.0,
            "local": {"device": "mlx5_0", "port": 1},
            "peer": {"host": peer, "device": "mlx5_0", "port": 1},
            "outcome": "ok", "bw_avg_bytes_per_second": 4.7e10,
            "lat_p99_seconds": 3e-6}


def batch(host, results):
    return {"version": 1, "host": host, "results": results}


class Hostile(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="ibpulse-hostile-")
        self.c = tc.Collector(self.tmp, CAPS)
        self.c.start()
        self.exporter = None
        for i, h in enumerate(("node1", "node2"), 1):
            st, ans = self.post("/api/v1/register", registration(h, i), h)
            self.assertEqual(st, 200, ans)

    def tearDown(self):
        self.stop_exporter()
        rc = self.c.stop()
        log = self.c.log_text()
        shutil.rmtree(self.tmp, ignore_errors=True)
        self.assertEqual(rc, 0, log[-2000:])
        self.assertNotIn("runtime error", log)

    def post(self, path, body, host):
        st, _, data = self.c.request("POST", path, body, tc.token(host))
        return st, json.loads(data) if data else None

    def results(self, host="node1"):
        return self.c.count("SELECT count(*) FROM result WHERE host = ?",
                            host)

    # ---- the exporter ----

    def start_exporter(self, extra=""):
        self.stop_exporter()
        cfg = os.path.join(self.tmp, "exporter.ini")
        pf = os.path.join(self.tmp, "eport")
        if os.path.exists(pf):
            os.unlink(pf)
        with open(cfg, "w") as f:
            f.write("[exporter]\nlisten = 127.0.0.1\nport = 0\n"
                    "port_file = %s\ndb = %s\n%s" % (pf, self.c.db, extra))
        self.elog = open(os.path.join(self.tmp, "exporter.log"), "a")
        self.exporter = subprocess.Popen([EXPORTER, "--config", cfg],
                                         stdout=self.elog, stderr=self.elog)
        H.wait_for("the exporter's port file", lambda: (
            self.exporter.poll() is None or self.fail(self.exporter_log()))
            and os.path.exists(pf) and os.path.getsize(pf) > 0)
        with open(pf) as f:
            self.base = "http://127.0.0.1:%d" % int(f.read())

    def stop_exporter(self):
        if self.exporter and self.exporter.poll() is None:
            self.exporter.terminate()
            self.assertEqual(self.exporter.wait(60), 0, self.exporter_log())
        if self.exporter:
            self.elog.close()
        self.exporter = None

    def exporter_log(self):
        self.elog.flush()
        with open(self.elog.name) as f:
            return f.read()

    def scrape(self):
        try:
            with urllib.request.urlopen(self.base + "/metrics",
                                        timeout=60) as r:
                return r.status, r.read().decode()
        except urllib.error.HTTPError as e:
            return e.code, e.read().decode()

    # ---- the collector's limits ----

    def test_started_window(self):
        for started, word in ((9e10, "ahead"), (time.time() + 3600, "ahead"),
                              (time.time() - 8 * 86400, "behind")):
            rs = [result("node2"), result("node2", started=started)]
            st, ans = self.post("/api/v1/results", batch("node1", rs),
                                "node1")
            self.assertEqual(st, 400, ans)
            self.assertTrue(ans["error"].startswith("results[1].started: "),
                            ans)
            self.assertIn(word, ans["error"])
            self.assertIn("results_max_" + ("ahead" if word == "ahead"
                                            else "age"), ans["error"])
        self.assertEqual(self.results(), 0)
        # within the window, a little ahead and days behind: stored
        rs = [result("node2", started=time.time() + 100),
              result("node2", started=time.time() - 6 * 86400)]
        st, ans = self.post("/api/v1/results", batch("node1", rs), "node1")
        self.assertEqual((st, ans["stored"]), (200, 2), ans)

    def test_peer_and_profile_caps(self):
        ghosts = ["ghost%03d" % i for i in range(100)]
        st, ans = self.post("/api/v1/results", batch(
            "node1", [result(g) for g in ghosts[:30]]), "node1")
        self.assertEqual((st, ans["stored"]), (200, 30), ans)
        # 30 + 20 distinct peers > 40: the whole batch is refused
        st, ans = self.post("/api/v1/results", batch(
            "node1", [result(g) for g in ghosts[30:50]]), "node1")
        self.assertEqual(st, 400, ans)
        self.assertIn("results_max_peers", ans["error"])
        self.assertTrue(ans["error"].startswith("results[10].peer: "), ans)
        self.assertEqual(self.results(), 30)
        # peers already named are not new; another host has its own caps
        st, ans = self.post("/api/v1/results", batch(
            "node1", [result(g) for g in ghosts[:30]] + [result("node2")]),
            "node1")
        self.assertEqual((st, ans["stored"]), (200, 31), ans)
        st, ans = self.post("/api/v1/results", batch(
            "node2", [result(g) for g in ghosts[:40]]), "node2")
        self.assertEqual((st, ans["stored"]), (200, 40), ans)
        # profiles: bw, p1, p2 fit; a fourth does not
        st, ans = self.post("/api/v1/results", batch(
            "node1", [result("node2", p) for p in ("p1", "p2", "bw")]),
            "node1")
        self.assertEqual(st, 200, ans)
        st, ans = self.post("/api/v1/results", batch(
            "node1", [result("node2", "p1"), result("node2", "p3")]),
            "node1")
        self.assertEqual(st, 400, ans)
        self.assertTrue(ans["error"].startswith("results[1].profile: "), ans)
        self.assertIn("results_max_profiles", ans["error"])
        # the caps survive a restart: loaded from what was stored
        self.c.stop()
        self.c.start()
        st, ans = self.post("/api/v1/results", batch(
            "node1", [result(g) for g in ghosts[60:70]]), "node1")
        self.assertEqual(st, 400, ans)
        self.assertIn("results_max_peers", ans["error"])
        st, ans = self.post("/api/v1/results", batch(
            "node1", [result(g) for g in ghosts[30:39]]), "node1")
        self.assertEqual((st, ans["stored"]), (200, 9), ans)
        # invented peers name no pair; the registered one does
        pairs = self.c.count("SELECT count(*) FROM pair_seen")
        self.assertEqual(pairs, 1)
        # and make no series
        self.start_exporter()
        st, body = self.scrape()
        self.assertEqual(st, 200, body[-500:])
        self.assertNotIn("ghost", body)
        samples = H.parse_samples(body)
        self.assertTrue(H.find(samples, "ibpulse_test_pair_success",
                               host="node1", peer_host="node2"))
        port = H.find(samples, "ibpulse_test_port_results", host="node1",
                      profile="bw", outcome="ok")
        # node1's port: its own 30 + 31 + 9 + 4 results
        self.assertEqual(port, [30 + 31 + 9 + 1], port)

    # ---- what a database already holds ----

    def flood_db(self, n):
        """@n results with invented peers and profiles written straight
        into the table, as the collector accepted them before the limits,
        and one dated 9e10 between registered ports."""
        db = sqlite3.connect(self.c.db, timeout=30)
        now = time.time()
        rows = [("flood-%d" % i, "node1", "p%d" % (i % 50), "write_bw",
                 now - 10, "mlx5_0", 1, "ghost%d" % i, "mlx5_%d" % (i % 7),
                 1 + i % 3, "ok", 0, 4.7e10, 3e-6, now) for i in range(n)]
        rows.append(("future", "node1", "bw", "write_bw", 9e10, "mlx5_0", 1,
                     "node2", "mlx5_0", 1, "ok", 0, 1.0, 1.0, now))
        db.executemany(
            "INSERT INTO result (result_id, host, profile, test, started, "
            "local_device, local_port, peer_host, peer_device, peer_port, "
            "outcome, busy, bw_avg_bytes_per_second, lat_p99_seconds, "
            "received) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            rows)
        db.commit()
        db.close()

    def test_flooded_database_still_served(self):
        self.flood_db(20000)
        self.start_exporter("max_body_bytes = 1048576\n")
        st, body = self.scrape()
        self.assertEqual(st, 200, body[-500:])
        self.assertLess(len(body), 200000)
        self.assertNotIn("ghost", body)
        self.assertNotIn("9e+10", body)
        self.assertNotIn("90000000000", body)
        self.assertEqual(H.promtool_check(PROMTOOL, body), (True, ""))

    def test_family_cap_counts_what_it_drops(self):
        self.flood_db(200)  # profiles p0..p49 on node1's registered port
        self.start_exporter("max_family_series = 7\n")
        st, body = self.scrape()
        self.assertEqual(st, 200, body[-500:])
        samples = H.parse_samples(body)
        fams = {}
        for name, _ in samples:
            fams[name] = fams.get(name, 0) + 1
        for name, n in fams.items():
            if not name.startswith("ibpulse_exporter_"):
                self.assertLessEqual(n, 7, name)
        dropped = {dict(l)["family"]: v for (name, l), v in samples.items()
                   if name == "ibpulse_exporter_series_dropped_total"}
        # 50 profiles x (node1's port, node2's is not in these rows)
        self.assertEqual(dropped.get("ibpulse_test_port_results"), 50 - 7,
                         dropped)
        self.assertIn("ibpulse_test_port_bandwidth_bytes_per_second",
                      dropped)
        self.assertEqual(H.promtool_check(PROMTOOL, body), (True, ""))
        # cumulative: the next render adds its own (a scrape within 1 s
        # of a render of the same database shares its body: single flight)
        time.sleep(1.2)
        st, body = self.scrape()
        again = {dict(l)["family"]: v for (name, l), v in
                 H.parse_samples(body).items()
                 if name == "ibpulse_exporter_series_dropped_total"}
        self.assertEqual(again["ibpulse_test_port_results"], 2 * (50 - 7))
        self.assertIn("max_family_series", self.exporter_log())


def main():
    global COLLECTOR, EXPORTER, SCHEMA, PROMTOOL
    COLLECTOR, EXPORTER, SCHEMA, PROMTOOL = sys.argv[1:5]
    tc.COLLECTOR, tc.SCHEMA = COLLECTOR, SCHEMA
    res = unittest.main(argv=sys.argv[:1], exit=False, verbosity=2).result
    return 0 if res.wasSuccessful() else 1


if __name__ == "__main__":
    sys.exit(main())
