#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# Check one `ibpulse-probe run --json` result (and the responder's --json
# line): valid JSON, status ok on both sides, and figures that make sense
# for the test: bandwidth > 0 with min <= average <= peak, or latency
# 0 < min <= median <= p99 <= max with a finite stdev; bidirectional:
# both sides sent and the sum adds up; latency -D: samples from the
# window and an elapsed time close to the duration.
#   check-result.py TEST CLIENT_JSON SERVER_OUTPUT|-
import json
import sys


def fail(msg):
    print("FAIL:", msg, file=sys.stderr)
    sys.exit(1)


def arg(args, *names):
    """The value after the first of @names in the run's arguments."""
    for i, a in enumerate(args[:-1]):
        if a in names:
            return args[i + 1]
    return None


def check_duration_lat(doc, args):
    """-D on a latency test: in-window samples, elapsed near the duration."""
    d = float(arg(args, "-D", "--duration"))
    c, p = doc["client"], doc["parameters"]
    n = c["latency"]["samples"]
    if p["duration_seconds"] != d or not 0 < n <= c["messages"]:
        fail("duration %r, %r samples of %r rounds" %
             (p["duration_seconds"], n, c["messages"]))
    if p["iterations"] != c["messages"]:
        fail("parameters.iterations %r is not the %r rounds done" %
             (p["iterations"], c["messages"]))
    # The run ends on CLOCK_MONOTONIC (looked at every 10 ms), not on the
    # TSC rate calibrated over 10 ms, which a loaded host can skew by 15%.
    if not 0.98 * d <= c["elapsed_seconds"] <= 1.5 * d:
        fail("elapsed %r s for a %r s run" % (c["elapsed_seconds"], d))
    print("ok: %d rounds in %.2f s, %d samples in the window" %
          (c["messages"], c["elapsed_seconds"], n))


def check_bidir(doc):
    """Each side's figure is what it sent; both > 0, and their sum."""
    c, r, s = doc["client"], doc["responder"], doc.get("sum")
    key = "bw_avg_bytes_per_second"
    if not (c[key] > 0 and r[key] > 0 and r["messages"] > 0):
        fail("bidirectional: client %r, responder %r" % (c[key], r[key]))
    if s is None or abs(s[key] - c[key] - r[key]) > 1e-6 * s[key]:
        fail("bidirectional: sum %r" % (s,))
    print("ok: bidirectional %.1f + %.1f MiB/s" %
          (c[key] / 2**20, r[key] / 2**20))


def main():
    test, cpath, spath = sys.argv[1:4]
    args = sys.argv[4:]
    with open(cpath) as f:
        doc = json.load(f)
    if doc.get("status") != "ok" or doc.get("test") != test:
        fail("client status %r test %r" % (doc.get("status"), doc.get("test")))
    c, r = doc["client"], doc["responder"]
    if r is None or r["status"] != "ok":
        fail("responder view missing or not ok: %r" % (r,))
    p = doc["parameters"]
    if "--verify" in args and not p["verify"]:
        fail("verify was asked but not used")
    if p["device"] != "rxe0" or p["mtu_bytes"] < 256 or p["gid"] == "":
        fail("parameters: %r" % (p,))
    if test.endswith("_lat"):
        lat = c.get("latency")
        if not lat:
            fail("no latency block")
        keys = ["min", "median", "p99", "max"]
        vals = [c["lat_%s_seconds" % k] for k in keys]
        # the deprecated keys (docs/verbs.md, "Output") say the same
        if [lat[k + "_seconds"] for k in keys] != vals:
            fail("latency: %r against %r" % (lat, vals))
        if "bw_avg_bytes_per_second" in c:
            fail("a latency test with a bandwidth figure")
        if not (0 < vals[0] <= vals[1] <= vals[2] <= vals[3] < 1):
            fail("latency order: %r" % (vals,))
        if not (0 <= c["lat_stdev_seconds"] < 1):
            fail("stdev %r" % c["lat_stdev_seconds"])
        print("ok: %s median %.1f us p99 %.1f us" %
              (test, vals[1] * 1e6, vals[2] * 1e6))
        if arg(args, "-D", "--duration"):
            check_duration_lat(doc, args)
    else:
        avg = c["bw_avg_bytes_per_second"]
        if (c["bw_average_bytes_per_second"] != avg
                or c["message_rate_per_second"] != c["msg_rate_per_second"]):
            fail("the deprecated keys differ: %r" % (c,))
        lo, hi = c["bw_min_bytes_per_second"], c["bw_peak_bytes_per_second"]
        if not (avg > 0 and c["messages"] > 0 and lo <= avg * 1.0001
                and avg <= hi * 1.0001):
            fail("bandwidth min %r avg %r peak %r" % (lo, avg, hi))
        if test == "send_bw" and r["messages"] <= 0:
            fail("the responder counted no receives")
        if p["bidirectional"]:
            check_bidir(doc)
        print("ok: %s %.1f MiB/s (min %.1f, peak %.1f), %.0f msg/s" %
              (test, avg / 2**20, lo / 2**20, hi / 2**20,
               c["msg_rate_per_second"]))
    # The responder reads its port's counters around the test (protocol v2);
    # one VM: client and responder share rxe0, whose hw_counters count
    # packets both ways, at least one per message.
    ctr = doc.get("responder_port_counters")
    if not ctr or "rcv_packets" not in ctr:
        fail("no responder port counters: %r" % (ctr,))
    moved = ctr["rcv_packets"] + ctr["xmit_packets"]
    if moved < c["messages"]:
        fail("responder port moved %d packets for %d messages" %
             (moved, c["messages"]))
    if spath == "-":
        return
    with open(spath) as f:
        lines = [x for x in f if x.startswith("{")]
    if not lines:
        fail("the responder printed no JSON result")
    s = json.loads(lines[-1])
    if s["status"] != "ok" or s["client"] is None:
        fail("responder JSON: %r" % (s,))


main()
