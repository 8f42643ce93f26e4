#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Unit tests of the localization bench's logic (bench/localize/), no
simulator and no collector:

- dump_fts's output is parsed into each switch's table, and the driver's
  walk follows the tables: a host's path to another leaf's LID crosses
  the leaf's uplink to the spine the table names and that spine's
  downlink, to its own leaf none, a hole ends it;
- the routed model: a result whose path to its DLID crosses a faulty
  cable or spine is limited to its share (the DLID chooses the spine),
  others are not, a flapping cable alternates, latency is left alone,
  the params say the DLID;
- the faults: each kind as often as asked, one at a time or so many a
  wave, on hosts, cables and spines no other fault uses, no cable on a
  spine that a spine fault takes;
- the scorer: a link suspect naming either way of a faulty cable is
  right, a link of a faulty spine is related, another link false; recall,
  precision, top-1 and the healthy tail's false alarms are computed as
  the table says.

usage: test_localize_logic.py
"""
import os
import random
import sys
import types
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "scale"))
import fleet_model  # noqa: E402
import fleet_score  # noqa: E402
import loc_model  # noqa: E402
import loc_score  # noqa: E402
import loc_sim  # noqa: E402

O = types.SimpleNamespace(noise=0.0, outliers=0.0, busy_share=0.5,
                          fail_share=0.0, pcie_share=0.59, flap_share=0.5,
                          lat_delay_share=0.2)
LEAVES, PER, SPINES = 4, 2, 2


def host_lid(i):
    return 16 + 4 * i  # LMC 2: 4 LIDs each


def tables():
    """dump_fts's text for the tree, destination-mod-k routed."""
    lines = []
    for name, guid in [("leaf%03d" % l, 0x200 + l) for l in range(LEAVES)] + \
            [("spine%02d" % s, 0x300 + s) for s in range(SPINES)]:
        lines.append("Unicast lids [0x0-0x3f] of switch DR path slid 0; "
                     "dlid 0; 0,1 guid 0x%016x (%s):" % (guid, name))
        lines.append("  Lid  Out   Destination")
        for i in range(LEAVES * PER):
            for k in range(4):
                d = host_lid(i) + k
                if name.startswith("leaf"):
                    leaf = int(name[4:])
                    port = (i % PER + 1 if i // PER == leaf
                            else PER + 1 + d % SPINES)
                else:
                    port = i // PER + 1
                lines.append("0x%04x %03d : (Channel Adapter portguid ...)" %
                             (d, port))
        lines.append("0x0006 255 : ()")
    return "\n".join(lines)


class FakeSubnet:
    def __init__(self):
        self.hosts, self.per, self.lmc = LEAVES * PER, PER, 2
        self.leaves, self.spines = LEAVES, SPINES
        self.routes = loc_sim.Routes(loc_sim.parse_dump_fts(tables()),
                                     LEAVES, PER, SPINES)

    def host_lid(self, idx):
        return host_lid(idx)


def fabric():
    return loc_model.RoutedFabric(FakeSubnet(), "ndr", random.Random(2), 0.0)


def bw(f, a, b, dlid=None, profile="bw"):
    entry = {"peer": {"dlid": dlid}} if dlid else None
    r, hit = f.result(a, b, profile, "p1-x", 1000.0, 1.0, random.Random(1),
                      O, entry=entry)
    return r, hit


class RoutesTest(unittest.TestCase):
    def test_parse_and_walk(self):
        t = loc_sim.parse_dump_fts(tables())
        self.assertEqual(t["leaf001"][0], 0x201)
        self.assertEqual(t["spine01"][1][host_lid(7) + 2], 4)
        r = FakeSubnet().routes
        # h0 (leaf 0) to h6's LID + 1 (leaf 3): spine (LID % 2) 1
        d = host_lid(6) + 1
        self.assertEqual(r.path(0, d), ([("leaf000", PER + 2),
                                         ("spine01", 4)],
                                        ["leaf000", "spine01", "leaf003"]))
        # the base LID: spine 0
        self.assertEqual(r.path(0, host_lid(6))[0],
                         [("leaf000", PER + 1), ("spine00", 4)])
        # its own leaf: one switch, no link
        self.assertEqual(r.path(0, host_lid(1)), ([], ["leaf000"]))
        # a hole
        self.assertIsNone(r.path(0, 6))


