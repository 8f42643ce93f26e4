#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Routes on a simulated subnet, against ibtracert and dump_fts.

The real `ibpulse-probe fabric` reads every switch's linear forwarding
table from ibsim (after opensm assigned LIDs and routes), prints paths with
`--route`, and pushes the tables into the real collector, whose
GET /api/v1/route walks them. Each SCENARIO runs in a network namespace of
its own (tests/fabric/simfabric.py):

  lmc0    a 6-leaf, 3-spine fat tree, LMC 0: every table equals
          `dump_fts -a`; `--route` prints what ibtracert prints, byte for
          byte, for pairs of every kind (same leaf, across spines, to and
          from switches, a port to itself); after one `--once` push, the
          collector's route answers the hops of ibtracert's path for 40
          (source, DLID) pairs; 400 naming the parameter, 401, 403 (no
          admin token), 404 with the reason
  lmc2    `opensm -l 2`: every port owns 4 LIDs and the DLID chooses the
          spine; the collector agrees with ibtracert for 30 pairs of
          non-base LIDs; then an inter-switch link is cut (`Unlink`):
          before OpenSM re-routes, a path over it ends at that switch port
          ("leads nowhere"), as ibtracert fails too; after a second opensm
          sweep, routes moved, and --route and the collector (a new push)
          agree with ibtracert again
  loss    about 10% of MADs dropped at every switch: the tables are read
          whole with retries; a leaf that stops answering costs its
          timeout once and its table is named unread with the reason
  cli     --route's arguments refused naming themselves, route_interval's
          range, --print-config

usage: test_routes_sim.py PROBE_BINARY SCENARIO [COLLECTOR SCHEMA_DIR]
"""
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gen_fattree  # noqa: E402
import simfabric  # noqa: E402
import test_fabric_sim as tfs  # noqa: E402  (Collector, make_sim, fabric)

PROBE = None
CAVEAT = "Note: the path the switches' linear forwarding tables give"

FROM = re.compile(r'^From (ca|switch) \{(0x[0-9a-f]+)\} portnum (\d+) '
                  r'lid (\d+)-(\d+) "(.*)"$')
HOP = re.compile(r'^\[(\d+)\] -> (ca|switch) port \{(0x[0-9a-f]+)\}\[(\d+)\] '
                 r'lid (\d+)-(\d+) "(.*)"$')
TO = re.compile(r'^To (ca|switch) \{(0x[0-9a-f]+)\} portnum (\d+) '
                r'lid (\d+)-(\d+) "(.*)"$')


def tracert(sim, src, dst):
    """ibtracert's lines for @src -> @dst, or None when it failed."""
    p = sim.run(["ibtracert", str(src), str(dst)], timeout=60)
    return p.stdout.splitlines() if p.returncode == 0 else None


def tracert_hops(lines):
    """ibtracert's path as ([(switch, in port, out port)], (dst, port))."""
    m = FROM.match(lines[0])
    assert m, lines
    hops = [[m.group(6), 0, None]] if m.group(1) == "switch" else []
    for line in lines[1:-1]:
        h = HOP.match(line)
        assert h, line
        if hops:
            hops[-1][2] = int(h.group(1))
        if h.group(2) == "switch":
            hops.append([h.group(7), int(h.group(4)), None])
    t = TO.match(lines[-1])
    assert t, lines
    if t.group(1) == "switch":
        hops[-1][2] = 0
    return [tuple(h) for h in hops], (t.group(6), int(t.group(3)))


def api_hops(doc):
    return ([(h["node_desc"], h["in_port"], h["out_port"])
             for h in doc["hops"]],
            (doc["dst"]["node_desc"], doc["dst"]["port"]))


def route_cli(sim, src, dst, *extra):
    return sim.run([PROBE, "fabric", "--route", str(src), str(dst), *extra],
                   timeout=120)


def once(sim, *args):
    return json.loads(tfs.fabric(sim, "--once", "--json", *args).stdout)


def expand(lft):
    """A table's runs from the probe's JSON as {LID: port}."""
    runs, out = lft["runs"], {}
    pairs = [(runs[i], runs[i + 1]) for i in range(0, len(runs), 2)]
    for k, (lid, port) in enumerate(pairs):
        end = pairs[k + 1][0] if k + 1 < len(pairs) else lft["top"] + 1
        for l in range(lid, end):
            out[l] = port
    return out


def tables(doc):
    return {n["guid"]: expand(n["lft"]) for n in doc["nodes"]
            if n["type"] == "switch"}


