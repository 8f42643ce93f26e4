#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The probe daemon's node condition and taint (probe/health/kube.c), as far as
this machine allows: no API server runs here, so a stand-in HTTPS server
on loopback plays one Node of it (GET, strategic-merge PATCH of the
status merging conditions by type, JSON merge PATCH of the node with a
resourceVersion check), with a CA and a service-account token of the
test's own. The daemon, the collector and the verdicts are the real ones:
the daemon reads a copy of a sysfs fixture whose port the test takes
DOWN and brings back.

- healthy: IbpulseFabricHealthy True (IbpulseHealthy), no taint; the
  node's other conditions and taints are left as they are;
- the port DOWN: False (IbpulseFailed) with the reason as message, and
  the taint ibpulse.io/fabric=failed:NoSchedule; back ACTIVE: True again,
  a new lastTransitionTime, the taint removed, the other taint kept;
- a concurrent change of the node (409 on the taint's resourceVersion) is
  read again and retried;
- every call carries the token and the right content type, and the calls
  are exactly deploy/kubernetes/validate/probe-api-calls.json (what the
  RBAC grants, tests/kubernetes);
- every Node the calls produced validates against the Kubernetes API
  schema (validate.mjs --objects, the pinned kubernetes-models).

What this cannot show: that a real API server accepts the patches and
that the RBAC suffices on a live cluster.

usage: test_kube_condition.py PROBE COLLECTOR SCHEMA_DIR FIXTURES SOURCE_ROOT WORK_DIR
"""
import copy
import http.server
import json
import os
import shutil
import signal
import ssl
import subprocess
import sys
import tempfile
import threading
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "collector"))
sys.path.insert(0, HERE)
import test_collector as tc  # noqa: E402
import test_kubernetes as tk  # noqa: E402

PROBE = FIXTURES = SRC = WORK = None
TOKEN = "eyJhbGciOiJSUzI1NiJ9.test-service-account-token.signature"
COND = "IbpulseFabricHealthy"
TAINT = "ibpulse.io/fabric"


class ApiServer(http.server.ThreadingHTTPServer):
    """One Node of an API server; every request recorded."""

    def __init__(self, cert, key):
        super().__init__(("127.0.0.1", 0), Handler)
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(cert, key)
        self.socket = ctx.wrap_socket(self.socket, server_side=True)
        self.lock = threading.Lock()
        self.calls = []
        self.nodes = []  # the Node after each change
        self.conflicts = 0  # 409s still to answer to a taint patch
        self.node = {
            "apiVersion": "v1", "kind": "Node",
            "metadata": {"name": "node1", "resourceVersion": "100",
                         "labels": {"kubernetes.io/hostname": "node1"}},
            "spec": {"taints": [{"key": "nvidia.com/gpu", "value": "true",
                                 "effect": "NoSchedule"}]},
            "status": {"conditions": [{
                "type": "Ready", "status": "True", "reason": "KubeletReady",
                "message": "kubelet is posting ready status",
                "lastHeartbeatTime": "2026-01-01T00:00:00Z",
                "lastTransitionTime": "2026-01-01T00:00:00Z"}]}}

    def bump(self):
        rv = self.node["metadata"]["resourceVersion"]
        self.node["metadata"]["resourceVersion"] = str(int(rv) + 1)
        self.nodes.append(copy.deepcopy(self.node))

    def condition(self):
        with self.lock:
            for c in self.node["status"]["conditions"]:
                if c["type"] == COND:
                    return dict(c)
        return None

    def taints(self):
        with self.lock:
            return [t["key"] for t in self.node["spec"].get("taints", [])]


class Handler(http.server.BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def reply(self, status, obj):
        if getattr(self, "call", None) is not None:
            self.call["status"] = status
        body = json.dumps(obj).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def handle_one(self, method):
        srv = self.server
        n = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(n) if n else b""
        call = {"method": method, "path": self.path,
                "ctype": self.headers.get("Content-Type"),
                "auth": self.headers.get("Authorization"),
                "body": json.loads(body) if body else None}
        self.call = call
        with srv.lock:
            srv.calls.append(call)
            if call["auth"] != "Bearer " + TOKEN:
                return self.reply(401, {"kind": "Status", "code": 401,
                                        "message": "Unauthorized"})
            if method == "GET" and self.path == "/api/v1/nodes/node1":
                return self.reply(200, srv.node)
            if method == "PATCH" and self.path == "/api/v1/nodes/node1/status":
                if call["ctype"] != "application/strategic-merge-patch+json":
                    return self.reply(415, {"message": "content type"})
                conds = srv.node["status"]["conditions"]
                for c in call["body"]["status"]["conditions"]:
                    for i, old in enumerate(conds):
                        if old["type"] == c["type"]:
                            conds[i] = dict(old, **c)
                            break
                    else:
                        conds.append(c)
                srv.bump()
                return self.reply(200, srv.node)
            if method == "PATCH" and self.path == "/api/v1/nodes/node1":
                if call["ctype"] != "application/merge-patch+json":
                    return self.reply(415, {"message": "content type"})
                rv = call["body"]["metadata"]["resourceVersion"]
                if srv.conflicts:
                    srv.conflicts -= 1
                    srv.bump()  # someone else changed the node
                if rv != srv.node["metadata"]["resourceVersion"]:
                    return self.reply(409, {"kind": "Status", "code": 409,
                                            "message": "the object has been "
                                            "modified"})
                srv.node["spec"]["taints"] = call["body"]["spec"]["taints"]
                srv.bump()
                return self.reply(200, srv.node)
        return self.reply(404, {"message": "not found"})

    def do_GET(self):
        self.handle_one("GET")

    def do_PATCH(self):
        self.handle_one("PATCH")


class KubeConditionTest(unittest.TestCase):
    def setUp(self):
        # cleanups run even when setUp fails half-way (tearDown would not)
        self.tmp = tempfile.mkdtemp(prefix="ibpulse-kube-")
        self.addCleanup(shutil.rmtree, self.tmp, ignore_errors=True)
        t = self.tmp
        cert, key = os.path.join(t, "ca.crt"), os.path.join(t, "key.pem")
        subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048",
                        "-nodes", "-keyout", key, "-out", cert, "-days", "2",
                        "-subj", "/CN=127.0.0.1", "-addext",
                        "subjectAltName=IP:127.0.0.1"],
                       check=True, capture_output=True, timeout=120)
        self.api = ApiServer(cert, key)
        self.addCleanup(self.api.server_close)
        threading.Thread(target=self.api.serve_forever, daemon=True).start()
        self.addCleanup(self.api.shutdown)
        self.c = tc.Collector(t, "[health]\nquiet_seconds = 0\n")
        self.addCleanup(self.c.stop, signal.SIGKILL)
        self.c.start()
        self.sysfs = os.path.join(t, "sysfs")
        shutil.copytree(os.path.join(FIXTURES, "sysfs-rxe"), self.sysfs,
                        symlinks=True)
        self.state = os.path.join(self.sysfs, "class", "infiniband", "rxe0",
                                  "ports", "1", "state")
        with open(os.path.join(t, "token"), "w") as f:
            f.write(tc.token("node1") + "\n")
        with open(os.path.join(t, "sa-token"), "w") as f:
            f.write(TOKEN + "\n")
        cfg = os.path.join(t, "probe.ini")
        with open(cfg, "w") as f:
            f.write("[probe]\nhost = node1\nsysfs_root = %s\n"
                    "collector_url = http://127.0.0.1:%d/api/v1/report\n"
                    "token_file = %s/token\nnetdev_stats = false\n"
                    "timeout = 5\nconnect_timeout = 1\n"
                    "[daemon]\ncounters_interval = 1\npush_interval = 1\n"
                    "responder_port = 0\nresponder_listen = 127.0.0.1\n"
                    "spool_dir = %s/spool\ncontrol_socket = %s/sock\n"
                    "[health]\nkube_condition = true\nkube_taint = true\n"
                    "health_interval = 5\nkube_api = https://127.0.0.1:%d\n"
                    "kube_token_file = %s/sa-token\nkube_ca_file = %s\n"
                    % (self.sysfs, self.c.port, t, t, t,
                       self.api.server_address[1], t, cert))
        self.log = open(os.path.join(t, "daemon.log"), "wb")
        self.addCleanup(self.log.close)
        self.daemon = subprocess.Popen([PROBE, "daemon", "--config", cfg],
                                       stdout=self.log,
                                       stderr=subprocess.STDOUT)
        self.addCleanup(self.stop_daemon)

    def stop_daemon(self):
        if self.daemon.poll() is None:
            self.daemon.send_signal(signal.SIGTERM)
            try:
                self.daemon.wait(30)
            except subprocess.TimeoutExpired:
                self.daemon.kill()
                self.daemon.wait()

    def wait(self, what, fn, timeout=60):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            self.assertIsNone(self.daemon.poll(), "the daemon exited")
            v = fn()
            if v:
                return v
            time.sleep(0.2)
        with open(os.path.join(self.tmp, "daemon.log")) as f:
            log = f.read()[-3000:]
        self.fail("timed out waiting for %s; condition %s, taints %s\n%s" %
                  (what, self.api.condition(), self.api.taints(), log))

    def status(self, want):
        c = self.api.condition()
        return c if c and c["status"] == want else None

    def set_state(self, text):
        with open(self.state, "w") as f:
            f.write(text + "\n")

    def test_condition_and_taint_follow_the_verdict(self):
        c = self.wait("condition True", lambda: self.status("True"))
        self.assertEqual(c["reason"], "IbpulseHealthy")
        self.assertEqual(self.api.taints(), ["nvidia.com/gpu"])
        first = c["lastTransitionTime"]
        # the port goes DOWN; a concurrent change meets the taint patch
        self.api.conflicts = 1
        self.set_state("1: DOWN")
        c = self.wait("condition False", lambda: self.status("False"))
        self.assertEqual(c["reason"], "IbpulseFailed")
        self.assertIn("rxe0/1 port down: DOWN", c["message"])
        self.wait("the taint", lambda: TAINT in self.api.taints())
        self.assertEqual(self.api.taints(), ["nvidia.com/gpu", TAINT])
        taint = [t for t in self.api.node["spec"]["taints"]
                 if t["key"] == TAINT][0]
        self.assertEqual((taint["value"], taint["effect"]),
                         ("failed", "NoSchedule"))
        self.assertEqual(self.api.conflicts, 0)
        self.assertTrue(any(x.get("status") == 409 for x in self.api.calls),
                        "the conflict was met")
        # back ACTIVE: True again, the taint gone, the others kept
        self.set_state("4: ACTIVE")
        c = self.wait("condition True again", lambda: self.status("True"))
        self.assertNotEqual(c["lastTransitionTime"], first)
        self.wait("the taint removed", lambda: TAINT not in self.api.taints())
        self.assertEqual(self.api.taints(), ["nvidia.com/gpu"])
        ready = [x for x in self.api.node["status"]["conditions"]
                 if x["type"] == "Ready"]
        self.assertEqual(ready[0]["reason"], "KubeletReady")
        self.check_calls()
        self.check_schema()

    def check_calls(self):
        with open(os.path.join(SRC, "deploy", "kubernetes", "validate",
                               "probe-api-calls.json")) as f:
            api = json.load(f)
        want = {tuple(c) for c in api["condition"] + api["taint"]}
        got = set()
        for x in self.api.calls:
            self.assertEqual(x["auth"], "Bearer " + TOKEN)
            res = "nodes/status" if x["path"].endswith("/status") else "nodes"
            self.assertTrue(x["path"].startswith("/api/v1/nodes/node1"), x)
            got.add((x["method"].lower(), res))
        self.assertEqual(got, want)

    def check_schema(self):
        validator = tk.npm_ci(SRC, WORK)
        objs = os.path.join(self.tmp, "nodes.json")
        with open(objs, "w") as f:
            json.dump(self.api.nodes, f)
        p = subprocess.run(["node", validator, "--objects", objs],
                           capture_output=True, text=True, timeout=120)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertIn("objects valid against their API schemas", p.stdout)


if __name__ == "__main__":
    PROBE, tc.COLLECTOR, tc.SCHEMA, FIXTURES, SRC, WORK = sys.argv[1:7]
    unittest.main(argv=sys.argv[:1], verbosity=2)
