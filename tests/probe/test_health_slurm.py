#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""ibpulse-probe health as Slurm's HealthCheckProgram, for real: Debian's
slurm-wlm (slurmctld and one slurmd) and munge, started here on this one
machine with a slurm.conf of the test's own, slurmd running
`ibpulse-probe health --drain-slurm` every 2 seconds against the real
collector, which gets node1's counter reports from the test.

- node1's port goes DOWN at the collector: slurmd's health check drains
  node1 with ibpulse's reason ("ibpulse: mlx5_0/1 port down: ...");
- the port comes back: once the collector's quiet window has passed the
  verdict is healthy and the health check resumes node1: IDLE again;
- an operator drains node1 ("operator: bad DIMM"), its port fails and
  recovers: the health check leaves the operator's drain alone, both
  ways;
- the collector stopped: the health check falls back to the node's own
  sysfs view, says so, and does not resume a node ibpulse drained.

Every daemon is ended by its pid on every path. Needs root (or a user
munged and slurmd accept), slurm-wlm and munge: scripts/install-deps.sh.

usage: test_health_slurm.py PROBE COLLECTOR SCHEMA_DIR FIXTURES
"""
import getpass
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "collector"))
import test_collector as tc  # noqa: E402

PROBE = FIXTURES = None
QUIET = 2
TOOLS = ("munged", "slurmctld", "slurmd", "scontrol")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def report(state=4):
    return {"version": 1, "host": "node1", "timestamp": time.time(),
            "devices": [{"name": "mlx5_0",
                         "ports": [{"port": 1, "state": state,
                                    "phys_state": 5 if state == 4 else 3,
                                    "rate_bytes_per_second": 12500000000,
                                    "link_layer": "InfiniBand",
                                    "counters": {"ib": {"link_downed": 0}}}]}]}


class Slurm:
    """munged, slurmctld and slurmd in @tmp, foreground, ended by pid."""

    def __init__(self, tmp, health_program):
        self.tmp = tmp
        self.procs = []
        self.conf = os.path.join(tmp, "slurm.conf")
        self.env = dict(os.environ, SLURM_CONF=self.conf)
        user = getpass.getuser()
        for d in ("state", "spool"):
            os.mkdir(os.path.join(tmp, d))
        key = os.path.join(tmp, "munge.key")
        with open(key, "wb") as f:
            f.write(os.urandom(1024))
        os.chmod(key, 0o400)
        self.socket = os.path.join(tmp, "munge.socket")
        with open(self.conf, "w") as f:
            f.write("\n".join([
                "ClusterName=ibpulse-test",
                "SlurmctldHost=localhost(127.0.0.1)",
                "SlurmUser=%s" % user, "SlurmdUser=%s" % user,
                "AuthType=auth/munge", "CredType=cred/munge",
                "AuthInfo=socket=%s" % self.socket,
                "StateSaveLocation=%s/state" % tmp,
                "SlurmdSpoolDir=%s/spool" % tmp,
                "SlurmctldPidFile=%s/slurmctld.pid" % tmp,
                "SlurmdPidFile=%s/slurmd.pid" % tmp,
                "SlurmctldPort=%d" % free_port(),
                "SlurmdPort=%d" % free_port(),
                "SlurmctldLogFile=%s/slurmctld.log" % tmp,
                "SlurmdLogFile=%s/slurmd.log" % tmp,
                "ProctrackType=proctrack/linuxproc", "TaskPlugin=task/none",
                "SchedulerType=sched/builtin", "SelectType=select/linear",
                "MpiDefault=none", "JobCompType=jobcomp/none",
                "AccountingStorageType=accounting_storage/none",
                "ReturnToService=2",
                "HealthCheckProgram=%s" % health_program,
                "HealthCheckInterval=2", "HealthCheckNodeState=ANY",
                "NodeName=node1 NodeHostname=localhost NodeAddr=127.0.0.1 "
                "CPUs=1 RealMemory=100 State=UNKNOWN",
                "PartitionName=debug Nodes=node1 Default=YES State=UP", ""]))
        self.munge_key = key

    def start(self):
        t = self.tmp
        self._start("munged", ["munged", "-F", "--force",
                               "--key-file=" + self.munge_key,
                               "--socket=" + self.socket,
                               "--pid-file=%s/munged.pid" % t,
                               "--log-file=%s/munged.log" % t,
                               "--seed-file=%s/munge.seed" % t])
        self.wait("munged's socket", lambda: os.path.exists(self.socket))
        self._start("slurmctld", ["slurmctld", "-D", "-f", self.conf])
        self.wait("slurmctld", lambda: self.scontrol("ping").returncode == 0)
        self._start("slurmd", ["slurmd", "-D", "-N", "node1", "-f",
                               self.conf])

    def _start(self, name, argv):
        log = open(os.path.join(self.tmp, name + ".out"), "wb")
        p = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT,
                             stdin=subprocess.DEVNULL, env=self.env)
        log.close()
        p.name = name
        self.procs.append(p)

    def stop(self):
        for p in reversed(self.procs):
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
                try:
                    p.wait(10)
                except subprocess.TimeoutExpired:
                    p.kill()
                    p.wait()

    def scontrol(self, *args):
        return subprocess.run(["scontrol"] + list(args), env=self.env,
                              stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True,
                              timeout=30)

    def node(self):
        """(State, Reason) of node1."""
        out = self.scontrol("show", "node", "node1", "-o").stdout
        state = out.split("State=", 1)[1].split()[0] if "State=" in out else ""
        reason = out.split("Reason=", 1)[1].strip() if "Reason=" in out else ""
        return state, reason

    def wait(self, what, fn, timeout=45):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for p in self.procs:
                if p.poll() is not None:
                    raise AssertionError("%s exited %s: %s" % (
                        p.name, p.returncode, self.logs()))
            v = fn()
            if v:
                return v
            time.sleep(0.2)
        raise AssertionError("timed out waiting for %s (node1: %s)\n%s" % (
            what, self.node(), self.logs()))

    def logs(self):
        out = []
        for name in ("health.out", "slurmd.log", "slurmctld.log",
                     "munged.log"):
            path = os.path.join(self.tmp, name)
            if os.path.exists(path):
                with open(path, errors="replace") as f:
                    out.append("---- %s ----\n%s" % (name, f.read()[-3000:]))
        return "\n".join(out)


class SlurmHealthTest(unittest.TestCase):
    def setUp(self):
        missing = [t for t in TOOLS if not shutil.which(t)]
        self.assertEqual(missing, [], "install slurm-wlm and munge "
                         "(scripts/install-deps.sh)")
        # cleanups run even when setUp fails half-way (tearDown would not)
        self.tmp = tempfile.mkdtemp(prefix="ibpulse-slurm-")
        self.addCleanup(shutil.rmtree, self.tmp, ignore_errors=True)
        os.chmod(self.tmp, 0o755)
        self.c = tc.Collector(self.tmp, "[health]\nquiet_seconds = %d\n"
                              % QUIET)
        self.addCleanup(self.c.stop, signal.SIGKILL)
        self.c.start()
        token = os.path.join(self.tmp, "node1.token")
        with open(token, "w") as f:
            f.write(tc.token("node1") + "\n")
        ini = os.path.join(self.tmp, "probe.ini")
        with open(ini, "w") as f:
            f.write("[probe]\nhost = node1\ncollector_url = "
                    "http://127.0.0.1:%d/api/v1/report\ntoken_file = %s\n"
                    "sysfs_root = %s\ntimeout = 5\n"
                    % (self.c.port, token,
                       os.path.join(FIXTURES, "sysfs-mlx5")))
        self.program = os.path.join(self.tmp, "ibpulse-health")
        self.out = os.path.join(self.tmp, "health.out")
        with open(self.program, "w") as f:
            # what an operator's HealthCheckProgram would be: slurmd
            # gives it no SLURM_CONF, so the wrapper does
            f.write("#!/bin/sh\nexport SLURM_CONF=%s\n"
                    "echo \"== $(date +%%T) SLURMD_NODENAME=$SLURMD_NODENAME\" >> %s\n"
                    "exec %s health --config %s --drain-slurm >> %s 2>&1\n"
                    % (os.path.join(self.tmp, "slurm.conf"), self.out,
                       PROBE, ini, self.out))
        os.chmod(self.program, 0o755)
        self.push(report())
        self.s = Slurm(self.tmp, self.program)
        self.addCleanup(self.s.stop)
        self.s.start()

    def said(self, text):
        with open(self.out) as f:
            return text in f.read()

    def push(self, r):
        st, _, body = self.c.request("POST", "/api/v1/report", r,
                                     tc.token("node1"))
        self.assertEqual(st, 200, body)

    def idle(self):
        state, _ = self.s.node()
        return state == "IDLE"

    def drained_by_ibpulse(self):
        state, reason = self.s.node()
        return "DRAIN" in state and reason.startswith("ibpulse: ")

    def test_drain_resume_and_operator_drains(self):
        s = self.s
        s.wait("node1 IDLE", self.idle)
        # the port goes DOWN: drained with ibpulse's reason
        self.push(report(state=1))
        s.wait("node1 drained by ibpulse", self.drained_by_ibpulse)
        state, reason = s.node()
        self.assertIn("mlx5_0/1 port down: DOWN, Disabled", reason)
        with open(self.out) as f:
            text = f.read()
        self.assertIn("SLURMD_NODENAME=node1", text)
        self.assertIn("node1: failed since", text)
        self.assertIn("slurm: drained node1: ibpulse: mlx5_0/1 port down",
                      text)
        # back ACTIVE: still drained within the quiet window, then IDLE
        self.push(report())
        t0 = time.monotonic()
        s.wait("node1 resumed", self.idle)
        self.assertGreaterEqual(time.monotonic() - t0, QUIET - 0.5)
        with open(self.out) as f:
            self.assertIn("slurm: resumed node1", f.read())
        # an operator's drain is left alone, failed or healthy
        r = s.scontrol("update", "nodename=node1", "state=drain",
                       "reason=operator: bad DIMM")
        self.assertEqual(r.returncode, 0, r.stdout)
        self.push(report(state=1))
        s.wait("the health check to see the failure",
               lambda: self.said("left alone"))
        self.assertEqual(s.node()[1].split(" [")[0], "operator: bad DIMM")
        self.push(report())
        time.sleep(QUIET + 5)  # healthy again, two health checks at least
        state, reason = s.node()
        self.assertIn("DRAIN", state)
        self.assertEqual(reason.split(" [")[0], "operator: bad DIMM")
        r = s.scontrol("update", "nodename=node1", "state=resume")
        self.assertEqual(r.returncode, 0, r.stdout)
        s.wait("node1 IDLE after the operator's resume", self.idle)
        # the collector goes away while node1 is drained by ibpulse: the
        # fallback says so and does not resume it
        self.push(report(state=1))
        s.wait("node1 drained by ibpulse again", self.drained_by_ibpulse)
        self.c.stop(signal.SIGKILL)
        s.wait("a fallback health check",
               lambda: self.said("collector unreachable"))
        time.sleep(5)
        self.assertTrue(self.drained_by_ibpulse(), s.node())
        self.assertTrue(self.said("this node's own sysfs view only"))


if __name__ == "__main__":
    PROBE, tc.COLLECTOR, tc.SCHEMA, FIXTURES = sys.argv[1:5]
    unittest.main(argv=sys.argv[:1], verbosity=2)
