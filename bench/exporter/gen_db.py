#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Generate an ibpulse database for the exporter benchmark.

HOSTS hosts x PORTS ports (PORTS/2 two-port mlx5 devices) x 62 counters
(the 21 of counters/ and 41 of hw_counters/ an mlx5 port has), built from
schema/*.sql with tests/exporter/ibpdb.py, every host fresh, with the
change markers the collector sets (schema 008).

usage: gen_db.py DB SCHEMA_DIR [HOSTS [PORTS]]
"""
import os
import random
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "tests", "exporter"))
import ibpdb  # noqa: E402


def main():
    path, schema_dir = sys.argv[1], sys.argv[2]
    hosts = int(sys.argv[3]) if len(sys.argv) > 3 else 1000
    ports = int(sys.argv[4]) if len(sys.argv) > 4 else 8
    if os.path.exists(path):
        os.unlink(path)
    rnd = random.Random(1)
    db = ibpdb.create(path, schema_dir)
    db.execute("PRAGMA synchronous=OFF")
    db.execute("BEGIN")
    now = time.time()
    names = [(0, n) for n in ibpdb.IB_COUNTERS] + [(1, n) for n in ibpdb.HW_COUNTERS]
    rows = []
    for h in range(hosts):
        hid = ibpdb.add_host(db, "gpu-node-%05d" % h, now)
        for dev in range(ports // 2):
            did = ibpdb.add_device(db, hid, "mlx5_%d" % dev,
                                   node_desc="gpu-node-%05d mlx5_%d" % (h, dev))
            for port in (1, 2):
                pid = ibpdb.add_port(db, hid, did, port, lid=h * ports + dev * 2 + port)
                for src, n in names:
                    rows.append((pid, src, n, rnd.getrandbits(40), now))
        if len(rows) > 100000:
            db.executemany("INSERT INTO series (port_id, source, name, value, changed)"
                           " VALUES (?, ?, ?, ?, ?)", rows)
            rows = []
    db.executemany("INSERT INTO series (port_id, source, name, value, changed)"
                   " VALUES (?, ?, ?, ?, ?)", rows)
    # each host's change marker, as the collector's first report sets it
    if db.execute("SELECT count(*) FROM sqlite_master WHERE name = 'host_change'").fetchone()[0]:
        db.execute("UPDATE change_seq SET seq = seq + 1")
        db.execute("INSERT INTO host_change (host_id, seq) SELECT id, (SELECT seq FROM"
                   " change_seq) FROM host")
    db.execute("COMMIT")
    n = db.execute("SELECT count(*) FROM series").fetchone()[0]
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    db.close()
    print(n)


if __name__ == "__main__":
    main()
