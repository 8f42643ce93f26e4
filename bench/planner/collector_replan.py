#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The plan as the collector makes it: N probes register (over keep-alive
connections, 4 threads), the collector is restarted, and the first
GET /api/v1/plan pays for the whole replan on the writer thread (load the
probes from SQLite, plan, write plan_entry, commit). Prints a table with
the registration rate, that first request's latency, a second (cached)
request's latency, and the collector's own "plan:" log line.

usage: collector_replan.py COLLECTOR SCHEMA_DIR [PROBES]
"""
import http.client
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time


def start(tmp, cfg):
    pf = os.path.join(tmp, "port")
    if os.path.exists(pf):
        os.unlink(pf)
    log = open(os.path.join(tmp, "log"), "a")
    p = subprocess.Popen([sys.argv[1], "serve", "--config", cfg,
                          "--port-file", pf], stderr=log,
                         stdout=subprocess.DEVNULL)
    while not os.path.exists(pf):
        if p.poll() is not None:
            sys.exit("collector exited")
        time.sleep(0.05)
    with open(pf) as f:
        return p, int(f.read())


def reg(i):
    return {"version": 1, "host": "n%05d" % i,
            "responder": {"address": "10.%d.%d.%d" % (i >> 16, (i >> 8) & 255,
                                                      i & 255),
                          "port": 18515},
            "labels": {"leaf": "leaf%d" % (i // 40)}, "profiles": ["bw", "lat"],
            "ports": [{"device": "mlx5_0", "port": 1, "state": 4,
                       "link_layer": "InfiniBand",
                       "subnet_prefix": "fe80:0000:0000:0000",
                       "pkeys": [65535]}]}


def tok(i):
    return "tok-n%05d-0123456789abcdef" % i


def main():
    n = int(sys.argv[3]) if len(sys.argv) > 3 else 10000
    tmp = tempfile.mkdtemp(prefix="ibpulse-replan-")
    try:
        with open(os.path.join(tmp, "tokens"), "w") as f:
            for i in range(n):
                f.write("n%05d %s\n" % (i, tok(i)))
        cfg = os.path.join(tmp, "c.ini")
        with open(cfg, "w") as f:
            f.write("[collector]\nport = 0\ndb = %s/db\nschema_dir = %s\n"
                    "tokens_file = %s/tokens\nlog_level = info\n"
                    "[planner]\nperiod = 3600\nslot_seconds = 30\n"
                    "duty_cycle = 0.1\nreplan_interval = 86400\n"
                    % (tmp, sys.argv[2], tmp))
        p, port = start(tmp, cfg)
        t0 = time.monotonic()

        def worker(k):
            c = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
            for i in range(k, n, 4):
                c.request("POST", "/api/v1/register", json.dumps(reg(i)),
                          {"Authorization": "Bearer " + tok(i)})
                r = c.getresponse()
                r.read()
                assert r.status == 200, r.status
            c.close()
        ts = [threading.Thread(target=worker, args=(k,)) for k in range(4)]
        for t in ts:
            t.start()
        for t in ts:
            t.join()
        reg_s = time.monotonic() - t0
        p.terminate()
        p.wait()
        p, port = start(tmp, cfg)
        lat = []
        for _ in range(2):
            c = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
            t0 = time.monotonic()
            c.request("GET", "/api/v1/plan", headers={
                "Authorization": "Bearer " + tok(0)})
            r = c.getresponse()
            body = json.loads(r.read())
            lat.append(time.monotonic() - t0)
            c.close()
        p.terminate()
        p.wait()
        with open(os.path.join(tmp, "log")) as f:
            line = [ln for ln in f if "plan: period" in ln][-1].strip()
        print("| probes | registrations/s | first plan request s | "
              "cached plan request ms | tests for n00000 |")
        print("|---|---|---|---|---|")
        print("| %d | %.0f | %.2f | %.1f | %d |" % (
            n, n / reg_s, lat[0], lat[1] * 1e3, len(body["tests"])))
        print("\ncollector: " + re.sub(r"^.*?plan:", "plan:", line))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