def dump_fts(sim):
    """`dump_fts -a -n`: {switch GUID: {LID: port}}, every entry."""
    p = sim.run(["dump_fts", "-a", "-n"], check=True)
    out, cur = {}, None
    for line in p.stdout.splitlines():
        m = re.match(r"^Unicast lids .* guid (0x[0-9a-f]+) ", line)
        if m:
            cur = out.setdefault(m.group(1), {})
            continue
        m = re.match(r"^0x([0-9a-f]{4}) (\d{3})", line)
        if m and cur is not None:
            cur[int(m.group(1), 16)] = int(m.group(2))
    return out


def lids(doc):
    """{description: (first LID, last LID)} of every port of @doc."""
    out = {}
    for n in doc["nodes"]:
        if n["type"] == "switch":
            out[n["description"]] = (n["lid"], n["lid"])
        else:
            p = n["ports"][0]
            out[n["description"]] = (p["lid"],
                                     p["lid"] + (1 << p["lmc"]) - 1)
    return out


def pairs(doc, count, seed, every_lid=False):
    """@count (source LID, destination LID) pairs, sources CA ports."""
    rng = random.Random(seed)
    ranges = lids(doc)
    cas = [d for d in ranges if d.startswith("h")]
    dests = sorted({l for a, b in ranges.values()
                    for l in (range(a, b + 1) if every_lid else [a])})
    out = set()
    while len(out) < count:
        a, b = ranges[rng.choice(cas)]
        src = rng.randint(a, b) if every_lid else a
        out.add((src, rng.choice(dests)))
    return sorted(out)


def new_sim(leaves, per_leaf, spines, sm_args=()):
    """A started Sim of a generated fat tree; opensm with @sm_args."""
    work = tempfile.mkdtemp(prefix="routes-test-",
                            dir=os.environ.get("TMPDIR"))
    net = os.path.join(work, "fat.net")
    with open(net, "w") as f:
        f.write(gen_fattree.generate(leaves, per_leaf, spines))
    return simfabric.Sim(net, workdir=work, sm_args=sm_args).start()


class Routes(unittest.TestCase):
    LEAVES, PER_LEAF, SPINES = 6, 4, 3
    SM_ARGS = ()

    @classmethod
    def setUpClass(cls):
        cls.sim = new_sim(cls.LEAVES, cls.PER_LEAF, cls.SPINES, cls.SM_ARGS)
        cls.col = tfs.Collector(cls.sim.dir)

    @classmethod
    def tearDownClass(cls):
        cls.col.stop()
        cls.sim.stop()

    def push(self):
        p = tfs.fabric(self.sim, "--once", "--collector", self.col.url(),
                       "--token-file",
                       os.path.join(self.sim.dir, "poller1.token"),
                       "--host", "poller1")
        return p

    def api(self, src, dst, token=tfs.ADMIN, query=None):
        q = query if query is not None else \
            "src_lid=%s&dst_lid=%s" % (src, dst)
        st, text = self.col.post(None, None, path="/api/v1/route?" + q,
                                 token=token)
        return st, json.loads(text)

    def agree(self, ps):
        """The collector's route equals ibtracert's for every pair."""
        for src, dst in ps:
            want = tracert(self.sim, src, dst)
            self.assertIsNotNone(want, (src, dst))
            st, doc = self.api(src, dst)
            self.assertEqual(st, 200, (src, dst, doc))
            self.assertEqual(api_hops(doc), tracert_hops(want),
                             (src, dst, want, doc))
            self.assertEqual((doc["src_lid"], doc["dst_lid"]), (src, dst))

    def cli_agrees(self, src, dst):
        """--route prints ibtracert's lines, then the caveat."""
        want = tracert(self.sim, src, dst)
        got = route_cli(self.sim, src, dst)
        self.assertEqual(got.returncode, 0, got.stderr)
        lines = got.stdout.splitlines()
        self.assertTrue(lines[-1].startswith(CAVEAT), lines)
        self.assertEqual(lines[:-1], want, (src, dst))


