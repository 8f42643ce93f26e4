#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Integration tests for localization in the fabric: the real collector on
a loopback port, a fabric poller's report of a 16-host fat tree with its
forwarding tables (fattree.py), 16 registered probes with their LIDs, and
results posted as probe daemons post them.

- a leaf-to-spine link at 50% is named as a fabric_link suspect with both
  ends, and the host behind it that took three bad results against three
  good peers is not a port suspect (the link explains them); three good
  tests through the link close it as recovered;
- a bad host port is a port suspect, and no link is named for it;
- a whole spine is named as a switch, not as its links; before it is,
  a host whose bad results crossed its links, bad for others too, is not
  a port suspect (those results are held);
- counters that rose on a link's ends corroborate it (the suspect says
  which);
- a test the routes cannot place (a port without a LID) is counted as
  unrouted, with the reason;
- the suspects survive a restart; retiring a host deletes its tests.

usage: test_localize.py COLLECTOR_BINARY SCHEMA_DIR ETC_COLLECTOR_INI
"""
import json
import os
import random
import shutil
import sys
import tempfile
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fattree  # noqa: E402
import test_collector as tc  # noqa: E402
import test_tests_api as ta  # noqa: E402

NOMINAL = 4.9e10
POLLER = "poller"
CONFIG = ta.PLANNER + "plan_refresh = 5\nconfirm_share = 0.5\n"


class LocalizeBase(unittest.TestCase):
    CONFIG = CONFIG
    LMC = 0
    STEP = 1

    def setUp(self):
        self.tree = fattree.FatTree(4, 4, 2, self.LMC)
        self.tmp = tempfile.mkdtemp(prefix="ibpulse-loc-")
        self.c = tc.Collector(self.tmp, self.CONFIG)
        with open(self.c.config, "a") as f:
            for h in [self.tree.host(i) for i in range(self.tree.hosts)] + [
                    POLLER]:
                f.write("%s = %s\n" % (h, tc.token(h)))
        self.c.start()
        self.t = time.time() - 300
        self.rng = random.Random(11)

    def tearDown(self):
        rc = self.c.stop()
        log = self.c.log_text()
        shutil.rmtree(self.tmp, ignore_errors=True)
        self.assertEqual(rc, 0, log[-2000:])
        self.assertNotIn("runtime error", log)

    def call(self, method, path, body=None, tok=None):
        st, _, data = self.c.request(method, path, body, tok)
        return st, json.loads(data) if data else None

    def fabric(self, extra=None):
        st, ans = self.call("POST", "/api/v1/report",
                            self.tree.report(POLLER, time.time(), extra),
                            tc.token(POLLER))
        self.assertEqual(st, 200, ans)

    def register_all(self):
        for i in range(self.tree.hosts):
            h = self.tree.host(i)
            st, ans = self.call("POST", "/api/v1/register",
                                self.tree.registration(i), tc.token(h))
            self.assertEqual(st, 200, ans)

    def noisy(self, factor=1.0):
        return NOMINAL * factor * (1 + self.rng.gauss(0, 0.003))

    def post(self, a, b, factor=1.0, dlid=None):
        """A write_bw result of host a -> host b, STEP s after the last."""
        self.t += self.STEP
        params = {"size": 65536, "qps": 2}
        if dlid:
            params["dlid"] = dlid
        r = ta.result(self.tree.host(b), started=self.t, profile="bw",
                      test="write_bw", params=params,
                      bw_avg_bytes_per_second=self.noisy(factor))
        host = self.tree.host(a)
        st, ans = self.call("POST", "/api/v1/results", ta.batch(host, [r]),
                            tc.token(host))
        self.assertEqual((st, ans["stored"]), (200, 1), ans)

    def warm(self, rounds=2):
        """Every host against the next hosts of other leaves, both ways:
        each port pools a baseline."""
        n = self.tree.hosts
        for r in range(rounds):
            for a in range(n):
                for k in (5, 9, 13):
                    b = (a + k) % n
                    x, y = (a, b) if r % 2 == 0 else (b, a)
                    self.post(x, y)

    def regressions(self):
        st, ans = self.call("GET", "/api/v1/regressions", None, tc.ADMIN)
        self.assertEqual(st, 200, ans)
        return ans

    def fabric_suspects(self, key="suspects"):
        return [(s["kind"], s["a_node_desc"], s["a_port"], s["b_node_desc"],
                 s["b_port"]) for s in self.regressions()[key]
                if s["kind"] in ("fabric_link", "switch")]

    def host_suspects(self):
        return [(s["kind"], s["host"]) for s in self.regressions()["suspects"]
                if s["kind"] in ("port", "device")]

    def through(self, link, exclude=()):
        """(a, b) pairs whose write crosses @link, the ends varying: a
        pair reuses neither end of the one before."""
        out = []
        for a in range(self.tree.hosts):
            for b in range(self.tree.hosts):
                if (a not in exclude and b not in exclude and
                        link in self.tree.links(a, b)):
                    out.append((a, b))
        out.sort(key=lambda p: (p[1] * 7 + p[0]) % 17)
        spread = []
        while out:
            last = spread[-1] if spread else (-1, -1)
            k = next((i for i, p in enumerate(out)
                      if p[0] != last[0] and p[1] != last[1]), 0)
            spread.append(out.pop(k))
        return spread


class LocalizeTest(LocalizeBase):

    def test_bad_uplink_named_ports_behind_not(self):
        self.fabric()
        self.register_all()
        self.warm()
        self.assertEqual(self.fabric_suspects(), [])
        link = self.tree.up(1, 0)  # leaf001 port 5 -> spine00 port 2
        pairs = self.through(link)
        # h04 takes three bad results against three peers fine with
        # others; h05 one more through the link
        bad = [p for p in pairs if p[0] == 4][:3] + \
              [p for p in pairs if p[0] == 5][:1]
        self.assertEqual(len(bad), 4)
        for a, b in bad:
            self.post(a, b, 0.5)
            self.post((b + 1) % 16, (b + 6) % 16)  # the peers: fine
        self.assertEqual(self.fabric_suspects(),
                         [("fabric_link", "leaf001", 5, "spine00", 2)])
        s = [x for x in self.regressions()["suspects"]
             if x["kind"] == "fabric_link"][0]
        self.assertEqual(s["a_node_guid"], "0x%016x" % link[0])
        self.assertEqual((s["bad_results"], s["profile"], s["metric"]),
                         (4, "bw", "bandwidth"))
        self.assertGreater(s["confidence"], 0.9)
        self.assertAlmostEqual(s["figure"] / s["baseline"], 0.5, delta=0.02)
        self.assertIsNone(s["host"])
        # the host behind it: explained, not a suspect
        self.assertEqual(self.host_suspects(), [])
        self.assertEqual(self.c.count(
            "SELECT count(*) FROM element WHERE host = 'h04' AND "
            "status = 'suspect'"), 0)
        # survives a restart
        self.assertEqual(self.c.stop(), 0)
        self.c.start()
        self.assertEqual(len(self.fabric_suspects()), 1)
        # repaired: three good tests through it close it
        for a, b in [p for p in pairs if p[0] in (6, 7)][:3]:
            self.post(a, b)
        self.assertEqual(self.fabric_suspects(), [])
        closed = [x for x in self.regressions()["suspects_closed"]
                  if x["kind"] == "fabric_link"]
        self.assertEqual([x["reason"] for x in closed], ["recovered"])
        # a fresh window: one bad test does not reopen it
        a, b = pairs[0]
        self.post(a, b, 0.5)
        self.assertEqual(self.fabric_suspects(), [])

    def test_bad_port_names_no_link(self):
        self.fabric()
        self.register_all()
        self.warm()
        # h05 at 60%: against many peers, through many links
        for k in range(6):
            b = (5 + 3 + 2 * k) % 16
            if k % 2:
                self.post(5, b, 0.6)
            else:
                self.post(b, 5, 0.6)
            self.post((b + 1) % 16, (b + 5) % 16)
        self.assertEqual(self.fabric_suspects(), [])
        self.assertIn(("port", "h05"), self.host_suspects())
        self.assertGreater(self.c.count(
            "SELECT count(*) FROM localize_test WHERE bad = 1"), 0)

    def test_whole_spine_is_a_switch(self):
        self.fabric()
        self.register_all()
        self.warm()
        spine = 1
        bad = [(a, b) for a in range(16) for b in range(16)
               if self.tree.leaf_of(a) != self.tree.leaf_of(b) and
               self.tree.spine_of(self.tree.host_lid(b)) == spine]
        self.rng.shuffle(bad)
        for a, b in bad[:10]:
            self.post(a, b, 0.5)
        sus = self.fabric_suspects()
        self.assertEqual(sus, [("switch", "spine01", None, None, None)], sus)
        self.assertEqual(self.host_suspects(), [])

    def test_hosts_behind_a_failing_spine_held(self):
        """Before a failing spine is named (its links carry more good
        tests than bad), a host whose three bad results crossed three of
        its links, each bad for other hosts too, is not a port suspect:
        those results are held (the fabric may be at fault)."""
        self.fabric()
        self.register_all()
        self.warm()
        x, mine = 0, []
        for leaf in (1, 2, 3):
            through = self.through(self.tree.down(0, leaf))
            # others' tests into the leaf from the leaves but x's: they
            # share no link with x's but this one; each other leaf's
            # uplink takes two bad tests in all (not enough to name it)
            others = [p for p in through if
                      self.tree.leaf_of(p[0]) not in (0, leaf)]
            src = [s for s in (1, 2, 3) if s != leaf]
            o1 = next(p for p in others if self.tree.leaf_of(p[0]) == src[0])
            o2 = next(p for p in others if self.tree.leaf_of(p[0]) == src[1]
                      and p[1] != o1[1])
            self.post(*o1, factor=0.5)
            self.post(*o2, factor=0.5)
            for a, b in [p for p in others if p not in (o1, o2)][:5]:
                self.post(a, b)
            mine.append(next(p for p in through if p[0] == x and
                             p[1] not in [q[1] for q in mine]))
        for a, b in mine:
            self.post(a, b, 0.5)
            self.post((b + 1) % 16, b)  # the peer: fine with others
        self.assertEqual(self.fabric_suspects(), [])
        self.assertNotIn(("port", "h%02d" % x), self.host_suspects())

    def test_counters_corroborate(self):
        self.fabric()
        self.register_all()
        self.warm()
        time.sleep(1.1)  # the counters change after the window's start
        g, p = self.tree.down(0, 2)  # spine00 port 3 -> leaf002
        self.fabric({(g, p): {"counters": {"symbol_error": 42,
                                           "link_downed": 1,
                                           "port_xmit_wait": 0}}})
        pairs = self.through((g, p))
        for a, b in pairs[:3]:
            self.post(a, b, 0.5)
        sus = [x for x in self.regressions()["suspects"]
               if x["kind"] == "fabric_link"]
        self.assertEqual(len(sus), 1, sus)
        self.assertEqual((sus[0]["a_node_desc"], sus[0]["a_port"]),
                         ("spine00", 3))
        self.assertIn("spine00/3: link_downed +1, symbol_error +42",
                      sus[0]["counters"])

    def test_unrouted_and_retire(self):
        self.fabric()
        self.register_all()
        # h15 re-registers a port without a LID (as RoCE does)
        reg = self.tree.registration(15)
        del reg["ports"][0]["lid"]
        st, ans = self.call("POST", "/api/v1/register", reg,
                            tc.token("h15"))
        self.assertEqual(st, 200, ans)
        self.warm(rounds=1)
        n = self.c.count("SELECT count(*) FROM localize_test")
        ends = self.c.count("SELECT count(*) FROM localize_test WHERE "
                            "a_host = 'h15' OR b_host = 'h15'")
        self.assertGreater(n, 0)
        self.assertEqual(ends, 0)
        st, cov = self.call("GET", "/api/v1/coverage", None, tc.ADMIN)
        self.assertEqual(st, 200, cov)
        fl = cov["fabric_links"]
        self.assertTrue(fl["routes"])
        self.assertGreater(fl["tests_attributed"], 0)
        self.assertGreater(fl["tests_unrouted"], 0)
        self.assertIn("h15 mlx5_0 port 1 registered no LID",
                      fl["unrouted_why"])
        # retire a host: its tests go
        self.assertEqual(
            self.c.count("SELECT count(*) FROM localize_test WHERE "
                         "a_host = 'h01' OR b_host = 'h01'") > 0, True)
        st, _ = self.call("POST", "/api/v1/hosts/h01/retire", None, tc.ADMIN)
        self.assertEqual(st, 200)
        self.assertEqual(self.c.count(
            "SELECT count(*) FROM localize_test WHERE a_host = 'h01' OR "
            "b_host = 'h01'"), 0)


class LocalizeLmcTest(LocalizeBase):
    """LMC 2: each port owns 4 LIDs, each routed over a spine. Sixteen
    probes plan few tests: confirmations may take as many (the cap is
    confirm_share of the plan)."""
    LMC = 2
    CONFIG = ta.PLANNER + "plan_refresh = 5\nconfirm_share = 1\n"

    def plan_entries(self):
        out = []
        for i in range(self.tree.hosts):
            h = self.tree.host(i)
            st, plan = self.call("GET", "/api/v1/plan", None, tc.token(h))
            self.assertEqual(st, 200, plan)
            for t in plan["tests"]:
                out.append((i, int(t["peer"]["host"][1:]), t))
        return out

    def all_links(self):
        t = self.tree
        return {t.up(l, s) for l in range(t.leaves) for s in range(t.spines)} | \
            {t.down(s, l) for l in range(t.leaves) for s in range(t.spines)}

    def test_plan_covers_every_link_by_dlid(self):
        self.fabric()
        self.register_all()
        st, cov = self.call("GET", "/api/v1/coverage", None, tc.ADMIN)
        self.assertEqual(st, 200, cov)
        fl = cov["fabric_links"]
        self.assertEqual((fl["routes"], fl["links"], fl["covered"]),
                         (True, 16, 16), fl)
        self.assertEqual(fl["uncovered_links"], [])
        self.assertIn("adaptive routing", fl["caveat"])
        seen = set()
        steered = 0
        for a, b, t in self.plan_entries():
            base = self.tree.host_lid(b)
            dlid = t["peer"].get("dlid")
            if dlid is not None:
                self.assertTrue(base < dlid < base + 4, t)
                steered += 1
            seen |= set(self.tree.links(a, b, dlid))
        self.assertEqual(seen, self.all_links())
        self.assertGreater(fl["tests_steered"], 0)
        self.assertGreaterEqual(steered, fl["tests_steered"])
        self.assertEqual(steered, sum(1 for p in cov["pairs"]
                                      if p["dlid"] is not None))
        # the exporter's rows
        self.assertEqual(dict(self.c.rows(
            "SELECT state, links FROM fabric_link_cover WHERE period = "
            "(SELECT max(period) FROM fabric_link_cover)"))["covered"], 16)

    def test_result_follows_its_dlid(self):
        self.fabric()
        self.register_all()
        self.warm(rounds=1)  # judged from the first: port baselines
        a, b = 0, 6  # leaf 0 to leaf 1
        for k in range(4):
            d = self.tree.host_lid(b) + k
            self.post(a, b, dlid=d if k else None)
        rows = self.c.rows("SELECT dlid, links FROM localize_test WHERE "
                           "a_host = 'h00' AND b_host = 'h06' ORDER BY "
                           "started")
        self.assertEqual(len(rows), 4)
        for k, (dlid, blob) in enumerate(rows):
            d = self.tree.host_lid(b) + k
            self.assertEqual(dlid, d if k else None)
            links = [(int.from_bytes(blob[i:i + 8], "little"), blob[i + 8])
                     for i in range(0, len(blob), 18)]
            self.assertEqual(links, self.tree.links(a, b, d))
        # a DLID of another port: not attributed, and said why
        self.post(a, b, dlid=self.tree.host_lid(b + 1))
        self.assertEqual(len(self.c.rows(
            "SELECT 1 FROM localize_test WHERE a_host = 'h00' AND "
            "b_host = 'h06'")), 4)
        st, cov = self.call("GET", "/api/v1/coverage", None, tc.ADMIN)
        self.assertEqual(st, 200, cov)
        self.assertEqual(cov["fabric_links"]["unrouted_why"],
                         "DLID %d is not a LID of the port of LID %d" %
                         (self.tree.host_lid(b + 1), self.tree.host_lid(b)))

    def test_a_bad_test_confirms_its_links(self):
        left = ta.PERIOD - time.time() % ta.PERIOD
        if left < 60:  # confirmations go plan_refresh (5 s) ahead
            time.sleep(left + 0.5)
        self.fabric()
        self.register_all()
        self.warm()
        a, b = 1, 10  # leaf 0 to leaf 2
        dlid = self.tree.host_lid(b) + 1
        links = self.tree.links(a, b, dlid)
        self.post(a, b, 0.5, dlid=dlid)
        st, cov = self.call("GET", "/api/v1/coverage", None, tc.ADMIN)
        self.assertEqual(st, 200, cov)
        self.assertGreaterEqual(cov["fabric_links"]["tests_confirm"], 2)
        crossing = {lk: 0 for lk in links}
        for p in cov["pairs"]:
            if not p["confirm"]:
                continue
            pa = int(p["a"].split("/")[0][1:])
            pb = int(p["b"].split("/")[0][1:])
            for lk in self.tree.links(pa, pb, p["dlid"]):
                if lk in crossing:
                    crossing[lk] += 1
        self.assertTrue(all(n >= 2 for n in crossing.values()), crossing)


if __name__ == "__main__":
    tc.COLLECTOR, tc.SCHEMA, tc.SAMPLE_INI = sys.argv[1], sys.argv[2], sys.argv[3]
    unittest.main(argv=sys.argv[:1] + sys.argv[4:], verbosity=2)
