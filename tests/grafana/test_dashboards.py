#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The link-detail dashboard and the tests dashboard, every panel's query
run by a real Prometheus against the real exporter serving a database the
real collector made from results posted as probes post them.

Six probes in three leaves (node0, node1: leaf0; node2, node3: leaf1;
node4, node5: leaf2) report counters (a 400 Gb/s port, a Gen5 x16 PCIe
link: an expected figure) and test each other until every link has a
baseline; then
  - bandwidth: the four links from leaf0 to leaf1 fall to 64% (the
    collector opens four regressions and names the leaf pair suspect);
  - latency: node4's three links slow down 2.5x while its peers are fine
    with others (three regressions, node4 named the suspect port);
  - once Prometheus scrapes, node2 -> node5 regresses too (a fifth
    bandwidth regression, opened while Prometheus watched), node0's
    port moves data and node4's port counts symbol errors;
  - beside them, a fabric poller reports a 16-host fat tree with its
    forwarding tables (tests/collector/fattree.py) whose hosts (group
    "fabric") test each other: the link leaf001 port 5 -> spine00 port
    2 at 50% is named (localization), not the hosts behind it.
Prometheus scrapes the exporter whole and in two shards at once, so every
series is there three times: the queries must not count a link twice.

Checked, with the template variables resolved as Grafana resolves them
(label_values() through the series API):
  - the link dashboard's variables chain to the link under test;
  - on node0 -> node4 every panel has data: no bandwidth regression, a
    latency one, node4 named suspect, the baseline, threshold and
    expected figure equal to the collector's, the latency quantiles of
    the latest test, node0's traffic and node4's symbol errors, both
    ends' state and PCIe lanes;
  - on node0 -> node2 (no latency profile) the bandwidth regression is
    open and the latency panels and the suspect panel are empty;
  - the tests dashboard: every panel has data (but the busy ones: no
    test ran on a busy link); the regression tables list exactly the
    open regressions with both ends, metric, profile, baseline and
    figure (the collector's), also when the host filter names only the
    responder; the suspect tables name node4 and leaf0/leaf1; the
    group-by-group matrix holds one cell per measured group pair with
    the median share of baseline; the stats count 5, 3 and 3 (the
    suspect link too) and the regression opened under Prometheus's eyes;
    the fabric tables name the link by both switch ports with its
    confidence, no switch, and no link left without a test.

usage: test_dashboards.py COLLECTOR EXPORTER SCHEMA_DIR PROMETHEUS
"""
import json
import os
import re
import sqlite3
import sys
import time
import urllib.parse

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "..")
sys.path.insert(0, os.path.join(HERE, "..", "exporter"))
sys.path.insert(0, os.path.join(HERE, "..", "collector"))
import fattree  # noqa: E402
import harness as H  # noqa: E402
import test_collector as tc  # noqa: E402
import test_regressions as tr  # noqa: E402
import test_tests_api as ta  # noqa: E402

DASHBOARDS = os.path.join(ROOT, "grafana", "dashboards")
LEAVES = {"node0": "leaf0", "node1": "leaf0", "node2": "leaf1",
          "node3": "leaf1", "node4": "leaf2", "node5": "leaf2"}
UPLINK = [("node0", "node2"), ("node0", "node3"), ("node1", "node2"),
          ("node1", "node3")]
OTHER_BW = [("node0", "node1"), ("node2", "node3"), ("node0", "node4"),
            ("node2", "node5"), ("node1", "node5"), ("node3", "node4")]
LATE = ("node2", "node5")  # regresses while Prometheus scrapes
LAT_SLOW = [("node0", "node4"), ("node2", "node4"), ("node5", "node4")]
LAT_OK = [("node0", "node1"), ("node2", "node3"), ("node5", "node1")]
GOOD, BAD = 4.7e10, 3.0e10
LAT_GOOD, LAT_BAD = 2e-6, 5e-6
# no test ran on a busy link or failed, no port is overdue here (those
# panels are checked in tests/exporter/test_integration.py)
MAY_BE_EMPTY = {"Busy pairs (latest test)", "Tests on busy links",
                "Failing pairs (latest test)", "Overdue ports, by name",
                "Suspect switches"}

VAR = re.compile(r"\$(\w+)|\$\{(\w+)(?::\w+)?\}")
LABEL_VALUES = re.compile(r"^label_values\((?:(.+),\s*)?(\w+)\)\s*$")


def interpolate(expr, values):
    """expr with $var and ${var} replaced as Grafana does; names that are
    no variable ($1 in label_replace) stay as they are."""
    def sub(m):
        name = m.group(1) or m.group(2)
        if name == "__rate_interval":
            return "1m"
        return values.get(name, m.group(0))
    return VAR.sub(sub, expr)


def load(name):
    with open(os.path.join(DASHBOARDS, name)) as f:
        return json.load(f)


class Scenario:
    """The collector, the results posted to it, its database."""

    def __init__(self, tmp):
        self.c = tc.Collector(tmp, tr.CONFIG)
        self.t = time.time() - 1500  # results go forward from here
        # LIDs from 100: the six probes above all registered LID 10
        self.tree = fattree.FatTree(4, 4, 2, prefix="f", first_lid=100)
        with open(self.c.config, "a") as f:
            for h in [self.tree.host(i) for i in range(16)] + ["poller"]:
                f.write("%s = %s\n" % (h, tc.token(h)))

    def call(self, method, path, body=None, tok=None):
        st, _, data = self.c.request(method, path, body, tok)
        H.check(st == 200, "%s %s: %d %s" % (method, path, st, data[:300]))
        return json.loads(data) if data else None

    def report(self, host, xmit=1, symbol_errors=0):
        r = tr.counter_report(host, rate=50000000000, pcie=(32.0, 16))
        r["timestamp"] = time.time()
        ib = r["devices"][0]["ports"][0]["counters"]["ib"]
        ib.update(port_xmit_data=xmit, symbol_error=symbol_errors)
        self.call("POST", "/api/v1/report", r, tc.token(host))

    def post(self, host, peer, value, profile):
        self.t += 5
        if profile == "lat":
            figs = {"test": "write_lat", "params": {"size": 2, "qps": 1},
                    "bw_avg_bytes_per_second": None,
                    "bw_peak_bytes_per_second": None,
                    "msg_rate_per_second": None,
                    "lat_min_seconds": 0.9 * value,
                    "lat_median_seconds": value,
                    "lat_mean_seconds": 1.05 * value,
                    "lat_p99_seconds": 1.5 * value,
                    "lat_p999_seconds": 2 * value,
                    "lat_max_seconds": 3 * value,
                    "lat_stdev_seconds": 0.1 * value}
        else:
            figs = {"bw_avg_bytes_per_second": value,
                    "bw_peak_bytes_per_second": 1.02 * value,
                    "bw_min_bytes_per_second": 0.9 * value}
        r = ta.result(peer, started=self.t, profile=profile, **figs)
        for k in [k for k, v in r.items() if v is None]:
            del r[k]
        ans = self.call("POST", "/api/v1/results", ta.batch(host, [r]),
                        tc.token(host))
        H.check(ans["stored"] == 1, "result not stored: %s" % ans)

    def build(self):
        self.c.start()
        for host, leaf in LEAVES.items():
            self.call("POST", "/api/v1/register",
                      ta.registration(host, leaf), tc.token(host))
            self.report(host)
        for _ in range(6):
            for a, b in UPLINK + OTHER_BW:
                self.post(a, b, GOOD, "bw")
            for a, b in LAT_SLOW + LAT_OK:
                self.post(a, b, LAT_GOOD, "lat")
        for _ in range(3):
            for a, b in UPLINK + OTHER_BW:
                self.post(a, b, BAD if (a, b) in UPLINK else GOOD, "bw")
            for a, b in LAT_SLOW + LAT_OK:
                self.post(a, b, LAT_BAD if (a, b) in LAT_SLOW else LAT_GOOD,
                          "lat")
        ans = self.call("GET", "/api/v1/regressions", None, tc.ADMIN)
        opened = sorted((r["host"], r["peer_host"], r["metric"])
                        for r in ans["open"])
        H.check(opened == sorted([(a, b, "bandwidth") for a, b in UPLINK] +
                                 [(a, b, "latency") for a, b in LAT_SLOW]),
                "the collector's regressions: %s" % opened)
        H.check([(s["host"], s["metric"]) for s in ans["suspect_ports"]] ==
                [("node4", "latency")], "suspect ports: %s" % ans)
        H.check([(g["group_a"], g["group_b"])
                 for g in ans["suspect_group_pairs"]] == [("leaf0", "leaf1")],
                "suspect group pairs: %s" % ans)
        self.fabric()

    def fabric(self):
        """The fat tree: its poller's report, its 16 probes, each port's
        baseline, then four tests through leaf001 -> spine00 at 50%."""
        tree = self.tree
        self.call("POST", "/api/v1/report",
                  tree.report("poller", time.time()), tc.token("poller"))
        for i in range(16):
            self.call("POST", "/api/v1/register",
                      tree.registration(i, group="fabric"),
                      tc.token(tree.host(i)))
        for r in range(2):
            for a in range(16):
                for k in (5, 9, 13):
                    b = (a + k) % 16
                    x, y = (a, b) if r % 2 == 0 else (b, a)
                    self.post(tree.host(x), tree.host(y), GOOD, "bw")
        link = tree.up(1, 0)
        bad = [(a, b) for a in (4, 5, 6, 7) for b in range(16)
               if link in tree.links(a, b)]
        for a, b in [bad[0], bad[5], bad[10], bad[15]]:
            self.post(tree.host(a), tree.host(b), GOOD / 2, "bw")
        ans = self.call("GET", "/api/v1/regressions", None, tc.ADMIN)
        sus = [(s["kind"], s["a_node_desc"], s["a_port"], s["b_node_desc"],
                s["b_port"]) for s in ans["suspects"]
               if s["kind"] not in ("port", "device")]
        H.check(sus == [("fabric_link", "leaf001", 5, "spine00", 2)],
                "the collector's fabric suspects: %s" % sus)

    def late(self):
        """While Prometheus scrapes: one more regression, traffic at
        node0, symbol errors at node4."""
        for _ in range(3):
            self.post(*LATE, BAD, "bw")
        self.report("node0", xmit=10 ** 9)
        self.report("node4", symbol_errors=40)

    def link(self, a, b, metric, col):
        db = sqlite3.connect("file:%s?mode=ro" % self.c.db, uri=True)
        try:
            row = db.execute("SELECT %s FROM link_state WHERE a_host = ? AND "
                             "b_host = ? AND metric = ?" % col,
                             (a, b, metric)).fetchone()
        finally:
            db.close()
        H.check(row is not None and row[0] is not None,
                "no %s for %s -> %s %s" % (col, a, b, metric))
        return row[0]


class Prom:
    """Queries as Grafana sends them: range queries for graphs and stats,
    instant ones for the tables' instant targets."""

    def __init__(self, base):
        self.base = base

    def get(self, path, params):
        url = self.base + path + "?" + urllib.parse.urlencode(params, True)
        status, _, body = H.http(url, timeout=30)
        H.check(status == 200, "%s: HTTP %d %s" % (url, status, body[:300]))
        return json.loads(body)["data"]

    def run(self, target, values):
        expr = interpolate(target["expr"], values)
        now = time.time()
        if target.get("instant"):
            return self.get("/api/v1/query", {"query": expr, "time": now})["result"]
        return self.get("/api/v1/query_range", {
            "query": expr, "start": now - 60, "end": now, "step": 2})["result"]

    def label_values(self, query, values):
        m = LABEL_VALUES.match(interpolate(query, values))
        H.check(m and m.group(1), "not label_values(SELECTOR, LABEL): %s" % query)
        now = time.time()
        series = self.get("/api/v1/series", {"match[]": m.group(1),
                                             "start": now - 300, "end": now})
        return sorted({s[m.group(2)] for s in series if m.group(2) in s})


def last(series):
    """{legend-ish key: the newest value} of a query's result."""
    out = {}
    for s in series:
        v = s["values"][-1][1] if "values" in s else s["value"][1]
        key = tuple(sorted((k, x) for k, x in s["metric"].items()
                           if k not in ("job", "instance")))
        out[key] = float(v)
    return out


def panel_data(prom, dash, values):
    """{title: [result of each target]}, every panel of dash."""
    return {p["title"]: [prom.run(t, values) for t in p["targets"]]
            for p in dash["panels"]}


def only(results, what):
    vals = list(last(results).values())
    H.check(len(vals) == 1, "%s: one series expected, got %s" % (what, results))
    return vals[0]


def close(a, b, what, rel=1e-6):
    H.check(abs(a - b) <= rel * abs(b), "%s: %r, expected %r" % (what, a, b))


def link_values(prom, dash, a, b):
    """The link dashboard's variables for a -> b, resolved in order, each
    checked to offer the value that leads to the link."""
    want = {"host": a, "device": "mlx5_0", "port": "1", "peer_host": b,
            "peer_device": "mlx5_0", "peer_port": "1"}
    values = {}
    for v in dash["templating"]["list"]:
        if v["type"] != "query":
            continue
        offered = prom.label_values(v["query"], values)
        if v["name"] in want:
            H.check(want[v["name"]] in offered, "variable %s offers %s, not %s"
                    % (v["name"], offered, want[v["name"]]))
            values[v["name"]] = want[v["name"]]
        else:  # the profiles: the link's own only
            values[v["name"]] = offered[0] if offered else ""
            values["_" + v["name"]] = offered
    return values


def check_link_healthy_bw(prom, sc, dash):
    """node0 -> node4: bandwidth fine, latency regressed, node4 suspect."""
    values = link_values(prom, dash, "node0", "node4")
    H.check(values["_profile"] == ["bw"] and values["_lat_profile"] == ["lat"],
            "profiles offered: %s" % values)
    data = H.wait_for("node4's symbol errors and node0's traffic in the link "
                      "dashboard", lambda: link_counters_moved(prom, dash, values))
    empty = [t for t, rs in data.items() if not any(rs)]
    H.check(not empty, "link dashboard, node0 -> node4: panels without data: %s"
            % empty)
    H.check(only(data["Bandwidth regression"][0], "bw regression") == 0,
            "no bandwidth regression on node0 -> node4")
    H.check(only(data["Latency regression"][0], "lat regression") == 1,
            "the latency regression of node0 -> node4")
    named = [dict(k) for k in last(data["Ends named suspect"][0])]
    H.check([(n["host"], n["metric"], n["profile"]) for n in named] ==
            [("node4", "latency", "lat")], "suspect ends: %s" % named)
    bw = data["Bandwidth against its baseline and expected figure"]
    close(only(bw[0], "measured"), GOOD, "latest figure")
    for i, col in ((1, "baseline"), (2, "threshold"), (3, "expected")):
        close(only(bw[i], col), sc.link("node0", "node4", "bandwidth", col), col)
    H.check(only(bw[3], "expected") > GOOD, "the expected figure above GOOD")
    close(only(data["Efficiency (latest / expected)"][0], "efficiency"),
          GOOD / sc.link("node0", "node4", "bandwidth", "expected"), "efficiency")
    lat = data["Latency quantiles against the baseline"]
    q = {dict(k)["stat"]: v for k, v in last(lat[0]).items()}
    H.check(sorted(q) == ["max", "median", "min", "p99", "p999"], "stats %s" % q)
    close(q["p99"], 1.5 * LAT_BAD, "latest p99")
    close(only(lat[1], "lat baseline"),
          sc.link("node0", "node4", "latency", "baseline"), "latency baseline")
    ends = data["Both ends: port state, rate and PCIe"]
    for i, want in ((0, 4), (1, 50e9), (3, 16)):
        got = {dict(k)["host"]: v for k, v in last(ends[i]).items()}
        H.check(got == {"node0": want, "node4": want},
                "both ends' column %d: %s" % (i, got))


def link_counters_moved(prom, dash, values):
    data = panel_data(prom, dash, values)
    tx = {dict(k)["host"]: v for k, v in
          last(data["Traffic at both ends"][0]).items()}
    sym = {dict(k)["host"]: v for k, v in
           last(data["Link errors at both ends"][0]).items()}
    if tx.get("node0", 0) > 0 and sym.get("node4", 0) > 0:
        H.check(set(tx) == {"node0", "node4"} and sym.get("node0") == 0,
                "the counters of both ends, and only theirs: %s %s" % (tx, sym))
        return data
    return None


def check_link_regressed_bw(prom, sc, dash):
    """node0 -> node2: bandwidth regressed, no latency profile measured."""
    values = link_values(prom, dash, "node0", "node2")
    H.check(values["_lat_profile"] == [], "no latency link: %s" % values)
    data = panel_data(prom, dash, values)
    empty = sorted(t for t, rs in data.items() if not any(rs))
    H.check(empty == ["Ends named suspect", "Latency quantiles against the "
                      "baseline", "Latency regression"],
            "link dashboard, node0 -> node2: panels without data: %s" % empty)
    H.check(only(data["Bandwidth regression"][0], "bw regression") == 1,
            "the bandwidth regression of node0 -> node2")
    bw = data["Bandwidth against its baseline and expected figure"]
    close(only(bw[0], "measured"), BAD, "latest figure")
    close(only(bw[1], "baseline"), sc.link("node0", "node2", "bandwidth",
                                           "baseline"), "frozen baseline")
    close(only(data["Share of baseline (latest)"][0], "share"),
          BAD / sc.link("node0", "node2", "bandwidth", "baseline"), "share")
    H.check(only(data["Under expected"][0], "under expected") == 1,
            "64% of the expected figure is under the floor")


def table_rows(results):
    """Grafana's merge of a table's instant queries: {labels: [values]}."""
    rows = {}
    for i, r in enumerate(results):
        for k, v in last(r).items():
            rows.setdefault(k, [None] * len(results))[i] = v
    return rows


def check_tests_dashboard(prom, sc, dash):
    values = {"host": ".*", "profile": ".*"}
    data = H.wait_for("the late regression counted by Prometheus", lambda: (
        lambda d: d if only(d["Regressions opened (24 h)"][0], "opened") >= 0.9
        else None)(panel_data(prom, dash, values)), timeout=60, interval=1)
    empty = {t for t, rs in data.items() if not any(rs)}
    H.check(not empty - MAY_BE_EMPTY, "tests dashboard: panels without data: %s"
            % sorted(empty - MAY_BE_EMPTY))
    for title, want in (("Links in bandwidth regression", 5),
                        ("Links in latency regression", 3),
                        ("Suspects and group pairs", 3)):
        H.check(only(data[title][0], title) == want, "%s: %s" % (title, data[title]))
    bw_links = UPLINK + [LATE]
    rows = table_rows(data["Open bandwidth regressions"])
    ends = sorted((d["host"], d["device"], d["port"], d["peer_host"],
                   d["peer_device"], d["peer_port"], d["profile"], d["metric"])
                  for d in map(dict, rows))
    H.check(ends == sorted((a, "mlx5_0", "1", b, "mlx5_0", "1", "bw",
                            "bandwidth") for a, b in bw_links),
            "bandwidth regressions table: %s" % ends)
    for k, (baseline, latest, share, threshold, expected) in rows.items():
        d = dict(k)
        a, b = d["host"], d["peer_host"]
        close(baseline, sc.link(a, b, "bandwidth", "baseline"), "baseline")
        close(latest, BAD, "figure of %s -> %s" % (a, b))
        close(share, BAD / baseline, "share")
        close(threshold, sc.link(a, b, "bandwidth", "threshold"), "threshold")
        close(expected, sc.link(a, b, "bandwidth", "expected"), "expected")
    rows = table_rows(data["Open latency regressions"])
    H.check(sorted((dict(k)["host"], dict(k)["peer_host"], dict(k)["metric"])
                   for k in rows) ==
            sorted((a, b, "latency") for a, b in LAT_SLOW),
            "latency regressions table: %s" % rows)
    for k, (baseline, latest, ratio, threshold) in rows.items():
        close(latest, LAT_BAD, "latency figure")
        close(baseline, sc.link(dict(k)["host"], "node4", "latency", "baseline"),
              "latency baseline")
    H.check([(dict(k)["host"], dict(k)["metric"]) for k in
             last(data["Suspects (ports and devices)"][0])] == [("node4", "latency")],
            "suspects table: %s" % data["Suspects (ports and devices)"])
    H.check([(dict(k)["group_a"], dict(k)["group_b"]) for k in
             last(data["Suspect group pairs (uplinks)"][0])] == [("leaf0", "leaf1")],
            "suspect group pairs table")
    check_matrix(data)
    check_fabric_tables(data)
    # the host filter keeps a link when either end matches: node4 is only
    # ever the responder of the slow links
    by_peer = panel_data(prom, dash, {"host": "node4", "profile": ".*"})
    H.check(len(table_rows(by_peer["Open latency regressions"])) == 3,
            "node4's latency regressions, as the responder")
    H.check(not any(by_peer["Open bandwidth regressions"]),
            "no bandwidth regression at node4")


def check_fabric_tables(data):
    """The suspect link by both switch ports, no switch, full coverage."""
    rows = [(dict(k), v) for k, v in
            last(data["Suspect links between switches"][0]).items()]
    H.check([(d["a_node_desc"], d["a_port"], d["b_node_desc"], d["b_port"],
              d["profile"]) for d, _ in rows] ==
            [("leaf001", "5", "spine00", "2", "bw")],
            "suspect links table: %s" % rows)
    H.check(rows[0][1] > 0.9, "its confidence: %s" % rows)
    H.check(not any(data["Suspect switches"]), "no suspect switch")
    cover = data["Links between switches without a test"]
    H.check(only(cover[1], "covered") == 16, "16 links covered: %s" % cover)
    H.check(all(v == 0 for v in last(cover[0]).values()),
            "none uncovered: %s" % cover[0])


def check_matrix(data):
    title = "Bandwidth as a share of baseline, group by group (median link)"
    # the fat tree's probes (group "fabric") are the localization's
    cells = {(dict(k)["group"], dict(k)["peer_group"]): v
             for k, v in last(data[title][0]).items()
             if dict(k)["group"] != "fabric"}
    share = BAD / GOOD
    want = {("leaf0", "leaf0"): 1, ("leaf1", "leaf1"): 1, ("leaf0", "leaf2"): 1,
            ("leaf0", "leaf1"): share, ("leaf1", "leaf2"): (share + 1) / 2}
    H.check(sorted(cells) == sorted(want), "matrix cells: %s" % cells)
    for cell, v in want.items():
        close(cells[cell], v, "share of baseline %s" % (cell,), rel=0.02)
    worst = {(dict(k)["group"], dict(k)["peer_group"]): v for k, v in last(
        data["Group pairs by share of baseline, worst link (lowest 10)"][0]).items()}
    close(worst[("leaf1", "leaf2")], share, "worst link leaf1 -> leaf2", rel=0.02)


def main():
    collector, exporter, schema, prometheus = sys.argv[1:5]
    H.check(os.access(prometheus, os.X_OK),
            "%s: not found (scripts/install-deps.sh installs it)" % prometheus)
    tc.COLLECTOR, tc.SCHEMA = collector, schema
    with H.session("ibpulse-dashboards-") as (procs, tmp):
        sc = Scenario(tmp)
        try:
            sc.build()
            pf = os.path.join(tmp, "eport")
            p = procs.start("exporter", [exporter, "--db", sc.c.db, "--listen",
                                         "127.0.0.1", "--port", "0",
                                         "--port-file", pf])
            target = "127.0.0.1:%d" % H.read_port_file(pf, p, procs)
            base = H.start_prometheus(procs, prometheus, tmp, [
                ("ibpulse", target, None),
                ("shard0", target, {"shard": 0, "shards": 2}),
                ("shard1", target, {"shard": 1, "shards": 2})])
            H.prom_wait_value(base, "count(max by (host, peer_host, metric) "
                              "(ibpulse_link_regression == 1))", 7)
            sc.late()
            # every job has scraped the late change (each scrapes at its
            # own moment: until then the max over jobs mixes the two)
            H.prom_wait_value(base, 'max(ibpulse_link_bandwidth_bytes_per_second'
                              '{host="node2",peer_host="node5"})', BAD)
            H.prom_wait_value(base, 'min(ibpulse_regressions_opened_total'
                              '{metric="bandwidth"})', 5)
            prom = Prom(base)
            link = load("ibpulse-link.json")
            check_link_healthy_bw(prom, sc, link)
            check_link_regressed_bw(prom, sc, link)
            check_tests_dashboard(prom, sc, load("ibpulse-tests.json"))
            procs.check_alive(p)
            procs.stop_clean(p)
        except BaseException:
            sys.stderr.write("---- collector log ----\n%s\n"
                             % sc.c.log_text()[-4000:])
            raise
        finally:
            rc = sc.c.stop()
            log = sc.c.log_text()
        H.check(rc == 0 and "runtime error" not in log,
                "collector exited %s:\n%s" % (rc, log[-2000:]))
    print("dashboards: every panel checked against Prometheus")
    return 0


if __name__ == "__main__":
    H.run(main)
