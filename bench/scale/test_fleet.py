#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Unit tests of the fleet driver's logic (bench/scale/), no collector:

- the noise model: a result is limited by the weaker end (the lower
  capacity, the sum of latencies), a halved PCIe link caps every port of
  its device and shows in the next counter report, a flapping port
  alternates, busy results are no evidence, healthy results stay within
  the stated noise;
- the scorer: a suspect naming the faulty port or device in its window
  is right, with the periods from the first test; one naming a healthy
  element is false; the device of a faulty port, or the faulty port for
  the metric its fault leaves alone, is related; one opened
  after the repair names the fault too late; suspects left open after
  the repair are counted with their closing time; a collector without
  the `suspects` list is scored on `suspect_ports`;
- --check names every fault missed or late and every healthy element
  named, and a collector without `suspects`;
- the settings: the shipped time keys scaled to a short period, --set
  parsed and refused with a reason.

usage: test_fleet.py
"""
import os
import random
import statistics
import sys
import types
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fleet  # noqa: E402
import fleet_conf  # noqa: E402
import fleet_model as fm  # noqa: E402
import fleet_table  # noqa: E402
import fleet_score as fs  # noqa: E402

NOISE = types.SimpleNamespace(noise=0.003, outliers=0.0, busy_share=0.5,
                              fail_share=0.0, pcie_share=0.59,
                              flap_share=0.5, lat_delay_share=0.2)
P = 10.0


def fabric(n=8, spread=0.003):
    return fm.Fabric(n, 4, 1, 2, "ndr", random.Random(3), spread)


def bw(f, a, b, o=NOISE, rng=None):
    r, hit = f.result(a, b, "bw", "p1-x", 1000.0, 1.0, rng or random.Random(),
                      o)
    return r["bw_avg_bytes_per_second"], hit


class ModelTest(unittest.TestCase):
    def test_healthy_results_within_the_noise(self):
        f = fabric()
        a, b = f.hosts[0].ports[0], f.hosts[1].ports[0]
        rng = random.Random(1)
        v = [bw(f, a, b, rng=rng)[0] for _ in range(400)]
        m = statistics.median(v)
        self.assertAlmostEqual(m, min(a.cap, b.cap), delta=m * 0.001)
        self.assertLess(statistics.pstdev(v) / m, 0.005)
        self.assertGreater(statistics.pstdev(v) / m, 0.002)
        self.assertAlmostEqual(m, 49e9, delta=49e9 * 0.01)

    def test_weaker_end_limits(self):
        f = fabric()
        a, b = f.hosts[0].ports[0], f.hosts[1].ports[0]
        flt = fm.Fault("g", "port", "port at 50%", b, share=0.5)
        f.port_fault[b.key] = flt
        v, hit = bw(f, a, b, rng=random.Random(2))
        self.assertAlmostEqual(v, b.cap * 0.5, delta=b.cap * 0.02)
        self.assertEqual(hit, [flt])
        # latency: the sum of both ends' shares, the fault's delay added
        f.port_fault[b.key] = fm.Fault("l", "lat", "lat", b, delay=0.4e-6)
        r, hit = f.result(a, b, "lat", "p", 1.0, 1.0, random.Random(2), NOISE)
        self.assertAlmostEqual(r["lat_median_seconds"],
                               a.half_lat + b.half_lat + 0.4e-6, delta=3e-8)
        self.assertNotIn("bw_avg_bytes_per_second", r)
        self.assertEqual(r["test"], "write_lat")
        self.assertEqual(len(hit), 1)

    def test_pcie_caps_every_port_and_shows_in_the_report(self):
        f = fabric()
        h = f.hosts[2]
        dev = h.devices[0]
        self.assertEqual(f.report(h, 1.0)["devices"][0]["pcie"]
                         ["current_width"], 16)
        f.device_fault[dev.key] = fm.Fault("g", "pcie", "pcie", dev,
                                           share=0.59)
        for p in h.ports:
            v, hit = bw(f, p, f.hosts[0].ports[p.index])
            self.assertAlmostEqual(v, 49e9 * 0.59, delta=49e9 * 0.02)
            self.assertEqual([x.key for x in hit], [dev.key])
        rep = f.report(h, 1.0)["devices"][0]["pcie"]
        self.assertEqual((rep["current_width"], rep["max_width"]), (8, 16))

    def test_flap_alternates_and_busy_is_no_evidence(self):
        f = fabric()
        a, b = f.hosts[0].ports[1], f.hosts[3].ports[1]
        f.port_fault[b.key] = fm.Fault("g", "flap", "flap", b, share=0.5)
        v = [bw(f, a, b)[0] / min(a.cap, b.cap) for _ in range(6)]
        self.assertEqual([round(x, 1) for x in v], [0.5, 1.0] * 3)
        busy = types.SimpleNamespace(**dict(vars(NOISE), outliers=1.0,
                                            busy_share=1.0))
        r, hit = f.result(a, b, "bw", "p", 1.0, 1.0, random.Random(), busy)
        self.assertTrue(r["busy"])
        self.assertIn("busy_reason", r)
        self.assertEqual(hit, [])

    def test_draw_is_reproducible_and_multi_shares_a_leaf_and_rail(self):
        def draw(seed):
            f = fm.Fabric(64, 16, 1, 2, "ndr", random.Random(seed), 0.003)
            return fm.draw_faults(f, fm.DEFAULT_KINDS, 3,
                                  random.Random(seed), NOISE)
        a, b = draw(7), draw(7)
        self.assertEqual([x.key for x in a], [x.key for x in b])
        self.assertEqual({x.wave for x in a}, {0, 1, 2})
        multi = [x for x in a if x.group.startswith("multi")]
        self.assertTrue(2 <= len(multi) <= 5)
        same = [x for x in multi if "same leaf" in x.label]
        self.assertGreaterEqual(len(same), 2)
        self.assertEqual(len({(x.element.host.leaf, x.element.index)
                              for x in same}), 1)
        hosts = [x.key[1] for x in a]
        self.assertEqual(len(hosts), len(set(hosts)))


def answer(suspects=None, closed=None, ports=None):
    a = {"open": [], "closed": [], "suspect_ports": ports or []}
    if suspects is not None:
        a["suspects"] = suspects
        a["suspects_closed"] = closed or []
    return a


def sus(kind, host, port=None, since=0.0, device="mlx5_0", metric="bandwidth",
        closed=None):
    return {"kind": kind, "host": host, "device": device, "port": port,
            "profile": "bw", "metric": metric, "since": since,
            "closed": closed}


class ScoreTest(unittest.TestCase):
    def setUp(self):
        self.f = fabric(16)
        h = self.f.hosts
        self.port = fm.Fault("port50#1", "port", "port at 50%", h[1].ports[0],
                             share=0.5)
        self.dev = fm.Fault("pcie#2", "pcie", "pcie", h[2].devices[0],
                            share=0.59)
        self.never = fm.Fault("port90#3", "port", "port at 90%",
                              h[3].ports[1], share=0.9)
        for x in (self.port, self.dev, self.never):
            x.t_on, x.t_off = 1000.0, 1100.0
        self.port.first_test, self.port.tests = 1003.0, 4
        self.dev.first_test, self.dev.tests = 1001.0, 3
        self.port.partners.add(h[5].ports[0].key)
        self.t = fs.Tracker([self.port, self.dev, self.never], self.f, P)

    def test_right_false_related_after_repair(self):
        t = self.t
        self.never.first_test = 1050.0
        t.observe(1005, answer([]))
        first = sus("port", "h00001", 1, 1011.0)
        first["first_bad"] = 1004.0
        t.observe(1012, answer([first,
                                sus("device", "h00002", None, 1012.0)]))
        # the device of the faulty port, a healthy partner, a stranger
        t.observe(1030, answer([sus("port", "h00001", 1, 1011.0),
                                sus("device", "h00002", None, 1012.0),
                                sus("device", "h00001", None, 1029.0),
                                sus("port", "h00001", 1, 1029.0,
                                    metric="latency"),
                                sus("port", "h00005", 1, 1030.0),
                                sus("port", "h00009", 2, 1030.0,
                                    metric="latency")]))
        # after the repair: the port's suspect closes 25 s later, the
        # never-tested port is named in the period after its repair
        t.observe(1125, answer([sus("device", "h00002", None, 1012.0),
                                sus("port", "h00003", 2, 1105.0)],
                               [sus("port", "h00001", 1, 1011.0,
                                    closed=1125.0)]))
        t.finish(1200)
        s = t.score(990.0, 1200.0, late=2.0)
        self.assertEqual(s["source"], "suspects")
        self.assertEqual((s["elements"], s["found"]), (3, 2))
        by = {e["group"]: e for e in s["faults"]}
        self.assertEqual(by["port50#1"]["periods"], 0.8)
        self.assertEqual(by["port50#1"]["periods_from_first_bad"], 0.7)
        self.assertIn("0.70 after the first bad result",
                      fleet_table.fault_line(dict(by["port50#1"], _P=P)))
        self.assertEqual(by["pcie#2"]["periods"], 1.1)
        self.assertFalse(by["port50#1"]["late"])
        self.assertEqual(by["port90#3"]["reason"],
                         "named only after the repair")
        self.assertEqual(len(s["false"]), 2)
        self.assertTrue(any("h00005/mlx5_0/1" in d and "port50#1" in d
                            for d in s["false"]), s["false"])
        self.assertTrue(any("h00009/mlx5_0/2" in d and "no faulty partner"
                            in d for d in s["false"]), s["false"])
        self.assertEqual(len(s["related"]), 2)
        self.assertIn("device h00001/mlx5_0", s["related"][0])
        self.assertIn("on latency (its fault is on bandwidth)",
                      s["related"][1])
        self.assertEqual(s["false_per_100"], round(2 * 100 / 21.0, 2))
        self.assertEqual(by["port50#1"]["close_periods"], 2.5)
        self.assertTrue(by["pcie#2"]["open_at_end"])
        self.assertEqual(s["open_at_end"], 2)  # pcie, and port90 named late
        self.assertEqual(s["series"][2][1:4], [3, 2, 2])

    def test_flap_has_a_period_more(self):
        t = self.t
        self.port.kind = "flap"
        # named 2.5 periods (25 s) after its first test: late for a steady
        # fault, in time for a flapping one
        t.observe(1030, answer([sus("port", "h00001", 1, 1028.0)]))
        t.finish(1200)
        by = {e["group"]: e for e in t.score(990.0, 1200.0,
                                             late=2.0)["faults"]}
        self.assertEqual(by["port50#1"]["periods"], 2.5)
        self.assertFalse(by["port50#1"]["late"])
        self.port.kind = "port"
        by = {e["group"]: e for e in t.score(990.0, 1200.0,
                                             late=2.0)["faults"]}
        self.assertTrue(by["port50#1"]["late"])

    def test_late_missed_and_check(self):
        t = self.t
        t.observe(1040, answer([sus("port", "h00001", 1, 1030.0)]))
        t.observe(1060, answer([sus("port", "h00001", 1, 1030.0),
                                sus("port", "h00007", 2, 1050.0)]))
        s = t.score(990.0, 1200.0, late=2.0)
        by = {e["group"]: e for e in s["faults"]}
        self.assertEqual(by["port50#1"]["periods"], 2.7)
        self.assertTrue(by["port50#1"]["late"])
        self.assertEqual(by["pcie#2"]["reason"], "no suspect named it")
        self.assertEqual(by["port90#3"]["reason"], "never tested while faulty")
        a = types.SimpleNamespace(suspects="auto", late_periods=2.0)
        bad = fleet.check(a, {"score": s, "tests": {
            "results_failed_posts": 0, "post_errors": []}})
        text = "\n".join(bad)
        self.assertIn("late: port h00001/mlx5_0/1 (port50#1) named 2.70", text)
        self.assertIn("missed: device h00002/mlx5_0 (pcie#2", text)
        self.assertIn("missed: port h00003/mlx5_0/2", text)
        self.assertIn("healthy element named: port h00007/mlx5_0/2", text)
        self.assertNotIn("no `suspects` list", text)

    def test_older_collector_scored_on_suspect_ports(self):
        t = self.t
        t.observe(1020, answer(ports=[{"host": "h00001", "device": "mlx5_0",
                                       "port": 1, "profile": "bw",
                                       "metric": "bandwidth",
                                       "since": 1020.0}]))
        s = t.score(990.0, 1200.0)
        self.assertEqual(s["source"], "suspect_ports")
        self.assertEqual(s["found"], 1)
        a = types.SimpleNamespace(suspects="auto", late_periods=2.0)
        bad = fleet.check(a, {"score": s, "tests": {
            "results_failed_posts": 0, "post_errors": []}})
        self.assertIn("has no `suspects` list", bad[0])
        strict = fs.Tracker([self.port], self.f, P, source="suspects")
        strict.observe(1020, answer(ports=[{"host": "h00001"}]))
        self.assertEqual(strict.score(990.0, 1200.0)["found"], 0)


class ConfTest(unittest.TestCase):
    SHIPPED = {"planner": {"period": "3600", "slot_seconds": "30",
                           "duty_cycle": "0.05", "replan_interval": "60"}}

    def test_scale_keeps_rounds_budget_and_lengths(self):
        keys, note = fleet_conf.scale(self.SHIPPED, 20)
        self.assertEqual(keys, {"planner.period": "20",
                                "planner.slot_seconds": "1",
                                "planner.duty_cycle": "0.325",
                                "planner.replan_interval": "1"})
        self.assertIn("budget 6 rounds", note)
        d = {"planner": {"period": "300", "slot_seconds": "3",
                         "duty_cycle": "0.05", "replan_interval": "60"},
             "planner_profiles": {"bw": "3", "lat": "1"}}
        keys, _ = fleet_conf.scale(d, 30)
        self.assertEqual(keys["planner.slot_seconds"], "1")
        self.assertEqual(keys["planner.duty_cycle"], "0.183333")
        self.assertEqual(keys["planner.replan_interval"], "6")
        self.assertEqual((keys["planner_profiles.bw"],
                          keys["planner_profiles.lat"]), ("1", "1"))
        keys, _ = fleet_conf.scale(d, 600)  # long enough: the same rounds
        self.assertEqual(keys["planner.slot_seconds"], "6")

    def test_sets(self):
        self.assertEqual(fleet_conf.parse_sets(["planner.period=20",
                                                "suspect.peers = 3"]),
                         {"planner.period": "20", "suspect.peers": "3"})
        for bad, why in (("period=20", "SECTION.KEY=VALUE"),
                         ("planner.period", "SECTION.KEY=VALUE"),
                         ("collector.db=/x", "driver's own")):
            with self.assertRaises(ValueError) as e:
                fleet_conf.parse_sets([bad])
            self.assertIn(why, str(e.exception))
        self.assertEqual(fleet_conf.parse_ini(
            "[planner]\n# x = 1\nperiod = 20\n[tokens]\n"),
            {"planner": {"period": "20"}, "tokens": {}})


if __name__ == "__main__":
    unittest.main()
