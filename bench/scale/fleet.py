#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Fleet driver: N simulated probe daemons against the real collector,
through its documented API only (docs/api.md), with faults injected at
random; scores the suspects the collector names (issue 17).

It starts BUILD's ibpulse-collector on a fresh database (a tokens file of
one token per host, an admin token, --port 0 --port-file) and plays each
host as docs/probe.md describes the daemon: register (a `leaf` label,
HCAs and ports, rails by port index), one counter report (rate, state,
PCIe), the plan fetched at registration and every --plan-interval
seconds, each test the host initiates run at its not_before (simulated:
`started` = not_before, posted once the profile's length has passed, with
a unique id and the plan id), results from the noise model in
fleet_model.py (bench/scale/README.md: the model and its sources).

Timeline, in planner periods: --warmup healthy periods, then --waves
waves of faults (each on for --hold periods, then repaired, then
--settle periods), then --tail healthy periods. The faults (--faults) are
drawn from --seed: a port at 90%, 75% and 50%, a device whose PCIe link
halved, a flapping port, 2 to 5 ports at once (some in one leaf and rail).
GET /api/v1/regressions is polled every --poll seconds and scored: faults
found, periods from each fault's first test to the right suspect, false
suspects per 100 periods, suspects left open after the repair, the
collector's CPU per period, p50/p99 of the plan and results requests, and
the driver's own CPU. Prints a table (fleet_table.py) and writes
summary.json in --out; --check exits 1 naming every fault missed or named
late and every healthy element named.

    fleet.py --collector BUILD/collector/ibpulse-collector \\
             --schema-dir schema --hosts 512 --period 15 [--set planner.X=Y]
