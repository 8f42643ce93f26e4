#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Exporter benchmark: N concurrent scrapers of 500k series, two builds.

Generates the database of bench.py (gen_db.py: HOSTS x 8 ports x 62
counters, 496,000 counter series at 1,000 hosts), then for each exporter
given (say the build before a change and the one after, in one run, on one
database): starts it, scrapes once to warm up, and starts SCRAPERS curl
processes at once (from 127.0.0.10 and up, 10 per address, as scrapers on
several hosts would be), each asking as Prometheus does (OpenMetrics,
gzip) or for uncompressed text. Reports each scrape's wall time (median,
90th percentile, max), how many got 200, the exporter's CPU seconds and
its peak resident memory (VmHWM) over the burst. Prints a Markdown table.

usage: concurrent.py SCHEMA_DIR HOSTS SCRAPERS NAME=EXPORTER [NAME=EXPORTER...]
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
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "..", "tests", "exporter"))
import harness as H  # noqa: E402
from bench import cpu_seconds, human  # noqa: E402

FORMATS = [
    ("OpenMetrics + gzip (Prometheus)",
     ["-H", "Accept: " + H.PROMETHEUS_ACCEPT, "-H", "Accept-Encoding: gzip"]),
    ("text 0.0.4, uncompressed", []),
]


def status_kb(pid, field):
    with open("/proc/%d/status" % pid) as f:
        return int(re.search(r"%s:\s+(\d+)" % field, f.read()).group(1))


def burst(pid, url, headers, scrapers):
    """Start every curl at once; (walls of the 200s, other codes, CPU s, body)."""
    argv = ["curl", "-s", "-o", "/dev/null", "-m", "120",
            "-w", "%{time_total} %{http_code} %{size_download}"] + headers
    c0 = cpu_seconds(pid)
    ps = [subprocess.Popen(argv + ["--interface", "127.0.0.%d" % (10 + i // 10), url],
                           stdout=subprocess.PIPE) for i in range(scrapers)]
    walls, bad, size = [], [], 0
    for p in ps:
        out = p.communicate()[0].decode().split()
        if len(out) == 3 and out[1] == "200":
            walls.append(float(out[0]))
            size = int(out[2])
        else:
            bad.append(out[1] if len(out) > 1 else "none")
    return walls, bad, cpu_seconds(pid) - c0, size


def bench_one(procs, tmp, name, exporter, db, scrapers, rows):
    pf = os.path.join(tmp, name + ".port")
    p = procs.start(name, [exporter, "--db", db, "--listen", "127.0.0.1", "--port", "0",
                           "--port-file", pf, "--log-level", "warn"])
    url = "http://127.0.0.1:%d/metrics" % H.read_port_file(pf, p, procs)
    for what, headers in FORMATS:
        subprocess.run(["curl", "-s", "-o", "/dev/null"] + headers + [url], check=True)
        rss0 = status_kb(p.pid, "VmRSS")
        walls, bad, cpu, size = burst(p.pid, url, headers, scrapers)
        walls.sort()
        p90 = walls[int(0.9 * (len(walls) - 1))] if walls else 0
        rows.append("| %s | %s | %d of %d | %s | %.2f | %.2f | %.2f | %.1f | %.0f | %.0f |" % (
            name, what, len(walls), scrapers, human(size),
            statistics.median(walls) if walls else 0, p90, walls[-1] if walls else 0,
            cpu, rss0 / 1024, status_kb(p.pid, "VmHWM") / 1024))
        if bad:
            rows.append("| | (other answers: %s) | | | | | | | | |" % ", ".join(sorted(set(bad))))
        procs.stop(p)  # VmHWM is per process: a fresh one per format
        p = procs.start(name, [exporter, "--db", db, "--listen", "127.0.0.1", "--port",
                               "0", "--port-file", pf + "2", "--log-level", "warn"])
        url = "http://127.0.0.1:%d/metrics" % H.read_port_file(pf + "2", p, procs)
        os.unlink(pf + "2")
    procs.stop(p)


def main():
    schema_dir, hosts, scrapers = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    builds = [a.split("=", 1) for a in sys.argv[4:]]
    tmp = tempfile.mkdtemp(prefix="ibpulse-bench-concurrent-")
    procs = H.Procs(tmp)
    load = os.getloadavg()
    rows = ["# %s %d cores, load %.2f %.2f %.2f, %d hosts x 8 ports x 62 counters, "
            "%d concurrent scrapers" % (time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                                        os.cpu_count(), load[0], load[1], load[2], hosts,
                                        scrapers), "",
            "| exporter | format | 200s | body | median s | p90 s | max s | "
            "exporter CPU s | RSS before MB | peak RSS MB |",
            "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    ok = False
    try:
        db = os.path.join(tmp, "bench.db")
        subprocess.run([sys.executable, os.path.join(HERE, "gen_db.py"), db, schema_dir,
                        str(hosts)], stdout=subprocess.DEVNULL, check=True)
        for name, exporter in builds:
            bench_one(procs, tmp, name, exporter, db, scrapers, rows)
        ok = True
    finally:
        if not ok:
            procs.dump_logs()
        procs.stop_all()
        shutil.rmtree(tmp, ignore_errors=True)
    print("\n".join(rows))
    print("\nload average %.2f %.2f %.2f at the end; wall times are per scrape, curl "
          "over loopback, all started at once" % os.getloadavg())
    return 0


if __name__ == "__main__":
    H.run(main)
