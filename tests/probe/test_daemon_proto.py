#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The daemon's responder, spoken to in control protocol v1 and v2.

No RDMA device is needed: the daemon runs on the sysfs-mlx5 fixture tree
(mlx5_0/1 and mlx5_1/1 ACTIVE, mlx5_2/1 DOWN) and everything checked here
happens before it would open a device. With no collector, no secret and
the default responder_open = false, every peer is refused as
unauthenticated, counted by reason in the status, and the daemon said why
at start. With responder_open = true (the rest), checked: a v2 client is answered in
v2 and a v1 client in v1 (also when refused); a REQUEST naming a port the
host lacks, or one that is not ACTIVE, is refused naming the valid ones;
one naming an ACTIVE port, or none (the default), passes admission (the
refusal is then about the device, which the fixture does not have); a
paused daemon refuses as paused; an unknown version is refused in v1 with
the versions it speaks; the status counts the refusals; a peer that
connected and stays silent does not hold up SIGTERM.

usage: test_daemon_proto.py PROBE FIXTURES_DIR
"""
import os
import socket
import subprocess
import sys
import tempfile
import time
import unittest

import daemonlib

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "verbs"))
import ctrlwire  # noqa: E402
from ctrlwire import CHALLENGE, HELLO, REFUSE, REQUEST, msg, refusal  # noqa
from ctrlwire import recv_msg  # noqa: E402

PROBE = FIXTURES = None


def request_v(version, device="", port=0):
    """A REQUEST with an empty MAC: the daemon has no secret here."""
    return ctrlwire.request(version=version, device=device,
                            port=port) + bytes(32)


class Base(daemonlib.DaemonMixin):
    """A daemon on the fixture tree; OPEN: its responder_open line."""
    OPEN = "responder_open = true\n"

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        t = self.tmp.name
        self.sock = os.path.join(t, "probe.sock")
        self.port = daemonlib.free_port()
        cfg = os.path.join(t, "probe.ini")
        with open(cfg, "w") as f:
            f.write("[probe]\nhost = node01\nsysfs_root = %s\n"
                    "netdev_stats = false\n"
                    "[daemon]\ncounters_interval = 1\nduty_cycle = 1\n"
                    "responder_port = %d\nresponder_listen = 127.0.0.1\n"
                    "responder_device = mlx5_1\nresponder_ib_port = 1\n"
                    "test_timeout = 30\nspool_dir = %s\n"
                    "control_socket = %s\n%s"
                    % (os.path.join(FIXTURES, "sysfs-mlx5"), self.port,
                       os.path.join(t, "spool"), self.sock, self.OPEN))
        self.log = open(os.path.join(t, "daemon.log"), "w+")
        self.proc = subprocess.Popen([PROBE, "daemon", "--config", cfg],
                                     stdout=subprocess.DEVNULL,
                                     stderr=self.log)
        self.wait_control()
        # The ports reach the scheduler with the first counters read.
        self.wait_for(lambda: len(self.ctl("status").get("ports", [])) >= 3,
                      "three ports in the status")

    def tearDown(self):
        self.stop_daemon()
        self.tmp.cleanup()

    def ask(self, version, device="", port=0):
        """HELLO, CHALLENGE, REQUEST: the answer's (version, code, why)."""
        with socket.create_connection(("127.0.0.1", self.port),
                                      timeout=30) as s:
            s.settimeout(30)
            s.sendall(msg(HELLO, os.urandom(16), version))
            v, mtype, p = recv_msg(s)
            self.assertEqual((v, mtype), (version, CHALLENGE), p)
            self.assertEqual(p[16], 0, "no secret: auth_required 0")
            s.sendall(msg(REQUEST, request_v(version, device, port), version))
            v, mtype, p = recv_msg(s)
        self.assertEqual(mtype, REFUSE, "no device here: expected REFUSE")
        return (v,) + refusal(p)


class Proto(Base, unittest.TestCase):
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
            s.sendall(msg(HELLO, os.urandom(16), 4))
            v, mtype, p = recv_msg(s)
        self.assertEqual((v, mtype), (1, REFUSE))
        self.assertIn("version 4; this responder speaks 1..3", refusal(p)[1])

    def test_sigterm_with_a_silent_peer(self):
        # A peer that connected and says nothing holds a responder thread
        # in the handshake (each step may wait test_timeout = 30 s); the
        # stop flag ends that wait, so SIGTERM takes well under 30 s.
        with socket.create_connection(("127.0.0.1", self.port),
                                      timeout=30) as s:
            self.wait_for(lambda: self.ctl("status") is not None, "status")
            # Not for a pass, for a chance to fail: let the responder
            # accept the connection and start waiting for HELLO.
            time.sleep(0.3)
            t0 = time.monotonic()
            self.proc.terminate()
            self.proc.wait(timeout=60)
            took = time.monotonic() - t0
            s.close()
        self.assertEqual(self.proc.returncode, 0, self.daemon_log())
        self.assertLess(took, 10, "SIGTERM took %.1f s" % took)


class Closed(Base, unittest.TestCase):
    """The default: no collector, no secret, responder_open unset."""
    OPEN = ""

    def test_refused_and_counted(self):
        self.assertIn("every peer will be refused", self.daemon_log())
        for version in (1, 2):
            for device, port in (("mlx5_0", 1), ("", 0)):
                v, code, why = self.ask(version, device, port)
                self.assertEqual(v, version)
                self.assertEqual(code, -13)  # EACCES
                self.assertIn("not admitted", why)
                self.assertNotIn("device is not usable", why)
        st = self.ctl("status")
        self.assertEqual(st["responder_tests"], 0)
        self.assertEqual(st["responder_refused"], 4)
        self.assertEqual(st["responder_refused_by"]["unauthenticated"], 4)
        # Logged once a minute, not once per peer.
        self.assertEqual(self.daemon_log().count("refused a peer"), 1,
                         self.daemon_log())


if __name__ == "__main__":
    PROBE, FIXTURES = sys.argv[1], sys.argv[2]
    daemonlib.PROBE = PROBE
    unittest.main(argv=sys.argv[:1], verbosity=2)
