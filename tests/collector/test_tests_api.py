#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Integration tests for the collector's test API (register, plan, results,
pause/resume, coverage): the real daemon on a loopback port. Registration
gives every probe a plan; results are stored once per id, even when a
"lost" answer makes the probe send them again; bad fields get 400 naming
the field and change nothing; another host's token gets 403; a paused host
gets an empty plan and leaves everyone's plan; coverage shows when each
planned pair was last measured; after a kill -9 every acknowledged result
is there exactly once.

usage: test_tests_api.py COLLECTOR_BINARY SCHEMA_DIR ETC_COLLECTOR_INI
"""
import json
import os
import shutil
import signal
import sys
import tempfile
import threading
import time
import unittest
import uuid

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import test_collector as tc  # noqa: E402

PERIOD = 600
PLANNER = ("[planner]\nperiod = 600\nslot_seconds = 1\nduty_cycle = 0.5\n"
           "full_mesh_below = 16\nreplan_interval = 0\ngroup_label = leaf\n")


def registration(host, leaf, ports=1, state=4, pkeys=(65535,)):
    return {"version": 1, "host": host,
            "responder": {"address": "10.0.0.%d" % (tc.HOSTS.index(host) + 1),
                          "port": 18515},
            "labels": {"leaf": leaf, "rack": "r1"},
            "profiles": ["bw", "lat"],
            "ports": [{"device": "mlx5_0", "port": n + 1, "state": state,
                       "link_layer": "InfiniBand", "lid": 10 + n,
                       "subnet_prefix": "fe80:0000:0000:0000",
                       "pkeys": list(pkeys), "gids": []}
                      for n in range(ports)]}


def result(peer="node2", rid=None, started=None, outcome="ok", **extra):
    r = {"id": rid or str(uuid.uuid4()), "plan_id": None, "profile": "bw",
         "test": "write_bw", "started": started or time.time(),
         "duration_seconds": 2.0,
         "local": {"device": "mlx5_0", "port": 1},
         "peer": {"host": peer, "device": "mlx5_0", "port": 1},
         "outcome": outcome, "error": None, "wc_status": None, "busy": False,
         "bw_avg_bytes_per_second": 4.7e10, "bw_peak_bytes_per_second": 4.8e10,
         "msg_rate_per_second": 7e5, "lat_p99_seconds": 3e-6,
         "params": {"size": 65536, "qps": 1}}
    r.update(extra)
    return r


def batch(host, results, dropped=(0, 0)):
    return {"version": 1, "host": host, "results": results,
            "dropped": {"spool_full": dropped[0], "expired": dropped[1]}}


class TestsApiTest(unittest.TestCase):
    def setUp(self):
        # A plan made late in a period only has the rounds left: do not
        # start a test in the last half minute of one (they take seconds).
        left = PERIOD - time.time() % PERIOD
        if left < 30:
            time.sleep(left + 0.5)
        self.tmp = tempfile.mkdtemp(prefix="ibpulse-tapi-")
        self.c = tc.Collector(self.tmp, PLANNER)
        self.c.start()

    def tearDown(self):
        # A clean stop: under the sanitizers, leaks and errors fail it.
        rc = self.c.stop()
        log = self.c.log_text()
        shutil.rmtree(self.tmp, ignore_errors=True)
        self.assertEqual(rc, 0, log[-2000:])
        self.assertNotIn("runtime error", log)

    def call(self, method, path, body=None, tok=None):
        st, _, data = self.c.request(method, path, body, tok)
        return st, json.loads(data) if data else None

    def register(self, hosts=("node1", "node2", "node3", "node4")):
        for i, h in enumerate(hosts):
            st, plan = self.call("POST", "/api/v1/register",
                                 registration(h, "leaf%d" % (i % 2)),
                                 tc.token(h))
            self.assertEqual(st, 200, plan)
            self.assertEqual(plan["host"], h)
            self.assertIn("tests", plan)

    def plans(self, hosts):
        out = {}
        for h in hosts:
            st, plan = self.call("GET", "/api/v1/plan", None, tc.token(h))
            self.assertEqual(st, 200, plan)
            out[h] = plan
        return out

    def test_register_gives_every_probe_a_plan(self):
        hosts = ("node1", "node2", "node3", "node4")
        self.register(hosts)
        plans = self.plans(hosts)
        seen, ids = set(), set()
        for h, plan in plans.items():
            self.assertFalse(plan["paused"])
            self.assertEqual(plan["period_seconds"], 600)
            start = plan["period_start"]
            for t in plan["tests"]:
                self.assertNotIn(t["id"], ids)
                ids.add(t["id"])
                seen.add(h)
                seen.add(t["peer"]["host"])
                self.assertNotEqual(t["peer"]["host"], h)
                self.assertEqual(t["peer"]["address"], "10.0.0.%d" %
                                 (tc.HOSTS.index(t["peer"]["host"]) + 1))
                self.assertEqual(t["peer"]["port"], 18515)
                self.assertEqual((t["local"]["device"], t["local"]["port"]),
                                 ("mlx5_0", 1))
                self.assertIn(t["profile"], ("bw", "lat"))
                self.assertTrue(start <= t["not_before"] < t["deadline"]
                                <= start + 600)
        self.assertEqual(seen, set(hosts))
        # Below full_mesh_below: every pair of the 4 probes is planned.
        self.assertEqual(len(ids), 6)
        self.assertEqual(self.c.count("SELECT count(*) FROM plan_entry"), 6)
        self.assertEqual(self.c.count(
            "SELECT count(*) FROM probe_label WHERE key = 'leaf'"), 4)
        # A port that is not ACTIVE is not planned.
        reg = registration("node4", "leaf1", state=1)
        self.assertEqual(self.call("POST", "/api/v1/register", reg,
                                   tc.token("node4"))[0], 200)
        plans = self.plans(hosts)
        self.assertEqual(plans["node4"]["tests"], [])
        for plan in plans.values():
            for t in plan["tests"]:
                self.assertNotEqual(t["peer"]["host"], "node4")

    def test_results_stored_once(self):
        self.register()
        body = batch("node1", [result("node2"), result("node3"),
                               result("node4", outcome="verbs_error",
                                      wc_status="IBV_WC_RETRY_EXC_ERR",
                                      error="retry exceeded")], (2, 1))
        for k in ("bw_avg_bytes_per_second", "bw_peak_bytes_per_second",
                  "msg_rate_per_second", "lat_p99_seconds"):
            del body["results"][2][k]
        st, ans = self.call("POST", "/api/v1/results", body, tc.token("node1"))
        self.assertEqual((st, ans), (200, {"stored": 3, "duplicates": 0}))
        # The answer was "lost": the probe sends the same batch again.
        st, ans = self.call("POST", "/api/v1/results", body, tc.token("node1"))
        self.assertEqual((st, ans), (200, {"stored": 0, "duplicates": 3}))
        self.assertEqual(self.c.count("SELECT count(*) FROM result"), 3)
        self.assertEqual(self.c.count(
            "SELECT count(*) FROM result WHERE host = 'node1' AND "
            "bw_avg_bytes_per_second = 4.7e10 AND lat_p99_seconds = 3e-6"), 2)
        self.assertEqual(self.c.count(
            "SELECT count(*) FROM result WHERE outcome = 'verbs_error' AND "
            "wc_status = 'IBV_WC_RETRY_EXC_ERR' AND bw_avg_bytes_per_second "
            "IS NULL"), 1)
        self.assertEqual(self.c.count(
            "SELECT spool_full * 10 + expired FROM probe_dropped "
            "WHERE host = 'node1'"), 21)
        self.assertEqual(self.c.count("SELECT count(*) FROM pair_seen"), 3)
        self.assertEqual(self.c.count(
            "SELECT count(*) FROM pair_seen WHERE last_ok IS NULL"), 1)
        # Retiring a host that only ever registered and sent results
        # removes those too.
        st, ans = self.call("POST", "/api/v1/hosts/node1/retire", b"",
                            tc.ADMIN)
        self.assertEqual((st, ans), (200, {"retired": "node1"}))
        for table, left in (("result", 0), ("pair_seen", 0), ("probe", 3),
                            ("probe_dropped", 0)):
            self.assertEqual(self.c.count("SELECT count(*) FROM " + table),
                             left, table)
        st, _ = self.call("POST", "/api/v1/hosts/node1/retire", b"", tc.ADMIN)
        self.assertEqual(st, 404)

    def test_coverage_tracks_last_measured(self):
        self.register()
        st, _ = self.call("GET", "/api/v1/coverage", None, tc.token("node1"))
        self.assertEqual(st, 401)
        st, cov = self.call("GET", "/api/v1/coverage", None, tc.ADMIN)
        self.assertEqual(st, 200, cov)
        self.assertEqual(len(cov["pairs"]), 6)
        self.assertTrue(all(p["last_measured"] is None for p in cov["pairs"]))
        self.assertEqual(len(cov["overdue_ports"]), 4)
        self.assertEqual(len(cov["overdue_group_pairs"]), 1)
        self.assertEqual(cov["group_pairs"], 1)
        # Measure one planned pair, from its responder's side.
        pair = cov["pairs"][0]
        a_host, b_host = pair["a"].split("/")[0], pair["b"].split("/")[0]
        when = time.time() - 5
        body = batch(b_host, [result(a_host, started=when)])
        self.assertEqual(self.call("POST", "/api/v1/results", body,
                                   tc.token(b_host))[0], 200)
        st, cov = self.call("GET", "/api/v1/coverage", None, tc.ADMIN)
        got = [p for p in cov["pairs"] if p["id"] == pair["id"]][0]
        self.assertAlmostEqual(got["last_measured"], when, places=3)
        self.assertEqual(sum(p["last_measured"] is not None
                             for p in cov["pairs"]), 1)
        over = {p["port"] for p in cov["overdue_ports"]}
        self.assertNotIn(pair["a"], over)
        self.assertNotIn(pair["b"], over)
        self.assertEqual(len(over), 2)

    def test_bad_fields_change_nothing(self):
        self.register()
        before = self.c.dump()
        tok = tc.token("node1")
        cases = [
            ({"lat_p99_seconds": -1}, "results[1].lat_p99_seconds"),
            ({"outcome": "weird"}, "results[1].outcome"),
            ({"started": "now"}, "results[1].started"),
            ({"local": {"device": "mlx5_0", "port": 0}}, "results[1].local.port"),
            ({"peer": {"host": "bad host", "device": "d", "port": 1}},
             "results[1].peer.host"),
            ({"params": "x"}, "results[1].params"),
            ({"busy": "no"}, "results[1].busy"),
            ({"id": ""}, "results[1].id"),
        ]
        for patch, field in cases:
            bad = result()
            bad.update(patch)
            st, ans = self.call("POST", "/api/v1/results",
                                batch("node1", [result(), bad]), tok)
            self.assertEqual(st, 400, (patch, ans))
            self.assertTrue(ans["error"].startswith(field + ":"), (field, ans))
        body = batch("node1", [result()])
        del body["results"][0]["id"]
        st, ans = self.call("POST", "/api/v1/results", body, tok)
        self.assertEqual(st, 400)
        self.assertTrue(ans["error"].startswith("results[0].id: is required"))
        st, ans = self.call("POST", "/api/v1/results", b"{\"version\":1,", tok)
        self.assertEqual(st, 400)
        self.assertIn("invalid JSON", ans["error"])
        body = batch("node1", [result()] * 1001)
        st, ans = self.call("POST", "/api/v1/results", body, tok)
        self.assertIn(st, (400, 413))
        reg = registration("node1", "leaf0")
        reg["responder"]["port"] = 70000
        st, ans = self.call("POST", "/api/v1/register", reg, tok)
        self.assertEqual(st, 400)
        self.assertTrue(ans["error"].startswith("responder.port:"), ans)
        reg = registration("node1", "leaf0", ports=2)
        reg["ports"][1]["port"] = 1
        st, ans = self.call("POST", "/api/v1/register", reg, tok)
        self.assertEqual(st, 400)
        self.assertIn("ports[1].port: duplicate port mlx5_0/1", ans["error"])
        reg = registration("node1", "leaf0", pkeys=(65535, 70000))
        st, ans = self.call("POST", "/api/v1/register", reg, tok)
        self.assertTrue(ans["error"].startswith("ports[0].pkeys[1]:"), ans)
        self.assertEqual(self.c.dump(), before)

    def test_foreign_host_is_forbidden(self):
        self.register()
        before = self.c.dump()
        tok1 = tc.token("node1")
        st, ans = self.call("POST", "/api/v1/results",
                            batch("node2", [result("node3")]), tok1)
        self.assertEqual(st, 403)
        self.assertIn("node1", ans["error"])
        st, _ = self.call("POST", "/api/v1/register",
                          registration("node2", "leaf1"), tok1)
        self.assertEqual(st, 403)
        st, _ = self.call("POST", "/api/v1/hosts/node2/pause", b"", tok1)
        self.assertEqual(st, 403)
        st, _ = self.call("POST", "/api/v1/results",
                          batch("node1", [result()]), None)
        self.assertEqual(st, 401)
        st, _ = self.call("GET", "/api/v1/plan", None, "nobody-0123456789abcdef")
        self.assertEqual(st, 401)
        st, _ = self.call("POST", "/api/v1/plan", b"", tok1)
        self.assertEqual(st, 405)
        self.assertEqual(self.c.dump(), before)

    def test_pause_and_resume(self):
        hosts = ("node1", "node2", "node3", "node4")
        self.register(hosts)
        st, ans = self.call("POST", "/api/v1/hosts/node1/pause", b"",
                            tc.token("node1"))
        self.assertEqual((st, ans), (200, {"host": "node1", "paused": True}))
        plans = self.plans(hosts)
        self.assertTrue(plans["node1"]["paused"])
        self.assertEqual(plans["node1"]["tests"], [])
        for h in hosts[1:]:
            self.assertFalse(plans[h]["paused"])
            for t in plans[h]["tests"]:
                self.assertNotEqual(t["peer"]["host"], "node1")
        self.assertEqual(sum(len(p["tests"]) for p in plans.values()), 3)
        # The admin token may resume any host.
        st, ans = self.call("POST", "/api/v1/hosts/node1/resume", b"",
                            tc.ADMIN)
        self.assertEqual((st, ans), (200, {"host": "node1", "paused": False}))
        plans = self.plans(hosts)
        self.assertFalse(plans["node1"]["paused"])
        self.assertEqual(sum(len(p["tests"]) for p in plans.values()), 6)
        # Pause survives a restart.
        self.call("POST", "/api/v1/hosts/node2/pause", b"", tc.ADMIN)
        self.c.stop()
        self.c.start()
        self.assertTrue(self.plans(["node2"])["node2"]["paused"])

    def test_pause_validates_the_host_name(self):
        """A host name in the path is checked like every other host name:
        400 with the reason, nothing stored in host_pause."""
        self.register(("node1", "node2"))
        before = self.c.dump()
        for bad in ("..", ".hidden", "a%22b", "node1%0D%0AX-Evil:%201",
                    "no%20space", "n%27o", "x" * 65, "-dash", "a%09b",
                    "n%C3%A9"):
            for action in ("pause", "resume", "retire"):
                path = "/api/v1/hosts/%s/%s" % (bad, action)
                st, ans = self.call("POST", path, b"", tc.ADMIN)
                self.assertEqual(st, 400, (path, ans))
                self.assertTrue(ans["error"].startswith(
                    "the host name in the path: must"), ans)
        # a NUL cuts the decoded path: no such endpoint
        st, _ = self.call("POST", "/api/v1/hosts/a%00b/pause", b"", tc.ADMIN)
        self.assertEqual(st, 404)
        self.assertEqual(self.c.count("SELECT count(*) FROM host_pause"), 0)
        self.assertEqual(self.c.dump(), before)
        # a good name that is not registered yet may still be paused
        st, ans = self.call("POST", "/api/v1/hosts/node-9.rack_2/pause", b"",
                            tc.ADMIN)
        self.assertEqual((st, ans), (200, {"host": "node-9.rack_2",
                                           "paused": True}))

    def test_kill9_keeps_every_acknowledged_result_once(self):
        self.register(("node1", "node2"))
        acked, stop = [], threading.Event()
        sent = []

        def stream(host):
            while not stop.is_set():
                rs = [result("node2" if host == "node1" else "node1")
                      for _ in range(20)]
                sent.append((host, rs))
                try:
                    st, ans = self.call("POST", "/api/v1/results",
                                        batch(host, rs), tc.token(host))
                except OSError:
                    return
                if st != 200:
                    return
                self.assertEqual(ans["stored"], 20)
                acked.extend(r["id"] for r in rs)

        threads = [threading.Thread(target=stream, args=(h,))
                   for h in ("node1", "node2")]
        for t in threads:
            t.start()
        deadline = time.monotonic() + 60
        while len(acked) < 400 and time.monotonic() < deadline:
            time.sleep(0.01)
        self.c.stop(signal.SIGKILL)
        stop.set()
        for t in threads:
            t.join(60)
        self.assertGreaterEqual(len(acked), 400)
        self.c.start()
        db_ids = self.c.count("SELECT count(*) FROM result")
        self.assertGreaterEqual(db_ids, len(acked))
        missing = [i for i in acked if self.c.count(
            "SELECT count(*) FROM result WHERE result_id = ?", i) != 1]
        self.assertEqual(missing, [])
        # The probes retry everything they sent: nothing is stored twice.
        total = 0
        for host, rs in sent:
            st, ans = self.call("POST", "/api/v1/results", batch(host, rs),
                                tc.token(host))
            self.assertEqual(st, 200)
            total += ans["stored"] + ans["duplicates"]
        self.assertEqual(total, 20 * len(sent))
        self.assertEqual(self.c.count("SELECT count(*) FROM result"),
                         20 * len(sent))


if __name__ == "__main__":
    tc.COLLECTOR, tc.SCHEMA, tc.SAMPLE_INI = sys.argv[1], sys.argv[2], sys.argv[3]
    unittest.main(argv=sys.argv[:1], verbosity=2)
