#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Footprint of `ibpulse-probe daemon` between tests.

Starts the real collector on a loopback port and the daemon on a fixture
sysfs tree (no peers: no tests run, which is the daemon's state between
tests), counters read every INTERVAL seconds and pushed every 30 s. After a
warm-up it samples /proc/PID/stat (utime + stime) and /proc/PID/status
(VmRSS, VmHWM) and smaps_rollup (PSS, private pages) over WINDOW seconds
and prints a table: the CPU share of one core and the resident memory.
Targets: under 1% of a core, under 10 MB. RSS counts every shared library
page the process touches (libcrypto, libc, curl's TLS stack) in full; PSS
shares them among the processes mapping them; "private" is the daemon's
own memory.

usage: footprint.py PROBE COLLECTOR SCHEMA_DIR SYSFS_TREE [WINDOW] [INTERVAL...]
"""
import os
import subprocess
import sys
import tempfile
import time

TOKEN = "bench-footprint-token-0123456789abcdef"


def proc_cpu(pid):
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def proc_mem(pid):
    out = {}
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            k, _, v = line.partition(":")
            if k in ("VmRSS", "VmHWM", "Threads"):
                out[k] = int(v.split()[0])
    with open("/proc/%d/smaps_rollup" % pid) as f:
        for line in f:
            k, _, v = line.partition(":")
            if k in ("Pss", "Private_Dirty", "Private_Clean"):
                out[k] = int(v.split()[0])
    return out


def proc_maps(pid, top=8):
    """Resident kB per mapped file (and [heap], [stack], anonymous), the
    largest @top: where RSS goes."""
    per, name = {}, None
    with open("/proc/%d/smaps" % pid) as f:
        for line in f:
            cols = line.split()
            if "-" in cols[0] and len(cols) >= 5 and ":" in cols[3]:
                name = os.path.basename(cols[5]) if len(cols) > 5 else "anon"
            elif cols[0] == "Rss:":
                per[name] = per.get(name, 0) + int(cols[1])
    return sorted(per.items(), key=lambda kv: -kv[1])[:top]


def start_collector(tmp, collector, schema):
    cfg = os.path.join(tmp, "collector.ini")
    port_file = os.path.join(tmp, "cport")
    with open(cfg, "w") as f:
        f.write("[collector]\nlisten = 127.0.0.1\nport = 0\ndb = %s\n"
                "schema_dir = %s\n[tokens]\nbench-node = %s\n"
                % (os.path.join(tmp, "db"), schema, TOKEN))
    p = subprocess.Popen([collector, "serve", "--config", cfg,
                          "--port-file", port_file],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while not (os.path.exists(port_file) and os.path.getsize(port_file)):
        if p.poll() is not None or time.monotonic() > deadline:
            sys.exit("collector did not start")
        time.sleep(0.05)
    with open(port_file) as f:
        return p, int(f.read())


def measure(probe, tree, tmp, port, interval, window):
    tok = os.path.join(tmp, "token")
    with open(tok, "w") as f:
        f.write(TOKEN + "\n")
    d = os.path.join(tmp, "d%d" % interval)
    os.makedirs(d)
    cfg = os.path.join(d, "probe.ini")
    with open(cfg, "w") as f:
        f.write("[probe]\nhost = bench-node\nsysfs_root = %s\n"
                "collector_url = http://127.0.0.1:%d/api/v1/report\n"
                "token_file = %s\nnetdev_stats = false\n"
                "[daemon]\ncounters_interval = %d\npush_interval = 30\n"
                "responder_port = 0\nresponder_listen = 127.0.0.1\n"
                "spool_dir = %s/spool\ncontrol_socket = %s/sock\n"
                % (tree, port, tok, interval, d, d))
    p = subprocess.Popen([probe, "daemon", "--config", cfg],
                         stdout=subprocess.DEVNULL,
                         stderr=open(os.path.join(d, "log"), "w"))
    try:
        time.sleep(max(5, interval + 2))  # start-up and a first push
        c0, t0 = proc_cpu(p.pid), time.monotonic()
        time.sleep(window)
        c1, t1 = proc_cpu(p.pid), time.monotonic()
        mem = proc_mem(p.pid)
        mem["maps"] = proc_maps(p.pid)
    finally:
        p.terminate()
        p.wait(60)
    return (c1 - c0) / (t1 - t0), mem


def measure_anchor(anchor, window):
    """The same reading of a process that only initialises libcurl."""
    p = subprocess.Popen([anchor])
    try:
        time.sleep(min(window, 5))
        return proc_mem(p.pid) | {"maps": proc_maps(p.pid)}
    finally:
        p.terminate()
        p.wait(60)


def main():
    probe, collector, schema, tree = sys.argv[1:5]
    anchor = os.environ.get("FOOTPRINT_ANCHOR", "")
    window = float(sys.argv[5]) if len(sys.argv) > 5 else 120
    intervals = [int(a) for a in sys.argv[6:]] or [10, 1]
    with open("/proc/loadavg") as f:
        load = f.read().split()[0]
    with tempfile.TemporaryDirectory() as tmp:
        cp, port = start_collector(tmp, collector, schema)
        try:
            rows = [(i,) + measure(probe, tree, tmp, port, i, window)
                    for i in intervals]
        finally:
            cp.terminate()
            cp.wait(60)
    print("ibpulse-probe daemon footprint: tree %s, window %.0f s, "
          "load average %s" % (os.path.basename(tree.rstrip("/")), window,
                               load))
    print("| counters every | CPU share of one core | RSS | peak RSS "
          "| PSS | private | threads |")
    print("|---|---|---|---|---|---|---|")
    for i, share, mem in rows:
        print("| %d s | %.3f%% | %.1f MB | %.1f MB | %.1f MB | %.1f MB | %d |"
              % (i, share * 100, mem["VmRSS"] / 1024, mem["VmHWM"] / 1024,
                 mem["Pss"] / 1024,
                 (mem["Private_Dirty"] + mem["Private_Clean"]) / 1024,
                 mem["Threads"]))
    if anchor:
        mem = measure_anchor(anchor, window)
        print("| anchor: libcurl initialised, nothing else | - | %.1f MB "
              "| %.1f MB | %.1f MB | %.1f MB | %d |"
              % (mem["VmRSS"] / 1024, mem["VmHWM"] / 1024,
                 mem["Pss"] / 1024,
                 (mem["Private_Dirty"] + mem["Private_Clean"]) / 1024,
                 mem["Threads"]))
    print()
    print("Largest resident mappings (counters every %d s):" % rows[0][0])
    for name, kb in rows[0][2]["maps"]:
        print("    %-28s %6.2f MB" % (name, kb / 1024))


if __name__ == "__main__":
    main()
