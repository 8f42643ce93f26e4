#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Integration test of ibpulse-exporter over HTTP.

A real SQLite database is built from schema/*.sql (three hosts: an IB host
with a saturated counter and a weird node description, a RoCE host, and a
host silent for longer than drop_after), the real exporter serves it on an
ephemeral loopback port, and:
  - /metrics in text 0.0.4, OpenMetrics 1.0 and gzip: values, units,
    escaping, saturation, host_up; `promtool check metrics` is clean;
  - sharding: a partition of the hosts, and 400s with a reason;
  - /healthz, 404, 405; 503 while the database is missing;
  - scrapes succeed while a writer commits to the WAL, and one after a
    commit that left the WAL's size and time as they were serves it;
  - a real Prometheus scrapes it (whole and sharded) and its query API
    returns the expected series and label values; after changes of a
    host (marked as the collector marks them) it reads the new values
    from the gzip bodies the block cache assembles.

usage: test_integration.py EXPORTER SCHEMA_DIR PROMTOOL PROMETHEUS
"""
import os
import re
import sqlite3
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness as H  # noqa: E402
import ibpdb  # noqa: E402

WEIRD_DESC = 'rack "7"\\b\nrow \u00e9'
WEIRD_HCA = "MT4123 \\ \"x\""


def build_db(path, schema_dir):
    db = ibpdb.create(path, schema_dir)
    now = time.time()
    a = ibpdb.add_host(db, "node-a", now)
    d = ibpdb.add_device(db, a, "mlx5_0", node_desc=WEIRD_DESC, hca_type=WEIRD_HCA,
                         pcie_cur_width=8)
    p = ibpdb.add_port(db, a, d, 1)
    ib = {n: 0 for n in ibpdb.IB_COUNTERS}
    ib.update(port_xmit_data=1000, port_rcv_data=2 ** 40, symbol_error=65535,
              link_downed=7, port_xmit_packets=12345)
    ibpdb.add_counters(db, p, 0, ib)
    ibpdb.add_counters(db, p, 1, {"out_of_buffer": 11, "lifespan": 10,
                                  "resp_rnr_nak": 4})
    ibpdb.add_gids(db, p, [(0, "fe80:0000:0000:0000:0002:c903:0010:1235", "IB/RoCE v1", None),
                           (1, "0000:0000:0000:0000:0000:0000:0000:0000", None, None)])
    ibpdb.add_pkeys(db, p, [(0, 0xffff), (1, 0x7fff), (2, 0)])

    b = ibpdb.add_host(db, "node-b", now)
    d = ibpdb.add_device(db, b, "rxe0", netdevs="eth0", pcie_address=None,
                         pcie_cur_speed_gts=None, pcie_max_speed_gts=None,
                         pcie_cur_width=None, pcie_max_width=None,
                         aer_correctable=None, aer_nonfatal=None, aer_fatal=None)
    p = ibpdb.add_port(db, b, d, 1, link_layer="Ethernet", lid=0, sm_lid=0,
                       port_guid=None, netdev="eth0", rate_bytes=12500000000)
    ibpdb.add_counters(db, p, 1, {"sent_pkts": 500, "rcvd_pkts": 400, "lifespan": 10,
                                  "duplicate_request": 2})
    ibpdb.add_counters(db, p, 2, {"carrier_changes": 5, "rx_prio3_pause": 6})
    ibpdb.add_gids(db, p, [(0, "fe80:0000:0000:0000:5054:00ff:fe12:3456", "IB/RoCE v1", "eth0"),
                           (1, "fe80:0000:0000:0000:5054:00ff:fe12:3456", "RoCE v2", "eth0")])

    s = ibpdb.add_host(db, "node-silent", now - 1000)
    d = ibpdb.add_device(db, s, "mlx5_0")
    p = ibpdb.add_port(db, s, d, 1)
    ibpdb.add_counters(db, p, 0, {"port_xmit_data": 5})

    # fabric tests (schema 002): node-a and node-b on two leaves test each
    # other; node-silent's probe registered but stopped reporting
    ibpdb.add_probe(db, "node-a", {"leaf": "leaf01"})
    ibpdb.add_probe(db, "node-b", {"leaf": "leaf02"}, ports=[("rxe0", 1, 4)])
    ibpdb.add_probe(db, "node-silent", {"leaf": "leaf02"})
    for bw in (4.0e10, 4.6e10, 4.7e10):
        ibpdb.add_result(db, "node-a", "mlx5_0", 1, ("node-b", "rxe0", 1),
                         bw_avg_bytes_per_second=bw, bw_min_bytes_per_second=bw / 2,
                         bw_peak_bytes_per_second=bw * 1.1, msg_rate_per_second=bw / 65536)
    ibpdb.add_result(db, "node-b", "rxe0", 1, ("node-a", "mlx5_0", 1), profile="lat",
                     lat_min_seconds=1.8e-6, lat_median_seconds=1.9e-6,
                     lat_mean_seconds=2.0e-6, lat_p99_seconds=3.5e-6,
                     lat_p999_seconds=5e-6, lat_max_seconds=9e-6, lat_stdev_seconds=2e-7)
    ibpdb.add_result(db, "node-a", "mlx5_0", 1, ("node-silent", "mlx5_0", 1),
                     outcome="verbs_error", wc_status="IBV_WC_RETRY_EXC_ERR")
    # baselines (schema 003): node-a -> node-b in regression
    ibpdb.add_link_state(db, ("node-a", "mlx5_0", 1), ("node-b", "rxe0", 1),
                         regression={}, baseline=4.7e10, threshold=3.76e10,
                         last_value=3e10, judged=8)
    return db


def check_text(base, promtool):
    status, hdrs, text = H.metrics(base)
    H.check(status == 200, "GET /metrics: %d" % status)
    H.check(hdrs["content-type"].startswith("text/plain; version=0.0.4"),
            "content type %s" % hdrs["content-type"])
    ok, out = H.promtool_check(promtool, text)
    H.check(ok, "promtool check metrics:\n" + out)
    S = H.parse_samples(text)
    H.check(H.find(S, "ibpulse_port_data_transmitted_bytes_total", host="node-a") == [4000],
            "x4 bytes")
    H.check(H.find(S, "ibpulse_port_data_received_bytes_total", host="node-a") == [4 * 2 ** 40],
            "x4 received bytes")
    H.check(H.find(S, "ibpulse_port_error_saturated", host="node-a",
                   counter="symbol_error") == [1], "symbol_error saturated")
    H.check(H.find(S, "ibpulse_port_error_saturated", host="node-a",
                   counter="link_downed") == [0], "link_downed not saturated")
    H.check(H.find(S, "ibpulse_host_up", host="node-a") == [1], "node-a up")
    H.check(H.find(S, "ibpulse_host_up", host="node-silent") == [0], "silent host down")
    H.check(H.find(S, "ibpulse_host_last_report_timestamp_seconds", host="node-silent"),
            "silent host keeps its last report time")
    H.check(not [k for k in S if ("host", "node-silent") in k[1] and k[0].startswith("ibpulse_port")],
            "silent host's port series are dropped")
    H.check(H.find(S, "ibpulse_device_info", host="node-a", node_desc=WEIRD_DESC,
                   hca_type=WEIRD_HCA) == [1], "escaped labels read back")
    H.check(H.find(S, "ibpulse_device_pcie_link_degraded", host="node-a") == [1],
            "x8 of x16 is degraded")
    H.check(H.find(S, "ibpulse_port_lifespan_seconds", host="node-b") == [0.01],
            "lifespan in seconds")
    H.check(H.find(S, "ibpulse_port_hw_counters_total", host="node-b",
                   counter="sent_pkts") == [500], "rxe hw counter")
    H.check(H.find(S, "ibpulse_port_duplicate_requests_packets_total", host="node-b") == [2],
            "mirrored node_exporter hw name")
    H.check(H.find(S, "ibpulse_port_carrier_changes_total", host="node-b") == [5],
            "carrier changes")
    H.check(H.find(S, "ibpulse_port_netdev_statistics_total", host="node-b",
                   counter="rx_prio3_pause") == [6], "netdev statistics")
    H.check(len(H.find(S, "ibpulse_port_gid_info", host="node-b")) == 2, "two RoCE GIDs")
    H.check(len(H.find(S, "ibpulse_port_gid_info", host="node-a")) == 1, "zero GID skipped")
    H.check(H.find(S, "ibpulse_port_pkey_info", host="node-a", pkey="0x7fff",
                   membership="limited") == [1], "limited P_Key")
    H.check(len(H.find(S, "ibpulse_port_pkey_info", host="node-a")) == 2, "empty P_Key skipped")
    H.check("lifespan" not in str(H.find(S, "ibpulse_port_hw_counters_total")),
            "lifespan is not a counter")
    H.check(not H.find(S, "ibpulse_device_pcie_current_width_lanes", host="node-b") and
            not H.find(S, "ibpulse_device_pcie_aer_errors_total", host="node-b"),
            "unknown PCIe values are absent, not zero")
    H.check(H.find(S, "ibpulse_port_info", host="node-b", link_layer="Ethernet",
                   netdev="eth0", port_guid="") == [1], "RoCE port info")
    check_results(S)
    H.check(H.find(S, "ibpulse_test_host_group_info", host="node-a",
                   group="leaf01") == [1], "node-a's group")
    H.check(H.find(S, "ibpulse_link_regression", host="node-a", peer_host="node-b",
                   metric="bandwidth") == [1], "link regression served")
    return text


def check_results(S):
    port_a = dict(host="node-a", device="mlx5_0", port="1", profile="bw")
    H.check(H.find(S, "ibpulse_test_port_bandwidth_bytes_per_second", stat="avg",
                   aggregate="worst", **port_a) == [4.0e10], "worst bandwidth per port")
    H.check(H.find(S, "ibpulse_test_port_bandwidth_bytes_per_second", stat="avg",
                   aggregate="median", **port_a) == [4.6e10], "median bandwidth per port")
    H.check(H.find(S, "ibpulse_test_port_bandwidth_bytes_per_second", stat="min",
                   aggregate="worst", **port_a) == [2.0e10], "worst min sub-interval")
    H.check(H.find(S, "ibpulse_test_group_pair_bandwidth_bytes_per_second",
                   group_a="leaf01", group_b="leaf02", stat="avg",
                   aggregate="worst") == [4.0e10], "worst per group pair")
    H.check(H.find(S, "ibpulse_test_port_latency_seconds", host="node-a", stat="p99",
                   aggregate="worst", profile="lat") == [3.5e-6],
            "latency p99 at the responder's port")
    H.check(len(H.find(S, "ibpulse_test_pair_latency_seconds", host="node-b")) == 7,
            "seven latency stats per pair")
    H.check(H.find(S, "ibpulse_test_results_total", host="node-a", outcome="verbs_error",
                   wc_status="IBV_WC_RETRY_EXC_ERR") == [1], "verbs error by wc_status")
    H.check(H.find(S, "ibpulse_test_port_overdue", host="node-silent") == [1] and
            H.find(S, "ibpulse_test_port_overdue", host="node-a") == [0],
            "a silent probe's port is overdue")
    H.check(not [k for k in S if "quantile" in dict(k[1])], "no quantile label")


def check_openmetrics_and_gzip(base, promtool):
    status, hdrs, text = H.metrics(base, accept=H.PROMETHEUS_ACCEPT)
    H.check(status == 200, "OpenMetrics: %d" % status)
    H.check(hdrs["content-type"].startswith("application/openmetrics-text; version=1.0.0"),
            "OpenMetrics content type: %s" % hdrs["content-type"])
    H.check(text.endswith("# EOF\n"), "OpenMetrics ends with # EOF")
    H.check("# TYPE ibpulse_port_data_transmitted_bytes counter\n" in text,
            "OpenMetrics counter family without _total")
    H.check("# TYPE ibpulse_port_gid info\n" in text, "info family typed info")
    status, hdrs, body = H.http(base + "/metrics", {"Accept-Encoding": "gzip"})
    H.check(hdrs.get("content-encoding") == "gzip", "gzip when asked")
    status, hdrs, text = H.metrics(base, gzip_ok=True)
    ok, out = H.promtool_check(promtool, text)
    H.check(ok, "promtool on the gunzipped body:\n" + out)
    status, hdrs, _ = H.http(base + "/metrics", {"Accept-Encoding": "gzip;q=0"})
    H.check("content-encoding" not in hdrs, "no gzip when q=0")


def check_shards(base):
    for q, why in [("?shard=2&shards=2", "shard must be"), ("?shards=0&shard=0", "shards must be"),
                   ("?shard=1", "go together"), ("?shard=a&shards=3", "shard must be"),
                   ("?shard=0&shards=99999", "shards must be")]:
        status, _, body = H.http(base + "/metrics" + q)
        H.check(status == 400 and why in body.decode(), "%s: %d %s" % (q, status, body))
    seen = []
    for i in range(3):
        status, _, text = H.metrics(base, query="?shard=%d&shards=3" % i)
        H.check(status == 200, "shard %d: %d" % (i, status))
        S = H.parse_samples(text)
        hosts = sorted(dict(ls)["host"] for (n, ls) in S if n == "ibpulse_host_up")
        for (n, ls) in S:
            if n.startswith("ibpulse_port_"):
                H.check(dict(ls)["host"] in hosts, "series of another shard's host")
        seen += hosts
    H.check(sorted(seen) == ["node-a", "node-b", "node-silent"],
            "shards partition the hosts: %s" % seen)


def check_http(base):
    H.check(H.http(base + "/healthz")[0] == 200, "healthz")
    H.check(H.http(base + "/nope")[0] == 404, "404")
    status, hdrs, _ = H.http(base + "/metrics", method="POST", data=b"x")
    H.check(status == 405 and "GET" in hdrs.get("allow", ""), "405 with Allow")
    H.check(H.http(base + "/metrics", method="HEAD")[0] == 200, "HEAD")


def check_concurrent_writer(base, db_path):
    """Scrapes stay 200 and see monotonic values while a writer commits,
    and the last commit is what a scrape after it serves."""
    stop = threading.Event()
    errors = []
    commits = [1000]

    def writer():
        db = sqlite3.connect(db_path, isolation_level=None, timeout=10)
        try:
            while not stop.is_set():
                v = commits[-1] + 1
                db.execute("BEGIN IMMEDIATE")
                db.execute("UPDATE series SET value = ? WHERE name = 'port_xmit_data'"
                           " AND port_id IN (SELECT id FROM port WHERE host_id ="
                           " (SELECT id FROM host WHERE name = 'node-a'))", (v,))
                db.execute("UPDATE host SET last_report = ? WHERE name != 'node-silent'",
                           (time.time(),))
                # as the collector does: the block cache reads node-a again
                ibpdb.mark_changed(db, db.execute(
                    "SELECT id FROM host WHERE name = 'node-a'").fetchone()[0])
                db.execute("COMMIT")
                commits.append(v)
                time.sleep(0.005)  # let the scraping thread have the GIL
        except Exception as e:  # reported below
            errors.append(e)
        finally:
            db.close()

    def xmit_bytes():
        status, _, text = H.metrics(base)
        H.check(status == 200, "scrape during writes: %d %s" % (status, text[:200]))
        return H.find(H.parse_samples(text), "ibpulse_port_data_transmitted_bytes_total",
                      host="node-a")[0]

    t = threading.Thread(target=writer)
    t.start()
    last, scrapes = 0, 0
    deadline = time.monotonic() + 60
    try:
        while (scrapes < 25 or len(commits) < 20) and time.monotonic() < deadline:
            v = xmit_bytes()
            H.check(v >= last, "value went back during writes: %d after %d (scrape %d, commits %d)" % (v, last, scrapes, len(commits)))
            last = v
            scrapes += 1
    finally:
        stop.set()
        t.join()
    H.check(not errors, "writer failed: %s" % errors)
    H.check(len(commits) >= 20, "the writer committed only %d times" % len(commits))
    H.check(xmit_bytes() == commits[-1] * 4, "a scrape serves the last commit")


def check_same_size_commit(base, db_path):
    """A commit that leaves the WAL's size and time as they were (after a
    checkpoint the WAL restarts; file times move in clock ticks) is still
    a new state: a scrape after it must not take the body shared from
    before it (the single flight's token reads SQLite's WAL index)."""
    db = sqlite3.connect(db_path, isolation_level=None, timeout=10)
    host = db.execute("SELECT id FROM host WHERE name = 'node-a'").fetchone()[0]

    def commit(v):
        db.execute("BEGIN IMMEDIATE")
        db.execute("UPDATE series SET value = ? WHERE name = 'port_xmit_data' AND port_id IN"
                   " (SELECT id FROM port WHERE host_id = ?)", (v, host))
        ibpdb.mark_changed(db, host)
        db.execute("COMMIT")

    for v in range(5000, 5020):
        commit(v)
    db.execute("PRAGMA wal_checkpoint(RESTART)")
    commit(6000)
    before = os.stat(db_path + "-wal")
    status, _, text = H.metrics(base)
    H.check(status == 200, "scrape: %d" % status)
    commit(7000)
    os.utime(db_path + "-wal", ns=(before.st_atime_ns, before.st_mtime_ns))
    after = os.stat(db_path + "-wal")
    H.check(after.st_size == before.st_size, "the WAL kept its size")
    status, _, text = H.metrics(base)
    v = H.find(H.parse_samples(text), "ibpulse_port_data_transmitted_bytes_total",
               host="node-a")[0]
    H.check(v == 7000 * 4, "the scrape after the commit serves it: %s" % v)
    db.close()


def check_missing_db(procs, exporter, tmp, schema_dir):
    path = os.path.join(tmp, "later.db")
    pf = os.path.join(tmp, "port2")
    p = procs.start("exporter-later", [exporter, "--db", path, "--listen", "127.0.0.1",
                                       "--port", "0", "--port-file", pf])
    base = "http://127.0.0.1:%d" % H.read_port_file(pf, p, procs)
    status, _, body = H.http(base + "/metrics")
    H.check(status == 503 and b"later.db" in body, "503 without a database: %d" % status)
    H.check(H.http(base + "/healthz")[0] == 503, "healthz 503 without a database")
    ibpdb.create(path, schema_dir).close()
    status, _, text = H.metrics(base)
    H.check(status == 200, "serves once the database exists: %d" % status)
    H.check("ibpulse_exporter_database_errors_total 1\n" in text, "database error counted")
    procs.stop_clean(p)


def check_dashboard_queries(prom, schema_dir):
    """Every query of the fabric tests dashboard runs, and those meant to
    show this database's results return series."""
    path = os.path.join(schema_dir, "..", "grafana", "dashboards", "ibpulse-tests.json")
    empty = []
    for p in __import__("json").load(open(path))["panels"]:
        # a table's columns may be absent (no expected figure for a RoCE
        # peer), not all of them
        if not any(H.prom_query(prom, t["expr"].replace("$host", ".*")
                                .replace("$profile", ".*"))
                   for t in p["targets"]):
            empty.append(p["title"])
    # no busy test, no latency regression, no suspect in this database;
    # increase() needs two samples (tests/grafana/test_dashboards.py has
    # them all)
    may_be_empty = {"Busy pairs (latest test)", "Tests on busy links",
                    "Test outcomes per hour", "Open latency regressions",
                    "Suspects (ports and devices)",
                    "Suspect group pairs (uplinks)",
                    # no fabric here: tests/grafana/test_dashboards.py
                    # checks these three on a fat tree the collector
                    # localized
                    "Suspect links between switches", "Suspect switches",
                    "Links between switches without a test"}
    H.check(not set(empty) - may_be_empty, "dashboard panels without data: %s" % empty)


def check_prometheus(procs, prometheus, tmp, port, schema_dir, db_path):
    target = "127.0.0.1:%d" % port
    prom = H.start_prometheus(procs, prometheus, tmp, [
        ("ibpulse", target, None),
        ("shard0", target, {"shard": 0, "shards": 2}),
        ("shard1", target, {"shard": 1, "shards": 2}),
    ])
    H.prom_wait_value(prom, 'ibpulse_port_error_saturated{job="ibpulse",host="node-a",'
                      'counter="symbol_error"}', 1)
    H.prom_wait_value(prom, 'ibpulse_host_up{job="ibpulse",host="node-silent"}', 0)
    r = H.prom_wait_value(prom, 'ibpulse_device_info{job="ibpulse",host="node-a"}', 1)
    H.check(r[0]["metric"]["node_desc"] == WEIRD_DESC and
            r[0]["metric"]["hca_type"] == WEIRD_HCA,
            "label values through Prometheus: %r" % r[0]["metric"])
    v = H.prom_query(prom, 'ibpulse_port_data_transmitted_bytes_total{job="ibpulse",host="node-a"}')
    H.check(len(v) == 1 and float(v[0]["value"][1]) >= 4000, "bytes through Prometheus: %s" % v)
    H.prom_wait_value(prom, 'ibpulse_test_port_bandwidth_bytes_per_second{job="ibpulse",'
                      'host="node-a",stat="avg",aggregate="worst"}', 4.0e10)
    H.prom_wait_value(prom, 'sum(ibpulse_test_overdue_ports{job=~"shard."})', 1)
    H.prom_wait_value(prom, 'ibpulse_link_bandwidth_baseline_bytes_per_second{'
                      'job="ibpulse",host="node-a",peer_host="node-b"}', 4.7e10)
    H.prom_wait_value(prom, 'count(ibpulse_test_overdue_group_pairs{job=~"shard."})', 1)
    check_dashboard_queries(prom, schema_dir)
    H.prom_wait_value(prom, 'count(ibpulse_host_up{job=~"shard."})', 3)
    H.prom_wait_value(prom, 'count(count by (host) (ibpulse_host_up{job=~"shard."}))', 3)

    def targets_up():
        r = H.http(prom + "/api/v1/targets")[2]
        t = __import__("json").loads(r)["data"]["activeTargets"]
        bad = [(x["labels"]["job"], x["health"], x["lastError"]) for x in t
               if x["health"] != "up"]
        return len(t) == 3 and not bad
    H.wait_for("every target up", targets_up, timeout=60, interval=0.5)
    check_prometheus_follows(prom, db_path)


def check_prometheus_follows(prom, db_path):
    """The gzip body that the block cache assembles from kept pieces and
    new ones, after a change of one host, as Prometheus reads it: the new
    value arrives and every target stays up (a bad stream would be a
    failed scrape)."""
    db = sqlite3.connect(db_path, isolation_level=None, timeout=10)
    for v in (300, 400):  # below what check_concurrent_writer starts from
        db.execute("BEGIN IMMEDIATE")
        db.execute("UPDATE series SET value = ? WHERE name = 'port_xmit_data'"
                   " AND port_id IN (SELECT id FROM port WHERE host_id ="
                   " (SELECT id FROM host WHERE name = 'node-a'))", (v,))
        ibpdb.mark_changed(db, db.execute(
            "SELECT id FROM host WHERE name = 'node-a'").fetchone()[0])
        db.execute("COMMIT")
        H.prom_wait_value(prom, 'ibpulse_port_data_transmitted_bytes_total{job="ibpulse",'
                          'host="node-a"}', v * 4)
    db.close()
    r = H.prom_query(prom, 'sum(up{job=~"ibpulse|shard."})')
    H.check(r and float(r[0]["value"][1]) == 3, "targets up after the changes: %s" % r)
    r = H.prom_query(prom, 'scrape_samples_scraped{job="ibpulse"} - on() '
                     'ibpulse_exporter_series{job="ibpulse"}')
    H.check(r and 0 < float(r[0]["value"][1]) < 20,
            "Prometheus took every sample of the body: %s" % r)


def main():
    exporter, schema_dir, promtool, prometheus = sys.argv[1:5]
    if H.missing(promtool, prometheus):
        return 1
    with H.session("ibpulse-exporter-it-") as (procs, tmp):
        db_path = os.path.join(tmp, "ibpulse.db")
        build_db(db_path, schema_dir).close()
        pf = os.path.join(tmp, "port")
        p = procs.start("exporter", [exporter, "--db", db_path, "--listen", "127.0.0.1",
                                     "--port", "0", "--port-file", pf, "--log-level", "debug"])
        port = H.read_port_file(pf, p, procs)
        base = "http://127.0.0.1:%d" % port
        check_text(base, promtool)
        check_openmetrics_and_gzip(base, promtool)
        check_shards(base)
        check_http(base)
        check_missing_db(procs, exporter, tmp, schema_dir)
        check_prometheus(procs, prometheus, tmp, port, schema_dir, db_path)
        H.check(re.search(r"/metrics shard 0/1 for Prometheus/\S+: openmetrics gzip",
                          procs.log(p)), "Prometheus was served OpenMetrics, gzipped")
        check_concurrent_writer(base, db_path)
        check_same_size_commit(base, db_path)
        procs.check_alive(p)
        procs.stop_clean(p)
    print("exporter integration: all checks passed")
    return 0


if __name__ == "__main__":
    H.run(main)
