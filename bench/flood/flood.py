#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Keep-alive clients under a connection flood (issue 22).

A flood of IDLE silent connections and SLOW slowloris ones (a byte of a
never-ending request head every half second), spread over ADDRS loopback
addresses 127.0.0.2.., each reopened as soon as the server closes it (at
most RATE reopenings a second), against the real collector and the real
exporter with their default limits (max_connections 1024 and 64,
per_ip_connection_limit 16). Meanwhile, from 127.0.0.250:
  - a keep-alive client sends a request every 0.5 s on one connection
    (the collector: POST /api/v1/report; the exporter: GET /metrics);
  - a fresh client opens a new connection for each request, every 0.5 s.
Each runs SECONDS. Prints a Markdown table: for each build given and each
server, the share of requests answered 200.

usage: flood.py SCHEMA_DIR NAME=BUILD_DIR[,SCHEMA_DIR]... (env: IDLE=2000
       SLOW=200 ADDRS=300 SECONDS=30 RATE=2000); a build's own SCHEMA_DIR
       when it needs another than the first argument (an older tree).
"""
import json
import os
import resource
import shutil
import sys
import tempfile
import threading
import time

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(TOP, "tests", "exporter"))
sys.path.insert(0, os.path.join(TOP, "tests", "collector"))
import harness as H  # noqa: E402
import ibpdb  # noqa: E402

TOKEN = "tok-node1-0123456789abcdef"


def report_request():
    import test_collector as TC
    body = json.dumps(TC.make_report("node1", 7)).encode()
    return (b"POST /api/v1/report HTTP/1.1\r\nHost: t\r\n"
            b"Authorization: Bearer %s\r\nContent-Type: application/json\r\n"
            b"Content-Length: %d\r\n\r\n" % (TOKEN.encode(), len(body)) + body)


def start_collector(procs, tmp, build, schema):
    ini = os.path.join(tmp, "collector.ini")
    with open(ini, "w") as f:
        f.write("[collector]\nlisten = 127.0.0.1\nport = 0\ndb = %s/c.db\n"
                "schema_dir = %s\n[tokens]\nnode1 = %s\n" % (tmp, schema, TOKEN))
    pf = os.path.join(tmp, "collector.port")
    p = procs.start("collector", [build + "/collector/ibpulse-collector", "serve",
                                  "--config", ini, "--port-file", pf])
    return p, H.read_port_file(pf, p, procs)


def start_exporter(procs, tmp, build, schema):
    db = os.path.join(tmp, "e.db")
    if not os.path.exists(db):
        c = ibpdb.create(db, schema)
        for h in ("node-a", "node-b"):
            hid = ibpdb.add_host(c, h)
            did = ibpdb.add_device(c, hid, "mlx5_0")
            pid = ibpdb.add_port(c, hid, did, 1)
            ibpdb.add_counters(c, pid, 0, {n: 1 for n in ibpdb.IB_COUNTERS})
        c.close()
    pf = os.path.join(tmp, "exporter.port")
    p = procs.start("exporter", [build + "/exporter/ibpulse-exporter", "--db", db,
                                 "--listen", "127.0.0.1", "--port", "0",
                                 "--port-file", pf])
    return p, H.read_port_file(pf, p, procs)


def fresh(port, request, seconds, out):
    """A new connection (Connection: close) per request, every 0.5 s."""
    req = request.replace(b"Host: t\r\n", b"Host: t\r\nConnection: close\r\n", 1)
    ok = total = 0
    why = {}
    end = time.monotonic() + seconds
    nxt = time.monotonic()
    while time.monotonic() < end:
        total += 1
        got, closed, took = H.raw(port, req, src="127.0.0.251", timeout=5)
        st = H.statuses(got[:64])
        ok += st == [200]
        if st != [200]:
            k = "status %s" % st if st else (
                "closed, no answer" if closed else "no answer in 5 s")
            why[k] = why.get(k, 0) + 1
        nxt += 0.5
        time.sleep(max(0.0, nxt - time.monotonic()))
    out.extend([ok, total, why])


def measure(port, request, env):
    flood = H.Flood(port, env["IDLE"], env["SLOW"], env["ADDRS"], rate=env["RATE"])
    try:
        H.wait_for("the flood to fill the server", lambda: flood.closed >= 100,
                   timeout=60)
        closed0, t0 = flood.closed, time.monotonic()
        fr = []
        t = threading.Thread(target=fresh, args=(port, request, env["SECONDS"], fr))
        t.start()
        ka = H.KeepAlive(port, request)
        ok, total = ka.run(env["SECONDS"])
        t.join()
        churn = (flood.closed - closed0) / (time.monotonic() - t0)
    finally:
        flood.stop()
    for f in ka.failures + ["%s x%d" % kv for kv in fr[2].items()]:
        sys.stderr.write("  failure: %s\n" % f)
    return ok, total, fr[0], fr[1], churn


def main():
    builds = []
    for a in sys.argv[2:]:
        name, rest = a.split("=", 1)
        build, _, schema = rest.partition(",")
        builds.append((name, build, schema or sys.argv[1]))
    env = {k: int(os.environ.get(k, d)) for k, d in
           (("IDLE", 2000), ("SLOW", 200), ("ADDRS", 300), ("SECONDS", 30),
            ("RATE", 2000))}
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    rows = []
    for name, build, schema in builds:
        for server, starter, request in (
                ("collector", start_collector, report_request()),
                ("exporter /metrics", start_exporter,
                 b"GET /metrics HTTP/1.1\r\nHost: t\r\n\r\n")):
            tmp = tempfile.mkdtemp(prefix="ibpulse-flood-")
            procs = H.Procs(tmp)
            try:
                p, port = starter(procs, tmp, build, schema)
                rows.append((name, server) + measure(port, request, env))
            finally:
                procs.stop_all()
                shutil.rmtree(tmp, ignore_errors=True)
    load = os.getloadavg()
    print("# %s, %d cores, load %.2f %.2f %.2f; flood: %d idle + %d slowloris from "
          "%d addresses, at most %d reopenings/s; clients every 0.5 s for %d s"
          % (time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), os.cpu_count(),
             load[0], load[1], load[2], env["IDLE"], env["SLOW"], env["ADDRS"],
             env["RATE"], env["SECONDS"]))
    print("| build | server | keep-alive 200s | keep-alive success | fresh 200s "
          "| fresh success | flood connections closed/s |")
    print("|---|---|---|---|---|---|---|")
    for name, server, ok, total, fok, ftotal, churn in rows:
        print("| %s | %s | %d/%d | %.1f%% | %d/%d | %.1f%% | %.0f |"
              % (name, server, ok, total, 100.0 * ok / max(total, 1), fok, ftotal,
                 100.0 * fok / max(ftotal, 1), churn))
    return 0


if __name__ == "__main__":
    sys.exit(main())
