#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Integration test of the ibpulse-probe command line on the fixture trees.

`devices --json` and the human listing on a fixture sysfs, bad command
lines (exit 2, naming the flag or command), and `report --once` pushing to
a real HTTP server on an ephemeral loopback port: the body, the bearer
token, and the exit status for 2xx, 4xx (with the collector's reason
logged), 5xx and a refused connection.

usage: test_probe_cli.py PROBE_BINARY FIXTURES_DIR
"""
import http.server
import json
import os
import socket
import subprocess
import sys
import tempfile
import threading
import unittest

PROBE = FIXTURES = None
TIMEOUT = 60


def run(*args, **kw):
    return subprocess.run([PROBE, *args], capture_output=True, text=True,
                          timeout=TIMEOUT, **kw)


class Collector(http.server.ThreadingHTTPServer):
    """Records each POST and answers with the next queued (status, body)."""

    daemon_threads = True

    def __init__(self):
        super().__init__(("127.0.0.1", 0), Handler)
        self.requests = []
        self.answer = (200, b'{"status":"ok"}')


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_POST(self):
        n = int(self.headers.get("Content-Length", "0"))
        body = self.rfile.read(n)
        self.server.requests.append((self.path, dict(self.headers), body))
        status, text = self.server.answer
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(text)))
        self.end_headers()
        self.wfile.write(text)

    def log_message(self, *args):
        pass


class DevicesTest(unittest.TestCase):
    def devices_json(self, tree):
        r = run("devices", "--json", "--sysfs-root",
                os.path.join(FIXTURES, tree))
        self.assertEqual(r.returncode, 0, r.stderr)
        return json.loads(r.stdout)

    def test_json_mlx5(self):
        rep = self.devices_json("sysfs-mlx5")
        self.assertEqual(rep["version"], 1)
        self.assertEqual([d["name"] for d in rep["devices"]],
                         ["mlx5_0", "mlx5_1", "mlx5_2"])
        d0, d1, d2 = rep["devices"]
        p = d0["ports"][0]
        self.assertEqual(p["state"], 4)
        self.assertEqual(p["rate_bytes_per_second"], 12500000000)
        self.assertEqual(p["lid"], 12)
        self.assertEqual(p["counters"]["ib"]["port_xmit_data"], 123456789012)
        self.assertEqual(p["counters"]["hw"]["lifespan"], 12)
        self.assertEqual(p["pkeys"], [{"index": 0, "pkey": 0xffff},
                                      {"index": 1, "pkey": 0x8001},
                                      {"index": 2, "pkey": 0x0002}])
        self.assertEqual(d0["pcie"]["aer_correctable"], 2)
        self.assertEqual(d1["pcie"]["current_width"], 8)
        self.assertEqual(d1["pcie"]["max_speed_gts"], 16.0)
        roce = d1["ports"][0]
        self.assertEqual(roce["netdev"], "ens2f0")
        self.assertEqual([g["type"] for g in roce["gids"]],
                         ["IB/RoCE v1", "RoCE v2"] * 2)
        self.assertEqual(roce["counters"]["net"], {"carrier_changes": 3})
        down = d2["ports"][0]
        self.assertEqual(down["state"], 1)
        self.assertEqual(down["counters"]["ib"]["symbol_error"], 65535)
        self.assertEqual(down["counters"]["ib"]["link_downed"], 255)
        self.assertNotIn("null", json.dumps(rep))

    def test_json_garbage_tree_still_reports(self):
        r = run("devices", "--json", "--sysfs-root",
                os.path.join(FIXTURES, "sysfs-garbage"))
        self.assertEqual(r.returncode, 0, r.stderr)
        rep = json.loads(r.stdout)
        p = rep["devices"][0]["ports"][0]
        self.assertNotIn("state", p)
        self.assertNotIn("symbol_error", p["counters"]["ib"])
        self.assertEqual(p["counters"]["ib"]["port_rcv_packets"], 7)
        # Each bad file is named in a warning.
        self.assertIn("counters/symbol_error: cannot parse '12abc'", r.stderr)
        self.assertIn("phys_state: Is a directory", r.stderr)

    def test_human_listing(self):
        r = run("devices", "--sysfs-root", os.path.join(FIXTURES, "sysfs-mlx5"))
        self.assertEqual(r.returncode, 0, r.stderr)
        out = r.stdout
        self.assertIn("CA 'mlx5_0'", out)
        self.assertIn("P_Keys: 3", out)
        self.assertRegex(out, r"index\s+pkey\s+membership")
        self.assertRegex(out, r"\n\t+0\s+0xffff\s+full\n")
        self.assertRegex(out, r"\n\t+2\s+0x0002\s+limited\n")
        self.assertRegex(out, r"1\s+fe80:0000:0000:0000:0e42:a1ff:fe65:6b5e"
                              r"\s+RoCE v2\s+ens2f0")
        self.assertIn("8 GT/s x8 (max 16 GT/s x16) DEGRADED", out)
        self.assertIn("symbol_error", out)
        r = run("devices", "--no-counters", "--sysfs-root",
                os.path.join(FIXTURES, "sysfs-mlx5"))
        self.assertNotIn("symbol_error", r.stdout)

    def test_no_devices(self):
        r = run("devices", "--sysfs-root", os.path.join(FIXTURES, "sysfs-empty"))
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("no RDMA devices", r.stdout)


class CommandLineTest(unittest.TestCase):
    def test_bad_flag(self):
        r = run("devices", "--frobnicate")
        self.assertEqual(r.returncode, 2)
        self.assertIn("'--frobnicate'", r.stderr)
        r = run("devices", "--sysfs-root")
        self.assertEqual(r.returncode, 2)
        self.assertIn("'--sysfs-root'", r.stderr)
        r = run("report", "--bogus")
        self.assertEqual(r.returncode, 2)
        self.assertIn("'--bogus'", r.stderr)

    def test_unknown_command(self):
        r = run("frob")
        self.assertEqual(r.returncode, 2)
        self.assertIn("unknown command 'frob'", r.stderr)
        self.assertEqual(run().returncode, 2)

    def test_help_version(self):
        r = run("--help")
        self.assertEqual(r.returncode, 0)
        self.assertIn("devices", r.stdout)
        self.assertIn("report", r.stdout)
        r = run("--version")
        self.assertEqual(r.returncode, 0)
        self.assertRegex(r.stdout, r"^ibpulse-probe \d+\.\d+")

    def test_config_errors(self):
        with tempfile.NamedTemporaryFile("w", suffix=".ini") as f:
            f.write("[probe]\ntimeout = -3\n")
            f.flush()
            r = run("devices", "--config", f.name)
            self.assertEqual(r.returncode, 2)
            self.assertIn("timeout", r.stderr)
            self.assertIn(":2:", r.stderr)
        r = run("devices", "--config", "/nonexistent/probe.ini")
        self.assertEqual(r.returncode, 2)
        self.assertIn("/nonexistent/probe.ini", r.stderr)
        r = run("report", "--sysfs-root", FIXTURES)
        self.assertEqual(r.returncode, 2)
        self.assertIn("collector", r.stderr)

    def test_shipped_config_loads(self):
        ini = os.path.join(FIXTURES, "..", "..", "etc", "probe.ini")
        r = run("devices", "--config", ini, "--sysfs-root",
                os.path.join(FIXTURES, "sysfs-rxe"))
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("CA 'rxe0'", r.stdout)

    def test_print_config(self):
        r = run("print-config")
        self.assertEqual(r.returncode, 0)
        self.assertIn("[probe]", r.stdout)
        self.assertIn("sysfs_root = /sys", r.stdout)


class ReportPushTest(unittest.TestCase):
    def setUp(self):
        self.srv = Collector()
        self.thread = threading.Thread(target=self.srv.serve_forever,
                                       daemon=True)
        self.thread.start()
        self.url = "http://127.0.0.1:%d/api/v1/report" % self.srv.server_port
        self.tmp = tempfile.TemporaryDirectory()
        self.token = os.path.join(self.tmp.name, "token")
        with open(self.token, "w") as f:
            f.write("s3cret-token\n")

    def tearDown(self):
        self.srv.shutdown()
        self.srv.server_close()
        self.tmp.cleanup()

    def push(self, *extra):
        return run("report", "--once", "--collector", self.url,
                   "--token-file", self.token, "--host", "node01",
                   "--sysfs-root", os.path.join(FIXTURES, "sysfs-rxe"), *extra)

    def test_push_ok(self):
        r = self.push()
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(len(self.srv.requests), 1)
        path, headers, body = self.srv.requests[0]
        self.assertEqual(path, "/api/v1/report")
        self.assertEqual(headers.get("Authorization"), "Bearer s3cret-token")
        self.assertEqual(headers.get("Content-Type"), "application/json")
        rep = json.loads(body)
        self.assertEqual(rep["host"], "node01")
        self.assertEqual(rep["devices"][0]["name"], "rxe0")
        hw = rep["devices"][0]["ports"][0]["counters"]["hw"]
        self.assertEqual(hw["sent_pkts"], 1200)
        self.assertNotIn("s3cret", r.stderr)

    def test_push_refused_4xx_5xx(self):
        self.srv.answer = (403, b'{"error":"token is for host node02"}')
        r = self.push()
        self.assertEqual(r.returncode, 1)
        self.assertIn("HTTP 403", r.stderr)
        self.assertIn("token is for host node02", r.stderr)
        self.srv.answer = (503, b'{"error":"storage unavailable"}')
        r = self.push()
        self.assertEqual(r.returncode, 1)
        self.assertIn("HTTP 503", r.stderr)

    def test_connection_refused(self):
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
        s.close()  # nothing listens there now
        r = run("report", "--once", "--collector",
                "http://127.0.0.1:%d/api/v1/report" % port,
                "--token-file", self.token, "--host", "node01",
                "--sysfs-root", os.path.join(FIXTURES, "sysfs-rxe"))
        self.assertEqual(r.returncode, 1)
        self.assertIn("push to", r.stderr)

    def test_bad_token_file(self):
        r = self.push("--token-file", os.path.join(self.tmp.name, "missing"))
        self.assertEqual(r.returncode, 1)
        self.assertIn("token file", r.stderr)
        self.assertEqual(self.srv.requests, [])


def main():
    global PROBE, FIXTURES
    PROBE, FIXTURES = sys.argv[1], sys.argv[2]
    unittest.main(argv=sys.argv[:1], verbosity=2)


if __name__ == "__main__":
    main()
