#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Exporter benchmark: what fabric test results add to a scrape.

Two databases of HOSTS hosts x 2 ports x 62 counters (gen_db.py); the
second also has every host registered as a probe and HISTORY+1 hours of
test results, two per port and hour (gen_results.py). Times /metrics
(text, and OpenMetrics + gzip as Prometheus asks) on each with curl over
loopback, the exporter's CPU time per scrape, and the first scrape after
start-up (which counts the whole result table for
ibpulse_test_results_total). Prints a Markdown table.

usage: bench_results.py EXPORTER SCHEMA_DIR [HOSTS [RUNS [HISTORY]]]
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "tests", "exporter"))
import harness as H  # noqa: E402
from bench import cpu_seconds, curl, human, measure  # noqa: E402


def start(procs, exporter, db, tmp, name):
    pf = os.path.join(tmp, name + ".port")
    p = procs.start(name, [exporter, "--db", db, "--listen", "127.0.0.1", "--port", "0",
                           "--port-file", pf, "--log-level", "warn"])
    return p, "http://127.0.0.1:%d" % H.read_port_file(pf, p, procs)


def scrape_rows(procs, exporter, db, tmp, name, runs, rows):
    p, base = start(procs, exporter, db, tmp, name)
    c0 = cpu_seconds(p.pid)
    first, _ = curl(base + "/metrics", [])
    first_cpu = cpu_seconds(p.pid) - c0
    text = H.metrics(base)[2]
    series = int(re.search(r"^ibpulse_exporter_series (\d+)$", text, re.M).group(1))
    tests = sum(1 for line in text.splitlines() if line.startswith("ibpulse_test_"))
    out = {"series": series, "tests": tests}
    rows.append("| %s: first scrape after start | %s | | %.3f | %.3f |"
                % (name, format(series, ","), first, first_cpu))
    for what, hdrs in [("text", []), ("OpenMetrics + gzip",
                                      ["Accept: " + H.PROMETHEUS_ACCEPT, "Accept-Encoding: gzip"])]:
        wall, cpu, size = measure(p.pid, base + "/metrics", hdrs, runs)
        rows.append("| %s: %s | %s | %s | %.3f | %.3f |"
                    % (name, what, format(series, ","), human(size), wall, cpu))
        out[what] = (wall, cpu)
    procs.stop(p)
    return out


def main():
    exporter, schema_dir = sys.argv[1:3]
    hosts = int(sys.argv[3]) if len(sys.argv) > 3 else 10000
    runs = int(sys.argv[4]) if len(sys.argv) > 4 else 5
    history = int(sys.argv[5]) if len(sys.argv) > 5 else 24
    tmp = tempfile.mkdtemp(prefix="ibpulse-bench-results-")
    procs = H.Procs(tmp)
    load = os.getloadavg()
    rows = []
    ok = False
    try:
        plain = os.path.join(tmp, "counters.db")
        t = time.monotonic()
        subprocess.run([sys.executable, os.path.join(HERE, "gen_db.py"), plain, schema_dir,
                        str(hosts), "2"], stdout=subprocess.PIPE, check=True)
        withres = os.path.join(tmp, "results.db")
        shutil.copy(plain, withres)
        n = int(subprocess.run([sys.executable, os.path.join(HERE, "gen_results.py"), withres,
                                str(history)], stdout=subprocess.PIPE, check=True).stdout)
        sys.stderr.write("generated in %.1f s\n" % (time.monotonic() - t))
        rows += ["# %s %d cores, load %.2f %.2f %.2f, %d hosts x 2 ports x 62 counters;"
                 " %s results (%d in the last hour)"
                 % (time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), os.cpu_count(),
                    load[0], load[1], load[2], hosts, format(n, ","), hosts * 4), "",
                 "| database: what | samples served | body | wall s (median of %d) |"
                 " exporter CPU s |" % runs, "|---|---:|---:|---:|---:|"]
        a = scrape_rows(procs, exporter, plain, tmp, "counters only", runs, rows)
        b = scrape_rows(procs, exporter, withres, tmp, "with results", runs, rows)
        for what in ("text", "OpenMetrics + gzip"):
            rows.append("| extra for results, %s | +%s | | +%.3f | +%.3f |"
                        % (what, format(b["series"] - a["series"], ","),
                           b[what][0] - a[what][0], b[what][1] - a[what][1]))
        rows.append("\n%s ibpulse_test_* samples in the body with results" % format(b["tests"], ","))
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
