#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The daemon's responder, spoken to in control protocol v1 and v2.

No RDMA device is needed: the daemon runs on the sysfs-mlx5 fixture tree
(mlx5_0/1 and mlx5_1/1 ACTIVE, mlx5_2/1 DOWN) and everything checked here
happens before it would open a device. Checked: a v2 client is answered in
v2 and a v1 client in v1 (also when refused); a REQUEST naming a port the
host lacks, or one that is not ACTIVE, is refused naming the valid ones;
one naming an ACTIVE port, or none (the default), passes admission (the
refusal is then about the device, which the fixture does not have); a
paused daemon refuses as paused; an unknown version is refused in v1 with
the versions it speaks; the status counts the refusals.

usage: test_daemon_proto.py PROBE FIXTURES_DIR
"""
import json
import os
import socket
import struct
import subprocess
import sys
import tempfile
import time
import unittest

PROBE = FIXTURES = None
MAGIC = 0x49425056
HELLO, CHALLENGE, REQUEST, ACCEPT, REFUSE = 1, 2, 3, 4, 5


def msg(mtype, payload, version):
    return struct.pack(">IHHI", MAGIC, version, mtype, len(payload)) + payload


def recv_exact(s, n):
    data = b""
    while len(data) < n:
        chunk = s.recv(n - len(data))
        if not chunk:
            raise EOFError("connection closed after %d bytes" % len(data))
        data += chunk
    return data


def recv_msg(s):
    magic, version, mtype, length = struct.unpack(">IHHI", recv_exact(s, 12))
    assert magic == MAGIC, magic
    return version, mtype, recv_exact(s, length)


def refusal(payload):
    code, n = struct.unpack(">iH", payload[:6])
    return code, payload[6:6 + n].decode()


def request(version, device="", port=0):
    """A write_lat REQUEST; v2 names the responder's device and port."""
    ep = struct.pack(">H16sBBBHHBBBIQQH", 0, bytes(10) + b"\xff\xff" +
                     bytes([10, 0, 2, 15]), 2, 2, 1, 0xffff, 0, 3, 0, 16,
                     0, 0, 0, 0)
    body = struct.pack(">HHHIIIIIBB", 4, 0, 1, 2, 1, 100, 0, 0, 0, 0) + ep
    if version >= 2:
        name = device.encode()
        body += struct.pack(">H", len(name)) + name + bytes([port])
    return body + bytes(32)  # no secret: the MAC is not checked


class Proto(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        t = self.tmp.name
        self.sock = os.path.join(t, "probe.sock")
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        self.port = s.getsockname()[1]
        s.close()
        cfg = os.path.join(t, "probe.ini")
        with open(cfg, "w") as f:
            f.write("[probe]\nhost = node01\nsysfs_root = %s\n"
                    "netdev_stats = false\n"
                    "[daemon]\ncounters_interval = 1\nduty_cycle = 1\n"
                    "responder_port = %d\nresponder_listen = 127.0.0.1\n"
                    "responder_device = mlx5_1\nresponder_ib_port = 1\n"
                    "test_timeout = 2\nspool_dir = %s\n"
                    "control_socket = %s\n"
                    % (os.path.join(FIXTURES, "sysfs-mlx5"), self.port,
                       os.path.join(t, "spool"), self.sock))
        self.log = open(os.path.join(t, "daemon.log"), "w+")
        self.proc = subprocess.Popen([PROBE, "daemon", "--config", cfg],
                                     stdout=subprocess.DEVNULL,
                                     stderr=self.log)
        self.wait_for(lambda: os.path.exists(self.sock), "control socket")
        # The ports reach the scheduler with the first counters read.
        self.wait_for(lambda: len(self.ctl("status").get("ports", [])) >= 3,
                      "three ports in the status")

    def tearDown(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        self.log.close()
        self.tmp.cleanup()

    def daemon_log(self):
        self.log.flush()
        self.log.seek(0)
        return self.log.read()

    def wait_for(self, cond, what, timeout=60):
        deadline = time.monotonic() + timeout
        while not cond():
            if self.proc.poll() is not None:
                self.fail("daemon exited waiting for %s:\n%s"
                          % (what, self.daemon_log()))
            if time.monotonic() > deadline:
                self.fail("timed out waiting for %s:\n%s"
                          % (what, self.daemon_log()))
            time.sleep(0.05)

    def ctl(self, cmd):
        out = subprocess.run([PROBE, cmd, "--socket", self.sock],
                             capture_output=True, text=True, timeout=30)
        self.assertEqual(out.returncode, 0, out.stderr)
        return json.loads(out.stdout)

    def ask(self, version, device="", port=0):
        """HELLO, CHALLENGE, REQUEST: the answer's (version, code, why)."""
        with socket.create_connection(("127.0.0.1", self.port),
                                      timeout=30) as s:
            s.settimeout(30)
            s.sendall(msg(HELLO, os.urandom(16), version))
            v, mtype, p = recv_msg(s)
            self.assertEqual((v, mtype), (version, CHALLENGE), p)
            self.assertEqual(p[16], 0, "no secret: auth_required 0")
            s.sendall(msg(REQUEST, request(version, device, port), version))
            v, mtype, p = recv_msg(s)
        self.assertEqual(mtype, REFUSE, "no device here: expected REFUSE")
        return (v,) + refusal(p)

    def test_versions_and_ports(self):
        v, code, why = self.ask(2, "mlx5_9", 1)
        self.assertEqual(v, 2)
        self.assertIn("no ACTIVE port mlx5_9/1", why)
        self.assertIn("valid: mlx5_0/1, mlx5_1/1", why)
        self.assertEqual(code, -19)  # ENODEV
        v, code, why = self.ask(2, "mlx5_0", 2)
        self.assertIn("mlx5_0/2", why)
        self.assertIn("valid: mlx5_0/1, mlx5_1/1", why)
        v, code, why = self.ask(2, "mlx5_2", 1)  # DOWN
        self.assertIn("no ACTIVE port mlx5_2/1", why)
        self.assertNotIn("mlx5_2/1,", why.split("valid:")[1])
        # Admitted: the refusal comes later, from the device step.
        for device, port in (("mlx5_0", 1), ("mlx5_0", 0), ("", 0)):
            v, code, why = self.ask(2, device, port)
            self.assertEqual(v, 2)
            self.assertIn("device is not usable", why, (device, port))
        # A v1 client: no port in its REQUEST, answered in v1.
        v, code, why = self.ask(1)
        self.assertEqual(v, 1)
        self.assertIn("device is not usable", why)
        st = self.ctl("status")
        self.assertGreaterEqual(st["responder_refused"], 3)
        self.assertGreaterEqual(st["responder_tests"], 4)

    def test_paused_and_unknown_version(self):
        self.ctl("pause")
        for version in (1, 2):
            v, code, why = self.ask(version, "mlx5_0", 1)
            self.assertEqual(v, version)
            self.assertIn("paused", why)
        self.ctl("resume")
        v, code, why = self.ask(2, "mlx5_0", 1)
        self.assertIn("device is not usable", why)
        with socket.create_connection(("127.0.0.1", self.port),
                                      timeout=30) as s:
            s.settimeout(30)
            s.sendall(msg(HELLO, os.urandom(16), 3))
            v, mtype, p = recv_msg(s)
        self.assertEqual((v, mtype), (1, REFUSE))
        self.assertIn("version 3; this responder speaks 1..2", refusal(p)[1])


if __name__ == "__main__":
    PROBE, FIXTURES = sys.argv[1], sys.argv[2]
    unittest.main(argv=sys.argv[:1], verbosity=2)
