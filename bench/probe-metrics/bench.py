#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Probe /metrics vs node_exporter's InfiniBand collector, same sysfs tree.

For each tree (tests/fixtures/sysfs-mlx5, and a generated one of DEVICES
HCAs x 2 ports, each port with the 21 counters/ files and 41 hw_counters/
files, PCIe and AER files, GID and P_Key tables), starts
`ibpulse-probe daemon` with metrics_listen on a free loopback port and
prometheus-node-exporter 1.5 (--path.sysfs=ROOT
--collector.disable-defaults --collector.infiniband), then times RUNS
scrapes of each, interleaved, as Prometheus asks (OpenMetrics first,
gzip): wall ms per scrape (median, p90), server CPU ms per scrape (from
/proc, utime + stime over all the scrapes / RUNS), RSS after the scrapes.
Also the one-shot `ibpulse-probe metrics` (a process per scrape, as
node_exporter's textfile collector would run it from cron). Prints a
Markdown table; with RENDER_BENCH (render_bench.c) a second one, the CPU
of pmetrics_render() alone per tree, which the sysfs read hides in the
first.

usage: bench.py PROBE NODE_EXPORTER [DEVICES [RUNS [RENDER_BENCH]]]
"""
import gzip
import os
import re
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.join(HERE, "..", "..")
sys.path.insert(0, os.path.join(TOP, "tests", "fixtures"))
sys.path.insert(0, os.path.join(TOP, "tests", "exporter"))
import ibpdb  # noqa: E402
import make_sysfs_fixtures as fx  # noqa: E402

CLK_TCK = os.sysconf("SC_CLK_TCK")
# The counters/ files (node_exporter 1.5 reads these, not hw_counters/).
IB_GLOBS = ("port_*,symbol_error,link_*,local_link_*,excessive_*,"
            "VL15_dropped,unicast_*,multicast_*")
ACCEPT = ("application/openmetrics-text;version=1.0.0,"
          "application/openmetrics-text;version=0.0.1;q=0.75,"
          "text/plain;version=0.0.4;q=0.5,*/*;q=0.1")


def gen_tree(root, devices, ports=2):
    """DEVICES mlx5 HCAs x PORTS IB ports with every counter file."""
    hw_names = sorted(set(fx.MLX5_HW_COUNTERS) | set(ibpdb.HW_COUNTERS))
    n = 0
    for d in range(devices):
        bus = 0x10 + 0x10 * d
        rel = fx.pci(root, "0000:%02x:00.0" % (bus + 1),
                     "0000:%02x:00.0" % bus, ("16.0 GT/s PCIe", "16"),
                     ("16.0 GT/s PCIe", "16"))
        guid = "b859:9f03:00d4:%04x" % d
        dev = fx.ibdev(root, "mlx5_%d" % d, rel, guid, "bench HCA-%d" % d)
        for p in range(1, ports + 1):
            n += 1
            counters = {k: (n * 1000003 + i * 7919) % (1 << 32)
                        for i, k in enumerate(fx.IB_COUNTERS)}
            hw = {k: (n * 7001 + i) % 100000 for i, k in enumerate(hw_names)}
            fx.port(dev, p, "4: ACTIVE", "5: LinkUp", "200 Gb/sec (4X HDR)",
                    "InfiniBand", lid="0x%x" % n, sm_lid="0x1",
                    gids=[("fe80:0000:0000:0000:" + guid, "IB/RoCE v1",
                           None)],
                    counters=counters, hw=hw)
    return root


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def cpu_seconds(pid):
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLK_TCK


def rss_mb(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024.0
    return 0.0


def scrape(url):
    req = urllib.request.Request(url, headers={"Accept": ACCEPT,
                                               "Accept-Encoding": "gzip"})
    t0 = time.perf_counter()
    with urllib.request.urlopen(req, timeout=60) as r:
        body = r.read()
        enc = r.headers.get("Content-Encoding")
    wall = time.perf_counter() - t0
    return wall, len(body), gzip.decompress(body) if enc == "gzip" else body


def wait_up(proc, url, what, log):
    deadline = time.monotonic() + 60
    while True:
        try:
            return scrape(url)
        except OSError:
            pass
        if proc.poll() is not None or time.monotonic() > deadline:
            log.seek(0)
            raise SystemExit("%s did not start: %s" % (what, log.read()))
        time.sleep(0.1)


def series(text, prefixes):
    return sum(1 for line in text.decode().splitlines()
               if line and not line.startswith("#") and
               line.startswith(prefixes))


class Server:
    def __init__(self, name, argv, url, tmp):
        self.name = name
        self.log = open(os.path.join(tmp, name + ".log"), "w+")
        self.proc = subprocess.Popen(argv, stdout=self.log,
                                     stderr=subprocess.STDOUT)
        self.url = url
        self.walls, self.size, self.cpu0 = [], 0, 0.0

    def stop(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        self.log.close()


def start_probe(probe, tree, tmp, name="probe", include="*"):
    """The daemon; @include: counters_include (node_exporter's set or all)."""
    tmp = os.path.join(tmp, name)
    os.makedirs(tmp)
    cfg = os.path.join(tmp, "probe.ini")
    with open(cfg, "w") as f:
        f.write("[probe]\nhost = bench01\nsysfs_root = %s\n"
                "netdev_stats = false\nlog_level = warn\n"
                "counters_include = %s\n"
                "[daemon]\nresponder_port = 0\nresponder_listen = 127.0.0.1\n"
                "spool_dir = %s\ncontrol_socket = %s\n"
                "metrics_listen = 127.0.0.1:%d\n"
                % (tree, include, os.path.join(tmp, "spool"),
                   os.path.join(tmp, "probe.sock"), free_port()))
    with open(cfg) as f:
        port = re.search(r"metrics_listen = 127.0.0.1:(\d+)", f.read())[1]
    return Server(name, [probe, "daemon", "--config", cfg],
                  "http://127.0.0.1:%s/metrics" % port, tmp)


def start_node_exporter(node_exporter, tree, tmp):
    port = free_port()
    return Server("node_exporter",
                  [node_exporter, "--path.sysfs=" + tree,
                   "--collector.disable-defaults", "--collector.infiniband",
                   "--web.listen-address=127.0.0.1:%d" % port],
                  "http://127.0.0.1:%d/metrics" % port, tmp)


def pct(xs, q):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(q * (len(xs) - 1))))]


