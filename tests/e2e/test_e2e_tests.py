#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""End to end for fabric test results: collector -> SQLite -> exporter.

The real ibpulse-collector and ibpulse-exporter share a temporary
database. Three probes register through the collector's API (node01 on
leaf01, node02 and node03 on leaf02) and push counter reports with the
real `ibpulse-probe report --once`; node01 and node02 post results, one
batch twice (a retry after a lost answer). /metrics then shows what the
collector stored, the way the exporter reads it: worst and median per port
and per group pair, every result counted once, the verbs error by
wc_status, spool drops, promtool clean. node03 then goes silent: its `up`
goes to 0 and its port shows overdue while node01's stays covered. A
paused host is shown paused and leaves the planned ports.

usage: test_e2e_tests.py PROBE COLLECTOR EXPORTER SCHEMA_DIR FIXTURES_DIR PROMTOOL
"""
import http.client
import json
import os
import subprocess
import sys
import time
import uuid

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "exporter"))
import harness as H  # noqa: E402

HOSTS = {"node01": "leaf01", "node02": "leaf02", "node03": "leaf02"}
DEVICE = {"node01": "mlx5_0", "node02": "rxe0", "node03": "mlx5_0"}
STALE = 8  # the exporter's stale_after, seconds


def token(host):
    return "tok-%s-0123456789abcdef" % host


def start_collector(procs, collector, tmp, db, schema_dir):
    cfg = os.path.join(tmp, "collector.ini")
    with open(cfg, "w") as f:
        f.write("[collector]\nlisten = 127.0.0.1\nport = 0\ndb = %s\nschema_dir = %s\n"
                "[planner]\nperiod = 600\ngroup_label = switch\n[tokens]\n" % (db, schema_dir))
        for host in HOSTS:
            f.write("%s = %s\n" % (host, token(host)))
    pf = os.path.join(tmp, "collector.port")
    p = procs.start("collector", [collector, "serve", "--config", cfg, "--port-file", pf])
    return p, H.read_port_file(pf, p, procs)


def start_exporter(procs, exporter, tmp, db):
    cfg = os.path.join(tmp, "exporter.ini")
    with open(cfg, "w") as f:
        f.write("[exporter]\nlisten = 127.0.0.1\nport = 0\ndb = %s\nstale_after = %d\n"
                "drop_after = %d\ntest_period = 60\n" % (db, STALE, STALE))
    pf = os.path.join(tmp, "exporter.port")
    p = procs.start("exporter", [exporter, "--config", cfg, "--port-file", pf])
    return p, "http://127.0.0.1:%d" % H.read_port_file(pf, p, procs)


def call(port, method, path, host, body=None):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    hdrs = {"Authorization": "Bearer " + token(host)}
    data = None
    if body is not None:
        data = json.dumps(body).encode()
        hdrs["Content-Type"] = "application/json"
    conn.request(method, path, body=data, headers=hdrs)
    r = conn.getresponse()
    out = r.read()
    conn.close()
    H.check(r.status == 200, "%s %s as %s: %d %s" % (method, path, host, r.status, out[:300]))
    return json.loads(out) if out else None


def register(port, host):
    call(port, "POST", "/api/v1/register", host, {
        "version": 1, "host": host,
        "responder": {"address": "127.0.0.%d" % (list(HOSTS).index(host) + 1), "port": 18515},
        # the groups are the collector's group_label's ("switch"), which
        # the exporter reads from the database (no group_label of its own;
        # by "leaf" every host would be in one group, and no pair); its
        # test_period (60 s) is raised to the collector's period (600 s)
        "labels": {"switch": HOSTS[host], "leaf": "one"}, "profiles": ["bw", "lat"],
        "ports": [{"device": DEVICE[host], "port": 1, "state": 4, "link_layer": "InfiniBand",
                   "lid": 10, "subnet_prefix": "fe80:0000:0000:0000", "pkeys": [65535],
                   "gids": []}]})


def result(peer, profile="bw", outcome="ok", **figures):
    r = {"id": str(uuid.uuid4()), "plan_id": None, "profile": profile,
         "test": "write_bw" if profile == "bw" else "write_lat",
         "started": time.time() - 30, "duration_seconds": 2.0,
         "local": None, "peer": {"host": peer, "device": DEVICE[peer], "port": 1},
         "outcome": outcome, "error": None if outcome == "ok" else "failed",
         "wc_status": None, "busy": False, "params": {"size": 65536}}
    r.update(figures)
    return r


def post_results(port, host, results, dropped=(0, 0)):
    for r in results:
        r["local"] = {"device": DEVICE[host], "port": 1}
    return call(port, "POST", "/api/v1/results", host, {
        "version": 1, "host": host, "results": results,
        "dropped": {"spool_full": dropped[0], "expired": dropped[1]}})


def push_counters(probe, cport, tmp, host, tree):
    tok = os.path.join(tmp, host + ".token")
    with open(tok, "w") as f:
        f.write(token(host) + "\n")
    r = subprocess.run([probe, "report", "--once", "--collector",
                        "http://127.0.0.1:%d/api/v1/report" % cport, "--token-file", tok,
                        "--host", host, "--sysfs-root", tree],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=120)
    H.check(r.returncode == 0, "probe report for %s: %s" % (host, r.stdout.decode()))


def check_results(base, promtool):
    status, _, text = H.metrics(base, gzip_ok=True)
    H.check(status == 200, "/metrics: %d" % status)
    ok, out = H.promtool_check(promtool, text)
    H.check(ok, "promtool check metrics:\n" + out)
    S = H.parse_samples(text)
    a = dict(host="node01", device="mlx5_0", port="1")
    want = [
        ("ibpulse_test_port_bandwidth_bytes_per_second",
         dict(a, profile="bw", stat="avg", aggregate="worst"), 4.0e10),
        ("ibpulse_test_port_bandwidth_bytes_per_second",
         dict(a, profile="bw", stat="avg", aggregate="median"), 4.6e10),
        # node02's latency test, answered by node01, counts at node01's port
        ("ibpulse_test_port_latency_seconds",
         dict(a, profile="lat", stat="p99", aggregate="worst"), 3.5e-6),
        ("ibpulse_test_group_pair_bandwidth_bytes_per_second",
         dict(group_a="leaf01", group_b="leaf02", profile="bw", stat="avg",
              aggregate="median"), 4.6e10),
        # the batch sent twice counts once
        ("ibpulse_test_results_total", dict(host="node01", profile="bw", outcome="ok"), 3),
        ("ibpulse_test_results_total", dict(host="node01", profile="bw", outcome="verbs_error",
                                            wc_status="IBV_WC_RETRY_EXC_ERR"), 1),
        ("ibpulse_test_port_results", dict(a, profile="bw", outcome="ok"), 3),
        ("ibpulse_test_pair_success", dict(a, peer_host="node03", profile="bw"), 0),
        ("ibpulse_test_pair_bandwidth_bytes_per_second",
         dict(a, peer_host="node02", profile="bw", stat="peak"), 4.8e10),
        ("ibpulse_probe_results_dropped_total", dict(host="node01", reason="spool_full"), 2),
        ("ibpulse_test_port_overdue", a, 0),
        ("ibpulse_test_planned_ports", {}, 3),
    ]
    for name, labels, value in want:
        got = H.find(S, name, **labels)
        H.check(got == [value], "%s%s: want %s, got %s" % (name, labels, value, got))


def wait_node03_silent(base, probe, cport, tmp, fixtures):
    """Keep node01 and node02 reporting until node03's up is 0."""
    def silent():
        push_counters(probe, cport, tmp, "node01", os.path.join(fixtures, "sysfs-mlx5"))
        push_counters(probe, cport, tmp, "node02", os.path.join(fixtures, "sysfs-rxe"))
        S = H.parse_samples(H.metrics(base)[2])
        up = {h: H.find(S, "ibpulse_host_up", host=h) for h in HOSTS}
        return S if up == {"node01": [1], "node02": [1], "node03": [0]} else None
    return H.wait_for("node03 silent, the others up", silent, timeout=120, interval=0.5)


