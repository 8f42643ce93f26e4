#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# perftest against the ibpulse verbs engine, interleaved in one lab boot
# (run inside the VM by run.sh): each case runs perftest then ibpulse with
# the same parameters, ROUNDS times, on rxe0 over the loopback path, and
# the table gives both medians and the ratio ibpulse / perftest. CPU
# seconds per GB come from the client process's rusage (wait4) over an
# iteration-mode run, for both tools alike. Iteration mode throughout:
# perftest's duration mode counted no iterations at all in some runs on
# this loaded, emulated machine.
#   compare.py PROBE [ROUNDS] [CASE-SUBSTRING]
import json
import os
import socket
import statistics
import subprocess
import sys
import time

DEV = ["-d", "rxe0"]
PORT = [19000]

# name, perftest binary, ibpulse test, shared flags, metric
CASES = [
    ("write_bw 64 KiB, MiB/s", "ib_write_bw", "write_bw",
     ["-s", "65536", "-q", "2", "-n", "300"], "bw"),
    ("read_bw 64 KiB, MiB/s", "ib_read_bw", "read_bw",
     ["-s", "65536", "-q", "2", "-n", "300"], "bw"),
    ("send_bw 64 KiB, MiB/s", "ib_send_bw", "send_bw",
     ["-s", "65536", "-q", "2", "-n", "300"], "bw"),
    ("write_bw -b 64 KiB sum, MiB/s", "ib_write_bw", "write_bw",
     ["-s", "65536", "-q", "2", "-n", "300", "-b"], "bwsum"),
    ("send_bw -b 64 KiB sum, MiB/s", "ib_send_bw", "send_bw",
     ["-s", "65536", "-q", "2", "-n", "300", "-b"], "bwsum"),
    ("write_bw 64 B, Mmsg/s", "ib_write_bw", "write_bw",
     ["-s", "64", "-q", "2", "-n", "20000"], "rate"),
    ("write_lat 2 B median, us", "ib_write_lat", "write_lat",
     ["-s", "2", "-n", "1000"], "lat"),
    ("read_lat 2 B median, us", "ib_read_lat", "read_lat",
     ["-s", "2", "-n", "1000"], "lat"),
    ("send_lat 2 B median, us", "ib_send_lat", "send_lat",
     ["-s", "2", "-n", "1000"], "lat"),
    ("write_lat 4 KiB median, us", "ib_write_lat", "write_lat",
     ["-s", "4096", "-n", "300"], "lat"),
    ("write_bw CPU s per GB", "ib_write_bw", "write_bw",
     ["-s", "65536", "-n", "2000"], "cpu"),
]


def next_port():
    PORT[0] += 1
    return str(PORT[0])


def listening(port):
    """Is a TCP socket listening on @port? Read /proc, never connect:
    perftest takes any connection for its one client."""
    want = ":%04X" % int(port)
    for path in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            with open(path) as f:
                for line in f.readlines()[1:]:
                    cols = line.split()
                    if cols[1].endswith(want) and cols[3] == "0A":
                        return True
        except OSError:
            pass
    return False


def wait_listen(port, proc, seconds=60):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            return False
        if listening(port):
            return True
        time.sleep(0.05)
    return False


def client(argv):
    """Run argv; return (status, stdout, cpu seconds of the process)."""
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)
    out = proc.stdout.read()
    _, status, ru = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    return proc.returncode, out, ru.ru_utime + ru.ru_stime


def perftest(binary, flags, metric):
    port = next_port()
    base = [binary] + DEV + ["-x", "1", "-F", "-p", port] + flags
    srv = subprocess.Popen(base, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True)
    if not wait_listen(port, srv):
        raise RuntimeError("%s server: %s" % (binary, srv.communicate()[0]))
    rc, out, cpu = client(base + ["127.0.0.1"])
    srv.communicate(timeout=120)
    if rc:
        raise RuntimeError("%s failed: %s" % (binary, out))
    rows = [l.split() for l in out.splitlines()]
    rows = [r for r in rows if len(r) >= 5 and r[0].isdigit()
            and r[1].isdigit()]
    r = rows[-1]
    if float(r[3]) == 0 and metric in ("bw", "bwsum", "rate"):
        print("note: perftest reported zero: %s" % " ".join(r),
              file=sys.stderr)
    if metric in ("bw", "bwsum"):
        return float(r[3])  # with -b perftest prints both directions' sum
    if metric == "rate":
        return float(r[4])
    if metric == "lat":
        return float(r[4])
    return cpu / (int(r[0]) * int(r[1]) / 1e9)


def ibpulse(probe, test, flags, metric):
    port = next_port()
    srv = subprocess.Popen([probe, "serve", "--once", "-p", port] + DEV,
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           text=True)
    if not wait_listen(port, srv):
        raise RuntimeError("serve did not listen: " + srv.communicate()[0])
    rc, out, cpu = client([probe, "run", test, "--peer", "127.0.0.1:" + port,
                           "--json"] + DEV + flags)
    srv.communicate(timeout=120)
    if rc:
        raise RuntimeError("ibpulse %s failed: %s" % (test, out))
    d = json.loads(out)
    c = d["client"]
    if metric == "bw":
        return c["bw_avg_bytes_per_second"] / 2**20
    if metric == "bwsum":
        return d["sum"]["bw_avg_bytes_per_second"] / 2**20
    if metric == "rate":
        return c["msg_rate_per_second"] / 1e6
    if metric == "lat":
        return c["lat_median_seconds"] * 1e6
    p = d["parameters"]
    return cpu / (p["size_bytes"] * p["iterations"] * p["qps"] / 1e9)


def ok(x):
    """A usable sample: a zero is a failed run (perftest's duration mode
    sometimes counts no iterations under load), and perftest prints inf
    for a latency it could not compute."""
    return 0 < x < float("inf")


def paired_ratio(pt, ib):
    """Median of the per-round ratios: each round's two runs share the
    machine's load of the moment, so their ratio cancels most of it."""
    r = [b / a for a, b in zip(pt, ib) if ok(a) and ok(b)]
    return statistics.median(r) if r else float("nan")


def main():
    probe = sys.argv[1]
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    only = sys.argv[3] if len(sys.argv) > 3 else ""
    print("%-28s %10s %10s %7s %7s   per round (perftest/ibpulse)" %
          ("case", "perftest", "ibpulse", "ratio", "paired"))
    for name, binary, test, flags, metric in CASES:
        if only and only not in name:
            continue
        pt, ib = [], []
        for k in range(rounds):
            # Alternate which tool goes first: no order advantage.
            if k % 2:
                ib.append(ibpulse(probe, test, flags, metric))
                pt.append(perftest(binary, flags, metric))
            else:
                pt.append(perftest(binary, flags, metric))
                ib.append(ibpulse(probe, test, flags, metric))
        a = statistics.median([x for x in pt if ok(x)] or [0])
        b = statistics.median([x for x in ib if ok(x)] or [0])
        per = " ".join("%.3g/%.3g" % x for x in zip(pt, ib))
        print("%-28s %10.3f %10.3f %7.2f %7.2f   %s" % (
              name, a, b, b / a if a else float("nan"),
              paired_ratio(pt, ib), per), flush=True)


main()
