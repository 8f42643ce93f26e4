#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Integration tests for evidence per element: the real collector on a
loopback port with the shipped [baseline] and [suspect] defaults, results
posted as probes post them.

- a port that lost 10% is named after three results against three
  different peers, never the same link twice (the planner's rotation),
  while no link regression opens and no healthy port is named; a 3% loss
  is within the floor and names nothing;
- a single bad result asks for confirmation tests: the plan gains tests of
  the port (and of its partner) against peers with good history, marked in
  the coverage view; two good results with other peers clear it;
- a suspect closes after good_results good results in a row;
- a device whose ports both go bad is the suspect (its ports' suspects
  close as explained by it); a one-port device is named as a device only
  when its counter reports say its PCIe link is degraded;
- two bad ports tested against each other are both named;
- retiring a host deletes its elements and suspects.

usage: test_suspects.py COLLECTOR_BINARY SCHEMA_DIR ETC_COLLECTOR_INI
"""
import os
import random
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import test_collector as tc  # noqa: E402
import test_regressions as tr  # noqa: E402
import test_tests_api as ta  # noqa: E402

# The shipped thresholds and windows: no [baseline] or [suspect] here.
CONFIG = ta.PLANNER + "plan_refresh = 5\nconfirm_share = 0.5\n"
NOMINAL = 4.9e10  # NDR write_bw 64 KiB (docs/collector.md)
HOSTS = ["node%d" % i for i in range(1, 8)]


class SuspectTest(tr.RegressionBase):
    CONFIG = CONFIG
    STEP = 1  # recent results: confirmation peers need good history
    AGO = 300

    def setUp(self):
        left = ta.PERIOD - time.time() % ta.PERIOD
        if left < 20:  # confirmations go plan_refresh (5 s) ahead
            time.sleep(left + 0.5)
        self.rng = random.Random(7)
        super().setUp()

    def noisy(self, factor=1.0):
        """A healthy figure: 0.3% gaussian noise (docs/collector.md)."""
        return NOMINAL * factor * (1 + self.rng.gauss(0, 0.003))

    def suspects(self, key="suspects"):
        return [(s["kind"], s["host"], s["device"], s["port"], s["metric"])
                for s in self.regressions()[key]]

    def warm_all(self, hosts, rounds=1):
        """Every pair once per round, each direction in turn: every port
        pools enough results for a baseline, no link has its own."""
        for r in range(rounds):
            for i, a in enumerate(hosts):
                for b in hosts[i + 1:]:
                    x, y = (a, b) if r % 2 == 0 else (b, a)
                    self.post(x, y, self.noisy())

    def test_rotating_partners_name_the_port(self):
        self.register({h: "leaf0" for h in HOSTS})
        self.warm_all(HOSTS)  # 6 results per port, 1 per link
        # a 3% loss is inside the 5% floor: nothing is bad
        for peer in ("node2", "node3", "node4"):
            self.post(peer, "node1", self.noisy(0.97))
        self.assertEqual(self.c.count(
            "SELECT count(*) FROM element WHERE bad > 0"), 0)
        # node1 loses 10%: each result against a new peer, on a new link
        for peer in ("node5", "node6", "node7"):
            self.post(peer, "node1", self.noisy(0.9))
            for a, b in (("node2", "node3"), ("node4", "node6")):
                self.post(a, b, self.noisy())
        ans = self.regressions()
        self.assertEqual(ans["open"], [])  # no link had 3 bad results
        self.assertEqual(self.suspects(),
                         [("port", "node1", tr.PORT, 1, "bandwidth")])
        s = ans["suspects"][0]
        self.assertEqual((s["bad_results"], s["peers_bad"],
                          s["peers_exonerating"], s["profile"]),
                         (3, 3, 3, "bw"))
        self.assertAlmostEqual(s["figure"] / s["baseline"], 0.9, delta=0.01)
        self.assertIsNone(s["closed"])
        # the old key still lists it
        self.assertEqual([(p["host"], p["links_regressed"], p["peers_fine"])
                          for p in ans["suspect_ports"]], [("node1", 3, 3)])
        # more good results elsewhere change nothing; three good ones of
        # node1 in a row close it
        since = s["since"]
        self.post("node2", "node5", self.noisy())
        self.assertEqual(self.regressions()["suspects"][0]["since"], since)
        for peer in ("node2", "node3", "node4"):
            self.post("node1", peer, self.noisy())
        ans = self.regressions()
        self.assertEqual(ans["suspects"], [])
        self.assertEqual([(s["host"], s["reason"], s["good_results"])
                          for s in ans["suspects_closed"]],
                         [("node1", "recovered", 3 + 3)])  # window + since
        # a fresh window: one bad result does not reopen it
        self.post("node5", "node1", self.noisy(0.9))
        self.assertEqual(self.regressions()["suspects"], [])

    def test_outlier_asks_for_confirmation(self):
        self.register({h: "leaf0" for h in HOSTS})
        self.warm_all(HOSTS, rounds=2)  # judged good: confirmation peers
        # an outlier between node1 and node2: both ends need confirming
        self.post("node1", "node2", self.noisy(0.8))
        self.assertEqual(sorted(self.c.rows(
            "SELECT host FROM element WHERE confirm = 1 AND kind = 'port'")),
            [("node1",), ("node2",)])
        st, cov = self.call("GET", "/api/v1/coverage", None, tc.ADMIN)
        self.assertEqual(st, 200, cov)
        confirm = [p for p in cov["pairs"] if p["confirm"]]
        self.assertEqual(cov["tests_confirm"], len(confirm))
        ends = {h for p in confirm for h in (p["a"], p["b"])}
        self.assertIn("node1/mlx5_0/1", ends)
        self.assertIn("node2/mlx5_0/1", ends)
        for p in confirm:  # never the pair that was bad, always ahead
            self.assertNotEqual({p["a"], p["b"]},
                                {"node1/mlx5_0/1", "node2/mlx5_0/1"})
            self.assertGreaterEqual(p["not_before"], time.time() + 3)
        # the initiator sees them in its plan, with the refresh interval
        st, plan = self.call("GET", "/api/v1/plan", None, tc.token("node1"))
        self.assertEqual((st, plan["refresh_seconds"]), (200, 5))
        # two good results with others clear node1; nothing is named
        self.post("node1", "node3", self.noisy())
        self.post("node4", "node1", self.noisy())
        self.assertEqual(self.c.count(
            "SELECT confirm FROM element WHERE host = 'node1' AND "
            "kind = 'port'"), 0)
        self.assertEqual(self.regressions()["suspects"], [])

    def test_two_bad_ports_tested_together(self):
        self.register({h: "leaf0" for h in HOSTS})
        self.warm_all(HOSTS)
        self.post("node1", "node2", self.noisy(0.75))  # both bad
        for a, b in (("node1", "node3"), ("node4", "node1"),
                     ("node2", "node5"), ("node6", "node2"),
                     ("node1", "node7"), ("node2", "node7")):
            self.post(a, b, self.noisy(0.75))
        self.assertEqual(sorted(self.suspects()),
                         [("port", "node1", tr.PORT, 1, "bandwidth"),
                          ("port", "node2", tr.PORT, 1, "bandwidth")])

    def test_device_and_retire(self):
        # two ports on one device each; node1's device loses both
        for h in HOSTS:
            st, ans = self.call("POST", "/api/v1/register",
                                ta.registration(h, "leaf0", ports=2),
                                tc.token(h))
            self.assertEqual(st, 200, ans)

        def post2(a, b, port, value):
            self.t += self.STEP
            r = ta.result(b, started=self.t, bw_avg_bytes_per_second=value,
                          local={"device": tr.PORT, "port": port})
            r["peer"]["port"] = port
            st, ans = self.call("POST", "/api/v1/results",
                                ta.batch(a, [r]), tc.token(a))
            self.assertEqual((st, ans["stored"]), (200, 1), ans)

        for port in (1, 2):
            for i, a in enumerate(HOSTS):
                for b in HOSTS[i + 1:]:
                    post2(a, b, port, self.noisy())
        for peer in ("node5", "node6", "node7"):
            post2(peer, "node1", 1, self.noisy(0.6))
        # port 1 alone: a port suspect, the device needs its other port
        self.assertEqual(self.suspects(),
                         [("port", "node1", tr.PORT, 1, "bandwidth")])
        self.assertEqual(self.c.count(
            "SELECT confirm FROM element WHERE host = 'node1' AND "
            "kind = 'device'"), 1)
        for peer in ("node2", "node3", "node4"):
            post2("node1", peer, 2, self.noisy(0.6))
        ans = self.regressions()
        self.assertEqual([(s["kind"], s["host"], s["device"], s["port"])
                          for s in ans["suspects"]],
                         [("device", "node1", tr.PORT, None)])
        self.assertEqual(sorted((s["port"], s["reason"])
                                for s in ans["suspects_closed"]),
                         [(1, "device")])
        # retiring the host deletes its elements and suspects
        st, _ = self.call("POST", "/api/v1/hosts/node1/retire", b"",
                          tc.ADMIN)
        self.assertEqual(st, 200)
        ans = self.regressions()
        self.assertEqual((ans["suspects"], ans["suspects_closed"]), ([], []))
        self.assertEqual(self.c.count(
            "SELECT count(*) FROM element WHERE host = 'node1'"), 0)

    def test_one_port_device_named_by_pcie(self):
        self.register({h: "leaf0" for h in HOSTS})
        self.warm_all(HOSTS)
        # node1's counter report: PCIe x8 of x16
        r = tr.counter_report("node1", pcie=(16.0, 16))
        r["devices"][0]["pcie"]["current_width"] = 8
        st, _, _ = self.c.request("POST", "/api/v1/report", r,
                                  tc.token("node1"))
        self.assertEqual(st, 200)
        for peer in ("node5", "node6", "node7"):
            self.post(peer, "node1", self.noisy(0.6))
        self.assertEqual(self.suspects(),
                         [("device", "node1", tr.PORT, None, "bandwidth")])


if __name__ == "__main__":
    tc.COLLECTOR, tc.SCHEMA, tc.SAMPLE_INI = sys.argv[1], sys.argv[2], sys.argv[3]
    unittest.main(argv=sys.argv[:1], verbosity=2)
