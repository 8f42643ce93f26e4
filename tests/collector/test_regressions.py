#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Integration tests for baselines, regressions and suspects: the real
collector on a loopback port, results posted as probes post them.

- a link's regression opens at the K-th bad result of M (not before),
  keeps its frozen baseline while open, survives a restart, closes after
  good_results good ones in a row, and is listed by GET /api/v1/regressions
  (open, then closed);
- latency regresses only when above the margin and the absolute floor;
- failed and busy results neither judge nor feed a baseline;
- a link under its expected figure (from both ends' rate and PCIe in the
  counter reports) is reported from its first results, without history;
  a device without PCIe (Soft-RoCE) gets no expected figure;
- a port shared by several regressing links, whose peers are fine with
  others, is the suspect, not the peers; all links between two groups
  regressing make the group pair the suspect, not a port;
- retiring a host removes its rows and its suspects.

usage: test_regressions.py COLLECTOR_BINARY SCHEMA_DIR ETC_COLLECTOR_INI
"""
import json
import os
import shutil
import sys
import tempfile
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import test_collector as tc  # noqa: E402
import test_tests_api as ta  # noqa: E402

CONFIG = ta.PLANNER + (
    "[baseline]\nresults = 20\nmin_results = 5\nbad_results = 3\n"
    "judged_results = 5\ngood_results = 5\nmargin = 0.2\n"
    "latency_margin = 0.5\nlatency_floor_seconds = 1e-6\n"
    "spread_factor = 3\nefficiency_floor = 0.8\n")
GOOD, BAD = 4.7e10, 3.0e10
PORT = "mlx5_0"


def counter_report(host, rate=12500000000, pcie=(16.0, 16)):
    """A counters report with one ACTIVE port of @rate and a PCIe link."""
    r = tc.make_report(host, 1, ports=1, counters=4)
    r["devices"][0]["ports"][0]["rate_bytes_per_second"] = rate
    if pcie:
        r["devices"][0]["pcie"] = {
            "address": "0000:3b:00.0", "current_speed_gts": pcie[0],
            "max_speed_gts": pcie[0], "current_width": pcie[1],
            "max_width": pcie[1]}
    return r


class RegressionBase(unittest.TestCase):
    """The collector and the helpers; the tests are in subclasses."""
    CONFIG = CONFIG
    STEP = 60  # seconds between two results
    AGO = 6 * 3600  # results go forward from this long ago

    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="ibpulse-regr-")
        self.c = tc.Collector(self.tmp, self.CONFIG)
        self.c.start()
        self.t = time.time() - self.AGO

    def tearDown(self):
        rc = self.c.stop()
        log = self.c.log_text()
        shutil.rmtree(self.tmp, ignore_errors=True)
        self.assertEqual(rc, 0, log[-2000:])
        self.assertNotIn("runtime error", log)

    def call(self, method, path, body=None, tok=None):
        st, _, data = self.c.request(method, path, body, tok)
        return st, json.loads(data) if data else None

    def register(self, leaves):
        for host, leaf in leaves.items():
            st, ans = self.call("POST", "/api/v1/register",
                                ta.registration(host, leaf), tc.token(host))
            self.assertEqual(st, 200, ans)

    def post(self, host, peer, value=GOOD, profile="bw", **extra):
        """One result of host -> peer, STEP s after the previous one."""
        self.t += self.STEP
        if profile == "lat":
            figs = {"lat_median_seconds": value,
                    "bw_avg_bytes_per_second": None,
                    "bw_peak_bytes_per_second": None,
                    "msg_rate_per_second": None, "test": "write_lat",
                    "params": {"size": 2, "qps": 1}}
        else:
            figs = {"bw_avg_bytes_per_second": value, "test": "write_bw"}
        figs.update(extra)
        r = ta.result(peer, started=self.t, profile=profile, **figs)
        for k in [k for k, v in r.items() if v is None]:
            del r[k]
        st, ans = self.call("POST", "/api/v1/results", ta.batch(host, [r]),
                            tc.token(host))
        self.assertEqual((st, ans["stored"]), (200, 1), ans)

    def regressions(self):
        st, ans = self.call("GET", "/api/v1/regressions", None, tc.ADMIN)
        self.assertEqual(st, 200, ans)
        return ans

    def warm(self, pairs, n=6, value=GOOD, profile="bw"):
        for _ in range(n):
            for a, b in pairs:
                self.post(a, b, value, profile)

    def link(self, a, b, col, metric="bandwidth"):
        return self.c.count(
            "SELECT %s FROM link_state WHERE a_host = ? AND b_host = ? "
            "AND metric = ?" % col, a, b, metric)


class RegressionTest(RegressionBase):

    def test_regression_opens_k_of_m_survives_restart_and_closes(self):
        self.register({"node1": "leaf0", "node2": "leaf0"})
        st, _ = self.call("GET", "/api/v1/regressions", None,
                          tc.token("node1"))
        self.assertEqual(st, 401)
        for i in range(6):
            self.post("node1", "node2", GOOD * (1 + 0.01 * (i % 3 - 1)))
        self.assertAlmostEqual(self.link("node1", "node2", "baseline"),
                               GOOD, delta=GOOD * 0.011)
        self.assertEqual(self.link("node1", "node2", "baseline_source"),
                         "link")
        # bad, bad, good, bad: the third bad of the last five opens it
        self.post("node1", "node2", BAD)
        first_bad = self.t
        self.post("node1", "node2", BAD * 1.02)
        self.post("node1", "node2", GOOD)
        self.assertEqual(self.regressions()["open"], [])
        baseline = self.link("node1", "node2", "baseline")
        samples = self.c.count("SELECT count(*) FROM baseline_sample")
        self.post("node1", "node2", BAD * 0.98)
        ans = self.regressions()
        self.assertEqual(len(ans["open"]), 1, ans)
        reg = ans["open"][0]
        self.assertEqual((reg["host"], reg["device"], reg["port"],
                          reg["peer_host"], reg["peer_device"],
                          reg["peer_port"], reg["profile"], reg["metric"]),
                         ("node1", PORT, 1, "node2", PORT, 1, "bw",
                          "bandwidth"))
        self.assertAlmostEqual(reg["started"], first_bad, places=3)
        self.assertAlmostEqual(reg["opened"], self.t, places=3)
        self.assertAlmostEqual(reg["baseline"], baseline, delta=1)
        self.assertAlmostEqual(reg["figure"], BAD, delta=BAD * 0.001)
        self.assertAlmostEqual(reg["worst"], BAD * 0.98, delta=1)
        self.assertEqual(reg["baseline_source"], "link")
        self.assertEqual(reg["bad_results"], 3)
        self.assertIsNone(reg["closed"])
        self.assertEqual(self.c.count(
            "SELECT opened FROM regression_count WHERE profile = 'bw'"), 1)
        # frozen while open: good results neither move the baseline nor
        # feed it; the restart keeps everything
        for _ in range(2):
            self.post("node1", "node2", GOOD * 1.3)
        self.c.stop()
        self.c.start()
        self.assertEqual(len(self.regressions()["open"]), 1)
        for _ in range(2):
            self.post("node1", "node2", GOOD * 1.3)
        self.assertEqual(self.link("node1", "node2", "baseline"), baseline)
        self.assertEqual(self.link("node1", "node2", "baseline_source"),
                         "frozen")
        self.assertEqual(self.c.count("SELECT count(*) FROM baseline_sample"),
                         samples)
        self.assertEqual(len(self.regressions()["open"]), 1)
        # the fifth good one in a row closes it
        self.post("node1", "node2", GOOD)
        ans = self.regressions()
        self.assertEqual(ans["open"], [])
        self.assertEqual(len(ans["closed"]), 1)
        self.assertEqual(ans["closed"][0]["reason"], "recovered")
        self.assertAlmostEqual(ans["closed"][0]["closed"], self.t, places=3)
        # judged: the window that opened it (5), then 5 while open
        self.assertEqual(ans["closed"][0]["results"], 5 + 5)
        self.assertEqual(self.link("node1", "node2", "baseline_source"),
                         "link")
        # one bad result after the close is noise again
        self.post("node1", "node2", BAD)
        self.assertEqual(self.regressions()["open"], [])

    def test_latency_margin_and_floor(self):
        self.register({"node1": "leaf0", "node2": "leaf0", "node3": "leaf0"})
        self.warm([("node1", "node2")], value=2e-6, profile="lat")
        self.warm([("node1", "node3")], value=2e-7, profile="lat")
        for _ in range(3):
            self.post("node1", "node2", 2.8e-6, profile="lat")  # +40%
            self.post("node1", "node3", 6e-7, profile="lat")  # 3x, +0.4 us
        self.assertEqual(self.regressions()["open"], [])
        for _ in range(3):
            self.post("node1", "node2", 3.5e-6, profile="lat")  # +75%
        reg = self.regressions()["open"]
        self.assertEqual([(r["peer_host"], r["metric"]) for r in reg],
                         [("node2", "latency")])
        self.assertAlmostEqual(reg[0]["baseline"], 2e-6, delta=1e-12)
        self.assertAlmostEqual(self.link("node1", "node2", "threshold",
                                         "latency"), 3e-6, delta=1e-12)

    def test_failed_and_busy_results_do_not_count(self):
        self.register({"node1": "leaf0", "node2": "leaf0"})
        self.warm([("node1", "node2")])
        for _ in range(4):
            self.post("node1", "node2", BAD, busy=True,
                      busy_reason="initiator: port_xmit_data")
            self.post("node1", "node2", BAD, outcome="timeout")
        self.assertEqual(self.regressions()["open"], [])
        self.assertEqual(self.c.count("SELECT count(*) FROM baseline_sample"),
                         6)
        self.assertEqual(self.link("node1", "node2", "judged"), 1)

    def test_under_expected_from_day_one(self):
        self.register({"node1": "leaf0", "node2": "leaf0", "node3": "leaf0"})
        for host, pcie in (("node1", (16.0, 16)), ("node2", (16.0, 16)),
                           ("node3", None)):
            st, _, body = self.c.request("POST", "/api/v1/report",
                                         counter_report(host, pcie=pcie),
                                         tc.token(host))
            self.assertEqual(st, 200, body)
        # 100 Gb/s 4X EDR, 64 KiB writes at MTU 4096: 12.5e9 x 65536 /
        # (65536 + 16 x 26 + 16); Gen4 x16 allows 28.8e9
        expected = 12.5e9 * 65536 / (65536 + 16 * 26 + 16)
        for _ in range(2):
            self.post("node1", "node2", 8e9)
            self.post("node1", "node3", 8e9)
        self.assertEqual(self.regressions()["under_expected"], [])
        self.post("node1", "node2", 8e9)
        self.post("node1", "node3", 8e9)
        under = self.regressions()["under_expected"]
        self.assertEqual(len(under), 1, under)
        self.assertEqual(under[0]["peer_host"], "node2")
        self.assertAlmostEqual(under[0]["expected"], expected, delta=1)
        self.assertEqual(under[0]["expected_limit"], "initiator link")
        self.assertAlmostEqual(under[0]["efficiency"], 8e9 / expected,
                               places=9)
        # the rxe-like peer (no PCIe) has no expected figure at all
        self.assertIsNone(self.link("node1", "node3", "expected"))
        # no baseline yet, so no regression: the floor judged on its own
        self.assertEqual(self.regressions()["open"], [])
        for _ in range(5):
            self.post("node1", "node2", 1.2e10)
        self.assertEqual(self.regressions()["under_expected"], [])

    def test_suspect_port_and_retire(self):
        hosts = ("node1", "node2", "node3", "node4")
        self.register({h: "leaf0" for h in hosts})
        pairs = [(a, b) for i, a in enumerate(hosts) for b in hosts[i + 1:]]
        self.warm(pairs)
        # node1's port degrades: its three links regress, the others
        # stay fine with each other
        for _ in range(3):
            for a, b in pairs:
                self.post(a, b, BAD if a == "node1" else GOOD)
        ans = self.regressions()
        self.assertEqual(sorted(r["peer_host"] for r in ans["open"]),
                         ["node2", "node3", "node4"])
        self.assertEqual([(s["host"], s["device"], s["port"], s["metric"],
                           s["links_regressed"], s["links_judged"],
                           s["peers_fine"]) for s in ans["suspect_ports"]],
                         [("node1", PORT, 1, "bandwidth", 3, 6, 3)])
        self.assertEqual(ans["suspect_group_pairs"], [])
        since = ans["suspect_ports"][0]["since"]
        self.post("node2", "node3")
        self.assertEqual(self.regressions()["suspect_ports"][0]["since"],
                         since)
        st, _ = self.call("POST", "/api/v1/hosts/node1/retire", b"",
                          tc.ADMIN)
        self.assertEqual(st, 200)
        ans = self.regressions()
        self.assertEqual((ans["open"], ans["closed"], ans["suspect_ports"],
                          ans["suspects"], ans["suspects_closed"]),
                         ([], [], [], [], []))
        for table in ("link_state", "regression"):
            self.assertEqual(self.c.count(
                "SELECT count(*) FROM %s WHERE a_host = 'node1' OR "
                "b_host = 'node1'" % table), 0, table)
        self.assertEqual(self.c.count(
            "SELECT count(*) FROM port_baseline WHERE host = 'node1'"), 0)
        self.assertGreater(self.c.count("SELECT count(*) FROM link_state"), 0)

    def test_one_peer_is_not_enough(self):
        # node1 tested against node2 only: blind, nobody is named
        self.register({"node1": "leaf0", "node2": "leaf0", "node3": "leaf0"})
        self.warm([("node1", "node2"), ("node2", "node3")])
        for _ in range(3):
            self.post("node1", "node2", BAD)
            self.post("node2", "node3")
        ans = self.regressions()
        self.assertEqual(len(ans["open"]), 1)
        self.assertEqual(ans["suspect_ports"], [])

    def test_suspect_group_pair(self):
        leaves = {"node1": "leaf0", "node2": "leaf0", "node3": "leaf1",
                  "node4": "leaf1", "node5": "leaf2", "node6": "leaf2"}
        self.register(leaves)
        inter = [("node1", "node3"), ("node1", "node4"), ("node2", "node3"),
                 ("node2", "node4")]
        other = [("node1", "node2"), ("node3", "node4"), ("node1", "node5"),
                 ("node3", "node6"), ("node2", "node6"), ("node4", "node5")]
        self.warm(inter + other)
        for _ in range(3):
            for a, b in inter:
                self.post(a, b, BAD)
            for a, b in other:
                self.post(a, b)
        ans = self.regressions()
        self.assertEqual(len(ans["open"]), 4)
        self.assertEqual([(g["group_a"], g["group_b"], g["links_regressed"],
                           g["links_judged"])
                          for g in ans["suspect_group_pairs"]],
                         [("leaf0", "leaf1", 4, 4)])
        self.assertEqual(ans["suspect_ports"], [])


if __name__ == "__main__":
    tc.COLLECTOR, tc.SCHEMA, tc.SAMPLE_INI = sys.argv[1], sys.argv[2], sys.argv[3]
    unittest.main(argv=sys.argv[:1], verbosity=2)
