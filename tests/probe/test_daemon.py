#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""ibpulse-probe daemon against a collector stand-in we control.

The daemon runs on a fixture sysfs tree (rxe0 ACTIVE) with a static peer
whose responder does not exist, so every test ends quickly with an error
result: that is enough to exercise the spool and the push loop. The HTTP
peer (a test double, not a collector) answers POST /api/v1/results as each
test asks: 503, 429, a response lost after the body was read, 400 for one
poisoned result. Checked: every result arrives, the same ids are retried
(never new ones), nothing is left in the spool after 2xx, a refused result
lands in spool/rejected/ with its reason, counters are pushed, register
is sent, pause/resume/status and the pause file stop tests, SIGHUP with a
bad file keeps the old settings, SIGTERM exits 0 keeping unsent results.

usage: test_daemon.py PROBE FIXTURES_DIR
"""
import http.server
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import unittest

import daemonlib

PROBE = FIXTURES = None


class Stand(http.server.BaseHTTPRequestHandler):
    """Answers the way self.server.script says; records what arrived."""
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def do_GET(self):
        self.reply(404, {"error": "no plan here"})

    def do_POST(self):
        srv = self.server
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        with srv.lock:
            srv.hits[self.path] = srv.hits.get(self.path, 0) + 1
            if self.path != "/api/v1/results":
                srv.bodies.setdefault(self.path, []).append(body)
                self.reply(404 if self.path == "/api/v1/register" else 200,
                           {"error": "not here"})
                return
            doc = json.loads(body)
            ids = [r["id"] for r in doc["results"]]
            srv.dropped = doc.get("dropped")
            action = srv.script.pop(0) if srv.script else "ok"
            if srv.poison and srv.poison in ids:
                action = "poison"
            srv.log.append((action, ids))
            if action == "ok":
                for i in ids:
                    srv.stored[i] = srv.stored.get(i, 0) + 1
                self.reply(200, {"stored": len(ids), "duplicates": 0})
            elif action == "lost":
                for i in ids:
                    srv.stored[i] = srv.stored.get(i, 0) + 1
                self.close_connection = True
                self.connection.shutdown(socket.SHUT_RDWR)
            elif action == "poison":
                self.reply(400, {"error": "results[0].profile: poisoned"})
            else:
                self.reply(int(action), {"error": "try later"})

    def reply(self, code, obj):
        data = json.dumps(obj).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


class QuietServer(http.server.ThreadingHTTPServer):
    def handle_error(self, request, client_address):
        pass  # the "lost" answers reset connections on purpose


class Daemon(daemonlib.DaemonMixin, unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        t = self.tmp.name
        self.spool = os.path.join(t, "spool")
        self.sock = os.path.join(t, "probe.sock")
        self.pause_file = os.path.join(t, "pause")
        self.srv = QuietServer(("127.0.0.1", 0), Stand)
        self.srv.lock = threading.Lock()
        self.srv.hits, self.srv.bodies, self.srv.stored = {}, {}, {}
        self.srv.script, self.srv.log = [], []
        self.srv.poison, self.srv.dropped = None, None
        threading.Thread(target=self.srv.serve_forever, daemon=True).start()
        self.url = "http://127.0.0.1:%d/api/v1/report" % \
            self.srv.server_address[1]
        # A port bound but not listening, held for the whole test: the
        # static peer's responder is never there (a port closed again
        # could be taken by another test's server meanwhile).
        self.dead = socket.socket()
        self.dead.bind(("127.0.0.1", 0))
        self.dead_port = self.dead.getsockname()[1]
        self.cfg = os.path.join(t, "probe.ini")
        self.write_cfg()
        self.proc = None
        self.log = None

    def write_cfg(self, **daemon):
        """probe.ini; @daemon's keys replace [daemon]'s (a key set twice
        is an error)."""
        keys = {"counters_interval": 1, "push_interval": 1,
                "plan_interval": 3600, "test_interval": 1, "jitter": 0,
                "duty_cycle": 1, "responder_port": 0,
                "responder_listen": "127.0.0.1", "test_timeout": 1,
                "spool_dir": self.spool, "control_socket": self.sock,
                "pause_file": self.pause_file, "backoff_min": 0.05,
                "backoff_max": 0.4, "results_batch": 5}
        keys.update(daemon)
        with open(self.cfg, "w") as f:
            f.write("[probe]\nhost = node01\nsysfs_root = %s\n"
                    "collector_url = %s\nnetdev_stats = false\n"
                    "timeout = 5\n[daemon]\n%s"
                    "[labels]\nrack = r1\n"
                    "[peers]\nnode02 = 127.0.0.1:%d\n"
                    "[profile lat]\ntest = write_lat\nsize = 2\n"
                    "iters = 100\n"
                    % (os.path.join(FIXTURES, "sysfs-rxe"), self.url,
                       "".join("%s = %s\n" % kv for kv in keys.items()),
                       self.dead_port))

    def start(self):
        if getattr(self, "log", None):
            self.log.close()
        self.log = open(os.path.join(self.tmp.name, "daemon.log"), "w+")
        self.proc = subprocess.Popen(
            [PROBE, "daemon", "--config", self.cfg],
            stdout=subprocess.DEVNULL, stderr=self.log)
        self.wait_control()

    def tearDown(self):
        self.stop_daemon()
        self.dead.close()
        self.srv.shutdown()
        self.srv.server_close()
        self.tmp.cleanup()

    def spooled(self):
        """Ids of the results in the spool: ID.json, not the spool's
        .tmp-ID.json being written (an empty file for a moment: reading
        one was this test's flake, issue 22)."""
        return sorted(f[:-5] for f in os.listdir(self.spool)
                      if f.endswith(".json") and not f.startswith("."))

    def pushes(self):
        with self.srv.lock:
            return self.srv.hits.get("/api/v1/report", 0)

    def stored(self):
        with self.srv.lock:
            return dict(self.srv.stored)

    def test_retries_deliver_every_result(self):
        self.srv.script = ["503", "429", "lost", "503"]
        self.start()
        self.wait_for(lambda: len(self.stored()) >= 8, "8 results stored")
        st = self.ctl("status")
        self.assertGreaterEqual(st["tests_run"], 8)
        with self.srv.lock:
            log = list(self.srv.log)
        actions = [a for a, _ in log]
        self.assertEqual(actions[:4], ["503", "429", "lost", "503"])
        # The retry after each failure carries the same oldest ids.
        self.assertEqual(log[0][1][0], log[1][1][0])
        self.assertEqual(log[2][1][0], log[3][1][0])
        # The lost response is the only source of duplicates.
        lost = set(log[2][1])
        dups = {i for i, n in self.stored().items() if n > 1}
        self.assertTrue(dups <= lost, (dups, lost))
        # Results look like the contract says.
        self.proc.send_signal(signal.SIGTERM)
        self.assertEqual(self.proc.wait(60), 0, self.daemon_log())
        stored = set(self.stored())
        self.assertFalse(set(self.spooled()) & stored,
                         "a stored result stayed in the spool")
        self.assertIn("/api/v1/report", self.srv.hits)
        reg = json.loads(self.srv.bodies["/api/v1/register"][0])
        self.assertEqual(reg["host"], "node01")
        self.assertEqual(reg["labels"], {"rack": "r1"})
        self.assertEqual(reg["ports"][0]["device"], "rxe0")
        self.assertEqual(self.srv.dropped, {"spool_full": 0, "expired": 0})

    def test_result_body(self):
        self.srv.script = ["503"] * 1000  # keep them in the spool
        self.start()
        self.wait_for(lambda: len(self.spooled()) >= 1, "a spooled result")
        with open(os.path.join(self.spool, self.spooled()[0] + ".json")) as f:
            r = json.load(f)
        self.assertEqual(r["profile"], "lat")
        self.assertEqual(r["test"], "write_lat")
        self.assertEqual(r["peer"]["host"], "node02")
        self.assertIn(r["outcome"], ("control_error", "refused"))
        self.assertTrue(r["error"])
        self.assertFalse(r["busy"])
        self.assertRegex(r["id"], "^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-"
                         "[89ab][0-9a-f]{3}-[0-9a-f]{12}$")
        # SIGTERM keeps what was not sent; a restart sends it.
        self.proc.send_signal(signal.SIGTERM)
        self.assertEqual(self.proc.wait(60), 0, self.daemon_log())
        left = self.spooled()
        self.assertTrue(left)
        with self.srv.lock:
            self.srv.script = []
        self.write_cfg(test_interval=3600)
        self.start()
        self.wait_for(lambda: set(left) <= set(self.stored()),
                      "the earlier run's results")

    def test_rejected_moved_aside(self):
        self.srv.script = ["503"] * 1000
        self.start()
        self.wait_for(lambda: len(self.spooled()) >= 3, "3 spooled results")
        victim = self.spooled()[1]
        with self.srv.lock:
            self.srv.poison = victim
            self.srv.script = []
        self.wait_for(lambda: os.path.exists(
            os.path.join(self.spool, "rejected", victim + ".json")),
            "the poisoned result in rejected/")
        with open(os.path.join(self.spool, "rejected",
                               victim + ".reason")) as f:
            self.assertIn("poisoned", f.read())
        self.wait_for(lambda: victim not in self.spooled() and
                      len(self.stored()) >= 2, "the others stored")
        self.assertNotIn(victim, self.stored())

    def test_pause_resume_and_pause_file(self):
        self.start()
        self.wait_for(lambda: self.ctl("status")["tests_run"] >= 1,
                      "a first test")
        st = self.ctl("pause")
        self.assertTrue(st["paused"])
        self.assertEqual(st["pause_reasons"], ["command"])
        n = self.ctl("status")["tests_run"]
        # Three more counter pushes (one a second): the daemon's loop ran
        # long enough for two tests, had it not been paused.
        p = self.pushes()
        self.wait_for(lambda: self.pushes() >= p + 3, "3 more pushes")
        self.assertLessEqual(self.ctl("status")["tests_run"], n + 1)
        self.assertFalse(self.ctl("resume")["paused"])
        self.wait_for(lambda: self.ctl("status")["tests_run"] > n + 1,
                      "tests after resume")
        open(self.pause_file, "w").close()
        self.wait_for(lambda: self.ctl("status")["pause_reasons"] ==
                      ["pause_file"], "the pause file seen")
        os.unlink(self.pause_file)
        self.wait_for(lambda: not self.ctl("status")["paused"],
                      "the pause file gone")
        # Counters still flow while paused: pushes kept coming.
        self.assertGreater(self.pushes(), 1)

    def test_sighup(self):
        self.start()
        self.write_cfg(duty_cycle=7)
        self.proc.send_signal(signal.SIGHUP)
        self.wait_for(lambda: "not reloaded" in self.daemon_log(),
                      "the refused reload")
        self.assertIn("duty_cycle: '7' is not a number in [0, 1]",
                      self.daemon_log())
        # a sysfs_root that does not exist is refused too (issue 22)
        with open(self.cfg) as f:
            cfg = f.read()
        with open(self.cfg, "w") as f:
            f.write(cfg.replace("duty_cycle = 7", "duty_cycle = 1").replace(
                os.path.join(FIXTURES, "sysfs-rxe"), self.tmp.name + "/nosys"))
        self.proc.send_signal(signal.SIGHUP)
        self.wait_for(lambda: "nosys is not a directory" in self.daemon_log(),
                      "the refused reload of a missing sysfs_root")
        self.write_cfg()
        self.proc.send_signal(signal.SIGHUP)
        self.wait_for(lambda: "configuration reloaded" in self.daemon_log(),
                      "the reload")
        self.assertIsNone(self.proc.poll())
        self.ctl("status")

    def test_print_config_and_bad_flag(self):
        out = subprocess.run(
            [PROBE, "daemon", "--config", self.cfg, "--print-config",
             "--set", "duty_cycle=0.25"],
            capture_output=True, text=True, timeout=30)
        self.assertEqual(out.returncode, 0, out.stderr)
        self.assertIn("duty_cycle = 0.25", out.stdout)
        self.assertIn("[labels]\nrack = r1", out.stdout)
        self.assertIn("node02 = 127.0.0.1:%d" % self.dead_port, out.stdout)
        self.assertIn("[profile lat]", out.stdout)
        # The shipped sample parses and shows its profiles.
        sample = os.path.join(FIXTURES, "..", "..", "etc", "probe.ini")
        out = subprocess.run([PROBE, "daemon", "--config", sample,
                              "--print-config"],
                             capture_output=True, text=True, timeout=30)
        self.assertEqual(out.returncode, 0, out.stderr)
        self.assertIn("[profile bw]\ntest = write_bw", out.stdout)
        self.assertIn("counters_interval = 10", out.stdout)
        out = subprocess.run(
            [PROBE, "daemon", "--config", self.cfg, "--set",
             "spool_max_age=1"], capture_output=True, text=True, timeout=30)
        self.assertEqual(out.returncode, 2)
        self.assertIn("spool_max_age: '1' is not an integer in [60,",
                      out.stderr)


if __name__ == "__main__":
    PROBE, FIXTURES = sys.argv[1], sys.argv[2]
    daemonlib.PROBE = PROBE
    unittest.main(argv=sys.argv[:1], verbosity=2)
