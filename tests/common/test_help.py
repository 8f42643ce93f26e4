#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Every command of the three programs answers --help and names a bad flag.

For each command of ibpulse-probe (taken from its own top-level --help, so
a new command is covered without editing this file), ibpulse-collector
(serve, retire) and ibpulse-exporter: `--help` and `-h` exit 0 with the
usage on stdout and nothing on stderr, and `--no-such-flag` exits 2
naming the flag. These are the shared skeleton's (common/cli.h) promises.

usage: test_help.py PROBE COLLECTOR EXPORTER
"""
import re
import subprocess
import sys
import unittest

PROBE = COLLECTOR = EXPORTER = None


def run(*argv):
    return subprocess.run(list(argv), capture_output=True, text=True,
                          timeout=60)


def probe_commands():
    top = run(PROBE, "--help")
    assert top.returncode == 0, top.stderr
    return re.findall(r"^  ibpulse-probe ([a-z-]+)", top.stdout, re.M)


# A bad command line exits 2, but for `health`, whose 2 means degraded to
# Slurm, NHC and node-problem-detector: 3, unknown (docs/health.md).
USAGE_EXIT = {"ibpulse-probe health": 3}


class Help(unittest.TestCase):
    def check(self, argv, name):
        for flag in ("--help", "-h"):
            r = run(*argv, flag)
            self.assertEqual(r.returncode, 0, (argv, flag, r.stderr))
            self.assertEqual(r.stderr, "", (argv, flag))
            self.assertTrue(r.stdout.startswith("usage: " + name),
                            (argv, flag, r.stdout[:200]))
            self.assertIn("--help", r.stdout)
        r = run(*argv, "--no-such-flag")
        self.assertEqual(r.returncode, USAGE_EXIT.get(name, 2),
                         (argv, r.stdout))
        self.assertIn("'--no-such-flag'", r.stderr)
        self.assertIn("usage: " + name, r.stderr)

    def test_probe_commands(self):
        cmds = probe_commands()
        for want in ("devices", "report", "print-config", "run", "serve",
                     "daemon", "metrics", "fabric", "pause", "resume",
                     "status"):
            self.assertIn(want, cmds)
        for c in cmds:
            with self.subTest(command=c):
                self.check([PROBE, c], "ibpulse-probe " + c)

    def test_probe_lists_settings_keys(self):
        r = run(PROBE, "daemon", "--help")
        self.assertRegex(r.stdout, r"\n  spool_max_age +.*default 604800; "
                                   r"60 to 31536000\)")
        r = run(PROBE, "run", "--help")
        self.assertIn("TEST", r.stdout)
        self.assertIn("ud_send_lat", r.stdout)

    def test_collector_commands(self):
        for c in ("serve", "retire"):
            with self.subTest(command=c):
                self.check([COLLECTOR, c], "ibpulse-collector " + c)
        r = run(COLLECTOR, "--help")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("ibpulse-collector retire HOST", r.stdout)

    def test_exporter(self):
        self.check([EXPORTER], "ibpulse-exporter")


if __name__ == "__main__":
    PROBE, COLLECTOR, EXPORTER = sys.argv[1:4]
    unittest.main(argv=sys.argv[:1], verbosity=2)
