#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""End to end: probe -> collector -> SQLite -> exporter -> Prometheus.

The real ibpulse-collector and ibpulse-exporter on ephemeral loopback ports
share a temporary database; the real `ibpulse-probe report --once` reads
the fixture trees (tests/fixtures/sysfs-mlx5 as node01, sysfs-rxe as
node02) and pushes them with each host's token. Then /metrics shows those
hosts' counters with the meaning applied (x4 bytes, saturation, lifespan
in seconds, the degraded PCIe link), promtool is clean, and a real
Prometheus scraping the exporter returns the same values. A second report
with moved counters shows up in the next scrape.

usage: test_e2e.py PROBE COLLECTOR EXPORTER SCHEMA_DIR FIXTURES_DIR PROMTOOL PROMETHEUS
"""
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "exporter"))
import harness as H  # noqa: E402

TOKENS = {"node01": "tok-node01-0123456789abcdef", "node02": "tok-node02-0123456789abcdef"}


def start_collector(procs, collector, tmp, db, schema_dir):
    cfg = os.path.join(tmp, "collector.ini")
    with open(cfg, "w") as f:
        f.write("[collector]\nlisten = 127.0.0.1\nport = 0\ndb = %s\nschema_dir = %s\n"
                "[tokens]\n" % (db, schema_dir))
        for host, tok in TOKENS.items():
            f.write("%s = %s\n" % (host, tok))
    pf = os.path.join(tmp, "collector.port")
    p = procs.start("collector", [collector, "serve", "--config", cfg, "--port-file", pf])
    return p, "http://127.0.0.1:%d/api/v1/report" % H.read_port_file(pf, p, procs)


def push(probe, url, tmp, host, tree):
    tok = os.path.join(tmp, host + ".token")
    with open(tok, "w") as f:
        f.write(TOKENS[host] + "\n")
    r = subprocess.run([probe, "report", "--once", "--collector", url, "--token-file", tok,
                        "--host", host, "--sysfs-root", tree],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=120)
    H.check(r.returncode == 0, "probe report for %s: %s" % (host, r.stdout.decode()))


def check_metrics(base, promtool):
    status, _, text = H.metrics(base, gzip_ok=True)
    H.check(status == 200, "/metrics: %d" % status)
    ok, out = H.promtool_check(promtool, text)
    H.check(ok, "promtool check metrics:\n" + out)
    S = H.parse_samples(text)
    port = dict(host="node01", device="mlx5_0", port="1")
    want = [
        ("ibpulse_host_up", dict(host="node01"), 1),
        ("ibpulse_host_up", dict(host="node02"), 1),
        # 123456789012 and 98765432109 4-octet words in the fixture
        ("ibpulse_port_data_transmitted_bytes_total", port, 493827156048),
        ("ibpulse_port_data_received_bytes_total", port, 395061728436),
        ("ibpulse_port_symbol_error_total", port, 3),
        ("ibpulse_port_out_of_buffer_drops_total", port, 17),
        ("ibpulse_port_lifespan_seconds", port, 0.012),
        ("ibpulse_port_state_id", port, 4),
        ("ibpulse_port_rate_bytes_per_second", port, 12500000000),
        ("ibpulse_port_error_saturated", dict(port, counter="symbol_error"), 0),
        # mlx5_2: a down port with saturated error counters
        ("ibpulse_port_state_id", dict(host="node01", device="mlx5_2"), 1),
        ("ibpulse_port_error_saturated",
         dict(host="node01", device="mlx5_2", counter="symbol_error"), 1),
        ("ibpulse_port_error_saturated",
         dict(host="node01", device="mlx5_2", counter="link_downed"), 1),
        # mlx5_1: RoCE on a PCIe link trained at 8 GT/s x8 of 16 GT/s x16
        ("ibpulse_device_pcie_link_degraded", dict(host="node01", device="mlx5_1"), 1),
        ("ibpulse_device_pcie_link_degraded", dict(host="node01", device="mlx5_0"), 0),
        ("ibpulse_port_carrier_changes_total", dict(host="node01", device="mlx5_1"), 3),
        ("ibpulse_port_gid_info", dict(host="node01", device="mlx5_1", index="1",
                                       type="RoCE v2", netdev="ens2f0"), 1),
        # rxe: its own hw_counters under the generic family
        ("ibpulse_port_hw_counters_total", dict(host="node02", device="rxe0",
                                                counter="sent_pkts"), 1200),
        ("ibpulse_port_hw_counters_total", dict(host="node02", device="rxe0",
                                                counter="rcvd_pkts"), 1100),
    ]
    for name, labels, value in want:
        got = H.find(S, name, **labels)
        H.check(got == [value], "%s%s: want %s, got %s" % (name, labels, value, got))
    H.check(not H.find(S, "ibpulse_port_hw_counters_total", counter="lifespan"),
            "lifespan is not served as a counter")
    return S


def moved_tree(fixtures, tmp):
    """A copy of sysfs-mlx5 whose mlx5_0 sent 1000 more words."""
    tree = os.path.join(tmp, "sysfs-moved")
    shutil.copytree(os.path.join(fixtures, "sysfs-mlx5"), tree, symlinks=True)
    path = os.path.join(tree, "class", "infiniband", "mlx5_0", "ports", "1", "counters",
                        "port_xmit_data")
    with open(path) as f:
        v = int(f.read())
    with open(path, "w") as f:
        f.write("%d\n" % (v + 1000))
    return tree, (v + 1000) * 4


def main():
    probe, collector, exporter, schema_dir, fixtures, promtool, prometheus = sys.argv[1:8]
    for tool in (promtool, prometheus):
        if not shutil.which(tool):
            print("SKIP: %s not found (Debian: apt-get install prometheus)" % tool)
            return H.SKIP
    tmp = tempfile.mkdtemp(prefix="ibpulse-e2e-")
    procs = H.Procs(tmp)
    ok = False
    try:
        db = os.path.join(tmp, "ibpulse.db")
        col, url = start_collector(procs, collector, tmp, db, schema_dir)
        pf = os.path.join(tmp, "exporter.port")
        exp = procs.start("exporter", [exporter, "--db", db, "--listen", "127.0.0.1",
                                       "--port", "0", "--port-file", pf])
        port = H.read_port_file(pf, exp, procs)
        base = "http://127.0.0.1:%d" % port
        push(probe, url, tmp, "node01", os.path.join(fixtures, "sysfs-mlx5"))
        push(probe, url, tmp, "node02", os.path.join(fixtures, "sysfs-rxe"))
        check_metrics(base, promtool)

        prom = H.start_prometheus(procs, prometheus, tmp, [("ibpulse", "127.0.0.1:%d" % port, None)])
        H.prom_wait_value(prom, 'ibpulse_port_data_transmitted_bytes_total'
                          '{host="node01",device="mlx5_0",port="1"}', 493827156048)
        H.prom_wait_value(prom, 'ibpulse_port_error_saturated'
                          '{host="node01",device="mlx5_2",counter="symbol_error"}', 1)
        H.prom_wait_value(prom, 'ibpulse_port_hw_counters_total'
                          '{host="node02",device="rxe0",counter="sent_pkts"}', 1200)
        H.prom_wait_value(prom, 'ibpulse_device_pcie_link_degraded{host="node01",device="mlx5_1"}', 1)

        tree, want = moved_tree(fixtures, tmp)
        push(probe, url, tmp, "node01", tree)
        S = H.parse_samples(H.metrics(base)[2])
        got = H.find(S, "ibpulse_port_data_transmitted_bytes_total", host="node01", device="mlx5_0")
        H.check(got == [want], "after the second report: want %d, got %s" % (want, got))
        H.prom_wait_value(prom, 'ibpulse_port_data_transmitted_bytes_total'
                          '{host="node01",device="mlx5_0",port="1"}', want)
        procs.stop_clean(exp)
        procs.check_alive(col)
        ok = True
    finally:
        if not ok:
            procs.dump_logs()
        procs.stop_all()
        shutil.rmtree(tmp, ignore_errors=True)
    print("e2e: probe -> collector -> exporter -> Prometheus: all checks passed")
    return 0


if __name__ == "__main__":
    H.run(main)