class ModelTest(unittest.TestCase):
    def test_cable_and_dlid(self):
        f = fabric()
        a, b = f.hosts[0].ports[0], f.hosts[6].ports[0]
        self.assertEqual(a.lid, host_lid(0))
        nominal = min(a.cap, b.cap)
        cable = fleet_model.Fault("c", "uplink50", "cable", loc_model.Cable(
            "uplink50", loc_model._cable_keys(f.routes, 0, 1), "x"),
            share=0.5)
        loc_model.apply(f, cable, True)
        r, hit = bw(f, a, b, host_lid(6) + 1)  # spine 1: crosses it
        self.assertAlmostEqual(r["bw_avg_bytes_per_second"],
                               f.speed["bw"] * 0.5, delta=1e3)
        self.assertEqual(hit, [cable])
        self.assertEqual(r["params"]["dlid"], host_lid(6) + 1)
        r, hit = bw(f, a, b)  # base LID: spine 0
        self.assertAlmostEqual(r["bw_avg_bytes_per_second"], nominal,
                               delta=1e3)
        self.assertEqual(hit, [])
        self.assertNotIn("dlid", r["params"])
        # the other way over the cable (spine 1 -> leaf 0)
        r, hit = bw(f, b, a, host_lid(0) + 3)
        self.assertEqual(hit, [cable])
        # latency is left alone
        r, hit = bw(f, a, b, host_lid(6) + 1, profile="lat")
        self.assertEqual(hit, [])
        loc_model.apply(f, cable, False)
        self.assertEqual(bw(f, a, b, host_lid(6) + 1)[1], [])

    def test_spine_and_flap(self):
        f = fabric()
        a, b = f.hosts[2].ports[0], f.hosts[5].ports[0]
        sp = fleet_model.Fault("s", "spine", "spine", loc_model.Cable(
            "spine", [("switch", "spine00")], "x"), share=0.5)
        loc_model.apply(f, sp, True)
        self.assertEqual(bw(f, a, b, host_lid(5) + 2)[1], [sp])
        self.assertEqual(bw(f, a, b, host_lid(5) + 1)[1], [])
        loc_model.apply(f, sp, False)
        fl = fleet_model.Fault("f", "flap", "flap", loc_model.Cable(
            "flap", loc_model._cable_keys(f.routes, 1, 0), "x"), share=0.5)
        loc_model.apply(f, fl, True)
        got = [bw(f, a, b, host_lid(5))[0]["bw_avg_bytes_per_second"]
               for _ in range(4)]
        self.assertLess(got[0], 0.6 * f.speed["bw"])
        self.assertGreater(got[1], 0.9 * f.speed["bw"])
        self.assertLess(got[2], 0.6 * f.speed["bw"])


