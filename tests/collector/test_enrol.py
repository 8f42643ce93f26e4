#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Enrolment, end to end: the real collector on a loopback port and the
real probe (`report --once` and `daemon`).

A probe without a token enrols with the bootstrap secret, stores its token
(0600) and pushes with it; the collector keeps only the token's SHA-256.
A second enrolment of the name is refused (409), from a probe or directly,
also for a host with a configured token and when many race for one name;
a node's token cannot write as another node (403); a wrong secret or a
host token as the secret gets 401, a bad body 400, a disabled enrolment
403, the enrol_max_hosts bound 403; enrolments survive a restart.

usage: test_enrol.py COLLECTOR PROBE SCHEMA_DIR FIXTURES_DIR
"""
import hashlib
import http.client
import json
import os
import shutil
import sqlite3
import stat
import subprocess
import sys
import tempfile
import threading
import time
import unittest

COLLECTOR = PROBE = SCHEMA = FIXTURES = None
SECRET = "bootstrap-secret-0123456789abcdef"
STATIC = "static-token-0123456789abcdef"
MAX_HOSTS = 40


class Collector:
    def __init__(self, tmp, enrol=True):
        self.tmp = tmp
        self.db = os.path.join(tmp, "ibpulse.db")
        self.enrolled = os.path.join(tmp, "enrolled")
        self.config = os.path.join(tmp, "collector.ini")
        secret = os.path.join(tmp, "enrol.secret")
        with open(secret, "w") as f:
            f.write(SECRET + "\n")
        with open(self.config, "w") as f:
            f.write("[collector]\nlisten = 127.0.0.1\nport = 0\n"
                    "db = %s\nschema_dir = %s\nenrolled_file = %s\n"
                    "enrol_max_hosts = %d\nper_ip_connection_limit = 64\n%s"
                    "[tokens]\nstatic1 = %s\n"
                    % (self.db, SCHEMA, self.enrolled, MAX_HOSTS,
                       "enrol_secret_file = %s\n" % secret if enrol else "",
                       STATIC))
        self.proc = self.port = None

    def start(self):
        pf = os.path.join(self.tmp, "port")
        if os.path.exists(pf):
            os.unlink(pf)
        with open(os.path.join(self.tmp, "collector.log"), "a") as log:
            self.proc = subprocess.Popen(
                [COLLECTOR, "serve", "--config", self.config, "--port-file",
                 pf], stdout=log, stderr=log)
        for _ in range(200):
            text = ""
            if os.path.exists(pf):
                with open(pf) as f:
                    text = f.read().strip()
            if text:
                self.port = int(text)
                return
            if self.proc.poll() is not None:
                raise RuntimeError("collector exited: " + open(
                    os.path.join(self.tmp, "collector.log")).read())
            time.sleep(0.05)
        raise RuntimeError("collector did not start")

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(30)

    def url(self):
        return "http://127.0.0.1:%d/api/v1/report" % self.port

    def enrol(self, host, secret=SECRET, body=None, method="POST"):
        c = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
        data = body if body is not None else json.dumps({"host": host})
        c.request(method, "/api/v1/enrol", body=data,
                  headers={"Authorization": "Bearer " + secret,
                           "Content-Type": "application/json"})
        r = c.getresponse()
        text = r.read().decode()
        c.close()
        try:
            return r.status, json.loads(text)
        except ValueError:
            return r.status, text

    def hosts(self):
        con = sqlite3.connect(self.db)
        try:
            return sorted(r[0] for r in con.execute("SELECT name FROM host"))
        finally:
            con.close()


class EnrolTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="ibpulse-enrol-")
        self.c = Collector(self.tmp)
        self.c.start()

    def tearDown(self):
        self.c.stop()
        shutil.rmtree(self.tmp, ignore_errors=True)

    def probe_ini(self, name, token_file=None):
        state = os.path.join(self.tmp, "state-" + name)
        os.makedirs(state, exist_ok=True)
        token_file = token_file or os.path.join(state, "token")
        cfg = os.path.join(state, "probe.ini")
        with open(cfg, "w") as f:
            f.write("[probe]\nsysfs_root = %s\ncollector_url = %s\n"
                    "token_file = %s\nenrol_secret_file = %s\n"
                    "netdev_stats = false\ntimeout = 10\n"
                    % (os.path.join(FIXTURES, "sysfs-mlx5"), self.c.url(),
                       token_file, os.path.join(self.tmp, "enrol.secret")))
        return cfg, token_file

    def report(self, cfg, host):
        p = subprocess.run([PROBE, "report", "--once", "--config", cfg,
                            "--host", host], stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True, timeout=60)
        return p.returncode, p.stdout

    def enrolled_lines(self):
        with open(self.c.enrolled) as f:
            return [ln.split() for ln in f if ln.strip()]

    def test_probe_enrols_once_and_pushes(self):
        cfg, tok = self.probe_ini("a")
        rc, out = self.report(cfg, "nodeA")
        self.assertEqual(rc, 0, out)
        self.assertIn("enrolled nodeA", out)
        self.assertEqual(stat.S_IMODE(os.stat(tok).st_mode), 0o600)
        token = open(tok).read().strip()
        self.assertRegex(token, "^[0-9a-f]{64}$")
        self.assertEqual(self.c.hosts(), ["nodeA"])
        # Only the digest is on disk.
        self.assertEqual(self.enrolled_lines(),
                         [["nodeA", hashlib.sha256(token.encode()).hexdigest()]])
        self.assertNotIn(token, open(self.c.enrolled).read())
        self.assertEqual(stat.S_IMODE(os.stat(self.c.enrolled).st_mode), 0o600)
        # The next run uses the stored token: no second enrolment.
        rc, out = self.report(cfg, "nodeA")
        self.assertEqual(rc, 0, out)
        self.assertNotIn("enrolled", out)
        self.assertEqual(len(self.enrolled_lines()), 1)
        # Another node cannot enrol under nodeA's name ...
        cfg_b, tok_b = self.probe_ini("b")
        rc, out = self.report(cfg_b, "nodeA")
        self.assertNotEqual(rc, 0)
        self.assertIn("already enrolled", out)
        self.assertFalse(os.path.exists(tok_b))
        # ... nor write as another node with nodeA's token.
        cfg_x, _ = self.probe_ini("x", token_file=tok)
        rc, out = self.report(cfg_x, "nodeB")
        self.assertNotEqual(rc, 0)
        self.assertIn("403", out)
        self.assertEqual(self.c.hosts(), ["nodeA"])
        # nodeB enrols for itself and gets its own token.
        rc, out = self.report(cfg_b, "nodeB")
        self.assertEqual(rc, 0, out)
        self.assertNotEqual(open(tok_b).read(), open(tok).read())
        self.assertEqual(self.c.hosts(), ["nodeA", "nodeB"])
        # A restart keeps every enrolment.
        self.c.stop()
        self.c.start()
        cfg, _ = self.probe_ini("a")  # the new port
        rc, out = self.report(cfg, "nodeA")
        self.assertEqual(rc, 0, out)
        self.assertEqual(self.c.enrol("nodeA")[0], 409)

    def test_refusals(self):
        st, body = self.c.enrol("n1", secret="wrong-secret-0123456789abcdef")
        self.assertEqual(st, 401, body)
        self.assertEqual(self.c.enrol("n1", secret=STATIC)[0], 401)
        st, body = self.c.enrol("static1")
        self.assertEqual(st, 409, body)
        self.assertIn("already enrolled", body["error"])
        for bad in ('', '[]', '{"host": 1}', '{"host": "a b"}', 'x' * 100,
                    '{"host": "%s"}' % ("a" * 65)):
            st, body = self.c.enrol(None, body=bad)
            self.assertEqual(st, 400, (bad, body))
        self.assertEqual(self.c.enrol("n1", method="GET")[0], 405)
        self.assertFalse(os.path.exists(self.c.enrolled))
        st, body = self.c.enrol("n1")
        self.assertEqual(st, 201, body)
        self.assertEqual(body["host"], "n1")
        # The token works for its host: a probe pushes with it.
        tok = os.path.join(self.tmp, "n1.token")
        with open(tok, "w") as f:
            f.write(body["token"] + "\n")
        cfg, _ = self.probe_ini("n1", token_file=tok)
        self.assertEqual(self.report(cfg, "n1")[0], 0)

    def test_race_and_bound(self):
        results = []

        def go(name):
            results.append((name, self.c.enrol(name)))
        threads = [threading.Thread(target=go, args=("race",))
                   for _ in range(8)]
        threads += [threading.Thread(target=go, args=("h%02d" % i,))
                    for i in range(20)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        race = [r for n, r in results if n == "race"]
        self.assertEqual(sorted(st for st, _ in race), [201] + [409] * 7)
        others = [r for n, r in results if n != "race"]
        self.assertTrue(all(st == 201 for st, _ in others), others)
        tokens = {b["token"] for st, b in race + others if st == 201}
        self.assertEqual(len(tokens), 21)
        self.assertEqual(len(self.enrolled_lines()), 21)
        for i in range(21, MAX_HOSTS):
            self.assertEqual(self.c.enrol("more%d" % i)[0], 201)
        st, body = self.c.enrol("one-too-many")
        self.assertEqual(st, 403, body)
        self.assertIn("enrol_max_hosts", body["error"])
        self.assertEqual(len(self.enrolled_lines()), MAX_HOSTS)

    def test_daemon_enrols(self):
        cfg, tok = self.probe_ini("d")
        state = os.path.dirname(tok)
        with open(cfg, "a") as f:
            f.write("[daemon]\ncounters_interval = 1\npush_interval = 1\n"
                    "responder_port = 0\nresponder_listen = 127.0.0.1\n"
                    "spool_dir = %s\ncontrol_socket = %s\n"
                    % (os.path.join(state, "spool"),
                       os.path.join(state, "ctl.sock")))
        with open(os.path.join(state, "log"), "w") as log:
            p = subprocess.Popen([PROBE, "daemon", "--config", cfg, "--host",
                                  "nodeD"], stdout=log, stderr=log)
        try:
            for _ in range(200):
                if "nodeD" in self.c.hosts():
                    break
                time.sleep(0.1)
            self.assertIn("nodeD", self.c.hosts(),
                          open(os.path.join(state, "log")).read())
            self.assertRegex(open(tok).read().strip(), "^[0-9a-f]{64}$")
        finally:
            p.terminate()
            p.wait(60)

    def test_disabled(self):
        self.c.stop()
        self.c = Collector(self.tmp, enrol=False)
        self.c.start()
        st, body = self.c.enrol("n1")
        self.assertEqual(st, 403, body)
        self.assertIn("disabled", body["error"])


if __name__ == "__main__":
    COLLECTOR, PROBE, SCHEMA, FIXTURES = sys.argv[1:5]
    del sys.argv[1:5]
    unittest.main(verbosity=2)
