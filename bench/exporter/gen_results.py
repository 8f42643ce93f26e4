#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Add fabric test results to an exporter benchmark database (schema 002).

Every host of DB (made by gen_db.py) registers as a probe, in groups of
GROUP_SIZE hosts (label leaf), every port ACTIVE. Within the last hour each
port initiates one bw and one lat test against a random peer port; HISTORY
earlier hours hold as many results again (the table the outcome counter
reads once at start-up). 1% of the tests fail, 1% are busy. The start
times spread over each whole hour, so that results leave the exporter's
period between two scrapes from the first scrape on, as in production
(a gap at the period's old edge once hid what that costs).

usage: gen_results.py DB [HISTORY_HOURS [GROUP_SIZE]]
"""
import json
import random
import sqlite3
import sys
import time


def main():
    path = sys.argv[1]
    history = int(sys.argv[2]) if len(sys.argv) > 2 else 24
    group_size = int(sys.argv[3]) if len(sys.argv) > 3 else 40
    rnd = random.Random(2)
    db = sqlite3.connect(path, isolation_level=None)
    db.execute("PRAGMA synchronous=OFF")
    db.execute("BEGIN")
    now = time.time()
    ports = db.execute("SELECT h.name, d.name, p.port FROM port p JOIN device d ON"
                       " d.id = p.device_id JOIN host h ON h.id = p.host_id"
                       " ORDER BY h.id, d.name, p.port").fetchall()
    hosts = sorted({p[0] for p in ports})
    probe_id = {}
    for i, h in enumerate(hosts):
        labels = {"leaf": "leaf%03d" % (i // group_size), "rack": "r%d" % (i // 20)}
        cur = db.execute("INSERT INTO probe (host, address, port, labels, profiles,"
                         " registered, updated) VALUES (?, ?, 18515, ?, '[\"bw\",\"lat\"]', ?, ?)",
                         (h, "10.%d.%d.%d" % (i >> 16, (i >> 8) & 255, i & 255),
                          json.dumps(labels), now - 86400 * 2, now - 30))
        probe_id[h] = cur.lastrowid
        db.executemany("INSERT INTO probe_label VALUES (?, ?, ?)",
                       [(cur.lastrowid, k, v) for k, v in labels.items()])
    db.executemany("INSERT INTO probe_port (probe_id, device, port, state, pkeys)"
                   " VALUES (?, ?, ?, 4, '[65535]')",
                   [(probe_id[h], d, p) for h, d, p in ports])
    rows, n = [], 0
    for hour in range(history, -1, -1):
        for (h, d, p) in ports:
            for profile in ("bw", "lat"):
                peer = ports[rnd.randrange(len(ports))]
                started = now - hour * 3600 - rnd.uniform(0, 3600)
                fail = rnd.random() < 0.01
                bw = rnd.gauss(4.7e10, 1e9)
                lat = rnd.gauss(1.9e-6, 1e-7)
                n += 1
                rows.append((
                    "b-%d" % n, h, profile, "write_bw" if profile == "bw" else "write_lat",
                    started, 2.0, d, p, peer[0], peer[1], peer[2],
                    "verbs_error" if fail else "ok",
                    "IBV_WC_RETRY_EXC_ERR" if fail else None,
                    1 if rnd.random() < 0.01 else 0,
                    *((bw, bw * 1.02, bw * 0.9, bw / 65536) if profile == "bw" and not fail
                      else (None,) * 4),
                    *((lat * 0.95, lat, lat * 1.01, lat * 1.6, lat * 2.5, lat * 5, lat * 0.05)
                      if profile == "lat" and not fail else (None,) * 7),
                    now))
        db.executemany(
            "INSERT INTO result (result_id, host, profile, test, started, duration_seconds,"
            " local_device, local_port, peer_host, peer_device, peer_port, outcome,"
            " wc_status, busy, bw_avg_bytes_per_second, bw_peak_bytes_per_second,"
            " bw_min_bytes_per_second, msg_rate_per_second, lat_min_seconds,"
            " lat_median_seconds, lat_mean_seconds, lat_p99_seconds, lat_p999_seconds,"
            " lat_max_seconds, lat_stdev_seconds, received) VALUES (%s)"
            % ", ".join("?" * 26), rows)
        rows = []
    db.execute("COMMIT")
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    db.close()
    print(n)


if __name__ == "__main__":
    main()