def main():
    probe, collector, exporter, schema_dir, fixtures, promtool = sys.argv[1:7]
    if H.missing(promtool):
        return 1
    with H.session("ibpulse-e2e-tests-") as (procs, tmp):
        db = os.path.join(tmp, "ibpulse.db")
        col, cport = start_collector(procs, collector, tmp, db, schema_dir)
        exp, base = start_exporter(procs, exporter, tmp, db)
        for host in HOSTS:
            register(cport, host)
        for host in HOSTS:
            tree = "sysfs-rxe" if host == "node02" else "sysfs-mlx5"
            push_counters(probe, cport, tmp, host, os.path.join(fixtures, tree))
        batch = [result("node02", bw_avg_bytes_per_second=bw, bw_peak_bytes_per_second=4.8e10,
                        bw_min_bytes_per_second=bw * 0.9) for bw in (4.0e10, 4.6e10, 4.7e10)]
        batch.append(result("node03", outcome="verbs_error", wc_status="IBV_WC_RETRY_EXC_ERR"))
        first = post_results(cport, "node01", batch, dropped=(2, 0))
        again = post_results(cport, "node01", batch, dropped=(2, 0))
        H.check(first == {"stored": 4, "duplicates": 0} and
                again == {"stored": 0, "duplicates": 4},
                "stored once: %s then %s" % (first, again))
        post_results(cport, "node02", [result("node01", profile="lat", lat_median_seconds=1.9e-6,
                                              lat_p99_seconds=3.5e-6)])
        check_results(base, promtool)

        S = wait_node03_silent(base, probe, cport, tmp, fixtures)
        H.check(H.find(S, "ibpulse_test_port_overdue", host="node03") == [1],
                "the silent probe's port is overdue")
        H.check(H.find(S, "ibpulse_test_port_overdue", host="node01") == [0],
                "a tested port is not overdue")
        H.check(H.find(S, "ibpulse_test_overdue_ports") == [1], "one port overdue")

        call(cport, "POST", "/api/v1/hosts/node02/pause", "node02")
        S = H.parse_samples(H.metrics(base)[2])
        H.check(H.find(S, "ibpulse_test_host_paused", host="node02") == [1], "node02 paused")
        H.check(not H.find(S, "ibpulse_test_port_overdue", host="node02") and
                H.find(S, "ibpulse_test_planned_ports") == [2],
                "a paused host's port is not planned")
        procs.stop_clean(exp)
        procs.check_alive(col)
    print("e2e: test results, collector -> exporter: all checks passed")
    return 0


if __name__ == "__main__":
    H.run(main)