class DrawTest(unittest.TestCase):
    def test_disjoint(self):
        f = fabric()
        kinds = ("port60", "pcie", "uplink50", "spine", "flap", "uplink50")
        out = loc_model.draw(f, kinds, 1, random.Random(5), O, per_wave=2)
        self.assertEqual(len(out), 6)
        self.assertEqual(sorted(x.wave for x in out), [0, 0, 1, 1, 2, 2])
        kinds = [x.kind for x in out]
        self.assertEqual((kinds.count("uplink50"), kinds.count("spine"),
                          kinds.count("flap")), (2, 1, 1))
        self.assertEqual(kinds.count("port") + kinds.count("pcie"), 2)
        hosts = [x.element.host.name for x in out
                 if x.kind in ("port", "pcie")]
        self.assertEqual(len(set(hosts)), len(hosts))
        spines = {x.element.key[1] for x in out if x.kind == "spine"}
        cables = [x.element.keys for x in out
                  if x.kind in ("uplink50", "flap")]
        self.assertEqual(len({c[0] for c in cables}), len(cables))
        for c in cables:
            self.assertNotIn(c[1][1], spines)  # spine -> leaf end
        with self.assertRaises(ValueError):
            loc_model.draw(f, ["spine"], 3, random.Random(5), O, per_wave=3)

    def test_spines_take_turns(self):
        """More spine faults than half the spines, one at a time: they take
        turns on half of them; the cable faults keep to the others."""
        f = fabric()
        out = loc_model.draw(f, ("spine", "flap"), 3, random.Random(5), O)
        spines = {x.element.key[1] for x in out if x.kind == "spine"}
        self.assertEqual(len(spines), SPINES // 2)
        self.assertEqual(sum(x.kind == "spine" for x in out), 3)
        for x in out:
            if x.kind == "flap":
                self.assertNotIn(x.element.keys[1][1], spines)


class ScoreTest(unittest.TestCase):
    def entry(self, kind, desc, port, since):
        return {"kind": kind, "host": None, "device": None, "port": None,
                "a_node_desc": desc, "a_port": port, "profile": "bw",
                "metric": "bandwidth", "since": since, "closed": None}

    def test_right_related_false(self):
        f = fabric()
        cable = fleet_model.Fault("uplink50#1", "uplink50", "cable",
                                  loc_model.Cable(
                                      "uplink50", loc_model._cable_keys(
                                          f.routes, 0, 1), "x"), share=0.5)
        sp = fleet_model.Fault("spine#2", "spine", "spine", loc_model.Cable(
            "spine", [("switch", "spine00")], "x"), share=0.5)
        cable.t_on, cable.t_off, cable.first_test = 100.0, 130.0, 101.0
        sp.t_on, sp.t_off, sp.first_test = 200.0, 230.0, 201.0
        t = loc_score.LocTracker([cable, sp], f, 10.0, f.routes)
        t.observe(115.0, {"suspects": [
            # the cable's other direction: right
            self.entry("fabric_link", "spine01", 1, 112.0),
            # a link elsewhere: false
            self.entry("fabric_link", "leaf003", PER + 1, 114.0)]})
        t.observe(215.0, {"suspects": [
            # a link into the faulty spine: related; then the spine
            self.entry("fabric_link", "leaf002", PER + 1, 203.0),
            self.entry("switch", "spine00", None, 205.0)]})
        v = {s.ident[1]: s.verdict for s in t.suspects.values()}
        self.assertEqual(v, {"spine01": "right", "leaf003": "false",
                             "leaf002": "related", "spine00": "right"})
        sc = loc_score.localize_score(t, 90.0, 300.0, 5, 10.0, 300.0)
        self.assertEqual((sc["found"], sc["recall"]), (2, 1.0))
        self.assertEqual(sc["precision"], round(2 / 3, 4))
        # the cable's first suspect was it; the spine's was a link of it
        self.assertEqual(sc["top1"], 0.5)
        self.assertEqual(sc["right_median"], round((1.1 + 0.4) / 2, 2))
        self.assertEqual(sc["false_per_healthy_hour"], 0.0)
        t.observe(280.0, {"suspects": [
            self.entry("fabric_link", "leaf001", PER + 2, 275.0)]})
        sc = loc_score.localize_score(t, 90.0, 300.0, 5, 10.0, 300.0)
        # one false suspect in 5 healthy periods of 300 s: 12 an hour
        self.assertEqual(len(sc["healthy_false"]), 1)
        self.assertEqual(sc["false_per_healthy_hour"], 2.4)


if __name__ == "__main__":
    unittest.main(verbosity=2)
