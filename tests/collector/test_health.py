#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Integration tests for host health verdicts: the real collector on a
loopback port, driven through its API as probes and fabric pollers drive
it, and the real exporter reading its database.

- GET /api/v1/hosts/NAME/health answers the host's own token and the
  admin token, 403 for another host's, 401 without, 404 for a host that
  never reported, 400 for a bad name, 405 for POST;
- a port that was ACTIVE and reports DOWN fails the host at once, with
  the port and the evidence; back ACTIVE it stays failed for
  quiet_seconds, then healthy;
- link recoveries moving between reports (counters, no test) over the
  threshold fail the host; symbol errors at the leaf switch port facing
  a host (a fabric poller's report) degrade that host, and the reason
  names the switch port;
- a port whose links regress while its peers are fine elsewhere (the
  suspect inference) fails its host with the figure against the baseline;
  the peers are only degraded (an open regression on one of their links);
- the exporter serves ibpulse_host_health{host, verdict} and the reason
  counts; retiring a host forgets its verdict.

usage: test_health.py COLLECTOR EXPORTER SCHEMA_DIR
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import unittest
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import test_collector as tc  # noqa: E402
import test_tests_api as ta  # noqa: E402

EXPORTER = None
QUIET = 3
CONFIG = ta.PLANNER + (
    "[baseline]\nresults = 20\nmin_results = 5\nbad_results = 3\n"
    "judged_results = 5\ngood_results = 5\nmargin = 0.2\n"
    "spread_factor = 3\n"
    "[health]\nquiet_seconds = %d\n" % QUIET)
GOOD, BAD = 4.7e10, 3.0e10
GUID = "b859:9f03:00d4:%04x"


def report(host, state=4, ib=None, net=None):
    """node's report: mlx5_0 port 1 in @state, its counters @ib."""
    n = tc.HOSTS.index(host)
    counters = {"ib": dict({"link_downed": 0, "link_error_recovery": 0,
                            "symbol_error": 0}, **(ib or {}))}
    if net:
        counters["net"] = net
    return {"version": 1, "host": host, "timestamp": time.time(),
            "devices": [{"name": "mlx5_0", "node_guid": GUID % n,
                         "ports": [{"port": 1, "state": state,
                                    "phys_state": 5 if state == 4 else 3,
                                    "rate_bytes_per_second": 12500000000,
                                    "link_layer": "InfiniBand",
                                    "counters": counters}]}]}


def fabric(poller, symbol_error, facing="node2"):
    """A fabric poller's report: switch leaf03 port 7 faces @facing's
    mlx5_0/1 and counts @symbol_error."""
    n = tc.HOSTS.index(facing)
    return {"version": 1, "host": poller, "timestamp": time.time(),
            "devices": [],
            "fabric": {"ca": "mlx5_0", "port": 1, "discovered": time.time(),
                       "swept": time.time(),
                       "nodes": [{"guid": "0x0002c90300000001", "type": 2,
                                  "description": "leaf03", "lid": 1,
                                  "numports": 36,
                                  "ports": [{"port": 7, "lid": 1, "state": 4,
                                             "phys_state": 5,
                                             "remote_guid": "0x" + (GUID % n).replace(":", ""),
                                             "remote_port": 1,
                                             "counters": {"symbol_error": symbol_error}}]}]}}


class HealthTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="ibpulse-health-")
        self.c = tc.Collector(self.tmp, CONFIG)
        self.c.start()
        self.t = time.time() - 6 * 3600

    def tearDown(self):
        rc = self.c.stop()
        log = self.c.log_text()
        shutil.rmtree(self.tmp, ignore_errors=True)
        self.assertEqual(rc, 0, log[-2000:])

    def call(self, method, path, body=None, tok=None):
        st, _, data = self.c.request(method, path, body, tok)
        return st, json.loads(data) if data else None

    def push(self, r, tok=None):
        st, ans = self.call("POST", "/api/v1/report", r,
                            tok or tc.token(r["host"]))
        self.assertEqual(st, 200, ans)

    def health(self, host, tok=None):
        st, ans = self.call("GET", "/api/v1/hosts/%s/health" % host, None,
                            tok or tc.token(host))
        self.assertEqual(st, 200, ans)
        self.assertEqual(ans["host"], host)
        return ans

    def test_api_and_port_down_sticky(self):
        self.push(report("node1"))
        ans = self.health("node1")
        self.assertEqual((ans["verdict"], ans["reasons"]), ("healthy", []))
        self.assertEqual(ans["quiet_seconds"], QUIET)
        self.assertEqual(self.health("node1", tc.ADMIN)["verdict"], "healthy")
        st, ans = self.call("GET", "/api/v1/hosts/node1/health", None,
                            tc.token("node2"))
        self.assertEqual(st, 403, ans)
        self.assertIn("the token is for host 'node2'", ans["error"])
        self.assertEqual(self.call("GET", "/api/v1/hosts/node1/health")[0],
                         401)
        st, ans = self.call("GET", "/api/v1/hosts/node3/health", None,
                            tc.ADMIN)
        self.assertEqual((st, ans["error"]), (404, "unknown host 'node3'"))
        st, ans = self.call("GET", "/api/v1/hosts/no%20de/health", None,
                            tc.ADMIN)
        self.assertEqual(st, 400, ans)
        self.assertEqual(self.call("POST", "/api/v1/hosts/node1/health", b"",
                                   tc.ADMIN)[0], 405)
        # the port goes DOWN: failed at once
        self.push(report("node1", state=1))
        ans = self.health("node1")
        self.assertEqual(ans["verdict"], "failed", ans)
        r = ans["reasons"][0]
        self.assertEqual((r["kind"], r["severity"], r["device"], r["port"],
                          r["active"]), ("port_down", "failed", "mlx5_0", 1,
                                         True))
        self.assertEqual(r["evidence"]["state"], "DOWN")
        self.assertIn("mlx5_0/1 port down", r["reason"])
        since = ans["since"]
        # back ACTIVE: still failed within the quiet window
        self.push(report("node1"))
        ans = self.health("node1")
        self.assertEqual(ans["verdict"], "failed", ans)
        self.assertFalse(ans["reasons"][0]["active"])
        self.assertEqual(ans["since"], since)
        time.sleep(QUIET + 0.5)
        self.push(report("node1"))
        ans = self.health("node1")
        self.assertEqual((ans["verdict"], ans["reasons"]), ("healthy", []))

    def test_counters_between_tests(self):
        self.push(report("node1", ib={"link_error_recovery": 10}))
        self.assertEqual(self.health("node1")["verdict"], "healthy")
        self.push(report("node1", ib={"link_error_recovery": 13}))
        self.assertEqual(self.health("node1")["verdict"], "healthy")
        self.push(report("node1", ib={"link_error_recovery": 17}))
        ans = self.health("node1")
        self.assertEqual(ans["verdict"], "failed", ans)
        r = ans["reasons"][0]
        self.assertEqual((r["kind"], r["evidence"]["increase"],
                          r["evidence"]["max"]), ("link_error_recovery", 7, 5))
        # RoCE: carrier changes on the netdev
        self.push(report("node4", net={"carrier_changes": 4}))
        self.push(report("node4", net={"carrier_changes": 6}))
        ans = self.health("node4")
        self.assertEqual((ans["verdict"], ans["reasons"][0]["kind"]),
                         ("failed", "carrier_changes"), ans)
        # the leaf port facing node2 counts symbol errors
        self.push(report("node2"))
        self.push(fabric("node3", 0))
        self.assertEqual(self.health("node2")["verdict"], "healthy")
        self.push(fabric("node3", 400))
        ans = self.health("node2")
        self.assertEqual(ans["verdict"], "degraded", ans)
        r = ans["reasons"][0]
        self.assertEqual((r["kind"], r["device"], r["port"],
                          r["evidence"]["switch"],
                          r["evidence"]["switch_port"]),
                         ("symbol_error", "mlx5_0", 1, "leaf03", 7))
        self.assertIn("at switch leaf03 port 7", r["reason"])
        # the verdict was computed when the sweep landed, not only on GET
        self.assertEqual(self.c.count(
            "SELECT verdict FROM host_health WHERE host = 'node2'"),
            "degraded")
        self.assertEqual(self.c.count(
            "SELECT count(*) FROM host_health WHERE host = 'node3'"), 0)

    def post(self, host, peer, value):
        self.t += 60
        r = ta.result(peer, started=self.t, bw_avg_bytes_per_second=value)
        st, ans = self.call("POST", "/api/v1/results", ta.batch(host, [r]),
                            tc.token(host))
        self.assertEqual((st, ans["stored"]), (200, 1), ans)

    def test_suspect_fails_host_and_exporter_serves(self):
        hosts = ("node1", "node2", "node3", "node4")
        for h in hosts:
            st, ans = self.call("POST", "/api/v1/register",
                                ta.registration(h, "leaf0"), tc.token(h))
            self.assertEqual(st, 200, ans)
            self.push(report(h))
        pairs = [(a, b) for i, a in enumerate(hosts) for b in hosts[i + 1:]]
        for _ in range(6):
            for a, b in pairs:
                self.post(a, b, GOOD)
        for _ in range(3):
            for a, b in pairs:
                self.post(a, b, BAD if a == "node1" else GOOD)
        ans = self.health("node1")
        self.assertEqual(ans["verdict"], "failed", ans)
        sus = [r for r in ans["reasons"] if r["kind"] == "suspect"]
        self.assertEqual(len(sus), 1, ans)
        self.assertEqual((sus[0]["device"], sus[0]["port"],
                          sus[0]["evidence"]["metric"]),
                         ("mlx5_0", 1, "bandwidth"))
        self.assertIn("30.0 GB/s against a baseline of 47.0 GB/s",
                      sus[0]["reason"])
        # its peers: one regressed link each, degraded, not failed (as
        # of their next report; a GET recomputes it too)
        self.push(report("node4"))
        ans = self.health("node2")
        self.assertEqual(ans["verdict"], "degraded", ans)
        self.assertEqual({r["kind"] for r in ans["reasons"]}, {"regression"})
        self.push(report("node3", state=1))
        self.health("node3")
        text = self.scrape()
        for host, verdict in (("node1", "failed"), ("node2", "degraded"),
                              ("node3", "failed"), ("node4", "degraded")):
            for v in ("healthy", "degraded", "failed"):
                line = 'ibpulse_host_health{host="%s",verdict="%s"} %d' % (
                    host, v, v == verdict)
                self.assertIn(line, text)
        self.assertIn('ibpulse_host_health_reasons{host="node1",'
                      'severity="failed"} 1', text)
        # retire: the verdict goes with the host
        st, _ = self.call("POST", "/api/v1/hosts/node1/retire", b"", tc.ADMIN)
        self.assertEqual(st, 200)
        for table in ("host_health", "health_reason", "health_port"):
            self.assertEqual(self.c.count(
                "SELECT count(*) FROM %s WHERE host = 'node1'" % table), 0)
        self.assertNotIn('ibpulse_host_health{host="node1"', self.scrape())

    def scrape(self):
        pf = os.path.join(self.tmp, "exporter.port")
        if os.path.exists(pf):
            os.unlink(pf)
        log = open(os.path.join(self.tmp, "exporter.log"), "ab")
        p = subprocess.Popen([EXPORTER, "--db", self.c.db, "--listen",
                              "127.0.0.1", "--port", "0", "--port-file", pf],
                             stdout=log, stderr=log)
        try:
            deadline = time.monotonic() + 30
            while not (os.path.exists(pf) and os.path.getsize(pf)):
                self.assertIsNone(p.poll(), "exporter exited")
                self.assertLess(time.monotonic(), deadline)
                time.sleep(0.05)
            with open(pf) as f:
                port = int(f.read())
            with urllib.request.urlopen(
                    "http://127.0.0.1:%d/metrics" % port, timeout=30) as r:
                return r.read().decode()
        finally:
            p.terminate()
            p.wait(15)
            log.close()


if __name__ == "__main__":
    tc.COLLECTOR, EXPORTER, tc.SCHEMA = sys.argv[1:4]
    unittest.main(argv=sys.argv[:1], verbosity=2)
