#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# Integration test of `ibpulse-probe run`'s command line on the host: a bad
# value exits 2 naming the flag and its range, an unknown test or a missing
# --peer exits 2, and a test that cannot run (no RDMA device here, or no
# responder) exits 1 with valid JSON whose status is "error" and whose
# error says why.
#   test_run_cli.py PROBE
import json
import subprocess
import sys


def run(probe, *args):
    p = subprocess.run([probe, "run", *args], capture_output=True, text=True,
                       timeout=60)
    return p.returncode, p.stdout, p.stderr


def expect(cond, what, detail=""):
    if not cond:
        print("FAIL:", what, detail, file=sys.stderr)
        sys.exit(1)
    print("ok:", what)


def main():
    probe = sys.argv[1]
    rc, out, err = run(probe, "write_bw", "--peer", "h", "--qps", "65")
    expect(rc == 2 and "--qps" in err and "1..64" in err,
           "bad --qps exits 2 naming the range", err)
    rc, out, err = run(probe, "write_bw", "--peer", "h", "-D", "0.01")
    expect(rc == 2 and "--duration" in err, "bad -D exits 2", err)
    rc, out, err = run(probe, "write_bw", "--peer", "h", "--pkey", "0x8000")
    expect(rc == 2 and "--pkey" in err, "P_Key 0x8000 refused", err)
    rc, out, err = run(probe, "write_lat", "--peer", "h", "-D", "2",
                       "--margin", "1")
    expect(rc == 2 and "--margin 1: must be under half" in err,
           "latency -D: a margin of half the duration leaves no window", err)
    rc, out, err = run(probe, "send_lat", "--peer", "h", "-b")
    expect(rc == 2 and "--bidirectional" in err,
           "--bidirectional is for bandwidth tests", err)
    rc, out, err = run(probe, "ud_send_lat", "--peer", "h", "-s", "8192")
    expect(rc == 2 and "a UD message fits one MTU: valid range 1..4096"
           in err, "a UD message above the largest MTU exits 2", err)
    rc, out, err = run(probe, "nosuch_bw", "--peer", "h")
    expect(rc == 2 and "write_bw" in err and "ud_send_lat" in err,
           "unknown test lists the tests", err)
    rc, out, err = run(probe, "write_bw")
    expect(rc == 2 and "--peer" in err, "missing --peer", err)
    rc, out, err = run(probe, "write_bw", "--peer", "[::1", "--json")
    expect(rc == 2 and "--peer" in err, "malformed --peer", err)
    rc, out, err = run(probe, "write_bw", "--peer", "h", "--peer-ib-port", "255")
    expect(rc == 2 and "--peer-ib-port" in err and "1..254" in err,
           "bad --peer-ib-port exits 2 naming the range", err)
    rc, out, err = run(probe, "write_bw", "--peer", "h", "--peer-device", "../x")
    expect(rc == 2 and "--peer-device" in err and "[A-Za-z0-9_.-]" in err,
           "a --peer-device that is not a device name exits 2", err)
    p = subprocess.run([probe, "serve", "--peer-device", "mlx5_0"],
                       capture_output=True, text=True, timeout=60)
    expect(p.returncode == 2 and "does not apply" in p.stderr,
           "--peer-device is a client option", p.stderr)

    rc, out, err = run(probe, "write_bw", "--peer", "127.0.0.1:1", "--json",
                       "--no-pin", "--timeout", "2")
    doc = json.loads(out)
    expect(rc == 1 and doc["status"] == "error" and doc["error"] and
           doc["test"] == "write_bw" and doc["responder"] is None,
           "a test that cannot run: exit 1, JSON status error: " +
           doc.get("error", ""))


main()
