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


def fx(tree, *path):
    """A number from a fixture file ("16.0 GT/s PCIe" gives 16.0)."""
    with open(os.path.join(tree, *path)) as f:
        return float(f.read().split()[0])


def ib(fixtures, dev, *path):
    return fx(os.path.join(fixtures, "sysfs-mlx5"), "class", "infiniband", dev, *path)


def degraded(fixtures, dev):
    pci = os.path.realpath(os.path.join(fixtures, "sysfs-mlx5", "class", "infiniband",
                                        dev, "device"))
    return int(fx(pci, "current_link_speed") < fx(pci, "max_link_speed") or
               fx(pci, "current_link_width") < fx(pci, "max_link_width"))


def expected(fixtures):
    """What /metrics must say, computed from the fixture files."""
    port = dict(host="node01", device="mlx5_0", port="1")
    c = ("ports", "1", "counters")
    hw = ("ports", "1", "hw_counters")
    rxe = os.path.join(fixtures, "sysfs-rxe", "class", "infiniband", "rxe0", "ports", "1",
                       "hw_counters")
    sat2 = ib(fixtures, "mlx5_2", *c, "symbol_error") == 65535
    return [
        ("ibpulse_host_up", dict(host="node01"), 1),
        ("ibpulse_host_up", dict(host="node02"), 1),
        # 4-octet words in sysfs, bytes in /metrics
        ("ibpulse_port_data_transmitted_bytes_total", port,
         4 * ib(fixtures, "mlx5_0", *c, "port_xmit_data")),
        ("ibpulse_port_data_received_bytes_total", port,
         4 * ib(fixtures, "mlx5_0", *c, "port_rcv_data")),
        ("ibpulse_port_symbol_error_total", port, ib(fixtures, "mlx5_0", *c, "symbol_error")),
        ("ibpulse_port_out_of_buffer_drops_total", port,
         ib(fixtures, "mlx5_0", *hw, "out_of_buffer")),
        # milliseconds in sysfs, seconds in /metrics
        ("ibpulse_port_lifespan_seconds", port, ib(fixtures, "mlx5_0", *hw, "lifespan") / 1000),
        ("ibpulse_port_state_id", port, 4),
        ("ibpulse_port_rate_bytes_per_second", port, 100e9 / 8),
        ("ibpulse_port_error_saturated", dict(port, counter="symbol_error"), 0),
        # mlx5_2: a down port with saturated error counters
        ("ibpulse_port_state_id", dict(host="node01", device="mlx5_2"), 1),
        ("ibpulse_port_error_saturated",
         dict(host="node01", device="mlx5_2", counter="symbol_error"), int(sat2)),
        ("ibpulse_port_error_saturated",
         dict(host="node01", device="mlx5_2", counter="link_downed"),
         int(ib(fixtures, "mlx5_2", *c, "link_downed") == 255)),
        # mlx5_1: RoCE behind a degraded PCIe link
        ("ibpulse_device_pcie_link_degraded", dict(host="node01", device="mlx5_1"),
         degraded(fixtures, "mlx5_1")),
        ("ibpulse_device_pcie_link_degraded", dict(host="node01", device="mlx5_0"),
         degraded(fixtures, "mlx5_0")),
        ("ibpulse_port_carrier_changes_total", dict(host="node01", device="mlx5_1"),
         fx(os.path.join(fixtures, "sysfs-mlx5"), "class", "net", "ens2f0", "carrier_changes")),
        ("ibpulse_port_gid_info", dict(host="node01", device="mlx5_1", index="1",
                                       type="RoCE v2", netdev="ens2f0"), 1),
        # rxe: its own hw_counters under the generic family
        ("ibpulse_port_hw_counters_total", dict(host="node02", device="rxe0",
                                                counter="sent_pkts"), fx(rxe, "sent_pkts")),
        ("ibpulse_port_hw_counters_total", dict(host="node02", device="rxe0",
                                                counter="rcvd_pkts"), fx(rxe, "rcvd_pkts")),
    ]


def check_metrics(base, promtool, fixtures):
    status, _, text = H.metrics(base, gzip_ok=True)
    H.check(status == 200, "/metrics: %d" % status)
    ok, out = H.promtool_check(promtool, text)
    H.check(ok, "promtool check metrics:\n" + out)
    S = H.parse_samples(text)
    want = expected(fixtures)
    # the fixtures must exercise what is checked
    H.check(degraded(fixtures, "mlx5_1") and not degraded(fixtures, "mlx5_0"),
            "fixture: mlx5_1 degraded, mlx5_0 not")
    H.check(ib(fixtures, "mlx5_2", "ports", "1", "counters", "symbol_error") == 65535,
            "fixture: mlx5_2 symbol_error saturated")
    for name, labels, value in want:
        got = H.find(S, name, **labels)
        H.check(got == [value], "%s%s: want %s, got %s" % (name, labels, value, got))
    H.check(not H.find(S, "ibpulse_port_hw_counters_total", counter="lifespan"),
            "lifespan is not served as a counter")
    return want


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
    if H.missing(promtool, prometheus):
        return 1
    with H.session("ibpulse-e2e-") as (procs, tmp):
        db = os.path.join(tmp, "ibpulse.db")
        col, url = start_collector(procs, collector, tmp, db, schema_dir)
        pf = os.path.join(tmp, "exporter.port")
        exp = procs.start("exporter", [exporter, "--db", db, "--listen", "127.0.0.1",
                                       "--port", "0", "--port-file", pf])
        port = H.read_port_file(pf, exp, procs)
        base = "http://127.0.0.1:%d" % port
        push(probe, url, tmp, "node01", os.path.join(fixtures, "sysfs-mlx5"))
        push(probe, url, tmp, "node02", os.path.join(fixtures, "sysfs-rxe"))
        want = {n + repr(sorted(l.items())): v for n, l, v in check_metrics(base, promtool, fixtures)}
        xmit = want["ibpulse_port_data_transmitted_bytes_total" +
                    repr(sorted(dict(host="node01", device="mlx5_0", port="1").items()))]

        prom = H.start_prometheus(procs, prometheus, tmp, [("ibpulse", "127.0.0.1:%d" % port, None)])
        H.prom_wait_value(prom, 'ibpulse_port_data_transmitted_bytes_total'
                          '{host="node01",device="mlx5_0",port="1"}', xmit)
        H.prom_wait_value(prom, 'ibpulse_port_error_saturated'
                          '{host="node01",device="mlx5_2",counter="symbol_error"}', 1)
        H.prom_wait_value(prom, 'ibpulse_port_hw_counters_total'
                          '{host="node02",device="rxe0",counter="sent_pkts"}',
                          fx(os.path.join(fixtures, "sysfs-rxe"), "class", "infiniband", "rxe0",
                             "ports", "1", "hw_counters", "sent_pkts"))
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
    print("e2e: probe -> collector -> exporter -> Prometheus: all checks passed")
    return 0


if __name__ == "__main__":
    H.run(main)
