#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Exporter benchmark: what a scrape of a 10,000-host fabric costs.

A database of HOSTS hosts x 2 ports x 62 counters (gen_db.py), every host
registered as a probe with HISTORY+1 hours of test results, two per port
and hour (gen_results.py): about 2.2 million samples at 10,000 hosts.

Every timed scrape follows a change of the database made as the collector
makes it (change()): in one transaction, a report from every host (its
last_report), of which a SHARE moved every one of their 124 counters
(series rows updated, history rows added, the host's change marker of
schema 008 set), and the test results that arrive in SCRAPE_INTERVAL at
the fabric's rate (40,000 an hour at 10,000 hosts). So no timed scrape
can take a body another scrape made; the one row that does says so. The
same run times:

  - the exporter with its block cache (the default), scrapes after a
    change of SHARE of the hosts, for each SHARE given;
  - the same exporter with cache_max_bytes = 0: every scrape renders and
    gzips the whole body (the full rebuild);
  - the first scrape after start-up (empty cache; it also counts the whole
    result table for ibpulse_test_results_total);
  - a scrape of a database state another scrape has just rendered: the
    shared body (single flight);
  - node_exporter's InfiniBand collector on a generated sysfs tree, per
    series, projected to the same number of samples: the anchor.

Each row of the block cache times RUNS scrapes after WARM (3) untimed
scrapes of the same format and share: the first gzip scrape after a text
one (or after start-up) also compresses the pieces of every reused
segment, once, which a Prometheus scraping every 15 s pays once, not per
scrape; and the exporter's heap takes a few scrapes to reach the size it
then keeps (each of the first scrapes after start-up faults in thousands
of fresh pages: 10,000 in the second, 1,000 or fewer from the sixth on).
Wall time is curl's over loopback (request to last byte); CPU is the
exporter's (all threads, from /proc), which other load inflates less than
the wall time; the cache's memory is ibpulse_exporter_cache_bytes and the
process's peak RSS (VmHWM). Medians of RUNS scrapes. Prints Markdown.

usage: bench_results.py [--before EXPORTER0] EXPORTER SCHEMA_DIR [HOSTS [RUNS [HISTORY [SHARES]]]]
  SHARES: comma-separated percentages of hosts changed before each scrape
  (default 10,1,50)
  --before: another build of the exporter (the one before a change) on the
  same database, with its own cache: after each change both scrape, in
  turn first, and each row of the block cache is printed for both. Two
  runs one after the other on this VM differ by up to a fifth; pairs
  scraping the same changes do not.