class Lmc0(Routes):
    def test_tables_equal_dump_fts(self):
        doc = once(self.sim)
        r = doc["routes"]
        switches = self.LEAVES + self.SPINES
        self.assertEqual((r["switches"], r["switches_failed"]),
                         (switches, 0))
        got = tables(doc)
        self.assertEqual(got, dump_fts(self.sim))
        tops = [n["lft"]["top"] for n in doc["nodes"]
                if n["type"] == "switch"]
        self.assertEqual(r["blocks"], sum(t // 64 + 1 for t in tops))
        self.assertEqual((r["mads"], r["retries"]), (r["blocks"], 0))
        # each CA port's LMC and LIDs, as ibnetdiscover has them
        for n in doc["nodes"]:
            for p in n["ports"]:
                self.assertEqual(p["lmc"], 0)
        self.assertEqual({d: a for d, (a, b) in lids(doc).items()},
                         self.sim.lids())

    def test_route_prints_as_ibtracert(self):
        doc = once(self.sim)
        lid = {d: a for d, (a, b) in lids(doc).items()}
        for src, dst in [("h00000", "h00001"), ("h00000", "h00023"),
                         ("h00013", "h00004"), ("h00005", "leaf003"),
                         ("h00006", "spine02"), ("leaf001", "h00020"),
                         ("spine01", "h00002"), ("h00009", "h00009")]:
            with self.subTest(src=src, dst=dst):
                self.cli_agrees(lid[src], lid[dst])
        # the JSON form is the collector's shape
        p = route_cli(self.sim, lid["h00000"], lid["h00023"], "--json")
        self.assertEqual(p.returncode, 0, p.stderr)
        j = json.loads(p.stdout)
        self.assertEqual([h["node_desc"] for h in j["hops"]][0], "leaf000")
        self.assertEqual(j["dst"]["node_desc"], "h00023")
        self.assertIn("adaptive routing", j["note"])
        # no such LID: exit 1 and the reason
        p = route_cli(self.sim, lid["h00000"], 999)
        self.assertEqual(p.returncode, 1)
        self.assertIn("no route from LID %d to LID 999: no port holds "
                      "LID 999" % lid["h00000"], p.stderr)

    def test_collector_agrees_with_ibtracert(self):
        doc = once(self.sim)
        self.push()
        self.assertEqual(self.col.q("SELECT count(*) FROM fabric_lft "
                                    "WHERE runs IS NOT NULL")[0][0],
                         self.LEAVES + self.SPINES)
        self.assertEqual(self.col.q("SELECT count(*) FROM fabric_port "
                                    "WHERE lmc = 0")[0][0],
                         doc["discovery"]["ports"])
        self.agree(pairs(doc, 40, seed=1))
        st, j = self.api(lids(doc)["h00000"][0], lids(doc)["spine00"][0])
        self.assertEqual(st, 200)
        guid = {n["description"]: n["guid"] for n in doc["nodes"]}
        self.assertEqual([h["node_guid"] for h in j["hops"]],
                         [guid["leaf000"], guid["spine00"]])
        self.assertEqual(j["hops"][-1]["out_port"], 0)
        self.assertEqual(j["src"], {"node_guid": guid["h00000"],
                                    "node_desc": "h00000", "type": "ca",
                                    "port": 1, "lid": j["src_lid"],
                                    "lmc": 0})
        self.assertIsInstance(j["tables_stored"], float)
        self.assertIn("ar_updn", j["note"])

    def test_collector_refusals(self):
        self.push()
        cases = [("src_lid=1", 400, "dst_lid: is required"),
                 ("dst_lid=1", 400, "src_lid: is required"),
                 ("src_lid=abc&dst_lid=1", 400, "src_lid: 'abc' is not a "
                  "unicast LID (1-49151"),
                 ("src_lid=1&dst_lid=0", 400, "dst_lid: '0'"),
                 ("src_lid=1&dst_lid=49152", 400, "dst_lid: '49152'"),
                 ("src_lid=1&dst_lid=999", 404, "no port holds LID 999"),
                 ("src_lid=999&dst_lid=1", 404, "no port holds LID 999")]
        for q, status, why in cases:
            with self.subTest(q=q):
                st, doc = self.api(None, None, query=q)
                self.assertEqual(st, status, doc)
                self.assertIn(why, doc["error"])
        st, doc = self.api(1, 2, token=tfs.poller_token("poller1"))
        self.assertEqual(st, 401)
        st, _ = self.col.post(None, None, path="/api/v1/route?src_lid=1&"
                              "dst_lid=2", token="no-such-token")
        self.assertEqual(st, 401)
        st, _ = self.col.post(None, {}, path="/api/v1/route", token=tfs.ADMIN)
        self.assertEqual(st, 405)

    def test_no_admin_token(self):
        d = tempfile.mkdtemp(dir=self.sim.dir)
        conf = os.path.join(d, "collector.ini")
        with open(conf, "w") as f:
            f.write("[collector]\nlisten = 127.0.0.1\nport = 0\ndb = %s\n"
                    "schema_dir = %s\n[tokens]\npoller1 = %s\n" % (
                        os.path.join(d, "x.db"), tfs.SCHEMA,
                        tfs.poller_token("poller1")))
        pf = os.path.join(d, "port")
        p = subprocess.Popen([tfs.COLLECTOR, "serve", "--config", conf,
                              "--port-file", pf], stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL)
        try:
            port = tfs.wait_port_file(pf, p)
            c = tfs.http.client.HTTPConnection("127.0.0.1", port, timeout=60)
            c.request("GET", "/api/v1/route?src_lid=1&dst_lid=2",
                      headers={"Authorization": "Bearer " + tfs.ADMIN})
            r = c.getresponse()
            self.assertEqual(r.status, 403)
            self.assertIn("no admin_token", r.read().decode())
        finally:
            p.terminate()
            p.wait(30)


class Lmc2(Routes):
    LEAVES, PER_LEAF, SPINES = 4, 3, 3
    SM_ARGS = ("-l", "2")

    def test_lmc_chooses_the_spine(self):
        doc = once(self.sim)
        self.assertEqual(tables(doc), dump_fts(self.sim))
        ranges = lids(doc)
        for d, (a, b) in ranges.items():
            if d.startswith("h"):
                self.assertEqual((a % 4, b - a), (0, 3), d)
        self.push()
        # one host's 4 DLIDs from h00000: more than one spine
        a, b = ranges["h00011"]
        spines = set()
        for dst in range(a, b + 1):
            st, j = self.api(ranges["h00000"][0], dst)
            self.assertEqual(st, 200, j)
            self.assertEqual(j["dst"]["node_desc"], "h00011")
            self.assertEqual(j["dst"]["lmc"], 2)
            spines.add(j["hops"][1]["node_desc"])
        self.assertGreater(len(spines), 1, spines)
        self.agree(pairs(doc, 30, seed=2, every_lid=True))
        self.cli_agrees(ranges["h00001"][0] + 3, ranges["h00010"][0] + 2)

    def test_unlink_moves_routes(self):
        doc = once(self.sim)
        self.push()
        ranges = lids(doc)
        up = self.PER_LEAF + 1  # leaf000's port to spine00
        src = ranges["h00000"][0]
        dests = [l for d, (a, b) in ranges.items()
                 if d.startswith("h") and d not in ("h00000", "h00001",
                                                    "h00002")
                 for l in range(a, b + 1)]
        before = {}
        for dst in dests:
            st, j = self.api(src, dst)
            self.assertEqual(st, 200, j)
            before[dst] = api_hops(j)
        over = [d for d, (hops, _) in before.items()
                if hops[0] == ("leaf000", 1, up)]
        self.assertTrue(over, before)
        self.sim.console('Unlink "leaf000"[%d]' % up)
        # before OpenSM re-routes: the table still points at the cut port
        p = route_cli(self.sim, src, over[0])
        self.assertEqual(p.returncode, 1, p.stdout)
        self.assertIn("port %d of leaf000 (%s) leads nowhere: nothing is "
                      "attached" % (up, [n["guid"] for n in doc["nodes"]
                                         if n["description"] == "leaf000"]
                                    [0]), p.stderr)
        self.assertIsNone(tracert(self.sim, src, over[0]))
        # OpenSM sweeps again: the routes over the cut link moved
        self.sim.opensm_once()
        self.push()
        moved = 0
        for dst in over:
            want = tracert(self.sim, src, dst)
            self.assertIsNotNone(want, dst)
            hops, _ = tracert_hops(want)
            self.assertNotEqual(hops[0], ("leaf000", 1, up))
            moved += hops != before[dst][0]
            st, j = self.api(src, dst)
            self.assertEqual(st, 200, j)
            self.assertEqual(api_hops(j), tracert_hops(want), dst)
        self.assertEqual(moved, len(over))
        for dst in over[:3]:
            self.cli_agrees(src, dst)
        self.agree(pairs(once(self.sim), 15, seed=3, every_lid=True))


class Loss(unittest.TestCase):
    LEAVES, PER_LEAF, SPINES = 4, 4, 2

    def setUp(self):
        # LMC 2: LIDs beyond 64, two blocks a switch
        self.sim = new_sim(self.LEAVES, self.PER_LEAF, self.SPINES,
                           ("-l", "2"))

    def tearDown(self):
        self.sim.stop()

    def switches(self):
        return ([gen_fattree.leaf(i) for i in range(self.LEAVES)] +
                [gen_fattree.spine(i) for i in range(self.SPINES)])

    def test_tables_whole_under_loss(self):
        doc = once(self.sim)
        clean = tables(doc)
        self.assertGreaterEqual(doc["routes"]["blocks"],
                                2 * (self.LEAVES + self.SPINES))
        for sw in self.switches():
            self.sim.console('Error "%s" 2' % sw)
        # each read whole and right; some of them had to resend
        retries = 0
        for _ in range(10):
            r = (doc := once(self.sim, "--retries", "6"))["routes"]
            self.assertEqual(r["switches_failed"], 0, r)
            self.assertEqual(tables(doc), clean)
            retries += r["retries"]
            if retries:
                break
        self.assertGreater(retries, 0)

    def test_switch_stops_answering(self):
        p = self.sim.popen([PROBE, "fabric", "--json", "--sweeps", "2",
                            "--interval", "1", "--route-interval", "1",
                            "--timeout", "100", "--retries", "2",
                            "--rediscover", "3600"],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           text=True)
        try:
            first = json.loads(p.stdout.readline())
            self.sim.console('Error "leaf003" 100')
            doc = json.loads(p.stdout.readline())
            p.wait(60)
        finally:
            if p.poll() is None:
                p.kill()
            p.wait()
        self.assertEqual(first["routes"]["switches_failed"], 0)
        r = doc["routes"]
        self.assertEqual(r["switches_failed"], 1, r)
        lft = {n["description"]: n["lft"] for n in doc["nodes"]
               if n["type"] == "switch"}
        self.assertRegex(lft["leaf003"]["error"],
                         r"^LinearForwardingTable block \d+: (timeout|not "
                         r"asked: the switch stopped answering)$")
        self.assertIn("runs", lft["leaf002"])
        # its timeout x tries once, not once per block
        self.assertLess(r["seconds"], 1.5, r)


class Cli(unittest.TestCase):
    def run_probe(self, *args):
        return subprocess.run([PROBE, "fabric", *args], capture_output=True,
                              text=True, timeout=60)

    def test_route_arguments(self):
        cases = [(["--route", "1"], "--route wants two LIDs"),
                 (["--route", "0", "5"], "--route: SRC_LID '0' is not a "
                  "unicast LID in [1, 49151]"),
                 (["--route", "5", "0xc000"], "DST_LID '0xc000'"),
                 (["--route", "5", "x7"], "DST_LID 'x7'"),
                 (["7"], "unexpected argument '7'"),
                 (["--route", "1", "2", "3"], "unexpected argument '3'"),
                 (["--route-interval", "-1"], "route_interval"),
                 (["--set", "route_interval=604801"], "[0, 604800]")]
        for args, why in cases:
            with self.subTest(args=args):
                p = self.run_probe(*args)
                self.assertEqual(p.returncode, 2, p.stderr)
                self.assertIn(why, p.stderr)

    def test_help_and_config(self):
        p = self.run_probe("--help")
        self.assertEqual(p.returncode, 0)
        self.assertIn("[--route SRC_LID DST_LID]", p.stdout)
        self.assertIn("--route-interval SEC", p.stdout)
        self.assertRegex(p.stdout, r"route_interval .*\(default 60; 0 to "
                                   r"604800\)")
        self.assertIn("adaptive routing", p.stdout)
        p = self.run_probe("--print-config", "--route-interval", "0")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("route_interval = 0", p.stdout)


SCENARIOS = {"lmc0": Lmc0, "lmc2": Lmc2, "loss": Loss, "cli": Cli}


def main():
    global PROBE
    if len(sys.argv) not in (3, 5) or sys.argv[2] not in SCENARIOS:
        sys.exit(__doc__)
    PROBE = tfs.PROBE = os.path.abspath(sys.argv[1])
    if len(sys.argv) == 5:
        tfs.COLLECTOR, tfs.SCHEMA = map(os.path.abspath, sys.argv[3:5])
    elif sys.argv[2] in ("lmc0", "lmc2"):
        sys.exit("the %s scenario wants the collector (see usage)" %
                 sys.argv[2])
    if sys.argv[2] != "cli":
        simfabric.need_tools(("ibtracert", "dump_fts"))
        simfabric.in_private_netns()
    suite = unittest.defaultTestLoader.loadTestsFromTestCase(
        SCENARIOS[sys.argv[2]])
    r = unittest.TextTestRunner(verbosity=2).run(suite)
    sys.exit(0 if r.wasSuccessful() else 1)


if __name__ == "__main__":
    main()
