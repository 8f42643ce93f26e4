# SPDX-License-Identifier: MIT
"""The simulated subnet of the localization bench: ibsim serving a
two-level fat tree (tests/fabric/gen_fattree.py), OpenSM's routes (`opensm
-o`, with LMC when asked: 2^LMC LIDs a port, each routed over its own
spine), the real fabric role (`ibpulse-probe fabric`) pushing discovery,
counters and forwarding tables to the collector, and the driver's own
copy of the routes, read with infiniband-diags' `dump_fts` (not with
ibpulse's code: the driver slows a result only when the path the
switches' tables give crosses a faulty element, and must not share a bug
with what it measures).

The tree: leaf L carries hosts L*PER .. L*PER+PER-1 on ports 1..PER and
spine S on port PER+1+S; spine S port L+1 is leaf L (gen_fattree.py).
"""
import os
import re
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "tests", "fabric"))
import gen_fattree  # noqa: E402
import simfabric  # noqa: E402

POLLER = "fabric-poller"
POLLER_TOKEN = "tok-fabric-poller-0123456789abcdef"

# hosts -> (leaves, hosts per leaf, spines): bench/fabric's shapes, and
# the CI's 128
SHAPES = {64: (8, 8, 2), 128: (16, 8, 4), 512: (32, 16, 8),
          2000: (100, 20, 10)}


def shape(hosts):
    if hosts in SHAPES:
        return SHAPES[hosts]
    raise ValueError("--hosts %d: the subnet's shapes are %s hosts" % (
        hosts, ", ".join(str(k) for k in sorted(SHAPES))))


def parse_dump_fts(text):
    """`dump_fts -a -n`: {switch name: (guid, {LID: port})}."""
    out, cur = {}, None
    for line in text.splitlines():
        m = re.match(r"^Unicast lids .* guid (0x[0-9a-f]+) \(([^)]*)\)", line)
        if m:
            cur = {}
            out[m.group(2)] = (int(m.group(1), 16), cur)
            continue
        m = re.match(r"^0x([0-9a-f]{4}) (\d{3})", line)
        if m and cur is not None:
            cur[int(m.group(1), 16)] = int(m.group(2))
    return out


class Routes:
    """The tables of a fat tree (parse_dump_fts()) walked as the switches
    forward: the directed links between switches and the switches a
    packet from host @src to LID @dlid crosses."""

    def __init__(self, tables, leaves, per, spines):
        self.tables, self.leaves, self.per, self.spines = (tables, leaves,
                                                           per, spines)
        self.guid = {name: g for name, (g, _) in tables.items()}
        self.memo = {}

    @staticmethod
    def leaf(i):
        return "leaf%03d" % i

    @staticmethod
    def spine(i):
        return "spine%02d" % i

    def peer(self, name, port):
        """What switch port @port of @name leads to: ("host", idx) or
        ("switch", name)."""
        if name.startswith("leaf"):
            leaf = int(name[4:])
            if port <= self.per:
                return ("host", leaf * self.per + port - 1)
            return ("switch", self.spine(port - self.per - 1))
        return ("switch", self.leaf(port - 1))

    def path(self, src, dlid):
        """(links, switches) of host @src to @dlid: links as (switch,
        egress port) between switches, in order; None when the tables
        lead nowhere (a hole, a loop)."""
        key = (src, dlid)
        if key in self.memo:
            return self.memo[key]
        cur = self.leaf(src // self.per)
        links, switches = [], []
        for _ in range(8):
            switches.append(cur)
            port = self.tables[cur][1].get(dlid, 255)
            if port in (0, 255):
                self.memo[key] = None if port == 255 else (links, switches)
                return self.memo[key]
            kind, nxt = self.peer(cur, port)
            if kind == "host":
                self.memo[key] = (links, switches)
                return self.memo[key]
            links.append((cur, port))
            cur = nxt
        self.memo[key] = None
        return None


class Subnet:
    """ibsim + OpenSM for @hosts (SHAPES), in @work."""

    def __init__(self, hosts, lmc, work):
        self.leaves, self.per, self.spines = shape(hosts)
        self.hosts, self.lmc, self.work = hosts, lmc, work
        net = os.path.join(work, "fat.net")
        with open(net, "w") as f:
            f.write(gen_fattree.generate(self.leaves, self.per, self.spines))
        nodes = hosts + self.leaves + self.spines
        limits = ["-N", str(max(2048, 2 * nodes)),
                  "-S", str(max(256, 2 * (self.leaves + self.spines))),
                  "-P", str(max(13312, 4 * (hosts + self.leaves * (
                      self.per + self.spines) + self.spines * self.leaves)))]
        self.sim = simfabric.Sim(net, limits=limits,
                                 workdir=os.path.join(work, "sim"),
                                 sm_args=["-l", str(lmc)] if lmc else [])
        os.makedirs(self.sim.dir, exist_ok=True)
        self.poller = None
        self.routes = None
        self.lids = {}

    def start(self):
        t0 = time.monotonic()
        self.sim.start(timeout=600)
        self.lids = self.sim.lids()
        p = self.sim.run(["dump_fts", "-a", "-n"], timeout=600, check=True)
        tables = parse_dump_fts(p.stdout)
        want = self.leaves + self.spines
        if len(tables) != want:
            raise RuntimeError("dump_fts read %d tables of %d switches" % (
                len(tables), want))
        self.routes = Routes(tables, self.leaves, self.per, self.spines)
        self.seconds = time.monotonic() - t0
        return self

    def host_lid(self, idx):
        return self.lids["h%05d" % idx]

    def start_poller(self, probe, url, interval, route_interval, log):
        """The fabric role: one push with the tables first (so the first
        plans have routes), then its loop in the background."""
        tok = os.path.join(self.work, "poller.token")
        with open(tok, "w") as f:
            f.write(POLLER_TOKEN + "\n")
        os.chmod(tok, 0o600)
        common = ["--collector", url, "--token-file", tok, "--host", POLLER,
                  "--timeout", "1000", "--log-level", "warn"]
        p = self.sim.run([probe, "fabric", "--once", *common], timeout=600)
        if p.returncode:
            raise RuntimeError("fabric --once exited %d: %s" % (
                p.returncode, p.stderr[-1500:]))
        self.poller = self.sim.popen(
            [probe, "fabric", *common, "--interval", "%d" % interval,
             "--route-interval", "%d" % route_interval],
            stdout=subprocess.DEVNULL, stderr=log)
        # a loop that refused its flags (a 7.5 s interval once) must stop
        # the run, not leave it without counters
        time.sleep(1)
        if self.poller.poll() is not None:
            raise RuntimeError("the fabric role exited %d (%s)" % (
                self.poller.returncode, log.name))

    def plant(self, switch, port, **counters):
        """Set PMA counters of a switch port through the ibsim console
        (perfquery's names: LinkDownedCounter=3...), as a flapping link
        counts them; the poller's next sweep reads them."""
        for name, v in counters.items():
            self.sim.console('PerformanceSet "%s"[%d] PortCounters.%s=%d' % (
                switch, port, name, v))

    def stop(self):
        if self.poller and self.poller.poll() is None:
            self.poller.terminate()
            try:
                self.poller.wait(10)
            except subprocess.TimeoutExpired:
                self.poller.kill()
                self.poller.wait()
        self.sim.stop()
