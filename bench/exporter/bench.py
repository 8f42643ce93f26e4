#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Exporter benchmark: /metrics of 500k counter series, and node_exporter.

Generates a database of HOSTS x 8 ports x 62 counters (496,000 counter
series at 1,000 hosts), starts ibpulse-exporter on it and times /metrics
over loopback with curl (text; OpenMetrics + gzip as Prometheus asks; one
shard of 4), and the exporter's CPU time per scrape from /proc. Each timed
scrape follows a change of the database as the collector makes it (every
host reports, a tenth moved all their counters: Fabric.change()), so none
takes a body another scrape made. In the same
run, node_exporter's InfiniBand collector on a generated sysfs tree, per
series, as the scrape cost users know today. Prints a Markdown table.

usage: bench.py EXPORTER SCHEMA_DIR NODE_EXPORTER [HOSTS [RUNS]]
"""
import os
import random
import re
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "tests", "exporter"))
import harness as H  # noqa: E402

CLK_TCK = os.sysconf("SC_CLK_TCK")
SCRAPE_INTERVAL = 15  # seconds of fabric activity between two scrapes
RESULTS_PER_HOUR_PER_HOST = 4
SHARE = 0.1  # of the hosts whose counters moved between two scrapes


class Fabric:
    """The database, changed as the collector changes it."""

    def __init__(self, path, results=True):
        self.results = results
        self.db = sqlite3.connect(path, isolation_level=None, timeout=60)
        self.rnd = random.Random(3)
        self.hosts = [r[0] for r in self.db.execute("SELECT id FROM host")]
        self.ports = self.db.execute(
            "SELECT h.name, d.name, p.port FROM port p JOIN device d ON d.id = p.device_id"
            " JOIN host h ON h.id = p.host_id").fetchall()
        self.n = self.db.execute("SELECT max(id) FROM result").fetchone()[0] or 0
        self.last_results = time.time()

    def change(self, share):
        """One scrape interval: every host reports, share of them with every
        counter moved; the results of the interval arrive."""
        now = time.time()
        db = self.db
        db.execute("BEGIN IMMEDIATE")
        db.execute("UPDATE host SET last_report = ?", (now,))
        for h in self.rnd.sample(self.hosts, int(len(self.hosts) * share)):
            step = self.rnd.randrange(1, 1 << 24)
            db.execute("UPDATE series SET value = value + ?, changed = ? WHERE port_id IN"
                       " (SELECT id FROM port WHERE host_id = ?)", (step, now, h))
            db.execute("INSERT INTO sample (series_id, ts, value) SELECT id, changed, value"
                       " FROM series WHERE port_id IN (SELECT id FROM port WHERE host_id = ?)",
                       (h,))
            seq = db.execute("UPDATE change_seq SET seq = seq + 1 RETURNING seq").fetchone()[0]
            db.execute("INSERT INTO host_change (host_id, seq) VALUES (?, ?) ON CONFLICT"
                       " (host_id) DO UPDATE SET seq = excluded.seq", (h, seq))
        n = int(len(self.hosts) * RESULTS_PER_HOUR_PER_HOST * SCRAPE_INTERVAL / 3600.0)
        n = n if self.results else 0
        for _ in range(n):
            (h, d, p), peer = self.rnd.choice(self.ports), self.rnd.choice(self.ports)
            self.n += 1
            bw = self.rnd.gauss(4.7e10, 1e9)
            db.execute("INSERT INTO result (result_id, host, profile, test, started,"
                       " duration_seconds, local_device, local_port, peer_host, peer_device,"
                       " peer_port, outcome, busy, bw_avg_bytes_per_second,"
                       " bw_peak_bytes_per_second, bw_min_bytes_per_second,"
                       " msg_rate_per_second, received) VALUES (?, ?, 'bw', 'write_bw', ?, 2,"
                       " ?, ?, ?, ?, ?, 'ok', 0, ?, ?, ?, ?, ?)",
                       ("c-%d" % self.n, h, now - self.rnd.uniform(2, SCRAPE_INTERVAL), d, p,
                        peer[0], peer[1], peer[2], bw, bw * 1.02, bw * 0.9, bw / 65536, now))
        db.execute("COMMIT")




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


def measure(pid, url, headers, runs, fab=None):
    """(median wall s, median CPU s, body bytes) over runs scrapes after a
    warm-up, each after a change of the database (fab.change(SHARE)) and
    more than the second a finished body is shared."""
    curl(url, headers)
    walls, cpus, size = [], [], 0
    for _ in range(runs):
        if fab:
            fab.change(SHARE)
            time.sleep(1.1)
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
        wall, cpu, size = measure(p.pid, url, hdrs, runs, Fabric(db, results=False))
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
