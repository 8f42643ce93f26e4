#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A bad configuration stops each of the three programs at its first bad
line, naming the file, the line, the key, the value and the range (issue
22): the shared loader (common/conf.c) used to read on after an error and
report the last line's result ("FILE:2: syntax error" for a bad key on
line 2 followed by a good line; line 2's number with line 4's message). A
key set twice in a section names both lines; a configured path that does
not exist stops the daemon that needs it (the probe's sysfs_root and
ca_file, the exporter's db folder) with a message naming it.

usage: test_conf_errors.py PROBE COLLECTOR EXPORTER
"""
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

PROBE = COLLECTOR = EXPORTER = None


class ConfErrors(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="ibpulse-conf-errors-")

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def ini(self, text):
        path = os.path.join(self.tmp, "x.ini")
        with open(path, "w") as f:
            f.write(text)
        return path

    def programs(self):
        """(name, section, argv before --config) of each program."""
        return [("collector", "collector", [COLLECTOR, "serve"]),
                ("exporter", "exporter", [EXPORTER]),
                ("probe", "daemon", [PROBE, "daemon"])]

    def load(self, argv, text):
        path = self.ini(text)
        r = subprocess.run(argv + ["--config", path, "--print-config"],
                           capture_output=True, text=True, timeout=60)
        return r, path

    def test_first_bad_line_is_named(self):
        cases = {  # (lines after the section, key of the int, its range)
            "collector": ("threads", "[1, 256]"),
            "exporter": ("threads", "[1, 256]"),
            "probe": ("counters_interval", "[1, 3600]"),
        }
        for name, section, argv in self.programs():
            key, rng = cases[name]
            with self.subTest(program=name, case="unknown key, then good"):
                r, path = self.load(argv, "[%s]\nbogus_key = 1\n%s = 2\n"
                                    % (section, key))
                self.assertEqual(r.returncode, 2, r.stderr)
                self.assertIn("%s:2: unknown key '%s.bogus_key' (= '1')"
                              % (path, section), r.stderr)
            with self.subTest(program=name, case="bad value, then another"):
                r, path = self.load(argv, "[%s]\n%s = 0\n\n%s = x\n"
                                    % (section, key, key + "_nope"))
                self.assertEqual(r.returncode, 2, r.stderr)
                self.assertIn("%s:2: %s: '0' is not an integer in %s"
                              % (path, key, rng), r.stderr)
                self.assertNotIn(":4:", r.stderr)
            with self.subTest(program=name, case="duplicate key"):
                r, path = self.load(argv, "[%s]\n%s = 2\n# x\n%s = 3\n"
                                    % (section, key, key))
                self.assertEqual(r.returncode, 2, r.stderr)
                self.assertIn("%s:4: %s: set again in [%s] (first on line 2)"
                              % (path, key, section), r.stderr)

    def daemon(self, text):
        path = self.ini(text + "[daemon]\nspool_dir = %s/spool\n"
                        "control_socket = %s/ctl.sock\nresponder_port = 0\n"
                        % (self.tmp, self.tmp))
        return subprocess.run([PROBE, "daemon", "--config", path],
                              capture_output=True, text=True, timeout=60)

    def test_probe_daemon_paths(self):
        missing = os.path.join(self.tmp, "sys-typo")
        r = self.daemon("[probe]\nsysfs_root = %s\n" % missing)
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertIn("sysfs_root %s: No such file or directory" % missing,
                      r.stderr)
        self.assertNotIn("daemon started", r.stderr)
        r = subprocess.run([PROBE, "devices", "--sysfs-root", missing],
                           capture_output=True, text=True, timeout=60)
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("sysfs_root %s" % missing, r.stderr)
        ca = os.path.join(self.tmp, "ca-typo.pem")
        r = self.daemon("[probe]\nsysfs_root = %s\ncollector_url = "
                        "http://127.0.0.1:9/api/v1/report\nca_file = %s\n"
                        % (self.tmp, ca))
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertIn("ca_file %s: No such file or directory" % ca, r.stderr)

    def test_exporter_db_folder(self):
        db = os.path.join(self.tmp, "no-such-dir", "ibpulse.db")
        path = self.ini("[exporter]\nport = 0\ndb = %s\n" % db)
        r = subprocess.run([EXPORTER, "--config", path], capture_output=True,
                           text=True, timeout=60)
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertIn("db %s: its folder" % db, r.stderr)


if __name__ == "__main__":
    PROBE, COLLECTOR, EXPORTER = sys.argv[1:4]
    unittest.main(argv=sys.argv[:1], verbosity=2)
