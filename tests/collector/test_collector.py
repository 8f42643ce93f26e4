#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Integration tests for ibpulse-collector: the real daemon on an ephemeral
loopback port with a temporary database and config. Good reports are
stored; every kind of bad request gets its status and leaves the database
unchanged; a kill -9 while reports stream in loses no acknowledged report;
hosts can be retired through the API and the CLI; TLS works.

usage: test_collector.py COLLECTOR_BINARY SCHEMA_DIR ETC_COLLECTOR_INI
"""
import http.client
import json
import os
import shutil
import signal
import socket
import sqlite3
import ssl
import subprocess
import sys
import tempfile
import threading
import time
import unittest

COLLECTOR = SCHEMA = SAMPLE_INI = None
ADMIN = "admin-token-0123456789abcdef"
HOSTS = ["node%d" % i for i in range(8)]


def token(host):
    return "tok-%s-0123456789abcdef" % host


def make_report(host, marker, ports=2, counters=20):
    """A report whose port_xmit_data on every port is @marker."""
    def port(n):
        ib = {"port_xmit_data": marker, "port_rcv_data": marker * 2,
              "symbol_error": 0, "link_downed": 0}
        for i in range(counters - len(ib)):
            ib["c%02d" % i] = i
        return {"port": n, "state": 4, "phys_state": 5,
                "rate_bytes_per_second": 12500000000,
                "link_layer": "InfiniBand", "lid": n, "sm_lid": 1, "lmc": 0,
                "gids": [{"index": 0, "gid": "fe80:0000:0000:0000:0000:0000:0000:%04x" % n,
                          "type": "IB/RoCE v1"}],
                "pkeys": [{"index": 0, "pkey": 65535}],
                "counters": {"ib": ib, "hw": {"out_of_buffer": 0}}}
    return {"version": 1, "host": host, "timestamp": 1764412345.5,
            "probe_version": "0.1.0",
            "devices": [{"name": "mlx5_0", "fw_ver": "20.31.1014",
                         "ports": [port(n + 1) for n in range(ports)]}]}


class Collector:
    """One collector process on 127.0.0.1:0, with its config and DB."""

    def __init__(self, tmp, extra=""):
        self.tmp = tmp
        self.db = os.path.join(tmp, "ibpulse.db")
        self.config = os.path.join(tmp, "collector.ini")
        self.port_file = os.path.join(tmp, "port")
        self.log = os.path.join(tmp, "collector.log")
        with open(self.config, "w") as f:
            f.write("[collector]\nlisten = 127.0.0.1\nport = 0\n"
                    "db = %s\nschema_dir = %s\nadmin_token = %s\n"
                    "max_body_bytes = 65536\nthreads = 4\n"
                    "per_ip_connection_limit = 64\n%s\n[tokens]\n"
                    % (self.db, SCHEMA, ADMIN, extra))
            for h in HOSTS:
                f.write("%s = %s\n" % (h, token(h)))
        self.proc = None
        self.port = None
        self.wrap = []  # a command to run the collector under (unshare)

    def start(self):
        if os.path.exists(self.port_file):
            os.unlink(self.port_file)
        with open(self.log, "a") as log:
            self.proc = subprocess.Popen(
                self.wrap + [COLLECTOR, "serve", "--config", self.config,
                             "--port-file", self.port_file],
                stdout=subprocess.DEVNULL, stderr=log)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError("collector exited %d: %s" %
                                   (self.proc.returncode, self.log_text()))
            if os.path.exists(self.port_file):
                with open(self.port_file) as f:
                    self.port = int(f.read())
                return self
            time.sleep(0.05)
        raise RuntimeError("collector did not start: " + self.log_text())

    def log_text(self):
        with open(self.log) as f:
            return f.read()

    def stop(self, sig=signal.SIGTERM):
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(sig)
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        return self.proc.returncode if self.proc else None

    def request(self, method, path, body=None, tok=None, headers=None):
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)
        h = dict(headers or {})
        if tok:
            h["Authorization"] = "Bearer " + tok
        if isinstance(body, (dict, list)):
            body = json.dumps(body).encode()
            h["Content-Type"] = "application/json"
        conn.request(method, path, body=body, headers=h)
        r = conn.getresponse()
        data = r.read()
        conn.close()
        return r.status, dict(r.getheaders()), data

    def dump(self):
        """Every row of every table: compare before and after."""
        db = sqlite3.connect("file:%s?mode=ro" % self.db, uri=True)
        try:
            return list(db.iterdump())
        finally:
            db.close()

    def count(self, sql, *args):
        return self.rows(sql, *args)[0][0]

    def rows(self, sql, *args):
        db = sqlite3.connect("file:%s?mode=ro" % self.db, uri=True)
        try:
            return db.execute(sql, args).fetchall()
        finally:
            db.close()


class CollectorTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="ibpulse-coll-")
        self.c = Collector(self.tmp)

    def tearDown(self):
        self.c.stop(signal.SIGKILL)
        shutil.rmtree(self.tmp, ignore_errors=True)

    def post(self, report, tok):
        return self.c.request("POST", "/api/v1/report", report, tok)

    def test_good_report_is_stored(self):
        self.c.start()
        st, _, body = self.post(make_report("node1", 1000), token("node1"))
        self.assertEqual(st, 200, body)
        self.assertEqual(json.loads(body), {"stored": 42})
        self.assertEqual(self.c.count("SELECT count(*) FROM host WHERE name = 'node1'"), 1)
        self.assertEqual(self.c.count("SELECT count(*) FROM port"), 2)
        self.assertEqual(self.c.count("SELECT count(*) FROM series"), 42)
        self.assertEqual(self.c.count("SELECT count(*) FROM sample"), 42)
        self.assertEqual(self.c.count("SELECT count(*) FROM port_gid"), 2)
        self.assertEqual(self.c.count(
            "SELECT value FROM series WHERE name = 'port_rcv_data' LIMIT 1"), 2000)
        # Unchanged counters cost nothing; a changed one is one history row.
        self.assertEqual(self.post(make_report("node1", 1000), token("node1"))[0], 200)
        self.assertEqual(self.c.count("SELECT count(*) FROM sample"), 42)
        self.assertEqual(self.post(make_report("node1", 1001), token("node1"))[0], 200)
        self.assertEqual(self.c.count("SELECT count(*) FROM sample"), 46)
        self.assertEqual(self.c.stop(), 0)

    def test_healthz(self):
        self.c.start()
        st, _, body = self.c.request("GET", "/healthz")
        self.assertEqual((st, json.loads(body)), (200, {"status": "ok"}))
        st, h, _ = self.c.request("POST", "/healthz", b"")
        self.assertEqual(st, 405)
        self.assertIn("GET", h["Allow"])

    def assert_rejected(self, status, resp, text=None):
        st, headers, body = resp
        self.assertEqual(st, status, body)
        self.assertEqual(headers.get("Content-Type"), "application/json")
        err = json.loads(body)["error"]
        if text:
            self.assertIn(text, err)
        return headers

    def test_bad_requests_change_nothing(self):
        self.c.start()
        self.assertEqual(self.post(make_report("node1", 5), token("node1"))[0], 200)
        before = self.c.dump()
        seq = self.c.count("SELECT seq FROM change_seq")
        good = json.dumps(make_report("node1", 6)).encode()

        # Oversized, announced by Content-Length and chunked.
        big = b"[" + b"0," * 40000 + b"0]"
        self.assert_rejected(413, self.post(big, token("node1")), "larger than")
        self.assert_rejected(413, self.chunked(big, token("node1")), "larger than")
        # Malformed JSON, wrong types, missing fields.
        self.assert_rejected(400, self.post(good[:-5], token("node1")), "invalid JSON")
        bad = make_report("node1", 7)
        bad["devices"][0]["ports"][1]["counters"]["ib"]["symbol_error"] = "x"
        self.assert_rejected(400, self.post(bad, token("node1")),
                             "devices[0].ports[1].counters.ib.symbol_error")
        bad = make_report("node1", 7)
        bad["devices"][0]["ports"][0]["lid"] = -3
        self.assert_rejected(400, self.post(bad, token("node1")), "devices[0].ports[0].lid")
        bad = make_report("node1", 7)
        del bad["host"]
        self.assert_rejected(400, self.post(bad, token("node1")), "host")
        # Two GIDs at one index: the decoder refuses it (400 naming the
        # field), and good reports sent alongside it are stored.
        dup = make_report("node1", 8)
        gids = dup["devices"][0]["ports"][0]["gids"]
        gids.append(dict(gids[0]))
        results = {}

        def send(key, report, host):
            st, _, body = self.post(report, token(host))
            dup_msg = b"gids[%d].index: duplicate index" % (len(gids) - 1)
            results[key] = (st, "gid") if dup_msg in body else st
        threads = [threading.Thread(target=send, args=("dup", dup, "node1"))]
        threads += [threading.Thread(target=send, args=(h, make_report(h, 9), h))
                    for h in ("node4", "node5", "node6")]
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
        self.assertEqual(results, {"dup": (400, "gid"), "node4": 200,
                                   "node5": 200, "node6": 200})
        for h in ("node4", "node5", "node6"):
            self.assertEqual(self.c.count(
                "SELECT count(*) FROM host WHERE name = ?", h), 1)
        self.assertEqual(self.c.count(
            "SELECT count(*) FROM series x JOIN port p ON p.id = x.port_id JOIN host h "
            "ON h.id = p.host_id WHERE h.name = 'node1' AND x.name = 'port_xmit_data' "
            "AND x.value = 8"), 0)
        with sqlite3.connect(self.c.db) as db:
            db.execute("PRAGMA foreign_keys = ON")
            db.execute("DELETE FROM host WHERE name IN ('node4', 'node5', 'node6')")
            # their health verdicts (schema 007, keyed by name: retire
            # deletes them, as this test's own delete must)
            for t in ("host_health", "health_reason", "health_port"):
                db.execute("DELETE FROM %s WHERE host IN ('node4', 'node5', "
                           "'node6')" % t)
            # the good reports sent alongside took change markers (only
            # ever growing): put the counter back for the comparison
            db.execute("UPDATE change_seq SET seq = ?", (seq,))
        db.close()
        # Missing, unknown and foreign tokens.
        h = self.assert_rejected(401, self.post(good, None))
        self.assertTrue(h["WWW-Authenticate"].startswith("Bearer"))
        self.assert_rejected(401, self.post(good, "not-a-token-of-anyone-at-all"))
        self.assert_rejected(401, self.post(good, token("node1") + "x"))
        self.assert_rejected(403, self.post(good, token("node2")), "node2")
        # Wrong method, unknown path.
        for m in ("GET", "PUT", "DELETE"):
            h = self.assert_rejected(405, self.c.request(m, "/api/v1/report", good,
                                                         token("node1")))
            self.assertEqual(h["Allow"], "POST")
        self.assert_rejected(404, self.c.request("POST", "/api/v1/nope", good,
                                                 token("node1")))
        self.assertEqual(self.c.dump(), before)
        # And the daemon still takes good reports.
        self.assertEqual(self.post(good, token("node1"))[0], 200)
        self.assertNotEqual(self.c.dump(), before)

    def chunked(self, body, tok):
        conn = http.client.HTTPConnection("127.0.0.1", self.c.port, timeout=60)
        pieces = (body[i:i + 4096] for i in range(0, len(body), 4096))
        try:
            conn.request("POST", "/api/v1/report", body=pieces,
                         headers={"Authorization": "Bearer " + tok},
                         encode_chunked=True)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the answer came before the whole body: read it
        r = conn.getresponse()
        data = r.read()
        conn.close()
        return r.status, dict(r.getheaders()), data

    def test_storage_failure_is_503(self):
        """Another process holds the write lock past busy_timeout: reports
        and health checks get 503 (retry), nothing is stored, and service
        resumes when the lock goes."""
        self.c = Collector(self.tmp, "busy_timeout_ms = 200")
        self.c.start()
        self.assertEqual(self.post(make_report("node1", 1), token("node1"))[0], 200)
        before = self.c.dump()
        locker = sqlite3.connect(self.c.db, isolation_level=None)
        locker.execute("BEGIN IMMEDIATE")
        try:
            st, h, body = self.post(make_report("node1", 2), token("node1"))
            self.assertEqual(st, 503, body)
            self.assertEqual(h.get("Retry-After"), "5")
            self.assertEqual(self.c.request("GET", "/healthz")[0], 503)
        finally:
            locker.execute("ROLLBACK")
            locker.close()
        self.assertEqual(self.c.dump(), before)
        self.assertEqual(self.c.request("GET", "/healthz")[0], 200)
        self.assertEqual(self.post(make_report("node1", 2), token("node1"))[0], 200)
        self.assertEqual(self.c.count(
            "SELECT value FROM series WHERE name = 'port_xmit_data' LIMIT 1"), 2)

    def test_ipv6_listen(self):
        if not socket.has_ipv6:
            raise unittest.SkipTest("no IPv6")
        try:
            socket.socket(socket.AF_INET6).bind(("::1", 0))
        except OSError:
            raise unittest.SkipTest("no ::1")
        c = Collector(self.tmp, "")
        r = subprocess.Popen([COLLECTOR, "--config", c.config, "--listen", "::1",
                              "--port-file", c.port_file],
                             stderr=subprocess.PIPE, text=True)
        try:
            deadline = time.monotonic() + 60
            while not os.path.exists(c.port_file) and time.monotonic() < deadline:
                self.assertIsNone(r.poll())
                time.sleep(0.05)
            with open(c.port_file) as f:
                port = int(f.read())
            conn = http.client.HTTPConnection("::1", port, timeout=60)
            conn.request("GET", "/healthz")
            self.assertEqual(conn.getresponse().status, 200)
            conn.close()
        finally:
            r.kill()
            r.communicate()

    def test_retire_api_and_cli(self):
        self.c.start()
        for h in ("node1", "node2", "node3"):
            self.assertEqual(self.post(make_report(h, 1), token(h))[0], 200)
        path = "/api/v1/hosts/node1/retire"
        self.assert_rejected(401, self.c.request("POST", path, b"", None))
        self.assert_rejected(401, self.c.request("POST", path, b"", token("node1")))
        self.assert_rejected(405, self.c.request("GET", path, None, ADMIN))
        self.assertEqual(self.c.count("SELECT count(*) FROM host"), 3)
        st, _, body = self.c.request("POST", path, b"", ADMIN)
        self.assertEqual((st, json.loads(body)), (200, {"retired": "node1"}))
        self.assert_rejected(404, self.c.request("POST", path, b"", ADMIN), "node1")
        self.assertEqual(self.c.count("SELECT count(*) FROM host WHERE name = 'node1'"), 0)
        self.assertEqual(self.c.count("SELECT count(*) FROM series"), 84)
        # The CLI, while the daemon runs; then the daemon keeps working.
        cli = subprocess.run([COLLECTOR, "retire", "node2", "--config", self.c.config],
                             capture_output=True, text=True, timeout=60)
        self.assertEqual(cli.returncode, 0, cli.stderr)
        self.assertIn("retired node2", cli.stdout)
        cli = subprocess.run([COLLECTOR, "retire", "node2", "--config", self.c.config],
                             capture_output=True, text=True, timeout=60)
        self.assertEqual(cli.returncode, 1)
        self.assertIn("unknown host", cli.stderr)
        self.assertEqual(self.c.count("SELECT count(*) FROM host"), 1)
        self.assertEqual(self.post(make_report("node2", 2), token("node2"))[0], 200)
        self.assertEqual(self.c.count("SELECT count(*) FROM host"), 2)
        self.assertEqual(self.c.count("SELECT count(*) FROM series"), 84)

    def test_kill9_keeps_acknowledged_reports(self):
        self.stream_and_stop(signal.SIGKILL)

    def test_sigterm_keeps_acknowledged_reports(self):
        self.stream_and_stop(signal.SIGTERM)

    def stream_and_stop(self, sig):
        """Stop the collector with @sig while reports stream in from
        several clients; every report answered 200 must be stored."""
        self.c.start()
        acked = {h: set() for h in HOSTS[:6]}
        stop = threading.Event()

        def client(host, base):
            conn = http.client.HTTPConnection("127.0.0.1", self.c.port, timeout=30)
            seq = 0
            while not stop.is_set():
                marker = base + seq
                seq += 1
                body = json.dumps(make_report(host, marker)).encode()
                try:
                    conn.request("POST", "/api/v1/report", body=body,
                                 headers={"Authorization": "Bearer " + token(host),
                                          "Content-Type": "application/json"})
                    r = conn.getresponse()
                    r.read()
                except (OSError, http.client.HTTPException):
                    break
                if r.status == 200:
                    acked[host].add(marker)
            conn.close()

        threads = [threading.Thread(target=client, args=(h, (i + 1) * 1000000))
                   for i, h in enumerate(acked)]
        for t in threads:
            t.start()
        deadline = time.monotonic() + 120
        while sum(map(len, acked.values())) < 300 and time.monotonic() < deadline:
            time.sleep(0.01)
        self.c.proc.send_signal(sig)
        code = self.c.proc.wait(60)
        if sig == signal.SIGTERM:
            self.assertEqual(code, 0, self.c.log_text())
        stop.set()
        for t in threads:
            t.join(60)
        total = sum(map(len, acked.values()))
        self.assertGreaterEqual(total, 300)
        # Restart on the same database (recovery), then look for every marker.
        self.c.start()
        db = sqlite3.connect("file:%s?mode=ro" % self.c.db, uri=True)
        for host, markers in acked.items():
            stored = {v for (v,) in db.execute(
                "SELECT s.value FROM sample s JOIN series x ON x.id = s.series_id "
                "JOIN port p ON p.id = x.port_id JOIN host h ON h.id = p.host_id "
                "WHERE h.name = ? AND x.name = 'port_xmit_data' AND p.port = 1",
                (host,))}
            self.assertEqual(markers - stored, set(), host)
        db.close()
        st, _, _ = self.post(make_report("node1", 1), token("node1"))
        self.assertEqual(st, 200)


class ConfigTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="ibpulse-coll-")

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def run_collector(self, *args):
        return subprocess.run([COLLECTOR] + list(args), capture_output=True,
                              text=True, timeout=60)

    def test_print_config_and_bad_values(self):
        c = Collector(self.tmp)
        r = self.run_collector("--config", c.config, "--port", "1234", "--print-config")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("port = 1234", r.stdout)
        self.assertIn("keyframe_interval = 300", r.stdout)
        self.assertNotIn(token("node1"), r.stdout)
        r = self.run_collector("--config", c.config, "--port", "70000", "--print-config")
        self.assertEqual(r.returncode, 2)
        self.assertIn("[0, 65535]", r.stderr)
        with open(c.config, "a") as f:
            f.write("short = abc\n")
        r = self.run_collector("--config", c.config, "--print-config")
        self.assertEqual(r.returncode, 2)
        self.assertIn("shorter than", r.stderr)
        r = self.run_collector("frobnicate")
        self.assertEqual(r.returncode, 2)
        r = self.run_collector("--version")
        self.assertEqual(r.returncode, 0)
        self.assertIn("ibpulse-collector", r.stdout)

    def test_sample_config_parses(self):
        r = self.run_collector("--config", SAMPLE_INI, "--print-config")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("retention_days = 7", r.stdout)

    def test_refuses_newer_database(self):
        c = Collector(self.tmp)
        db = sqlite3.connect(c.db)
        db.execute("PRAGMA user_version = 999")
        db.close()
        r = self.run_collector("--config", c.config, "--port-file", c.port_file)
        self.assertEqual(r.returncode, 1)
        self.assertIn("newer", r.stderr)
        self.assertFalse(os.path.exists(c.port_file))

    def test_tls(self):
        # A missing tool fails (scripts/install-deps.sh installs openssl).
        self.assertTrue(shutil.which("openssl"),
                        "openssl not found: bash scripts/install-deps.sh installs it")
        cert, key = os.path.join(self.tmp, "c.pem"), os.path.join(self.tmp, "k.pem")
        subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes",
                        "-keyout", key, "-out", cert, "-days", "2", "-subj",
                        "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1"],
                       check=True, capture_output=True, timeout=120)
        c = Collector(self.tmp, "tls_cert = %s\ntls_key = %s\n" % (cert, key)).start()
        try:
            ctx = ssl.create_default_context(cafile=cert)
            conn = http.client.HTTPSConnection("127.0.0.1", c.port, context=ctx,
                                               timeout=60)
            conn.request("POST", "/api/v1/report",
                         body=json.dumps(make_report("node1", 3)).encode(),
                         headers={"Authorization": "Bearer " + token("node1")})
            r = conn.getresponse()
            self.assertEqual(r.status, 200, r.read())
            conn.close()
            # Plain HTTP on the TLS port gets nowhere.
            with self.assertRaises((http.client.HTTPException, OSError)):
                c.request("GET", "/healthz")
        finally:
            c.stop(signal.SIGKILL)


if __name__ == "__main__":
    COLLECTOR, SCHEMA, SAMPLE_INI = sys.argv[1], sys.argv[2], sys.argv[3]
    unittest.main(argv=sys.argv[:1], verbosity=2)
