#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The fabric sweep against the anchors' methods on the same simulated fabric.

On generated two-level fat trees served by ibsim (tests/fabric/simfabric.py,
tests/fabric/gen_fattree.py), times one full counter sweep of every port:

  ibpulse sweep   `ibpulse-probe fabric` in its loop: the steady-state
                  sweep (discovery done, PMA capabilities known), from its
                  own JSON, with its CPU per sweep and the process's RSS
  ibpulse once    `ibpulse-probe fabric --once --json`: process start,
                  discovery, ClassPortInfo, sweep (what a cron job pays)
  ibqueryerrors   plain, and with guilbaults/infiniband-exporter's flags
                  (--verbose --details --suppress-common --data
                  --report-port --switch --ca): discovery and one PMA query
                  after another, per scrape
  perfquery/sw    treydock/infiniband_exporter's method: one
                  `perfquery -l -x -G GUID PORTS` per switch, one after
                  another (its default --perfquery.max-concurrent=1)

under three conditions: clean; with MAD loss (ibsim's `Error "SWITCH" 1`
on every switch, as the issue measured); and with a per-MAD round trip
added by bench/fabric/maddelay.so (IBPULSE_MAD_DELAY_US). Prints a
Markdown table and writes the raw figures as JSON.

With routes (--what), a second table: one read of every switch's linear
forwarding table,

  ibpulse tables  `ibpulse-probe fabric` in its loop with route_interval 1:
                  the steady-state read (LID-routed SubnGets through the
                  MAD window), from its own JSON
  dump_fts        infiniband-diags' dump of every switch's table (a
                  discovery, then ibroute's directed-route SMPs one at a
                  time), what an operator runs
  route_path      bench/fabric/route_rate: route_path() calls a second over
                  the tables just read, every CA port to LIDs spread over
                  every port

clean and with the per-MAD delay, and clean with LMC 2 (`opensm -l 2`:
four LIDs a port, four times the table).

usage: bench.py PROBE MADDELAY_SO [--route-rate ROUTE_RATE]
                [--sizes 512,2000] [--reps N] [--delay-us US]
                [--what sweep,routes] [--json OUT]
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "tests", "fabric"))
import gen_fattree  # noqa: E402
import simfabric  # noqa: E402

# hosts -> (leaves, hosts per leaf, spines)
SHAPES = {512: (32, 16, 8), 2000: (100, 20, 10), 64: (8, 8, 2)}


