#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Integration tests of `ibpulse-probe fabric` on a simulated subnet.

Each SCENARIO runs in a network namespace of its own with its own ibsim
(libumad2sim.so preloaded over libibumad) and opensm, so the scenarios run
in parallel:

  discovery  a generated fat tree: nodes, types, links and LIDs equal the
             net file and ibnetdiscover; every counter of every port equals
             perfquery / perfquery -x (errors exactly; traffic counters,
             which the MADs themselves move, between a perfquery before
             and one after)
  faults     counters planted through ibsim's console (saturated ones
             flagged), the details attributes, a 4X port trained at 1X
             (ibportstate) reported degraded, an inter-switch link
             unlinked, and in the loop a host link cut mid-run: the LID
             stops answering, it is reported unread, and the next cycle
             rediscovers without it
  loss       about 10% of MADs dropped on every switch: the sweep completes
             with retries and reads every port; a leaf that stops answering
             costs its timeout once and is reported with what it cost
  planner    probes registering without a group label are grouped by the
             leaf switch their HCA attaches to, as discovered
  collector  the poller pushing into the real collector (reports with a
             fabric section, cut in chunks): every node and port stored
             once by GUID, counters under their names, a second poller of
             the same subnet duplicating nothing, bad sections refused
             with the field named
  exporter   the same into the real exporter: switch ports under the port
             families (symbol errors, saturation, state) with node_guid,
             node_desc and port labels; ibpulse_link_info joining both
             ends (a host's HCA by host, device and port); a 4X port at 1X
             in ibpulse_link_degraded; the shards split it all, nothing
             twice; promtool passes the body; through a real Prometheus,
             every fabric panel of the overview dashboard shows data once
             an inter-switch link is cut and errors rise
  cli        --help, bad flags (exit 2 naming the flag and range),
             --print-config, and no InfiniBand port at all (exit 1, a clear
             reason)

usage: test_fabric_sim.py PROBE_BINARY SCENARIO [COLLECTOR SCHEMA_DIR
                          [EXPORTER PROMTOOL PROMETHEUS]]
"""
import http.client
import json
import os
import sqlite3
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gen_fattree  # noqa: E402
import simfabric  # noqa: E402
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "exporter"))
import harness  # noqa: E402  (tests/exporter: the exposition parser)

PROBE = COLLECTOR = SCHEMA = EXPORTER = PROMTOOL = PROMETHEUS = None
POLLERS = ["poller1", "poller2", "node00", "node01"]
ADMIN = "admin-0123456789abcdef"
ERRORS = ["symbol_error", "link_error_recovery", "link_downed",
          "port_rcv_errors", "port_rcv_remote_physical_errors",
          "port_rcv_switch_relay_errors", "port_xmit_discards",
          "port_xmit_constraint_errors", "port_rcv_constraint_errors",
          "local_link_integrity_errors", "excessive_buffer_overrun_errors",
          "VL15_dropped", "port_xmit_wait"]
TRAFFIC = ["port_xmit_data", "port_rcv_data", "port_xmit_packets",
           "port_rcv_packets"]
IETF = ["unicast_xmit_packets", "unicast_rcv_packets",
        "multicast_xmit_packets", "multicast_rcv_packets"]


def make_sim(leaves, per_leaf, spines, **kw):
    """A Sim serving a generated fat tree in a fresh work directory."""
    work = tempfile.mkdtemp(prefix="fabric-test-",
                            dir=os.environ.get("TMPDIR"))
    net = os.path.join(work, "fat.net")
    with open(net, "w") as f:
        f.write(gen_fattree.generate(leaves, per_leaf, spines, **kw))
    return simfabric.Sim(net, workdir=work)


def fabric(sim, *args, timeout=120):
    p = sim.run([PROBE, "fabric", *args], timeout=timeout)
    if p.returncode:
        raise AssertionError("fabric %s exited %d: %s" %
                             (args, p.returncode, p.stderr[-3000:]))
    return p


def once(sim, *args):
    return json.loads(fabric(sim, "--once", "--json", *args).stdout)


def ports_by_desc(doc):
    """{(node description, port): port JSON} and {description: node}."""
    ports, nodes = {}, {}
    for n in doc["nodes"]:
        nodes[n["description"]] = n
        for p in n["ports"]:
            ports[(n["description"], p["port"])] = p
    return ports, nodes


def net_links(leaves, per_leaf, spines):
    """The links of the generated tree, as frozensets of (node, port)."""
    L = set()
    for l in range(leaves):
        for h in range(per_leaf):
            L.add(frozenset({(gen_fattree.leaf(l), h + 1),
                             (gen_fattree.host(l * per_leaf + h), 1)}))
        for s in range(spines):
            L.add(frozenset({(gen_fattree.leaf(l), per_leaf + s + 1),
                             (gen_fattree.spine(s), l + 1)}))
    return L


class Discovery(unittest.TestCase):
    LEAVES, PER_LEAF, SPINES = 4, 3, 2

    @classmethod
    def setUpClass(cls):
        cls.sim = make_sim(cls.LEAVES, cls.PER_LEAF, cls.SPINES).start()

    @classmethod
    def tearDownClass(cls):
        cls.sim.stop()

    def test_matches_net_file(self):
        doc = once(self.sim)
        ports, nodes = ports_by_desc(doc)
        hosts = self.LEAVES * self.PER_LEAF
        self.assertEqual(doc["discovery"]["cas"], hosts)
        self.assertEqual(doc["discovery"]["switches"],
                         self.LEAVES + self.SPINES)
        want = net_links(self.LEAVES, self.PER_LEAF, self.SPINES)
        self.assertEqual(doc["discovery"]["links"], len(want))
        got = set()
        for (desc, num), p in ports.items():
            self.assertIsNotNone(p["remote"], (desc, num))
            got.add(frozenset({(desc, num),
                               (p["remote"]["description"],
                                p["remote"]["port"])}))
            # the remote GUID is that node's GUID
            self.assertEqual(p["remote"]["guid"],
                             nodes[p["remote"]["description"]]["guid"])
        self.assertEqual(got, want)
        for n in doc["nodes"]:
            kind = "ca" if n["description"].startswith("h") else "switch"
            self.assertEqual(n["type"], kind, n["description"])
            want_ports = 1 if kind == "ca" else (
                self.PER_LEAF + self.SPINES
                if n["description"].startswith("leaf") else self.LEAVES)
            self.assertEqual(n["numports"], want_ports)
            self.assertEqual(len(n["ports"]), want_ports)
        # LIDs as ibnetdiscover sees them
        lids = self.sim.lids()
        for desc, n in nodes.items():
            lid = n["lid"] if n["type"] == "switch" else n["ports"][0]["lid"]
            self.assertEqual(lid, lids[desc], desc)
        for p in ports.values():
            self.assertEqual(p["state"], "ACTIVE")
            self.assertEqual(p["phys_state"], "LinkUp")
            self.assertEqual(p["width_active"], "4X")
            self.assertFalse(p["degraded"])
            self.assertTrue(p["read"])
        s = doc["sweep"]
        self.assertEqual(s["ports_read"], len(ports))
        self.assertEqual((s["ports_failed"], s["retries"], s["timeouts"]),
                         (0, 0, 0))
        self.assertEqual(doc["unread"], [])
        # one ClassPortInfo per node, PortCounters and Extended per port
        self.assertEqual(s["mads"], len(nodes) + 2 * len(ports))

    def test_counters_equal_perfquery(self):
        lids = self.sim.lids()
        self.sim.console('PerformanceSet "leaf001"[2] '
                         'PortCounters.SymbolErrorCounter=42')
        self.sim.console('PerformanceSet "spine01"[3] '
                         'PortCounters.PortRcvErrors=7')
        # every port: perfquery before, the poller, perfquery after
        ports, _ = ports_by_desc(once(self.sim))
        targets = [(desc, num, lids[desc]) for (desc, num) in sorted(ports)]
        before = {}
        for desc, num, lid in targets:
            before[(desc, num)] = dict(self.sim.perfquery(lid, num),
                                       **self.sim.perfquery(lid, num, "-x"))
        doc = once(self.sim)
        ports, _ = ports_by_desc(doc)
        for desc, num, lid in targets:
            after = dict(self.sim.perfquery(lid, num),
                         **self.sim.perfquery(lid, num, "-x"))
            got = ports[(desc, num)]["counters"]
            b = before[(desc, num)]
            for k in ERRORS + IETF:
                self.assertEqual(got[k], b[k], (desc, num, k))
                self.assertEqual(got[k], after[k], (desc, num, k))
            for k in TRAFFIC:
                self.assertLessEqual(b[k], got[k], (desc, num, k))
                self.assertLessEqual(got[k], after[k], (desc, num, k))
            # MADs moved through this port between the reads: traffic
            self.assertGreater(after["port_xmit_packets"],
                               b["port_xmit_packets"], (desc, num))
        self.assertEqual(ports[("leaf001", 2)]["counters"]["symbol_error"],
                         42)
        self.assertEqual(ports[("spine01", 3)]["counters"]["port_rcv_errors"],
                         7)


class Faults(unittest.TestCase):
    LEAVES, PER_LEAF, SPINES = 3, 2, 2

    def setUp(self):
        self.sim = make_sim(self.LEAVES, self.PER_LEAF, self.SPINES).start()

    def tearDown(self):
        self.sim.stop()

    def test_planted_and_saturated(self):
        c = self.sim.console
        c('PerformanceSet "leaf000"[3] PortCounters.SymbolErrorCounter=42')
        # LinkDownedCounter is 8 bits: ibsim clamps 300 to 255, saturated
        c('PerformanceSet "leaf000"[3] PortCounters.LinkDownedCounter=300')
        c('PerformanceSet "spine01"[1] PortCounters.PortXmitDiscards=65535')
        c('PerformanceSet "h00003"[1] '
          'PortCounters.LocalLinkIntegrityErrors=15')
        c('PerformanceSet "spine00"[2] '
          'PortCountersExtended.PortXmitData=123456789012345')
        c('PerformanceSet "leaf002"[1] '
          'PortRcvErrorDetails.PortMalformedPacketErrors=9')
        c('PerformanceSet "leaf002"[1] '
          'PortXmitDiscardDetails.PortNeighborMTUDiscards=11')
        doc = once(self.sim, "--details")
        ports, _ = ports_by_desc(doc)
        p = ports[("leaf000", 3)]
        self.assertEqual(p["counters"]["symbol_error"], 42)
        self.assertEqual(p["counters"]["link_downed"], 255)
        self.assertEqual(p["saturated"], ["link_downed"])
        self.assertEqual(ports[("spine01", 1)]["saturated"],
                         ["port_xmit_discards"])
        self.assertEqual(ports[("h00003", 1)]["saturated"],
                         ["local_link_integrity_errors"])
        self.assertGreaterEqual(
            ports[("spine00", 2)]["counters"]["port_xmit_data"],
            123456789012345)
        d = ports[("leaf002", 1)]["counters"]
        self.assertEqual(d["port_malformed_packet_errors"], 9)
        self.assertEqual(d["port_neighbor_mtu_discards"], 11)
        self.assertEqual(ports[("leaf001", 1)]["saturated"], [])
        # 4 MADs per port with --details
        nodes = len(doc["nodes"])
        self.assertEqual(doc["sweep"]["mads"], nodes + 4 * len(ports))
        # without --details those counters are not asked
        plain, _ = ports_by_desc(once(self.sim))
        self.assertNotIn("port_malformed_packet_errors",
                         plain[("leaf002", 1)]["counters"])
        # the text summary names the errors and the saturation
        text = fabric(self.sim, "--once").stdout
        self.assertIn("symbol_error=42", text)
        self.assertIn("link_downed=255(saturated)", text)

    def test_reset_after_read(self):
        self.sim.console('PerformanceSet "leaf001"[1] '
                         'PortCounters.SymbolErrorCounter=5')
        ports, _ = ports_by_desc(once(self.sim, "--reset"))
        self.assertEqual(ports[("leaf001", 1)]["counters"]["symbol_error"], 5)
        lids = self.sim.lids()
        self.assertEqual(self.sim.perfquery(lids["leaf001"], 1)
                         ["symbol_error"], 0)
        ports, _ = ports_by_desc(once(self.sim))
        self.assertEqual(ports[("leaf001", 1)]["counters"]["symbol_error"], 0)

    def test_narrow_link_degraded(self):
        lids = self.sim.lids()
        # h00001's port set to 1X: the link retrains at 1X; leaf000's end
        # stays enabled for 4X: the classic 4X cable trained at 1X
        self.sim.run(["ibportstate", str(lids["h00001"]), "1", "width", "1"],
                     check=True)
        doc = once(self.sim)
        ports, _ = ports_by_desc(doc)
        sw = ports[("leaf000", 2)]
        self.assertEqual(sw["width_active"], "1X")
        self.assertIn("4X", sw["width_enabled"])
        self.assertTrue(sw["degraded"])
        self.assertEqual(sw["degraded_reason"], "width 1X of 4X enabled")
        self.assertFalse(ports[("h00001", 1)]["degraded"])
        self.assertFalse(ports[("leaf000", 1)]["degraded"])
        self.assertEqual(sw["rate_gbps"], 2.5)
        text = fabric(self.sim, "--once").stdout
        self.assertIn("degraded leaf000", text)

    def test_inter_switch_link_down(self):
        out = self.sim.console('Unlink "spine01"[2]')
        self.assertNotIn("#", out.replace("# ibpulse", ""))
        doc = once(self.sim)
        ports, _ = ports_by_desc(doc)
        sp = ports[("spine01", 2)]
        self.assertEqual(sp["state"], "DOWN")
        self.assertIsNone(sp["remote"])
        leaf = ports[("leaf001", self.PER_LEAF + 2)]
        self.assertEqual(leaf["state"], "DOWN")
        self.assertIsNone(leaf["remote"])
        want = len(net_links(self.LEAVES, self.PER_LEAF, self.SPINES)) - 1
        self.assertEqual(doc["discovery"]["links"], want)
        # a down switch port's counters are still read (LinkDowned...)
        self.assertTrue(sp["read"])

    def test_lid_gone_mid_run(self):
        p = self.sim.popen([PROBE, "fabric", "--json", "--sweeps", "3",
                            "--interval", "1", "--timeout", "50",
                            "--retries", "1"],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           text=True)
        docs = []
        try:
            docs.append(json.loads(p.stdout.readline()))
            self.sim.console('Unlink "h00004"[1]')
            for _ in range(2):
                docs.append(json.loads(p.stdout.readline()))
            p.wait(60)
        finally:
            if p.poll() is None:
                p.kill()
            p.wait()
        self.assertEqual(p.returncode, 0, p.stderr.read())
        first, second, third = docs
        self.assertEqual(first["sweep"]["ports_failed"], 0)
        # the second sweep still has the old picture: h00004 stopped
        # answering, costs its timeout once and is named unread
        unread = {(u["description"], u["port"]): u["error"]
                  for u in second["unread"]}
        self.assertIn(("h00004", 1), unread)
        self.assertIn("timeout", unread[("h00004", 1)])
        self.assertEqual(second["sweep"]["dead_lids"], 1)
        self.assertLess(second["sweep"]["seconds"], 2.0)
        # the third cycle rediscovered: the host is gone, its leaf port down
        self.assertGreater(third["discovery"]["at"],
                           second["discovery"]["at"])
        _, nodes = ports_by_desc(third)
        self.assertNotIn("h00004", nodes)
        ports, _ = ports_by_desc(third)
        self.assertEqual(ports[("leaf002", 1)]["state"], "DOWN")
        self.assertEqual(third["unread"], [])


class Loss(unittest.TestCase):
    LEAVES, PER_LEAF, SPINES = 4, 4, 2

    def setUp(self):
        self.sim = make_sim(self.LEAVES, self.PER_LEAF, self.SPINES).start()

    def tearDown(self):
        self.sim.stop()

    def switches(self):
        return ([gen_fattree.leaf(i) for i in range(self.LEAVES)] +
                [gen_fattree.spine(i) for i in range(self.SPINES)])

    def test_ten_percent_loss(self):
        for sw in self.switches():
            # rate 2 on every port of every switch: about 10% of MADs lost
            self.sim.console('Error "%s" 2' % sw)
        doc = once(self.sim, "--retries", "6")
        s = doc["sweep"]
        total = self.LEAVES * (self.PER_LEAF + self.SPINES) + \
            self.SPINES * self.LEAVES + self.LEAVES * self.PER_LEAF
        self.assertEqual(doc["discovery"]["ports"], total)
        self.assertGreater(s["retries"], 0)
        loss = s["retries"] / s["mads"]
        self.assertGreater(loss, 0.02, s)
        self.assertLess(loss, 0.4, s)
        self.assertEqual(s["ports_read"], total, doc["unread"])
        self.assertEqual(doc["unread"], [])

    def test_leaf_stops_answering(self):
        first = once(self.sim)
        self.assertEqual(first["sweep"]["ports_failed"], 0)
        p = self.sim.popen([PROBE, "fabric", "--json", "--sweeps", "2",
                            "--interval", "1", "--timeout", "100",
                            "--retries", "2", "--rediscover", "3600"],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           text=True)
        try:
            json.loads(p.stdout.readline())
            # leaf003 drops everything from now on: it and its hosts are
            # out of reach, the rest of the fabric is not
            self.sim.console('Error "leaf003" 100')
            doc = json.loads(p.stdout.readline())
            p.wait(60)
        finally:
            if p.poll() is None:
                p.kill()
            p.wait()
        s = doc["sweep"]
        gone = {(u["description"], u["port"]) for u in doc["unread"]}
        want = {("leaf003", i + 1) for i in
                range(self.PER_LEAF + self.SPINES)}
        want |= {(gen_fattree.host(3 * self.PER_LEAF + h), 1)
                 for h in range(self.PER_LEAF)}
        self.assertEqual(gone, want)
        for u in doc["unread"]:
            self.assertRegex(u["error"], "timeout|stopped answering")
        self.assertEqual(s["dead_lids"], 1 + self.PER_LEAF)
        self.assertEqual(s["ports_failed"], len(want))
        # the leaf cost its timeout x tries once, not once per port:
        # 3 tries x 100 ms, with room for a loaded machine
        self.assertLess(s["seconds"], 1.5, s)
        self.assertGreater(s["unreachable"], 0)


class Cli(unittest.TestCase):
    def run_probe(self, *args, env=None):
        return subprocess.run([PROBE, "fabric", *args], capture_output=True,
                              text=True, timeout=60, env=env)

    def test_help(self):
        p = self.run_probe("--help")
        self.assertEqual(p.returncode, 0)
        self.assertIn("--once", p.stdout)
        self.assertIn("window", p.stdout)
        self.assertIn("RoCE", p.stdout)
        top = subprocess.run([PROBE, "--help"], capture_output=True,
                             text=True, timeout=60)
        self.assertIn("fabric [--once]", top.stdout)

    def test_bad_flags(self):
        p = self.run_probe("--window", "0")
        self.assertEqual(p.returncode, 2)
        self.assertIn("window", p.stderr)
        self.assertIn("4096", p.stderr)
        p = self.run_probe("--frobnicate")
        self.assertEqual(p.returncode, 2)
        self.assertIn("--frobnicate", p.stderr)
        p = self.run_probe("--set", "nosuch=1")
        self.assertEqual(p.returncode, 2)
        self.assertIn("nosuch", p.stderr)
        p = self.run_probe("--timeout", "abc")
        self.assertEqual(p.returncode, 2)
        p = self.run_probe("--sweeps", "0")
        self.assertEqual(p.returncode, 2)
        self.assertIn("--sweeps", p.stderr)
        p = self.run_probe("extra")
        self.assertEqual(p.returncode, 2)

    def test_print_config(self):
        p = self.run_probe("--print-config", "--window", "128")
        self.assertEqual(p.returncode, 0)
        self.assertIn("[fabric]", p.stdout)
        self.assertIn("window = 128", p.stdout)
        self.assertIn("retries = 3", p.stdout)

    def test_config_file(self):
        d = tempfile.mkdtemp(dir=os.environ.get("TMPDIR"))
        ini = os.path.join(d, "probe.ini")
        with open(ini, "w") as f:
            f.write("[probe]\ncollector_url = https://c:8443/api/v1/report\n"
                    "token_file = /etc/ibpulse/probe.token\n[daemon]\n"
                    "push_interval = 30\n[labels]\nleaf = leaf03\n"
                    "[fabric]\nretries = 5\nwindow = 32\n")
        p = self.run_probe("--print-config", "--config", ini, "--window",
                           "16")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("retries = 5", p.stdout)
        self.assertIn("window = 16", p.stdout)  # flags over the file
        self.assertIn("collector_url = https://c:8443/api/v1/report",
                      p.stdout)  # [probe]'s, unless [fabric] says
        self.assertIn("token_file = /etc/ibpulse/probe.token", p.stdout)
        # the rest of the probe reads the same file, [fabric] included
        q = subprocess.run([PROBE, "print-config", "--config", ini],
                           capture_output=True, text=True, timeout=60)
        self.assertEqual(q.returncode, 0, q.stderr)
        with open(ini, "a") as f:
            f.write("timeout = 0\n")
        p = self.run_probe("--print-config", "--config", ini)
        self.assertEqual(p.returncode, 2)
        self.assertIn("probe.ini:11: timeout", p.stderr)
        self.assertIn("[1, 60000]", p.stderr)
        # the shipped probe.ini: every [fabric] key, all loadable
        shipped = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                               "..", "..", "etc", "probe.ini")
        p = self.run_probe("--print-config", "--config", shipped)
        self.assertEqual(p.returncode, 0, p.stderr)

    def test_no_infiniband_port(self):
        # no simulator preloaded and (here) no RDMA hardware
        env = dict(os.environ)
        env.pop("LD_PRELOAD", None)
        p = self.run_probe("--once", "--ca", "nosuchca0", env=env)
        self.assertEqual(p.returncode, 1)
        self.assertIn("no InfiniBand port nosuchca0", p.stderr)


def poller_token(host):
    return "tok-%s-0123456789abcdef" % host


class Collector:
    """The real collector on 127.0.0.1:0 with a fresh database."""

    def __init__(self, tmp, extra=""):
        self.tmp, self.db = tmp, os.path.join(tmp, "ibpulse.db")
        self.port_file = os.path.join(tmp, "port")
        self.log = os.path.join(tmp, "collector.log")
        self.config = os.path.join(tmp, "collector.ini")
        with open(self.config, "w") as f:
            f.write("[collector]\nlisten = 127.0.0.1\nport = 0\ndb = %s\n"
                    "schema_dir = %s\nadmin_token = %s\n%s\n[tokens]\n"
                    % (self.db, SCHEMA, ADMIN, extra))
            for h in POLLERS:
                f.write("%s = %s\n" % (h, poller_token(h)))
                with open(os.path.join(tmp, h + ".token"), "w") as t:
                    t.write(poller_token(h) + "\n")
                os.chmod(os.path.join(tmp, h + ".token"), 0o600)
        with open(self.log, "w") as log:
            self.proc = subprocess.Popen(
                [COLLECTOR, "serve", "--config", self.config, "--port-file",
                 self.port_file], stdout=subprocess.DEVNULL, stderr=log)
        try:
            self.port = wait_port_file(self.port_file, self.proc)
        except RuntimeError as e:
            raise RuntimeError("collector: %s: %s" %
                               (e, open(self.log).read()))

    def url(self):
        return "http://127.0.0.1:%d/api/v1/report" % self.port

    def stop(self):
        self.proc.terminate()
        self.proc.wait(30)

    def q(self, sql, *args):
        con = sqlite3.connect(self.db)
        try:
            return con.execute(sql, args).fetchall()
        finally:
            con.close()

    def post(self, host, body, path="/api/v1/report", token=None):
        c = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)
        c.request("POST" if body is not None else "GET", path,
                  body=json.dumps(body) if body is not None else None,
                  headers={"Authorization": "Bearer " +
                           (token or poller_token(host)),
                           "Content-Type": "application/json"})
        r = c.getresponse()
        return r.status, r.read().decode()


def wait_port_file(path, proc, timeout=60):
    """The port a server wrote to @path once listening."""
    import time
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if proc.poll() is not None:
            raise RuntimeError("%s exited %d" % (proc.args[0],
                                                 proc.returncode))
        if os.path.exists(path):
            text = open(path).read().strip()
            if text:
                return int(text)
        time.sleep(0.05)
    raise RuntimeError("no port file " + path)


class WithCollector(unittest.TestCase):
    """A simulated subnet, the real collector, and pushes to it."""
    LEAVES, PER_LEAF, SPINES = 3, 3, 2

    EXTRA = ""

    def setUp(self):
        self.sim = make_sim(self.LEAVES, self.PER_LEAF, self.SPINES).start()
        self.col = Collector(self.sim.dir, self.EXTRA)

    def tearDown(self):
        self.col.stop()
        self.sim.stop()

    def push(self, host, *extra):
        return fabric(self.sim, "--once", "--collector", self.col.url(),
                      "--token-file",
                      os.path.join(self.sim.dir, host + ".token"),
                      "--host", host, *extra)


class CollectorStore(WithCollector):
    def test_stored_once_by_guid(self):
        self.sim.console('PerformanceSet "leaf001"[2] '
                         'PortCounters.SymbolErrorCounter=42')
        doc = once(self.sim)
        nodes = doc["discovery"]["nodes"]
        ports = doc["discovery"]["ports"]
        # 5 ports a report: several reports, no node split
        self.push("poller1", "--set", "chunk_ports=5")
        q = self.col.q
        self.assertEqual(q("SELECT count(*) FROM fabric_node")[0][0], nodes)
        self.assertEqual(q("SELECT count(*) FROM fabric_port")[0][0], ports)
        self.assertEqual(q("SELECT DISTINCT reporter FROM fabric_node"),
                         [("poller1",)])
        (v,), = q("SELECT s.value FROM fabric_series s JOIN fabric_port p "
                  "ON p.id = s.port_id JOIN fabric_node n ON n.guid = "
                  "p.node_guid WHERE n.description = 'leaf001' AND p.port "
                  "= 2 AND s.name = 'symbol_error'")
        self.assertEqual(v, 42)
        # the link's other end and the state, as discovered
        want = {(n["guid"], p["port"]): p for n in doc["nodes"]
                for p in n["ports"]}
        for guid, port, state, remote, rport, width in q(
                "SELECT node_guid, port, state, remote_guid, remote_port, "
                "width_active FROM fabric_port"):
            p = want[(guid, port)]
            self.assertEqual(state, 4)
            self.assertEqual(remote, p["remote"]["guid"])
            self.assertEqual(rport, p["remote"]["port"])
            self.assertEqual(width, 4)
        series = q("SELECT count(*) FROM fabric_series")[0][0]
        self.assertGreaterEqual(series, ports * 20)
        # a second poller of the same subnet: the same rows, its name
        self.sim.console('PerformanceSet "leaf001"[2] '
                         'PortCounters.SymbolErrorCounter=50')
        self.push("poller2")
        self.assertEqual(q("SELECT count(*) FROM fabric_node")[0][0], nodes)
        self.assertEqual(q("SELECT count(*) FROM fabric_port")[0][0], ports)
        self.assertEqual(q("SELECT count(*) FROM fabric_series")[0][0],
                         series)
        self.assertEqual(q("SELECT DISTINCT reporter FROM fabric_node"),
                         [("poller2",)])
        hist = q("SELECT h.value FROM fabric_sample h JOIN fabric_series s "
                 "ON s.id = h.series_id JOIN fabric_port p ON p.id = "
                 "s.port_id JOIN fabric_node n ON n.guid = p.node_guid "
                 "WHERE n.description = 'leaf001' AND p.port = 2 AND "
                 "s.name = 'symbol_error' ORDER BY h.ts")
        self.assertEqual([h[0] for h in hist], [42, 50])

    def test_bad_sections_refused(self):
        good = {"version": 1, "host": "poller1", "timestamp": 1.0,
                "devices": [], "fabric": {"nodes": [{
                    "guid": "0x0000000000abcdef", "type": 2,
                    "description": "sw", "ports": [{"port": 1, "counters":
                                                    {"symbol_error": 1}}]}]}}
        self.assertEqual(self.col.post("poller1", good)[0], 200)
        cases = [
            (("guid",), "0xabc", "fabric.nodes[0].guid"),
            (("type",), 7, "fabric.nodes[0].type"),
            (("ports", 0, "port"), 300, "fabric.nodes[0].ports[0].port"),
            (("ports", 0, "counters", "symbol_error"), -1,
             "fabric.nodes[0].ports[0].counters.symbol_error"),
        ]
        for path, value, field in cases:
            bad = json.loads(json.dumps(good))
            o = bad["fabric"]["nodes"][0]
            for k in path[:-1]:
                o = o[k]
            o[path[-1]] = value
            status, text = self.col.post("poller1", bad)
            self.assertEqual(status, 400, (path, text))
            self.assertIn(field, text)
        dup = json.loads(json.dumps(good))
        dup["fabric"]["nodes"].append(dup["fabric"]["nodes"][0])
        status, text = self.col.post("poller1", dup)
        self.assertEqual(status, 400)
        self.assertIn("duplicate node guid 0x0000000000abcdef", text)
        # nothing of the refused ones was stored
        self.assertEqual(self.col.q("SELECT value FROM fabric_series"),
                         [(1,)])


def sysfs_guid(guid):
    """0x0000000000100000 as the kernel prints it: 0000:0000:0010:0000."""
    g = guid[2:]
    return ":".join(g[i:i + 4] for i in range(0, 16, 4))


class PlannerGroups(WithCollector):
    """Without a group label, a probe's group is its leaf switch."""
    EXTRA = ("[planner]\nperiod = 600\nslot_seconds = 1\nduty_cycle = 0.5\n"
             "full_mesh_below = 16\nreplan_interval = 0\n"
             "group_label = leaf\n")

    def test_leaf_switch_is_the_group(self):
        doc = once(self.sim)
        guid = {n["description"]: n["guid"] for n in doc["nodes"]}
        self.push("poller1")
        # node00 has h00000's HCA (on leaf000), node01 h00003's (leaf001)
        for host, hca in (("node00", "h00000"), ("node01", "h00003")):
            st, text = self.col.post(host, {
                "version": 1, "host": host, "timestamp": 1.0,
                "devices": [{"name": "mlx5_0",
                             "node_guid": sysfs_guid(guid[hca]),
                             "ports": [{"port": 1, "state": 4}]}]})
            self.assertEqual(st, 200, text)
            st, text = self.col.post(host, {
                "version": 1, "host": host,
                "responder": {"address": "10.0.0.%d" % (len(host)),
                              "port": 18515},
                "labels": {"rack": "r1"}, "profiles": ["bw"],
                "ports": [{"device": "mlx5_0", "port": 1, "state": 4,
                           "link_layer": "InfiniBand", "lid": 1,
                           "subnet_prefix": "fe80:0000:0000:0000",
                           "pkeys": [65535], "gids": []}]},
                path="/api/v1/register")
            self.assertEqual(st, 200, text)
        st, text = self.col.post(None, None, path="/api/v1/coverage",
                                 token=ADMIN)
        self.assertEqual(st, 200, text)
        cov = json.loads(text)
        self.assertEqual(cov["group_pairs"], 1, cov)
        groups = {(p["group_a"], p["group_b"]) for p in cov["pairs"]}
        self.assertEqual({tuple(sorted(g)) for g in groups},
                         {("leaf000", "leaf001")})


class ExporterFamilies(WithCollector):
    LEAVES, PER_LEAF, SPINES = 2, 2, 2

    def setUp(self):
        super().setUp()
        pf = os.path.join(self.sim.dir, "exporter.port")
        self.exp_log = open(os.path.join(self.sim.dir, "exporter.log"), "w")
        self.exp = subprocess.Popen(
            [EXPORTER, "--db", self.col.db, "--listen", "127.0.0.1",
             "--port", "0", "--port-file", pf], stdout=self.exp_log,
            stderr=subprocess.STDOUT)
        self.exp_port = wait_port_file(pf, self.exp)

    def tearDown(self):
        self.exp.terminate()
        self.exp.wait(30)
        self.exp_log.close()
        super().tearDown()

    def scrape(self, query=""):
        status, _, body = harness.http("http://127.0.0.1:%d/metrics%s" %
                                       (self.exp_port, query))
        self.assertEqual(status, 200)
        return body.decode()

    def test_families(self):
        c = self.sim.console
        c('PerformanceSet "leaf001"[2] PortCounters.SymbolErrorCounter=42')
        c('PerformanceSet "spine01"[1] PortCounters.LinkDownedCounter=255')
        lids = self.sim.lids()
        self.sim.run(["ibportstate", str(lids["h00001"]), "1", "width", "1"],
                     check=True)
        doc = once(self.sim)
        guid = {n["description"]: n["guid"] for n in doc["nodes"]}
        # h00000's HCA as its probe reports it: sysfs's GUID form
        g = guid["h00000"][2:]
        sysfs = ":".join(g[i:i + 4] for i in range(0, 16, 4))
        status, text = self.col.post("node00", {
            "version": 1, "host": "node00", "timestamp": 1.0,
            "devices": [{"name": "mlx5_0", "node_guid": sysfs,
                         "ports": [{"port": 1, "state": 4}]}]})
        self.assertEqual(status, 200, text)
        self.push("poller1")
        body = self.scrape()
        with open(os.path.join(self.sim.dir, "metrics.txt"), "w") as f:
            f.write(body)
        m = harness.parse_samples(body)
        find = harness.find
        self.assertEqual(find(m, "ibpulse_port_symbol_error_total",
                              node_guid=guid["leaf001"], node_desc="leaf001",
                              port="2"), [42])
        self.assertEqual(find(m, "ibpulse_port_error_saturated",
                              node_desc="spine01", port="1",
                              counter="link_downed"), [1])
        self.assertEqual(find(m, "ibpulse_port_state_id",
                              node_desc="leaf000", port="1"), [4])
        # traffic in bytes, as a host port's
        self.assertTrue(find(m, "ibpulse_port_data_transmitted_bytes_total",
                             node_desc="spine00", port="1"))
        # every switch port, no HCA port (the probes report those)
        sw_ports = sum(len(n["ports"]) for n in doc["nodes"]
                       if n["type"] == "switch")
        states = [k for k in m if k[0] == "ibpulse_port_state_id" and
                  "node_guid" in dict(k[1])]
        self.assertEqual(len(states), sw_ports)
        # links: one sample per end, both ends joined
        links = [dict(k[1]) for k in m if k[0] == "ibpulse_link_info"]
        self.assertEqual(len(links), 2 * doc["discovery"]["links"])
        h0 = [l for l in links if l.get("host") == "node00"]
        self.assertEqual(h0, [{"host": "node00", "device": "mlx5_0",
                               "port": "1", "remote_node_guid":
                               guid["leaf000"], "remote_node_desc":
                               "leaf000", "remote_port": "1",
                               "remote_type": "switch"}])
        self.assertIn({"node_guid": guid["leaf000"], "node_desc": "leaf000",
                       "port": "1", "remote_host": "node00",
                       "remote_device": "mlx5_0", "remote_port": "1",
                       "remote_type": "ca"}, links)
        self.assertEqual(
            sum(l["remote_type"] == "switch" and
                not l.get("node_desc", "h").startswith("h")
                for l in links), 2 * self.LEAVES * self.SPINES)
        self.assertEqual(find(m, "ibpulse_link_degraded",
                              node_desc="leaf000", port="2"), [1])
        self.assertEqual(find(m, "ibpulse_link_degraded",
                              node_desc="leaf000", port="1"), [0])
        self.assertEqual(find(m, "ibpulse_link_width_lanes",
                              node_desc="leaf000", port="2"), [1])
        self.assertEqual(find(m, "ibpulse_link_width_enabled_lanes",
                              node_desc="leaf000", port="2"), [4])
        self.assertEqual(len(find(
            m, "ibpulse_fabric_node_last_report_timestamp_seconds",
            reporter="poller1")), len(doc["nodes"]))
        ok, out = harness.promtool_check(PROMTOOL, body)
        self.assertTrue(ok, out)
        # shards: every fabric sample in exactly one
        fab = lambda ms: {k for k in ms if k[0].startswith(
            ("ibpulse_link", "ibpulse_fabric")) or "node_guid" in dict(k[1])}
        parts = [fab(harness.parse_samples(self.scrape(
            "?shard=%d&shards=3" % i))) for i in range(3)]
        self.assertEqual(set().union(*parts), fab(m))
        self.assertEqual(sum(len(p) for p in parts), len(fab(m)))


    def test_dashboard_panels(self):
        dash = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..",
                            "..", "grafana", "dashboards",
                            "ibpulse-overview.json")
        fabric_names = ("node_guid", "ibpulse_link", "ibpulse_fabric")
        panels = [p for p in json.load(open(dash))["panels"]
                  if any(n in t["expr"] for t in p["targets"]
                         for n in fabric_names)]
        self.assertGreaterEqual(len(panels), 6)
        c = self.sim.console
        c('PerformanceSet "leaf001"[1] PortCounters.SymbolErrorCounter=5')
        lids = self.sim.lids()
        self.sim.run(["ibportstate", str(lids["h00001"]), "1", "width", "1"],
                     check=True)
        self.push("poller1")
        procs = harness.Procs(self.sim.dir)
        try:
            prom = harness.start_prometheus(
                procs, PROMETHEUS, self.sim.dir,
                [("ibpulse", "127.0.0.1:%d" % self.exp_port, None)])
            harness.prom_wait_value(
                prom, 'ibpulse_link_degraded{node_desc="leaf000",port="2"}',
                1)
            # an inter-switch link cut, errors rising on a switch port
            c('Unlink "spine01"[2]')
            c('PerformanceSet "leaf001"[1] '
              'PortCounters.SymbolErrorCounter=80')
            self.push("poller1")
            harness.prom_wait_value(
                prom, 'ibpulse_port_symbol_error_total{node_desc="leaf001",'
                'port="1"}', 80)
            down = [p for p in panels if p["title"] ==
                    "Inter-switch links down"][0]["targets"][0]["expr"]
            # both ends of the cut link: spine01 port 2, leaf001 port 4
            harness.prom_wait_value(prom, "sum(%s)" % down, 2)
            # every panel shows something (of a panel's several queries,
            # receive errors and recoveries stay at zero here)
            empty = [p["title"] for p in panels if not any(
                harness.prom_query(prom, t["expr"].replace(
                    "$__rate_interval", "1m")) for t in p["targets"])]
            self.assertEqual(empty, [])
        finally:
            procs.stop_all()


