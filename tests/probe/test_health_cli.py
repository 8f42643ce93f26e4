#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""ibpulse-probe health against the real collector, and the integrations
shipped with it.

- exit 0 healthy, 1 failed, 2 degraded, 3 unknown (a host the collector
  never heard of, a token it refuses, a bad flag); one line per reason;
  probe.ini keys work as the flags do; --npd maps to node-problem-
  detector's 0/1/2;
- the collector unreachable: the verdict from the node's own sysfs (a
  fixture tree), saying so;
- contrib/nhc/ibpulse.nhc: check_ibpulse run by bash with stand-ins for
  NHC's die and log (NHC itself is not packaged in Debian): a failed node
  dies with ibpulse's reason, degraded is logged (dies with -d), healthy
  passes, unknown is logged;
- contrib/node-problem-detector/ibpulse-health-monitor.json: a custom
  plugin monitor whose rule runs this very command line (run here), with
  the exit codes NPD reads.

usage: test_health_cli.py PROBE COLLECTOR SCHEMA_DIR FIXTURES SOURCE_ROOT
"""
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "collector"))
import test_collector as tc  # noqa: E402

PROBE = FIXTURES = SRC = None


def report(host, state=4, pcie=None):
    d = {"name": "mlx5_0",
         "ports": [{"port": 1, "state": state,
                    "phys_state": 5 if state == 4 else 3,
                    "rate_bytes_per_second": 12500000000,
                    "link_layer": "InfiniBand",
                    "counters": {"ib": {"link_downed": 0}}}]}
    if pcie:
        d["pcie"] = pcie
    return {"version": 1, "host": host, "timestamp": time.time(),
            "devices": [d]}


class HealthCliTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="ibpulse-hcli-")
        cls.c = tc.Collector(cls.tmp, "[health]\nquiet_seconds = 0\n")
        # tearDownClass does not run when this fails half-way
        cls.addClassCleanup(shutil.rmtree, cls.tmp, ignore_errors=True)
        cls.addClassCleanup(cls.c.stop, signal.SIGKILL)
        cls.c.start()
        cls.url = "http://127.0.0.1:%d/api/v1/report" % cls.c.port
        for h in ("node1", "node2", "node3"):
            with open(os.path.join(cls.tmp, h + ".token"), "w") as f:
                f.write(tc.token(h) + "\n")
        pcie = {"current_speed_gts": 8.0, "max_speed_gts": 16.0,
                "current_width": 16, "max_width": 16}
        for r in (report("node1"), report("node2", state=1),
                  report("node2"), report("node2", state=1),
                  report("node3", pcie=pcie)):
            st, _, body = cls.c.request("POST", "/api/v1/report", r,
                                        tc.token(r["host"]))
            assert st == 200, body

    def health(self, host, *extra, url=None, env=None):
        argv = [PROBE, "health", "--host", host, "--collector",
                url or self.url, "--token-file",
                os.path.join(self.tmp, host + ".token"), "--sysfs-root",
                os.path.join(FIXTURES, "sysfs-mlx5")] + list(extra)
        p = subprocess.run(argv, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True, timeout=60,
                           env=env)
        return p.returncode, p.stdout.splitlines(), p.stderr

    def test_exit_codes_and_lines(self):
        rc, out, err = self.health("node1")
        self.assertEqual(rc, 0, err)
        self.assertRegex(out[0], r"^node1: healthy since \d{4}-")
        self.assertEqual(len(out), 1, out)
        rc, out, err = self.health("node2")
        self.assertEqual(rc, 1, err)
        self.assertRegex(out[0], r"^node2: failed since ")
        self.assertEqual(out[1], "failed: mlx5_0/1 port down: DOWN, "
                         "Disabled (it was ACTIVE)")
        rc, out, _ = self.health("node3")
        self.assertEqual(rc, 2, out)
        self.assertEqual(out[1], "degraded: mlx5_0 PCIe link at 8 GT/s "
                         "x16, below its 16 GT/s x16")
        # node-problem-detector's codes
        self.assertEqual(self.health("node1", "--npd")[0], 0)
        self.assertEqual(self.health("node2", "--npd")[0], 1)
        self.assertEqual(self.health("node3", "--npd")[0], 0)

    def test_unknown(self):
        # a host the collector never heard of: 404, no fallback
        with open(os.path.join(self.tmp, "node4.token"), "w") as f:
            f.write(tc.token("node4"))
        rc, out, _ = self.health("node4")
        self.assertEqual(rc, 3)
        self.assertIn("answered 404: unknown host 'node4'", out[0])
        self.assertEqual(self.health("node4", "--npd")[0], 2)
        # another host's token: 403, unknown
        rc, out, _ = self.health("node1", "--token-file",
                                 os.path.join(self.tmp, "node2.token"))
        self.assertEqual(rc, 3)
        self.assertIn("answered 403", out[0])
        # a bad flag is unknown too (2 would read as degraded)
        rc, _, err = self.health("node1", "--bogus")
        self.assertEqual(rc, 3)
        self.assertIn("--bogus", err)
        p = subprocess.run([PROBE, "health", "--help"],
                           stdout=subprocess.PIPE, text=True)
        self.assertEqual(p.returncode, 0)
        self.assertIn("--drain-slurm", p.stdout)

    def test_probe_ini_keys(self):
        ini = os.path.join(self.tmp, "probe.ini")
        with open(ini, "w") as f:
            f.write("[probe]\nhost = node2\ncollector_url = %s\n"
                    "token_file = %s\n" % (self.url, os.path.join(
                        self.tmp, "node2.token")))
        p = subprocess.run([PROBE, "health", "--config", ini],
                           stdout=subprocess.PIPE, text=True, timeout=60)
        self.assertEqual(p.returncode, 1, p.stdout)
        self.assertTrue(p.stdout.startswith("node2: failed"))

    def test_fallback_to_sysfs(self):
        rc, out, _ = self.health("node1", url="http://127.0.0.1:1/api/v1/report")
        # sysfs-mlx5: two HCAs below their PCIe maximum, a port DOWN
        self.assertEqual(rc, 2, out)
        self.assertIn("collector unreachable: http://127.0.0.1:1/api/v1/"
                      "hosts/node1/health cannot be reached", out[0])
        self.assertIn("this node's own sysfs view only", out[0])
        self.assertIn("degraded: mlx5_2/1 not ACTIVE: DOWN, Disabled (whether "
                      "it ever was, the collector knows)", out)

    def nhc(self, host, *args):
        """check_ibpulse in bash, NHC's die and log as stand-ins that
        record their calls (NHC's contract: die RC MSG fails the check)."""
        ini = os.path.join(self.tmp, host + ".ini")
        with open(ini, "w") as f:
            f.write("[probe]\nhost = %s\ncollector_url = %s\ntoken_file = "
                    "%s\n" % (host, self.url,
                              os.path.join(self.tmp, host + ".token")))
        script = ('die() { echo "DIE $*"; }\nlog() { echo "LOG $*"; }\n'
                  'source "$1"\ncheck_ibpulse -c "$2" -p "$3" %s\n'
                  'echo "RC $?"\n' % " ".join(args))
        p = subprocess.run(["bash", "-c", script, "nhc",
                            os.path.join(SRC, "contrib", "nhc",
                                         "ibpulse.nhc"), ini, PROBE],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           text=True, timeout=60)
        self.assertEqual(p.returncode, 0, p.stderr)
        return p.stdout.splitlines()

    def test_nhc_check(self):
        self.assertEqual(self.nhc("node1"), ["RC 0"])
        self.assertEqual(self.nhc("node2"), [
            "DIE 1 ibpulse: mlx5_0/1 port down: DOWN, Disabled (it was "
            "ACTIVE)", "RC 1"])
        out = self.nhc("node3")
        self.assertEqual(out[-1], "RC 0")
        self.assertTrue(out[0].startswith("LOG check_ibpulse: ibpulse: "
                                          "degraded: mlx5_0 PCIe link"), out)
        out = self.nhc("node3", "-d")
        self.assertTrue(out[0].startswith("DIE 1 ibpulse: degraded: "), out)
        with open(os.path.join(self.tmp, "node5.token"), "w") as f:
            f.write(tc.token("node5"))
        out = self.nhc("node5")
        self.assertEqual(out[-1], "RC 0")
        self.assertTrue(out[0].startswith("LOG check_ibpulse: ibpulse: no "
                                          "verdict (3)"), out)
        out = self.nhc("node1", "-x")
        self.assertTrue(out[0].startswith("DIE 1 check_ibpulse: unknown "
                                          "option -x"), out)

    def test_npd_config(self):
        with open(os.path.join(SRC, "contrib", "node-problem-detector",
                               "ibpulse-health-monitor.json")) as f:
            cfg = json.load(f)
        self.assertEqual(cfg["plugin"], "custom")
        cond = {c["type"] for c in cfg["conditions"]}
        rule = cfg["rules"][0]
        self.assertEqual((rule["type"], rule["condition"] in cond),
                         ("permanent", True))
        self.assertEqual(os.path.basename(rule["path"]), "ibpulse-probe")
        self.assertIn("--npd", rule["args"])
        # the rule's command line, with this test's probe.ini
        args = list(rule["args"])
        ini = os.path.join(self.tmp, "node2.ini")
        with open(ini, "w") as f:
            f.write("[probe]\nhost = node2\ncollector_url = %s\ntoken_file "
                    "= %s\n" % (self.url, os.path.join(self.tmp,
                                                       "node2.token")))
        args[args.index("--config") + 1] = ini
        p = subprocess.run([PROBE] + args, stdout=subprocess.PIPE,
                           text=True, timeout=60)
        self.assertEqual(p.returncode, 1)  # NPD: NonOK
        self.assertLessEqual(len(p.stdout.splitlines()[0]),
                             cfg["pluginConfig"]["max_output_length"])


if __name__ == "__main__":
    PROBE, tc.COLLECTOR, tc.SCHEMA, FIXTURES, SRC = sys.argv[1:6]
    unittest.main(argv=sys.argv[:1], verbosity=2)
