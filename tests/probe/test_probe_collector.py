#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The real probe pushing to the real collector.

`ibpulse-probe report --once` on fixture trees against ibpulse-collector on
an ephemeral loopback port with a temporary database: what the probe reads
is what lands in SQLite (saturated counters raw, GID and P_Key tables, the
degraded PCIe link); a report from a garbage tree is still accepted; a
foreign host or a wrong token is refused and stores nothing.

usage: test_probe_collector.py PROBE COLLECTOR SCHEMA_DIR FIXTURES_DIR
"""
import os
import sqlite3
import subprocess
import sys
import tempfile
import time
import unittest

PROBE = COLLECTOR = SCHEMA = FIXTURES = None
TOKEN = "tok-node01-0123456789abcdef"


class ProbeToCollector(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        t = self.tmp.name
        self.db = os.path.join(t, "ibpulse.db")
        cfg = os.path.join(t, "collector.ini")
        port_file = os.path.join(t, "port")
        with open(cfg, "w") as f:
            f.write("[collector]\nlisten = 127.0.0.1\nport = 0\ndb = %s\n"
                    "schema_dir = %s\n[tokens]\nnode01 = %s\n"
                    % (self.db, SCHEMA, TOKEN))
        self.token = os.path.join(t, "token")
        with open(self.token, "w") as f:
            f.write(TOKEN + "\n")
        self.log = open(os.path.join(t, "collector.log"), "w+")
        self.proc = subprocess.Popen(
            [COLLECTOR, "serve", "--config", cfg, "--port-file", port_file],
            stdout=subprocess.DEVNULL, stderr=self.log)
        deadline = time.monotonic() + 60
        while not os.path.exists(port_file) or not os.path.getsize(port_file):
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.log.seek(0)
                self.fail("collector did not start: " + self.log.read())
            time.sleep(0.05)
        with open(port_file) as f:
            self.url = "http://127.0.0.1:%d/api/v1/report" % int(f.read())

    def tearDown(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log.close()
        self.tmp.cleanup()

    def push(self, tree, host="node01", token=None):
        return subprocess.run(
            [PROBE, "report", "--once", "--collector", self.url,
             "--token-file", token or self.token, "--host", host,
             "--sysfs-root", os.path.join(FIXTURES, tree)],
            capture_output=True, text=True, timeout=120)

    def query(self, sql, *args):
        db = sqlite3.connect("file:%s?mode=ro" % self.db, uri=True)
        try:
            return db.execute(sql, args).fetchall()
        finally:
            db.close()

    def series(self, dev, source, name):
        return self.query(
            "SELECT s.value FROM series s JOIN port p ON p.id = s.port_id "
            "JOIN device d ON d.id = p.device_id "
            "WHERE d.name = ? AND p.port = 1 AND s.source = ? AND s.name = ?",
            dev, source, name)

    def test_fixture_reports_land_in_sqlite(self):
        r = self.push("sysfs-mlx5")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(self.series("mlx5_0", 0, "port_xmit_data"),
                         [(123456789012,)])
        self.assertEqual(self.series("mlx5_2", 0, "symbol_error"), [(65535,)])
        self.assertEqual(self.series("mlx5_2", 0, "link_downed"), [(255,)])
        self.assertEqual(self.series("mlx5_1", 2, "carrier_changes"), [(3,)])
        self.assertEqual(self.series("mlx5_0", 1, "lifespan"), [(12,)])
        gids = self.query(
            "SELECT g.idx, g.type, g.netdev FROM port_gid g JOIN port p "
            "ON p.id = g.port_id JOIN device d ON d.id = p.device_id "
            "WHERE d.name = 'mlx5_1' ORDER BY g.idx")
        self.assertEqual(gids, [(0, "IB/RoCE v1", "ens2f0"),
                                (1, "RoCE v2", "ens2f0"),
                                (2, "IB/RoCE v1", "ens2f0"),
                                (3, "RoCE v2", "ens2f0")])
        pkeys = self.query(
            "SELECT k.idx, k.pkey FROM port_pkey k JOIN port p "
            "ON p.id = k.port_id JOIN device d ON d.id = p.device_id "
            "WHERE d.name = 'mlx5_0' ORDER BY k.idx")
        self.assertEqual(pkeys, [(0, 0xffff), (1, 0x8001), (2, 0x0002)])
        self.assertEqual(self.query("SELECT pcie_address FROM device WHERE "
                                    "name = 'mlx5_1'"), [("0000:5e:00.0",)])
        r = self.push("sysfs-garbage")
        self.assertEqual(r.returncode, 0, r.stderr)
        r = self.push("sysfs-rxe")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(self.series("rxe0", 1, "sent_pkts"), [(1200,)])

    def test_refusals_store_nothing(self):
        r = self.push("sysfs-rxe", host="node02")
        self.assertEqual(r.returncode, 1)
        self.assertIn("HTTP 403", r.stderr)
        bad = os.path.join(self.tmp.name, "bad")
        with open(bad, "w") as f:
            f.write("not-the-token-0123456789\n")
        r = self.push("sysfs-rxe", token=bad)
        self.assertEqual(r.returncode, 1)
        self.assertIn("HTTP 401", r.stderr)
        self.assertEqual(self.query("SELECT count(*) FROM series"), [(0,)])


def main():
    global PROBE, COLLECTOR, SCHEMA, FIXTURES
    PROBE, COLLECTOR, SCHEMA, FIXTURES = sys.argv[1:5]
    unittest.main(argv=sys.argv[:1], verbosity=2)


if __name__ == "__main__":
    main()
