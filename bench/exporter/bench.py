#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Exporter benchmark: /metrics of 500k counter series, and node_exporter.

Generates a database of HOSTS x 8 ports x 62 counters (496,000 counter
series at 1,000 hosts), starts ibpulse-exporter on it and times /metrics
over loopback with curl (text; OpenMetrics + gzip as Prometheus asks; one
shard of 4), and the exporter's CPU time per scrape from /proc. In the same
run, node_exporter's InfiniBand collector on a generated sysfs tree, per
series, as the scrape cost users know today. Prints a Markdown table.

usage: bench.py EXPORTER SCHEMA_DIR NODE_EXPORTER [HOSTS [RUNS]]
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

CLK_TCK = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid):
    """utime + stime of a process, all threads, in seconds."""
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLK_TCK


def curl(url, headers):
    argv = ["curl", "-s", "-o", "/dev/null", "-w", "%{time_total} %{size_download} %{http_code}"]
    for h in headers:
        argv += ["-H", h]
    out = subprocess.run(argv + [url], stdout=subprocess.PIPE, check=True).stdout.decode().split()
    if out[2] != "200":
        raise H.Failure("%s: HTTP %s" % (url, out[2]))
    return float(out[0]), int(out[1])


def measure(pid, url, headers, runs):
    """(median wall s, median CPU s, body bytes) over runs scrapes after a warm-up."""
    curl(url, headers)
    walls, cpus, size = [], [], 0
    for _ in range(runs):
        c0 = cpu_seconds(pid)
        wall, size = curl(url, headers)
        walls.append(wall)
        cpus.append(cpu_seconds(pid) - c0)
    return statistics.median(walls), statistics.median(cpus), size


def count_series(text, prefix):
    return sum(1 for line in text.splitlines() if line.startswith(prefix))


def human(size):
    return "%.1f MB" % (size / 1e6) if size >= 1e6 else "%.0f kB" % (size / 1e3)


def row(what, series, size, wall, cpu):
    return "| %s | %s | %s | %.3f | %.3f | %s | %.2f |" % (
        what, format(series, ","), human(size), wall, cpu, format(int(series / wall), ","),
        wall / series * 1e6)


def bench_ibpulse(procs, exporter, schema_dir, tmp, hosts, runs, rows):
    db = os.path.join(tmp, "bench.db")
    t = time.monotonic()
    n = int(subprocess.run([sys.executable, os.path.join(HERE, "gen_db.py"), db, schema_dir,
                            str(hosts)], stdout=subprocess.PIPE, check=True).stdout)
    sys.stderr.write("generated %d counter series in %.1f s\n" % (n, time.monotonic() - t))
    pf = os.path.join(tmp, "port")
    p = procs.start("exporter", [exporter, "--db", db, "--listen", "127.0.0.1", "--port", "0",
                                 "--port-file", pf, "--log-level", "warn"])
    base = "http://127.0.0.1:%d/metrics" % H.read_port_file(pf, p, procs)
    text = H.metrics(base[:-len("/metrics")])[2]
    series = int(re.search(r"^ibpulse_exporter_series (\d+)$", text, re.M).group(1))
    shard = H.metrics(base[:-len("/metrics")], query="?shard=0&shards=4")[2]
    shard_series = int(re.search(r"^ibpulse_exporter_series (\d+)$", shard, re.M).group(1))
    rows.append("| database: counter series (all samples served: %s) | %s | | | | | |"
                % (format(series, ","), format(n, ",")))
    for what, url, hdrs, s in [
            ("ibpulse-exporter, text 0.0.4", base, [], series),
            ("ibpulse-exporter, text + gzip", base, ["Accept-Encoding: gzip"], series),
            ("ibpulse-exporter, OpenMetrics + gzip (Prometheus)", base,
             ["Accept: " + H.PROMETHEUS_ACCEPT, "Accept-Encoding: gzip"], series),
            ("ibpulse-exporter, shard 0 of 4, gzip", base + "?shard=0&shards=4",
             ["Accept-Encoding: gzip"], shard_series)]:
        wall, cpu, size = measure(p.pid, url, hdrs, runs)
        rows.append(row(what, s, size, wall, cpu))
    procs.stop(p)
    return n


def bench_node_exporter(procs, node_exporter, tmp, runs, rows, ibpulse_series):
    root = os.path.join(tmp, "sys")
    subprocess.run([sys.executable, os.path.join(HERE, "gen_sysfs.py"), root, "64", "2"], check=True)
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
    ok = re.search(r'^node_scrape_collector_success\{collector="infiniband"\} 1$', text, re.M)
    H.check(ok, "node_exporter's infiniband collector failed on the generated tree")
    series = count_series(text, "node_infiniband_")
    wall, cpu, size = measure(p.pid, base + "/metrics", ["Accept-Encoding: gzip"], runs)
    rows.append(row("node_exporter 1.5 infiniband collector, gzip", series, size, wall, cpu))
    per = wall / series
    rows.append("| node_exporter at that cost per series, projected | %s | | %.1f | | | |"
                % (format(ibpulse_series, ","), per * ibpulse_series))
    procs.stop(p)


def main():
    exporter, schema_dir, node_exporter = sys.argv[1:4]
    hosts = int(sys.argv[4]) if len(sys.argv) > 4 else 1000
    runs = int(sys.argv[5]) if len(sys.argv) > 5 else 5
    tmp = tempfile.mkdtemp(prefix="ibpulse-bench-exporter-")
    procs = H.Procs(tmp)
    load = os.getloadavg()
    rows = ["# %s %d cores, load %.2f %.2f %.2f, %d hosts x 8 ports x 62 counters"
            % (time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), os.cpu_count(),
               load[0], load[1], load[2], hosts), "",
            "| what | series | body | wall s (median of %d) | exporter CPU s | series/s | us/series |" % runs,
            "|---|---:|---:|---:|---:|---:|---:|"]
    ok = False
    try:
        n = bench_ibpulse(procs, exporter, schema_dir, tmp, hosts, runs, rows)
        if shutil.which(node_exporter):
            bench_node_exporter(procs, node_exporter, tmp, runs, rows, n)
        else:
            rows.append("| node_exporter not found (%s) | | | | | | |" % node_exporter)
        ok = True
    finally:
        if not ok:
            procs.dump_logs()
        procs.stop_all()
        shutil.rmtree(tmp, ignore_errors=True)
    print("\n".join(rows))
    print("\n%d CPUs, load average %.2f %.2f %.2f at the end; wall times are"
          " loopback HTTP with curl, CPU is the exporter's (all threads)"
          % ((os.cpu_count(),) + os.getloadavg()))
    return 0


if __name__ == "__main__":
    H.run(main)