def row(what, total, ib, size, walls, cpu_ms, rss):
    return ("| %s | %d | %d | %s | %.2f | %.2f | %.2f | %.1f | %s |"
            % (what, total, ib, size, statistics.median(walls) * 1e3,
               pct(walls, 0.9) * 1e3, cpu_ms, cpu_ms * 1e3 / ib,
               "%.1f MB" % rss if rss else ""))


def bench_tree(label, tree, probe, node_exporter, runs, tmp):
    servers = [start_probe(probe, tree, tmp),
               start_probe(probe, tree, tmp, "probe-ib", IB_GLOBS)]
    if shutil.which(node_exporter):
        servers.append(start_node_exporter(node_exporter, tree, tmp))
    rows = []
    try:
        bodies = {}
        for s in servers:
            for _ in range(3):  # warm-up
                bodies[s.name] = wait_up(s.proc, s.url, s.name, s.log)[2]
            s.cpu0 = cpu_seconds(s.proc.pid)
        for _ in range(runs):  # interleaved: both see the same load
            for s in servers:
                wall, s.size, _ = scrape(s.url)
                s.walls.append(wall)
        for s in servers:
            cpu_ms = (cpu_seconds(s.proc.pid) - s.cpu0) * 1e3 / runs
            text = bodies[s.name]
            what = {"probe": "ibpulse-probe daemon /metrics",
                    "probe-ib": "ibpulse-probe daemon, counters/ only "
                                "(node_exporter's files)",
                    "node_exporter": "node_exporter 1.5 infiniband "
                                     "collector"}[s.name]
            rows.append(row("%s: %s" % (label, what),
                            series(text, ("",)),
                            series(text, ("ibpulse_port_", "ibpulse_device_",
                                          "node_infiniband_")),
                            "%.1f kB gz" % (s.size / 1e3), s.walls, cpu_ms,
                            rss_mb(s.proc.pid)))
    finally:
        for s in servers:
            s.stop()
    walls, cpus = [], []
    for _ in range(max(runs // 4, 5)):
        t0 = time.perf_counter()
        r0 = os.times()
        out = subprocess.run([probe, "metrics", "--sysfs", tree, "--host",
                              "bench01", "--log-level", "warn"],
                             stdout=subprocess.PIPE, check=True).stdout
        r1 = os.times()
        walls.append(time.perf_counter() - t0)
        cpus.append((r1.children_user + r1.children_system -
                     r0.children_user - r0.children_system) * 1e3)
    rows.append(row("%s: ibpulse-probe metrics (one process per scrape)"
                    % label, series(out, ("",)),
                    series(out, ("ibpulse_port_", "ibpulse_device_")),
                    "%.1f kB" % (len(out) / 1e3), walls,
                    statistics.mean(cpus), 0))
    return rows


def render_row(render_bench, label, tree, runs):
    """One row of render_bench's CPU per pmetrics_render() on @tree."""
    out = subprocess.run([render_bench, tree, str(runs * 10)],
                         capture_output=True, text=True, check=True).stdout
    series, body, us = out.split()
    return "| %s | %s | %.1f kB | %s | %.3f |" % (
        label, series, int(body) / 1e3, us, float(us) / int(series))


def main():
    probe, node_exporter = sys.argv[1:3]
    devices = int(sys.argv[3]) if len(sys.argv) > 3 else 8
    runs = int(sys.argv[4]) if len(sys.argv) > 4 else 200
    render_bench = sys.argv[5] if len(sys.argv) > 5 else None
    rows, renders = [], []
    with tempfile.TemporaryDirectory() as tmp:
        gen = gen_tree(os.path.join(tmp, "sysfs-gen"), devices)
        for label, tree in (("sysfs-mlx5 (3 HCAs x 1 port)",
                             os.path.join(TOP, "tests", "fixtures",
                                          "sysfs-mlx5")),
                            ("generated (%d HCAs x 2 ports)" % devices, gen)):
            sub = os.path.join(tmp, "run-%d" % len(rows))
            os.makedirs(sub)
            rows += bench_tree(label, tree, probe, node_exporter, runs, sub)
            if render_bench:
                renders.append(render_row(render_bench, label, tree, runs))
    load = os.getloadavg()
    print("# %s %d cores, load %.2f %.2f %.2f, %d scrapes each "
          "(OpenMetrics+gzip asked; node_exporter answers text+gzip)"
          % (time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
             os.cpu_count(), load[0], load[1], load[2], runs))
    print("| tree: server | series | IB/device series | body "
          "| ms/scrape median | p90 | CPU ms/scrape | CPU us/IB series "
          "| RSS |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        print(r)
    if renders:
        print()
        print("| tree: pmetrics_render() alone, %d calls | series | body "
              "| CPU us/render | CPU us/series |" % (runs * 10))
        print("|---|---:|---:|---:|---:|")
        for r in renders:
            print(r)
    return 0


if __name__ == "__main__":
    sys.exit(main())