def med(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


class Bench:
    def __init__(self, sim, probe, shim, reps, delay_us, route_rate=None):
        self.sim, self.probe, self.shim = sim, probe, shim
        self.reps, self.delay_us = reps, delay_us
        self.route_rate_bin = route_rate
        self.delay = False

    def env(self):
        env = self.sim.env()
        if self.delay:
            env["LD_PRELOAD"] = self.shim + ":" + env["LD_PRELOAD"]
            env["IBPULSE_MAD_DELAY_US"] = str(self.delay_us)
        return env

    def timed(self, argv, timeout=900):
        t0 = time.monotonic()
        p = subprocess.run(argv, env=self.env(), capture_output=True,
                           text=True, timeout=timeout, cwd=self.sim.dir)
        return time.monotonic() - t0, p

    # ------------------------------------------------------------ tools
    def ibpulse_sweep(self, *extra):
        """Steady-state sweeps from the loop's JSON lines, and its RSS."""
        rss = os.path.join(self.sim.dir, "ibpulse-loop.rss")
        # GNU time execs the probe from its own small process: the RSS of
        # a child forked from this Python would count in ru_maxrss
        argv = ["/usr/bin/time", "-o", rss, "-f", "%M", self.probe,
                "fabric", "--json", "--interval", "1",
                "--sweeps", str(self.reps + 1), *extra]
        err = open(os.path.join(self.sim.dir, "ibpulse-loop.err"), "w+")
        p = subprocess.Popen(argv, env=self.env(), cwd=self.sim.dir,
                             stdout=subprocess.PIPE, stderr=err, text=True)
        docs = [json.loads(line) for line in p.stdout]
        p.wait()
        if p.returncode or not docs:
            err.seek(0)
            return {"error": "exit %d: %s" % (
                p.returncode, err.read().strip().splitlines()[-1:])}
        steady = [d["sweep"] for d in docs[1:]] or [docs[0]["sweep"]]
        return {
            "sweeps": steady,
            "seconds": med([s["seconds"] for s in steady]),
            "seconds_min": min(s["seconds"] for s in steady),
            "seconds_max": max(s["seconds"] for s in steady),
            "cpu_seconds": med([s["cpu_seconds"] for s in steady]),
            "mads": med([s["mads"] for s in steady]),
            "retries": med([s["retries"] for s in steady]),
            "ports_read": min(s["ports_read"] for s in steady),
            "ports_total": docs[-1]["discovery"]["ports"],
            "ports_failed": max(s["ports_failed"] for s in steady),
            "rss_kb": int(open(rss).read().split()[-1]),
            "first_discovery_s": docs[0]["discovery"]["seconds"],
        }

    def ibpulse_once(self):
        """--once with the text summary (its JSON costs as much again)."""
        walls, read, total = [], [], 0
        for _ in range(self.reps):
            wall, p = self.timed([self.probe, "fabric", "--once"])
            if p.returncode:
                return {"error": "exit %d: %s" % (
                    p.returncode, p.stderr.strip().splitlines()[-1:])}
            m = re.search(r"(\d+) ports, .*\n.*sweep: (\d+) ports read",
                          p.stdout)
            walls.append(wall)
            read.append(int(m.group(2)) if m else 0)
            total = int(m.group(1)) if m else 0
        return {"seconds": med(walls), "ports_read": min(read),
                "ports_total": total}

    def ibqueryerrors(self, flags):
        """Wall time; ports checked, minus the PMA queries that failed."""
        walls, read, failed, exits, stderr = [], [], [], [], []
        for _ in range(self.reps):
            wall, p = self.timed(["ibqueryerrors", *flags])
            walls.append(wall)
            m = re.search(r"(\d+) ports checked", p.stdout)
            # a port is not read when its PortCounters query failed
            bad = set(re.findall(r"IB_GSI_PORT_COUNTERS query failed on "
                                 r"([^,]*),.*? port (\d+)", p.stderr))
            read.append(max(0, (int(m.group(1)) if m else 0) - len(bad)))
            failed.append(len(re.findall(r"query failed", p.stderr)))
            exits.append(p.returncode)
            stderr.append(p.stderr[-400:])
        return {"seconds": med(walls), "ports_read": min(read),
                "ports_read_max": max(read), "failed_queries": max(failed),
                "exit_codes": exits, "stderr_tails": stderr}

    def perfquery_per_switch(self, switches):
        walls, read, fails = [], [], []
        for _ in range(self.reps):
            n = bad = 0
            t0 = time.monotonic()
            for guid, ports in switches:
                p = subprocess.run(
                    ["perfquery", "-l", "-x", "-G", guid,
                     ",".join(str(x) for x in ports)],
                    env=self.env(), capture_output=True, text=True,
                    timeout=300, cwd=self.sim.dir)
                n += p.stdout.count("PortSelect:")
                bad += p.returncode != 0
            walls.append(time.monotonic() - t0)
            read.append(n)
            fails.append(bad)
        return {"seconds": med(walls), "ports_read": min(read),
                "ports_total": sum(len(p) for _, p in switches),
                "failed_switches": max(fails)}


    # ------------------------------------------------------------ routes
    def ibpulse_routes(self):
        """Steady-state table reads from the loop's JSON (one a cycle)."""
        argv = [self.probe, "fabric", "--json", "--interval", "1",
                "--route-interval", "1", "--sweeps", str(self.reps + 1)]
        p = subprocess.run(argv, env=self.env(), capture_output=True,
                           text=True, timeout=900, cwd=self.sim.dir)
        docs = [json.loads(line) for line in p.stdout.splitlines() if line]
        if p.returncode or not docs:
            return {"error": "exit %d: %s" % (
                p.returncode, p.stderr.strip().splitlines()[-1:])}
        reads = [d["routes"] for d in docs]
        steady = reads[1:] or reads
        return {
            "reads": steady,
            "seconds": med([r["seconds"] for r in steady]),
            "seconds_min": min(r["seconds"] for r in steady),
            "seconds_max": max(r["seconds"] for r in steady),
            "cpu_seconds": med([r["cpu_seconds"] for r in steady]),
            "mads": med([r["mads"] for r in steady]),
            "retries": med([r["retries"] for r in steady]),
            "tables": min(r["switches"] - r["switches_failed"]
                          for r in steady),
            "switches": reads[-1]["switches"],
            "fresh": len({r["at"] for r in steady}),
        }

    def dump_fts(self):
        """Wall time of `dump_fts`, and the tables it printed."""
        walls, tables, exits = [], [], []
        for _ in range(self.reps):
            wall, p = self.timed(["dump_fts"])
            walls.append(wall)
            tables.append(p.stdout.count("Unicast lids"))
            exits.append(p.returncode)
        return {"seconds": med(walls), "tables": min(tables),
                "exit_codes": exits}

    def route_rate(self):
        p = subprocess.run([self.route_rate_bin, "200000"], env=self.env(),
                           capture_output=True, text=True, timeout=900,
                           cwd=self.sim.dir)
        if p.returncode:
            return {"error": "exit %d: %s" % (
                p.returncode, p.stderr.strip().splitlines()[-1:])}
        return json.loads(p.stdout)


def switch_ports(sim):
    """[(switch GUID, [connected ports])] from ibnetdiscover -p."""
    p = sim.run(["ibnetdiscover", "-p"], check=True)
    sw = {}
    for line in p.stdout.splitlines():
        m = re.match(r"^SW\s+\d+\s+(\d+)\s+(0x[0-9a-f]+)\s.*\s-\s", line)
        if m:
            sw.setdefault(m.group(2), []).append(int(m.group(1)))
    return sorted((g, sorted(ps)) for g, ps in sw.items())


def new_sim(hosts, sm_args=()):
    """A Sim of the generated fat tree for @hosts, ibsim's limits raised."""
    leaves, per_leaf, spines = SHAPES[hosts]
    work = tempfile.mkdtemp(prefix="fabric-bench-",
                            dir=os.environ.get("TMPDIR"))
    net = os.path.join(work, "fat.net")
    with open(net, "w") as f:
        f.write(gen_fattree.generate(leaves, per_leaf, spines))
    nodes = hosts + leaves + spines
    limits = ["-N", str(max(2048, 2 * nodes)), "-S", str(max(256, 2 * (
        leaves + spines))), "-P", str(max(13312, 4 * (hosts + leaves * (
            per_leaf + spines) + spines * leaves)))]
    return simfabric.Sim(net, limits=limits, workdir=work, sm_args=sm_args)


def route_rows(hosts, args, lmc):
    """The tables' rows of the second table, clean and delayed (LMC 0)."""
    leaves, _, spines = SHAPES[hosts]
    rows = []
    with new_sim(hosts, ["-l", str(lmc)] if lmc else []) as sim:
        b = Bench(sim, args.probe, args.shim, args.reps, args.delay_us,
                  args.route_rate)
        for cond in ("clean", "delay") if not lmc else ("clean",):
            b.delay = cond == "delay"
            r = {"fabric": "%d hosts, %d switches, LMC %d" % (
                hosts, leaves + spines, lmc), "condition": cond}
            r["ibpulse_routes"] = b.ibpulse_routes()
            r["dump_fts"] = b.dump_fts()
            if cond == "clean" and args.route_rate:
                r["route_rate"] = b.route_rate()
            rows.append(r)
            print("# %s, %s routes done" % (r["fabric"], cond),
                  file=sys.stderr)
    return rows


def run_size(hosts, args):
    leaves, per_leaf, spines = SHAPES[hosts]
    rows = []
    if "sweep" not in args.what:
        return rows
    with new_sim(hosts) as sim:
        # -s 0: serve SA queries but sweep no more; an SM re-sweeping
        # through MAD loss leaves ports in INIT, where no GMP passes
        sim.opensm_background(args=["-s", "0"])
        b = Bench(sim, args.probe, args.shim, args.reps, args.delay_us,
                  args.route_rate)
        switches = switch_ports(sim)
        switch_names = [gen_fattree.leaf(i) for i in range(leaves)] + \
            [gen_fattree.spine(i) for i in range(spines)]
        for cond in ("clean", "loss", "delay"):
            b.delay = cond == "delay"
            if cond == "loss":
                for s in switch_names:
                    sim.console('Error "%s" 1' % s)
            r = {"fabric": "%d hosts, %d switches" % (hosts, leaves + spines),
                 "condition": cond}
            r["ibpulse_sweep"] = b.ibpulse_sweep()
            if cond == "loss":
                r["ibpulse_sweep_r6"] = b.ibpulse_sweep("--retries", "6")
            r["ibpulse_once"] = b.ibpulse_once()
            r["ibqueryerrors"] = b.ibqueryerrors([])
            r["ibqueryerrors_guilbaults"] = b.ibqueryerrors(
                ["--verbose", "--details", "--suppress-common", "--data",
                 "--report-port", "--switch", "--ca"])
            r["perfquery_per_switch"] = b.perfquery_per_switch(switches)
            if cond == "loss":
                for s in switch_names:
                    sim.console('Error "%s" 0' % s)
            rows.append(r)
            print("# %s, %s done" % (r["fabric"], cond), file=sys.stderr)
    return rows


def fmt(x, nd=3):
    return "-" if x is None else ("%.*f" % (nd, x))


def table(rows, delay_us):
    out = ["| fabric | condition | method | seconds (median) | ports read "
           "| notes |", "|---|---|---|---|---|---|"]
    names = [("ibpulse_sweep", "ibpulse sweep (loop)"),
             ("ibpulse_sweep_r6", "ibpulse sweep, --retries 6"),
             ("ibpulse_once", "ibpulse --once (discovery + sweep)"),
             ("ibqueryerrors", "ibqueryerrors"),
             ("ibqueryerrors_guilbaults", "ibqueryerrors, guilbaults' flags"),
             ("perfquery_per_switch", "perfquery -x per switch (treydock)")]
    for r in rows:
        cond = r["condition"] if r["condition"] != "delay" else \
            "%d us per MAD" % delay_us
        for key, label in names:
            if key not in r:
                continue
            v = r[key]
            if "error" in v:
                out.append("| %s | %s | %s | - | - | %s |" %
                           (r["fabric"], cond, label, v["error"]))
                continue
            total = v.get("ports_total")
            ports = "%d" % v["ports_read"] + (" / %d" % total if total
                                              else "")
            notes = []
            if key.startswith("ibpulse_sweep"):
                notes.append("range %s-%s s; %d MADs, %d retries; CPU %s s "
                             "per sweep; RSS %.1f MiB"
                             % (fmt(v["seconds_min"]), fmt(v["seconds_max"]),
                                v["mads"], v["retries"],
                                fmt(v["cpu_seconds"]), v["rss_kb"] / 1024))
            if key.startswith("ibqueryerrors"):
                if v["ports_read_max"] != v["ports_read"]:
                    ports += " to %d" % v["ports_read_max"]
                if v["failed_queries"]:
                    notes.append("up to %d PMA queries failed"
                                 % v["failed_queries"])
                # exit 1 is "errors beyond threshold" (ibsim counts each
                # dropped MAD in PortRcvErrors); below 0 a signal
                crashed = [c for c in v["exit_codes"] if c < 0 or c > 1]
                if crashed:
                    notes.append("crashed or failed (exit %s) in %d of %d "
                                 "runs" % ("/".join(
                                     str(c) for c in sorted(set(crashed))),
                                     len(crashed), len(v["exit_codes"])))
            if key == "perfquery_per_switch" and v["failed_switches"]:
                notes.append("%d switches failed" % v["failed_switches"])
            out.append("| %s | %s | %s | %s | %s | %s |" %
                       (r["fabric"], cond, label, fmt(v["seconds"]), ports,
                        "; ".join(notes)))
    return "\n".join(out)


def route_table(rows, delay_us):
    out = ["| fabric | condition | method | seconds (median) | tables read "
           "| notes |", "|---|---|---|---|---|---|"]
    for r in rows:
        cond = r["condition"] if r["condition"] != "delay" else \
            "%d us per MAD" % delay_us
        v = r["ibpulse_routes"]
        if "error" in v:
            out.append("| %s | %s | ibpulse tables (loop) | - | - | %s |" %
                       (r["fabric"], cond, v["error"]))
        else:
            out.append("| %s | %s | ibpulse tables (loop) | %s | %d / %d | "
                       "range %s-%s s; %d SubnGets, %d retries; CPU %s s "
                       "per read |" % (
                           r["fabric"], cond, fmt(v["seconds"]),
                           v["tables"], v["switches"],
                           fmt(v["seconds_min"]), fmt(v["seconds_max"]),
                           v["mads"], v["retries"], fmt(v["cpu_seconds"])))
        d = r["dump_fts"]
        bad = [c for c in d["exit_codes"] if c]
        out.append("| %s | %s | dump_fts | %s | %d | %s |" % (
            r["fabric"], cond, fmt(d["seconds"]), d["tables"],
            "exit %s in %d of %d runs" % (
                "/".join(map(str, sorted(set(bad)))), len(bad),
                len(d["exit_codes"])) if bad else ""))
        q = r.get("route_rate")
        if q and "error" not in q:
            out.append("| %s | %s | route_path() | %s for %d paths | - | "
                       "%.0f paths a second (%.1f switches each, %d "
                       "failed); the net built in %s s |" % (
                           r["fabric"], cond, fmt(q["seconds"]),
                           q["paths"], q["per_second"], q["hops_mean"],
                           q["failed"], fmt(q["build_seconds"])))
        elif q:
            out.append("| %s | %s | route_path() | - | - | %s |" % (
                r["fabric"], cond, q["error"]))
    return "\n".join(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("probe")
    ap.add_argument("shim")
    ap.add_argument("--route-rate", default=None,
                    help="bench/fabric/route_rate, for the paths a second")
    ap.add_argument("--what", default="sweep,routes",
                    help="sweep, routes or both (comma-separated)")
    ap.add_argument("--sizes", default="512,2000")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--delay-us", type=int, default=100)
    ap.add_argument("--json", default=None)
    args = ap.parse_args()
    args.probe = os.path.abspath(args.probe)
    args.shim = os.path.abspath(args.shim)
    if args.route_rate:
        args.route_rate = os.path.abspath(args.route_rate)
    args.what = set(args.what.split(","))
    if not args.what or args.what - {"sweep", "routes"}:
        ap.error("--what: sweep, routes or both")
    sizes = [int(s) for s in args.sizes.split(",")]
    for s in sizes:
        if s not in SHAPES:
            ap.error("--sizes: one of %s" % ", ".join(map(str, SHAPES)))
    simfabric.need_tools(("dump_fts",) if "routes" in args.what else ())
    simfabric.in_private_netns()
    rows, routes = [], []
    for s in sizes:
        rows += run_size(s, args)
        if "routes" in args.what:
            routes += route_rows(s, args, 0) + route_rows(s, args, 2)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"sweep": rows, "routes": routes}, f, indent=1)
    if rows:
        print(table(rows, args.delay_us))
    if routes:
        print("\n" + route_table(routes, args.delay_us))


if __name__ == "__main__":
    main()
