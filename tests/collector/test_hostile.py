#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Hostile clients and faults against the real ibpulse-collector (issue 12).

  - 1,120 idle connections from 70 loopback addresses (16 each) and 20
    that trickle a request head a byte at a time: a probe's report is still
    answered 200 at once, and the server closes the idle and trickling ones
    after header_timeout;
  - the request gate: duplicate Content-Length, Content-Length with
    chunked, unknown Transfer-Encoding, no Host, NUL bytes: 400, closed;
  - `listen = ::` serves IPv4 and IPv6 clients; a bind failure names the
    address and port;
  - with its database on a full file system (a 2 MiB tmpfs in a private
    mount namespace), reports get 503 and so does /healthz, with the
    reason; once space is freed both are 200 again.

usage: test_hostile.py COLLECTOR_BINARY SCHEMA_DIR ETC_COLLECTOR_INI
"""
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "exporter"))
import harness as H  # noqa: E402
import test_collector as TC  # noqa: E402


class HostileTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="ibpulse-coll-hostile-")
        self.c = TC.Collector(self.tmp)

    def tearDown(self):
        self.c.stop(signal.SIGKILL)
        shutil.rmtree(self.tmp, ignore_errors=True)

    def report(self, marker, ports=2, counters=20):
        return self.c.request("POST", "/api/v1/report",
                              TC.make_report("node1", marker, ports, counters),
                              TC.token("node1"))

    def test_idle_flood_from_many_addresses(self):
        self.c.start()
        idle = H.SlowClients(self.c.port, 1120, per_addr=16, first=2, head=b"")
        slow = H.SlowClients(self.c.port, 20, per_addr=10, first=80, head=b"P")
        stop = threading.Event()

        def trickle():  # a byte of a request head every half second
            while not stop.wait(0.5):
                for s in slow.socks:
                    try:
                        s.send(b"O")
                    except OSError:
                        pass
        t = threading.Thread(target=trickle)
        t.start()
        try:
            t0 = time.monotonic()
            st, _, body = self.report(1)
            took = time.monotonic() - t0
            self.assertEqual(st, 200, body)
            self.assertLess(took, 3.0, "a report took %.1f s during the flood" % took)
            # header_timeout (10 s): idle and trickling connections go
            deadline = time.monotonic() + 16
            while time.monotonic() < deadline and (
                    idle.closed_by_peer() < 1000 or slow.closed_by_peer() < 20):
                time.sleep(0.5)
            self.assertGreaterEqual(idle.closed_by_peer(), 1000)
            self.assertEqual(slow.closed_by_peer(), 20)
        finally:
            stop.set()
            t.join()
            idle.close()
            slow.close()
        self.assertEqual(self.report(2)[0], 200)
        self.assertEqual(self.c.stop(), 0)

    def test_flood_spares_keepalive_clients(self):
        """Issue 22: a flood that reconnects whatever the server closes
        (330 connections from 30 addresses, 30 of them slowloris, against
        max_connections = 128) evicted the served keep-alive client first:
        its connection, idle for half a second between reports, was older
        than the flood's new ones (51% success at full size). Now the
        flood's never-served connections go first."""
        self.c = TC.Collector(self.tmp, "max_connections = 128")
        self.c.start()
        body = json.dumps(TC.make_report("node1", 7)).encode()
        req = (b"POST /api/v1/report HTTP/1.1\r\nHost: t\r\n"
               b"Authorization: Bearer %s\r\nContent-Type: application/json\r\n"
               b"Content-Length: %d\r\n\r\n" % (TC.token("node1").encode(), len(body))
               + body)
        flood = H.Flood(self.c.port, idle=300, slow=30, addrs=30, rate=500)
        try:
            H.wait_for("the flood to fill the server and churn",
                       lambda: flood.closed >= 300, timeout=30)
            ka = H.KeepAlive(self.c.port, req)
            ok, total = ka.run(15)
            churn = flood.closed
        finally:
            flood.stop()
        self.assertGreaterEqual(total, 25)
        self.assertGreater(churn, 3000, "the flood did not churn")
        self.assertGreaterEqual(ok, 0.99 * total,
                                "keep-alive reports: %d of %d answered 200 during "
                                "the flood (%d connections closed): %s"
                                % (ok, total, churn, ka.failures[:5]))
        self.assertEqual(self.report(2)[0], 200)
        self.assertEqual(self.c.stop(), 0)

    def test_request_gate(self):
        self.c.start()
        body = json.dumps(TC.make_report("node1", 3)).encode()
        H.check_gate(self.c.port, b"POST", b"/api/v1/report", 200, body=body,
                     headers=b"Authorization: Bearer %s\r\n" % TC.token("node1").encode())
        got, closed, _ = H.raw(self.c.port, b"GET /healthz HTTP/1.1\r\nX-A: \x00\r\n"
                               b"Host: t\r\n\r\n")
        self.assertEqual(H.statuses(got), [400])
        self.assertIn(b'{"error":', got)

    def test_framing_errors_are_json(self):
        """Issue 22: what libmicrohttpd answered itself (HTML; for a
        Content-Length of -1, abc or +571 its status line twice) or let
        through (a bare CR, two Authorization headers) gets one JSON
        answer with its reason, and the connection closed; so does each,
        after a good request on the same keep-alive connection."""
        self.c.start()
        body = json.dumps(TC.make_report("node1", 3)).encode()
        auth = b"Authorization: Bearer %s\r\n" % TC.token("node1").encode()
        H.check_framing(self.c.port, b"POST", b"/api/v1/report", True,
                        headers=auth, body=body)
        good = (b"GET /healthz HTTP/1.1\r\nHost: t\r\n\r\n")
        for name, data, want in H.framing_cases(b"POST", b"/api/v1/report",
                                                auth, body):
            got, closed, _ = H.raw(self.c.port, good + data)
            answers = H.responses(got)
            self.assertEqual([a[0] for a in answers], [200, want],
                             (name, got[:600]))
            self.assertIn("error", json.loads(answers[1][2]), name)
            self.assertTrue(closed, name)
        # nothing of it was stored, and the server still serves
        self.assertEqual(self.c.count("SELECT count(*) FROM host"), 0)
        self.assertEqual(self.report(1)[0], 200)

    def test_dual_stack_and_bind_failure(self):
        self.c = TC.Collector(self.tmp, "")
        with open(self.c.config) as f:
            cfg = f.read()
        cfg = cfg.replace("listen = 127.0.0.1", "listen = ::")
        with open(self.c.config, "w") as f:
            f.write(cfg)
        self.c.start()
        for host in ("127.0.0.1", "::1"):
            got, _, _ = H.raw(self.c.port, b"GET /healthz HTTP/1.1\r\nHost: t\r\n"
                              b"Connection: close\r\n\r\n", host=host)
            self.assertEqual(H.statuses(got), [200], "client on %s: %r" % (host, got))
        r = subprocess.run([TC.COLLECTOR, "--config", self.c.config, "--port",
                            str(self.c.port)], capture_output=True, text=True, timeout=60)
        self.assertEqual(r.returncode, 1)
        self.assertIn("[::] port %d" % self.c.port, r.stderr)
        self.assertNotIn("port 0", r.stderr)

    def test_limits_in_print_config(self):
        r = subprocess.run([TC.COLLECTOR, "--print-config"], capture_output=True,
                           text=True, timeout=60)
        for line in ("max_connections = 1024", "per_ip_connection_limit = 16",
                     "header_timeout = 10", "request_timeout = 60",
                     "connection_timeout = 30"):
            self.assertIn(line, r.stdout)

    def test_full_disk_health(self):
        disk = os.path.join(self.tmp, "disk")
        os.mkdir(disk)
        self.c.db = os.path.join(disk, "ibpulse.db")
        with open(self.c.config) as f:
            cfg = f.read()
        cfg = cfg.replace(
            "db = %s/ibpulse.db" % self.tmp, "db = %s" % self.c.db)
        with open(self.c.config, "w") as f:
            f.write(cfg)
        # a 2 MiB file system only the collector sees, gone with it
        self.c.wrap = ["unshare", "-m", "--propagation", "private", "sh", "-c",
                       'mount -t tmpfs -o size=2m tmpfs "$0" && exec "$@"', disk]
        self.c.start()
        inside = "/proc/%d/root%s" % (self.c.proc.pid, disk)
        self.assertEqual(self.report(1, 4, 60)[0], 200)
        with open(os.path.join(inside, "fill"), "wb", buffering=0) as f:
            with self.assertRaises(OSError):
                for _ in range(1024):
                    f.write(b"x" * 4096)
        failed = None
        for i in range(2, 40):
            st, _, body = self.report(i, 4, 60)
            if st != 200:
                failed = (st, body)
                break
        self.assertIsNotNone(failed, "every report was stored on a full disk")
        self.assertEqual(failed[0], 503, failed)
        st, _, body = self.c.request("GET", "/healthz")
        self.assertEqual(st, 503, body)
        self.assertIn("full", json.loads(body)["error"])
        os.unlink(os.path.join(inside, "fill"))
        self.assertEqual(self.report(100, 4, 60)[0], 200)
        st, _, body = self.c.request("GET", "/healthz")
        self.assertEqual((st, json.loads(body)), (200, {"status": "ok"}))
        self.assertEqual(self.c.stop(), 0)


if __name__ == "__main__":
    TC.COLLECTOR, TC.SCHEMA, TC.SAMPLE_INI = sys.argv[1], sys.argv[2], sys.argv[3]
    unittest.main(argv=sys.argv[:1], verbosity=2)
