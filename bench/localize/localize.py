#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Localization at scale, simulated (issue 19, item 5): ibsim + OpenSM
serve a fat tree of --hosts HCAs with real forwarding tables, the real
fabric role (ibpulse-probe fabric) pushes discovery, counters and tables
to the real collector, and bench/scale's fleet driver plays one probe
daemon per HCA through the API (registered with the simulated LIDs),
each result slowed only when its path, as the switches' tables route it
to the DLID the plan chose, crosses a faulty element. Faults are drawn
one at a time (loc_model.py: a host port at 60%, a PCIe link halved, a
leaf-spine cable at 50%, a whole spine, a flapping cable with counters),
then a healthy tail (an hour, time-scaled). Prints the table of
loc_table.py (recall, precision, top-1, periods to detection and to the
right suspect, false alarms per healthy hour, collector CPU per period)
and writes summary.json in --out.

Runs in a network namespace of its own (ibsim's sockets are abstract;
tests/fabric/simfabric.py): as root `unshare -n`, else `unshare -rn`.

    localize.py --collector BUILD/collector/ibpulse-collector \\
        --probe BUILD/probe/ibpulse-probe --schema-dir schema \\
        --hosts 512 --period 15 [--lmc 2] [--repeat 4] [--check]
"""
import argparse
import asyncio
import json
import os
import random
import shutil
import signal
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "scale"))
sys.path.insert(0, os.path.join(HERE, "..", "..", "tests", "fabric"))
import fleet  # noqa: E402
import fleet_conf  # noqa: E402
import fleet_run  # noqa: E402
import loc_model  # noqa: E402
import loc_score  # noqa: E402
import loc_sim  # noqa: E402
import loc_table  # noqa: E402
import simfabric  # noqa: E402
from fleet_http import HttpError  # noqa: E402


class LocDriver(fleet_run.Driver):
    """bench/scale's driver; the fabric faults turned on and off in the
    routed model, a flapping cable's counters planted in the simulator."""

    def __init__(self, a, fabric, faults, period, settings, pid, port, rng,
                 subnet):
        super().__init__(a, fabric, faults, period, settings, pid, port, rng)
        self.subnet = subnet
        self.tracker = loc_score.LocTracker(faults, fabric, period,
                                            subnet.routes, a.suspects)
        self.downs = {}

    def apply(self, f, now, on):
        if f.kind not in loc_model.FABRIC_KINDS:
            return super().apply(f, now, on)
        if on:
            f.t_on = now
        else:
            f.t_off = now
        loc_model.apply(self.fabric, f, on)
        if f.kind == "flap" and on:
            self.flap_counters(f)

    def flap_counters(self, f):
        """A flapping cable: LinkDowned and symbol errors rise at both
        ends, a period's worth each time."""
        n = self.downs[f.group] = self.downs.get(f.group, 0) + 1
        for _, sw, port in f.element.keys:
            self.subnet.plant(sw, port, LinkDownedCounter=n,
                              SymbolErrorCounter=40 * n)

    def progress(self, k):
        super().progress(k)
        for f in self.faults:
            if f.kind == "flap" and f.period_on < k < f.period_off:
                self.flap_counters(f)


def _opts_subnet(p):
    g = p.add_argument_group("subnet")
    g.add_argument("--hosts", type=int, default=64,
                   choices=sorted(loc_sim.SHAPES),
                   help="HCAs of the fat tree (loc_sim.SHAPES: leaves, "
                   "hosts per leaf, spines)")
    g.add_argument("--speed", choices=("ndr", "hdr"), default="ndr")
    g.add_argument("--probe", required=True,
                   help="the ibpulse-probe binary (its fabric role)")
    g.add_argument("--lmc", type=int, default=2, choices=range(0, 4),
                   help="opensm -l: each port owns 2^LMC LIDs, each routed "
                   "over its own spine (the planner's DLID chooses)")


def _opts_time(p):
    g = p.add_argument_group("time and faults")
    g.add_argument("--period", type=fleet.positive(int), default=10,
                   help="planner period in seconds (at least 10); the "
                   "shipped defaults' time keys are scaled to it")
    g.add_argument("--plan-interval", type=fleet.positive(float),
                   help="seconds between a host's plan fetches "
                   "(default: period / 5)")
    g.add_argument("--warmup", type=int, default=6,
                   help="healthy periods before the first fault")
    g.add_argument("--hold", type=fleet.positive(int), default=3,
                   help="periods a fault stays on")
    g.add_argument("--settle", type=int, default=2,
                   help="healthy periods after each repair")
    g.add_argument("--repeat", type=fleet.positive(int), default=4,
                   help="faults of each kind (--faults), one at a time")
    g.add_argument("--concurrent", type=fleet.positive(int), default=1,
                   help="faults on at once (on disjoint elements); 1: one "
                   "at a time")
    g.add_argument("--healthy", type=int,
                   help="healthy periods at the end (default: an hour of "
                   "the shipped period)")