"""
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "tests", "exporter"))
import harness as H  # noqa: E402
from bench import Fabric, cpu_seconds, curl, human  # noqa: E402

from bench import RESULTS_PER_HOUR_PER_HOST, SCRAPE_INTERVAL  # noqa: E402

GZ = ["Accept: " + H.PROMETHEUS_ACCEPT, "Accept-Encoding: gzip"]
WARM = 3  # untimed scrapes before each row of the block cache


def status(pid, key):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1]) * 1024
    return 0


def start(procs, exporter, db, tmp, name, cache=True):
    pf = os.path.join(tmp, name + ".port")
    argv = [exporter, "--db", db, "--listen", "127.0.0.1", "--port", "0",
            "--port-file", pf, "--log-level", "warn"]
    if not cache:
        ini = os.path.join(tmp, name + ".ini")
        with open(ini, "w") as f:
            f.write("[exporter]\ncache_max_bytes = 0\n")
        argv[1:1] = ["--config", ini]
    p = procs.start(name, argv)
    return p, "http://127.0.0.1:%d/metrics" % H.read_port_file(pf, p, procs)


def timed(p, url, hdrs):
    c0 = cpu_seconds(p.pid)
    wall, size = curl(url, hdrs)
    return wall, cpu_seconds(p.pid) - c0, size


def row(what, samples, size, wall, cpu):
    return "| %s | %s | %s | %.3f | %.3f |" % (what, format(samples, ","), human(size),
                                             wall, cpu)


def samples_of(url):
    text = H.metrics(url[:-len("/metrics")])[2]
    return int(re.search(r"^ibpulse_exporter_series (\d+)$", text, re.M).group(1)), text


def bench_cached(procs, exporter, path, tmp, fab, runs, shares, rows, out, before=None):
    p, url = start(procs, exporter, path, tmp, "cached")
    fab.change(0.1)
    wall, cpu, size = timed(p, url, GZ)
    samples, _ = samples_of(url)
    out["samples"] = samples
    rows.append(row("first scrape after start-up (empty cache, result table counted),"
                    " OpenMetrics + gzip", samples, size, wall, cpu))
    # with --before: that exporter on the same database, each change scraped
    # by both, in turn first
    them = [("", p, url)]
    if before:
        q, qurl = start(procs, before, path, tmp, "before")
        timed(q, qurl, GZ)
        them.append((" (before: %s)" % os.path.basename(before), q, qurl))
    for share in shares:
        for what, hdrs in (("OpenMetrics + gzip", GZ), ("text", [])):
            v = [[] for _ in them]
            for i in range(runs + WARM):
                fab.change(share / 100.0)
                time.sleep(1.1)  # past the 1 s a finished body is shared
                for k in (range(len(them)) if i % 2 == 0 else reversed(range(len(them)))):
                    t = timed(them[k][1], them[k][2], hdrs)
                    if i >= WARM:  # the first settle the cache and the heap
                        v[k].append(t)
            for k, (tag, _, _) in enumerate(them):
                wall = statistics.median(x[0] for x in v[k])
                cpu = statistics.median(x[1] for x in v[k])
                rows.append(row("block cache, after a change of %g%% of the hosts, %s%s"
                                % (share, what, tag), samples, v[k][-1][2], wall, cpu))
                if not tag:
                    out[(share, what)] = (wall, cpu)
    if before:
        procs.stop(them[1][1])
    # the same database state a moment later: the shared body
    fab.change(0.1)
    time.sleep(1.1)
    timed(p, url, GZ)
    wall, cpu, size = timed(p, url, GZ)
    rows.append(row("shared body: the same state again within 1 s (no render),"
                    " OpenMetrics + gzip", samples, size, wall, cpu))
    _, text = samples_of(url)
    m = re.search(r"^ibpulse_exporter_cache_bytes (\d+)$", text, re.M)
    out["cache_bytes"] = int(m.group(1)) if m else 0
    out["rss"] = status(p.pid, "VmHWM")
    procs.stop(p)


def bench_full(procs, exporter, path, tmp, fab, runs, rows, out):
    p, url = start(procs, exporter, path, tmp, "full", cache=False)
    curl(url, [])  # the result table counted once
    for what, hdrs in (("OpenMetrics + gzip", GZ), ("text", [])):
        v = []
        for _ in range(runs):
            fab.change(0.1)
            time.sleep(1.1)
            v.append(timed(p, url, hdrs))
        wall = statistics.median(x[0] for x in v)
        cpu = statistics.median(x[1] for x in v)
        rows.append(row("full rebuild (cache_max_bytes = 0), after a change, %s" % what,
                        out["samples"], v[-1][2], wall, cpu))
        out[("full", what)] = (wall, cpu)
    out["rss_full"] = status(p.pid, "VmHWM")
    procs.stop(p)


def bench_node_exporter(procs, node_exporter, tmp, runs, rows, samples):
    root = os.path.join(tmp, "sys")
    subprocess.run([sys.executable, os.path.join(HERE, "gen_sysfs.py"), root, "64", "2"],
                   check=True)
    port = H.free_port()
    p = procs.start("node_exporter", [
        node_exporter, "--path.sysfs=" + root, "--collector.disable-defaults",
        "--collector.infiniband", "--web.listen-address=127.0.0.1:%d" % port])
    base = "http://127.0.0.1:%d" % port

    def ready():
        procs.check_alive(p)
        return H.http(base + "/metrics", timeout=10)[0] == 200
    H.wait_for("node_exporter", ready, timeout=60)
    text = H.metrics(base)[2]
    series = sum(1 for line in text.splitlines() if line.startswith("node_infiniband_"))
    v = [timed(p, base + "/metrics", ["Accept-Encoding: gzip"]) for _ in range(runs)]
    wall = statistics.median(x[0] for x in v)
    cpu = statistics.median(x[1] for x in v)
    rows.append(row("node_exporter 1.5 infiniband collector, gzip (anchor)", series,
                    v[0][2], wall, cpu))
    rows.append("| node_exporter at that cost per series, projected | %s | | %.1f | %.1f |"
                % (format(samples, ","), wall / series * samples, cpu / series * samples))
    procs.stop(p)


def main():
    args = sys.argv[1:]
    before = None
    if "--before" in args:
        i = args.index("--before")
        before = args[i + 1]
        del args[i:i + 2]
    exporter, schema_dir = args[0:2]
    hosts = int(args[2]) if len(args) > 2 else 10000
    runs = int(args[3]) if len(args) > 3 else 5
    history = int(args[4]) if len(args) > 4 else 24
    shares = [float(x) for x in (args[5] if len(args) > 5 else "10,1,50").split(",")]
    node_exporter = shutil.which("prometheus-node-exporter") or shutil.which("node_exporter")
    tmp = tempfile.mkdtemp(prefix="ibpulse-bench-results-")
    procs = H.Procs(tmp)
    load = os.getloadavg()
    rows, out = [], {}
    ok = False
    try:
        path = os.path.join(tmp, "fabric.db")
        t = time.monotonic()
        subprocess.run([sys.executable, os.path.join(HERE, "gen_db.py"), path, schema_dir,
                        str(hosts), "2"], stdout=subprocess.PIPE, check=True)
        n = int(subprocess.run([sys.executable, os.path.join(HERE, "gen_results.py"), path,
                                str(history)], stdout=subprocess.PIPE, check=True).stdout)
        sys.stderr.write("generated in %.1f s\n" % (time.monotonic() - t))
        fab = Fabric(path)
        rows += ["# %s %d cores, load %.2f %.2f %.2f, %d hosts x 2 ports x 62 counters;"
                 " %s results; before each timed scrape the database changes as the"
                 " collector changes it: every host reports, the share given moved all"
                 " its counters, %d new results"
                 % (time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), os.cpu_count(),
                    load[0], load[1], load[2], hosts, format(n, ","),
                    int(hosts * RESULTS_PER_HOUR_PER_HOST * SCRAPE_INTERVAL / 3600.0)), "",
                 "| scrape | samples served | body | wall s (median of %d) |"
                 " exporter CPU s |" % runs, "|---|---:|---:|---:|---:|"]
        bench_cached(procs, exporter, path, tmp, fab, runs, shares, rows, out, before)
        bench_full(procs, exporter, path, tmp, fab, runs, rows, out)
        if node_exporter:
            bench_node_exporter(procs, node_exporter, tmp, runs, rows, out["samples"])
        else:
            rows.append("| node_exporter not found | | | | |")
        rows.append("")
        rows.append("block cache: %.0f MB (ibpulse_exporter_cache_bytes); peak RSS %.0f MB"
                    " with the cache, %.0f MB without"
                    % (out["cache_bytes"] / 1e6, out["rss"] / 1e6, out["rss_full"] / 1e6))
        ok = True
    finally:
        if not ok:
            procs.dump_logs()
        procs.stop_all()
        shutil.rmtree(tmp, ignore_errors=True)
    print("\n".join(rows))
    print("%d CPUs, load average %.2f %.2f %.2f at the end" % ((os.cpu_count(),) + os.getloadavg()))
    return 0


if __name__ == "__main__":
    H.run(main)