SCENARIOS = {"discovery": Discovery, "faults": Faults, "loss": Loss,
             "cli": Cli, "collector": CollectorStore,
             "exporter": ExporterFamilies, "planner": PlannerGroups}


def main():
    global PROBE, COLLECTOR, SCHEMA, EXPORTER, PROMTOOL, PROMETHEUS
    if len(sys.argv) not in (3, 5, 8) or sys.argv[2] not in SCENARIOS:
        sys.exit(__doc__)
    PROBE = os.path.abspath(sys.argv[1])
    if len(sys.argv) >= 5:
        COLLECTOR, SCHEMA = map(os.path.abspath, sys.argv[3:5])
    if len(sys.argv) == 8:
        EXPORTER, PROMTOOL, PROMETHEUS = (os.path.abspath(sys.argv[5]),
                                          sys.argv[6], sys.argv[7])
    if sys.argv[2] in ("collector", "exporter", "planner") and \
            not COLLECTOR or \
            sys.argv[2] == "exporter" and not EXPORTER:
        sys.exit("the %s scenario wants its programs (see usage)" %
                 sys.argv[2])
    simfabric.need_tools()
    simfabric.in_private_netns()
    suite = unittest.defaultTestLoader.loadTestsFromTestCase(
        SCENARIOS[sys.argv[2]])
    r = unittest.TextTestRunner(verbosity=2).run(suite)
    sys.exit(0 if r.wasSuccessful() else 1)


if __name__ == "__main__":
    main()