def options(argv):
    p = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        epilog="bench/localize/README.md: the model and what is scored.",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    for add in (fleet._opts_collector, _opts_subnet, _opts_time,
                fleet._opts_faults, fleet._opts_driver):
        add(p)
    p.set_defaults(faults=",".join(loc_model.KINDS), suspects="suspects",
                   waves=1, tail=0)
    a = p.parse_args(argv)
    for k in ("warmup", "settle"):
        if getattr(a, k) < 0:
            p.error("--%s: must be 0 or more" % k)
    if a.healthy is not None and a.healthy < 0:
        p.error("--healthy: must be 0 or more")
    kinds = [k for k in a.faults.split(",") if k]
    bad = [k for k in kinds if k not in loc_model.KINDS]
    if bad:
        p.error("--faults: unknown kind '%s'; valid: %s"
                % (bad[0], ", ".join(loc_model.KINDS)))
    try:
        a.sets = fleet_conf.parse_sets(a.set)
    except ValueError as e:
        p.error(str(e))
    if a.period < 10:
        p.error("--period: %d is below the collector's minimum of 10 s"
                % a.period)
    a.kinds = kinds
    a.hosts_per_leaf = loc_sim.shape(a.hosts)[1]
    a.devices = a.ports = 1
    a.connections = a.connections or min(a.hosts, 512)
    a.plan_interval = a.plan_interval or a.period / 5.0
    return a


def run(a, out):
    rng = random.Random(a.seed)
    subnet = loc_sim.Subnet(a.hosts, a.lmc, out).start()
    proc = None
    try:
        fabric = loc_model.RoutedFabric(subnet, a.speed, rng, a.port_spread)
        faults = loc_model.draw(fabric, a.kinds, a.repeat, rng, a,
                                a.concurrent)
        a.waves = max(f.wave for f in faults) + 1
        defaults = fleet_conf.shipped(a.collector, out)
        shipped_period = float(defaults["planner"]["period"])
        keys, note = fleet_conf.scale(defaults, a.period)
        keys.update(a.sets)
        cfg = fleet_conf.write(out, fabric, keys, a.schema_dir,
                               [(loc_sim.POLLER, loc_sim.POLLER_TOKEN)])
        settings = fleet_conf.print_config(a.collector, cfg)
        period = int(float(settings["planner"]["period"]))
        a.tail = (a.healthy if a.healthy is not None
                  else int(round(3600.0 / shipped_period)))
        proc, port = fleet.start_collector(a, cfg, out)
        with open(os.path.join(out, "poller.log"), "w") as log:
            subnet.start_poller(
                a.probe, "http://127.0.0.1:%d/api/v1/report" % port,
                interval=max(1, period // 2),  # whole seconds
                route_interval=10 * period, log=log)
            d = LocDriver(a, fabric, faults, period, settings, proc.pid,
                          port, random.Random(a.seed + 1), subnet)
            summary = asyncio.run(d.main())
        summary["localize"] = loc_score.localize_score(
            d.tracker, d.begin, d.end, a.tail, period, shipped_period,
            a.late_periods)
        summary["subnet"] = {
            "leaves": subnet.leaves, "hosts_per_leaf": subnet.per,
            "spines": subnet.spines, "lmc": subnet.lmc,
            "links": 2 * subnet.leaves * subnet.spines,
            "start_seconds": round(subnet.seconds, 2),
            "unrouted_results": fabric.unrouted}
    finally:
        rc = fleet.stop_collector(proc) if proc else None
        subnet.stop()
    summary.update({"scaled": note, "settings": fleet_conf.summary(settings),
                    "collector_exit": rc,
                    "collector_log": fleet.log_counts(os.path.join(
                        out, "collector.log"))})
    if rc != 0:
        summary["collector_log_tail"] = fleet.tail(os.path.join(
            out, "collector.log"))
    return summary


def check(a, summary):
    """--check: every fault found and named, no healthy element named
    (the goals of speed and top-1 are the table's, not the check's)."""
    s, bad = summary["localize"], []
    for e in s["missed"]:
        bad.append("missed: %s (%s, %s): %s; results that could show it: %d"
                   % (e["element"], e["group"], e["label"], e["reason"],
                      e["tests"]))
    for d in s["false"]:
        bad.append("healthy element named: " + d)
    for b in summary.get("behind", []):
        bad.append("the run fell behind: " + b)
    if summary["collector_exit"] != 0:
        bad.append("the collector exited %s" % summary["collector_exit"])
    return bad


def interrupted(signum, frame):
    raise KeyboardInterrupt(signal.Signals(signum).name)


def main(argv):
    a = options(argv)
    simfabric.need_tools(["dump_fts"])
    simfabric.in_private_netns()
    signal.signal(signal.SIGTERM, interrupted)
    signal.signal(signal.SIGINT, interrupted)
    out = a.out or tempfile.mkdtemp(prefix="ibpulse-localize-")
    os.makedirs(out, exist_ok=True)
    ok = False
    try:
        summary = run(a, out)
        with open(os.path.join(out, "summary.json"), "w") as f:
            json.dump(summary, f, indent=1)
        print(loc_table.render([summary]))
        problems = check(a, summary) if a.check else []
        for line in problems:
            print("FAIL: " + line, file=sys.stderr)
        ok = not problems
        return 0 if ok else 1
    except (RuntimeError, HttpError, OSError, ValueError) as e:
        print("localize: %s" % e, file=sys.stderr)
        return 1
    except KeyboardInterrupt as e:
        print("localize: interrupted (%s)" % e, file=sys.stderr)
        return 130
    finally:
        if not a.out:
            if ok:
                shutil.rmtree(out, ignore_errors=True)
            else:
                print("localize: run directory kept: %s" % out,
                      file=sys.stderr)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