"""
import argparse
import asyncio
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fleet_conf  # noqa: E402
import fleet_model  # noqa: E402
import fleet_table  # noqa: E402
from fleet_http import HttpError  # noqa: E402
from fleet_run import Driver  # noqa: E402


def positive(kind):
    def conv(s):
        try:
            v = kind(s)
        except ValueError:
            raise argparse.ArgumentTypeError("'%s' is not a %s" % (
                s, "number" if kind is float else "whole number"))
        if v <= 0:
            raise argparse.ArgumentTypeError("'%s' must be above 0" % s)
        return v
    return conv


def share(s):
    try:
        v = float(s)
    except ValueError:
        raise argparse.ArgumentTypeError("'%s' is not a number" % s)
    if not 0 <= v <= 1:
        raise argparse.ArgumentTypeError("'%s' is not a share in [0, 1]" % s)
    return v


def _opts_collector(p):
    g = p.add_argument_group("collector")
    g.add_argument("--collector", required=True,
                   help="the ibpulse-collector binary (BUILD/collector/...)")
    g.add_argument("--schema-dir", required=True, help="schema/ of the tree")
    g.add_argument("--set", action="append", default=[], metavar="S.KEY=V",
                   help="any collector key, on top of the driver's "
                   "(planner.period=20, suspect.bad_results=3); repeatable")


def _opts_fabric(p):
    g = p.add_argument_group("fabric")
    g.add_argument("--hosts", type=positive(int), default=128)
    g.add_argument("--hosts-per-leaf", type=positive(int), default=32,
                   help="hosts per `leaf` label (the planner's groups)")
    g.add_argument("--devices", type=positive(int), default=1,
                   help="HCAs per host (mlx5_0, mlx5_1...)")
    g.add_argument("--ports", type=positive(int), default=2,
                   help="ports per HCA (InfiniBand, ACTIVE; rail = index)")
    g.add_argument("--speed", choices=sorted(fleet_model.SPEEDS),
                   default="ndr")


def _opts_time(p):
    g = p.add_argument_group("time")
    g.add_argument("--period", type=positive(int), default=20,
                   help="planner period in seconds (at least 10); the "
                   "shipped defaults' time keys are scaled to it")
    g.add_argument("--plan-interval", type=positive(float),
                   help="seconds between a host's plan fetches "
                   "(default: period / 5, as 60 s of a 300 s period)")
    g.add_argument("--warmup", type=int, default=8,
                   help="healthy periods before the first fault")
    g.add_argument("--waves", type=positive(int), default=3)
    g.add_argument("--hold", type=positive(int), default=5,
                   help="periods a fault stays on")
    g.add_argument("--settle", type=int, default=5,
                   help="healthy periods after each wave's repair")
    g.add_argument("--tail", type=int, default=5,
                   help="healthy periods at the end")


def _opts_faults(p):
    g = p.add_argument_group("faults and noise")
    g.add_argument("--faults", default=",".join(fleet_model.DEFAULT_KINDS),
                   help="kinds drawn, each once: " +
                   ", ".join(fleet_model.KINDS))
    g.add_argument("--seed", type=int, default=1)
    g.add_argument("--noise", type=share, default=0.003,
                   help="gaussian sd of a result, as a share")
    g.add_argument("--port-spread", type=share, default=0.003,
                   help="gaussian sd of the per-port offsets")
    g.add_argument("--outliers", type=share, default=0.002,
                   help="share of results 5-30%% worse (interference)")
    g.add_argument("--busy-share", type=share, default=0.5,
                   help="share of the outliers flagged busy")
    g.add_argument("--fail-share", type=share, default=0.0005,
                   help="share of tests that fail (timeout)")
    g.add_argument("--pcie-share", type=share, default=0.59,
                   help="bandwidth a halved PCIe link leaves (Gen5 x8: "
                   "28.8 of 49 GB/s)")
    g.add_argument("--flap-share", type=share, default=0.5,
                   help="bandwidth of a flapping port's bad results")
    g.add_argument("--lat-delay-share", type=share, default=0.2,
                   help="the 'lat' fault's extra latency, share of nominal")


def _opts_driver(p):
    g = p.add_argument_group("driver")
    g.add_argument("--connections", type=positive(int),
                   help="the probes' keep-alive connections, 16 per source "
                   "address (127.0.0.1, .2, ...; at most 3,984); default: "
                   "one per host up to 512 (a request waits for the "
                   "collector's group commit: fewer throttle the fleet)")
    g.add_argument("--poll", type=positive(float), default=1.0,
                   help="seconds between GET /api/v1/regressions")
    g.add_argument("--coverage", type=int, default=1, metavar="N",
                   help="GET /api/v1/coverage every N periods (0: never)")
    g.add_argument("--suspects", choices=("auto", "suspects", "suspect_ports"),
                   default="auto", help="what is scored: the `suspects` "
                   "list, the older `suspect_ports`, or the first present")
    g.add_argument("--late-periods", type=positive(float), default=2.0)
    g.add_argument("--out", help="run directory (database, log, "
                   "summary.json); default: a temporary one, removed")
    g.add_argument("--check", action="store_true",
                   help="exit 1 naming each fault missed or late and each "
                   "healthy element named (and a collector without "
                   "the `suspects` list)")
    g.add_argument("--quiet", action="store_true",
                   help="no progress line per period")


def options(argv):
    p = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        epilog="The noise model and its sources: bench/scale/README.md.",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    for add in (_opts_collector, _opts_fabric, _opts_time, _opts_faults,
                _opts_driver):
        add(p)
    a = p.parse_args(argv)
    if a.period < 10:
        p.error("--period: %d is below the collector's minimum of 10 s"
                % a.period)
    kinds = [k for k in a.faults.split(",") if k]
    bad = [k for k in kinds if k not in fleet_model.KINDS]
    if bad:
        p.error("--faults: unknown kind '%s'; valid: %s"
                % (bad[0], ", ".join(fleet_model.KINDS)))
    a.kinds = kinds
    a.waves = min(a.waves, max(1, len(kinds)))
    for k in ("warmup", "settle", "tail"):
        if getattr(a, k) < 0:
            p.error("--%s: must be 0 or more" % k)
    try:
        a.sets = fleet_conf.parse_sets(a.set)
    except ValueError as e:
        p.error(str(e))
    a.connections = a.connections or min(a.hosts, 512)
    if a.connections > 249 * 16:
        p.error("--connections: %d is above 3984 (249 addresses x 16)"
                % a.connections)
    a.plan_interval = a.plan_interval or a.period / 5.0
    return a


def start_collector(a, cfg, out):
    pf = os.path.join(out, "port")
    log = open(os.path.join(out, "collector.log"), "a")
    proc = subprocess.Popen([a.collector, "serve", "--config", cfg,
                             "--port-file", pf], stdout=log, stderr=log)
    log.close()
    t0 = time.monotonic()
    while not os.path.exists(pf):
        if proc.poll() is not None:
            raise RuntimeError("the collector exited (%d) at start: %s" % (
                proc.returncode, tail(os.path.join(out, "collector.log"))))
        if time.monotonic() - t0 > 60:
            proc.kill()
            raise RuntimeError("the collector wrote no port file in 60 s")
        time.sleep(0.05)
    with open(pf) as f:
        return proc, int(f.read())


def stop_collector(proc):
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(60)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
            return "killed after 60 s"
    return proc.returncode


def tail(path, n=1500):
    try:
        with open(path, errors="replace") as f:
            return f.read()[-n:]
    except OSError:
        return ""


def log_counts(path):
    out = {"error": 0, "warn": 0}
    try:
        with open(path, errors="replace") as f:
            for line in f:
                for k in out:
                    if " %s" % k in line.lower()[:60]:
                        out[k] += 1
    except OSError:
        pass
    return out


def check(a, summary):
    """The --check verdict: [problem lines]."""
    s = summary["score"]
    bad = []
    if a.suspects != "suspect_ports" and s["source"] != "suspects":
        bad.append("GET /api/v1/regressions has no `suspects` list (issue 17 "
                   "items 1-5 not in this collector); scored on %s"
                   % s["source"])
    for e in s["missed"]:
        bad.append("missed: %s (%s, %s): %s; results that could show it: "
                   "%d" % (e["element"], e["group"], e["label"], e["reason"],
                           e["tests"]))
    for e in s["late"]:
        bad.append("late: %s (%s) named %.2f periods after its first test "
                   "(at most %g)" % (e["element"], e["group"], e["periods"],
                                     a.late_periods + (e["kind"] == "flap")))
    for d in s["false"]:
        bad.append("healthy element named: " + d)
    for b in summary.get("behind", []):
        bad.append("the run fell behind (the figures above may be the "
                   "machine's, not the collector's): " + b)
    t = summary["tests"]
    if t["results_failed_posts"]:
        bad.append("%d result posts were refused (driver or API problem): %s"
                   % (t["results_failed_posts"], t["post_errors"][:3]))
    return bad


def run(a, out):
    rng = random.Random(a.seed)
    fabric = fleet_model.Fabric(a.hosts, a.hosts_per_leaf, a.devices,
                                a.ports, a.speed, rng, a.port_spread)
    faults = fleet_model.draw_faults(fabric, a.kinds, a.waves, rng, a)
    defaults = fleet_conf.shipped(a.collector, out)
    keys, note = fleet_conf.scale(defaults, a.period)
    keys.update(a.sets)
    cfg = fleet_conf.write(out, fabric, keys, a.schema_dir)
    try:
        settings = fleet_conf.print_config(a.collector, cfg)
    except ValueError as e:
        raise RuntimeError("the collector refuses the settings: %s" % e)
    period = int(float(settings["planner"]["period"]))
    proc, port = start_collector(a, cfg, out)
    try:
        d = Driver(a, fabric, faults, period, settings, proc.pid, port,
                   random.Random(a.seed + 1))
        summary = asyncio.run(d.main())
    finally:
        rc = stop_collector(proc)
    summary.update({"scaled": note, "settings": fleet_conf.summary(settings),
                    "collector_exit": rc,
                    "collector_log": log_counts(os.path.join(
                        out, "collector.log"))})
    if rc != 0:
        summary["collector_log_tail"] = tail(os.path.join(out,
                                                          "collector.log"))
    return summary


def interrupted(signum, frame):
    raise KeyboardInterrupt(signal.Signals(signum).name)


def main(argv):
    a = options(argv)
    # SIGTERM (and SIGINT, ignored in a background job) end the run the
    # same way: the collector stopped, the run directory kept.
    signal.signal(signal.SIGTERM, interrupted)
    signal.signal(signal.SIGINT, interrupted)
    out = a.out or tempfile.mkdtemp(prefix="ibpulse-fleet-")
    os.makedirs(out, exist_ok=True)
    ok = False
    try:
        summary = run(a, out)
        with open(os.path.join(out, "summary.json"), "w") as f:
            json.dump(summary, f, indent=1)
        print(fleet_table.render([summary]))
        problems = check(a, summary) if a.check else []
        for line in problems:
            print("FAIL: " + line, file=sys.stderr)
        if summary["collector_exit"] != 0:
            print("FAIL: the collector exited %s: %s" % (
                summary["collector_exit"], summary.get("collector_log_tail")),
                file=sys.stderr)
            problems.append("collector exit")
        ok = not problems
        return 0 if ok else 1
    except (RuntimeError, HttpError, OSError, ValueError) as e:
        print("fleet: %s" % e, file=sys.stderr)
        return 1
    except KeyboardInterrupt as e:
        print("fleet: interrupted (%s); the collector was stopped" % e,
              file=sys.stderr)
        return 130
    finally:
        if not a.out:
            if ok:
                shutil.rmtree(out, ignore_errors=True)
            else:
                print("fleet: run directory kept: %s" % out, file=sys.stderr)

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
