#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Draw a link's bandwidth against its baseline from a fault-injection run.

Reads series.json, the Prometheus series tests/e2e/lab_fault.py kept with
--out (query_range of the link families, ALERTS and the per-result
timestamps), and writes a PNG with gnuplot (Debian's gnuplot-nox, pngcairo):
each result of the link as a point, its baseline and the band down to the
threshold (a result below it is bad), the expected figure when the
hardware gives one (Soft-RoCE gives none: its rate is made up), the
regression window (ibpulse_link_regression 1) shaded, and the fault and
the alert's firing marked.

    bench/regression/plot.py OUT_DIR [--png FILE] [--host lab-2] [--profile bw]
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile


def pick(series, host, profile, extra=None):
    """The one series of a family for the link initiated by @host."""
    for s in series:
        m = s["metric"]
        if m.get("host") == host and m.get("profile") == profile and all(
                m.get(k) == v for k, v in (extra or {}).items()):
            return [(float(t), float(v)) for t, v in s["values"]]
    return []


def results(data, host, profile):
    """(time, bytes/s, kind) per result, where the pair's timestamp
    changes: kind "ok", "busy" (ok on a busy link: not judged) or
    "failed" (not ok: no figure)."""
    S = data["series"]
    ts = pick(S["result_time"], host, profile)
    bw = dict(pick(S["result_bandwidth"], host, profile))
    ok = dict(pick(S["result_success"], host, profile))
    busy = dict(pick(S["result_busy"], host, profile))
    out, last = [], None
    for t, started in ts:
        if started != last:
            kind = ("failed" if not ok.get(t, 1) else "busy" if busy.get(t, 0) else "ok")
            if kind == "failed" or t in bw:
                out.append((started, bw.get(t, 0) if kind != "failed" else 0, kind))
        last = started
    return out


def windows(points):
    """[(from, to)] where a 0/1 series is 1."""
    out, start, prev = [], None, None
    for t, v in points:
        if v >= 1 and start is None:
            start = t
        if v < 1 and start is not None:
            out.append((start, t))
            start = None
        prev = t
    if start is not None:
        out.append((start, prev))
    return out


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("out", help="the --out directory of tests/e2e/lab_fault.py")
    p.add_argument("--png", help="default: OUT/regression.png")
    p.add_argument("--host", default="lab-2", help="the link's initiator")
    p.add_argument("--profile", default="bw")
    p.add_argument("--title", default="")
    a = p.parse_args(argv)
    with open(os.path.join(a.out, "series.json")) as f:
        data = json.load(f)
    png = a.png or os.path.join(a.out, "regression.png")
    t0 = data["t0"]
    mib = 1024.0 * 1024.0
    S = data["series"]
    lines = {k: pick(S[k], a.host, a.profile) for k in ("baseline", "threshold", "expected")}
    reg = pick(S["regression"], a.host, a.profile, {"metric": "bandwidth"})
    firing = [(t, v) for s in S["alerts"] if s["metric"].get("host") == a.host
              and s["metric"].get("alertname") == "IbpulseLinkBandwidthRegression"
              and s["metric"].get("alertstate") == "firing" for t, v in s["values"]]
    pts = results(data, a.host, a.profile)
    if not pts:
        sys.exit("no results of %s/%s in %s" % (a.host, a.profile, a.out))
    peer = next((s["metric"]["peer_host"] for s in S["result_time"]
                 if s["metric"].get("host") == a.host), "?")

    tmp = tempfile.mkdtemp(prefix="regplot.")

    def write(name, rows):
        path = os.path.join(tmp, name)
        with open(path, "w") as f:
            for r in rows:
                f.write(" ".join("%.6g" % x for x in r) + "\n")
        return path

    # Baseline and threshold joined on time: the band between them.
    thr = dict(lines["threshold"])
    band = write("band", [((t - t0) / 60, v / mib, thr[t] / mib)
                          for t, v in lines["baseline"] if t in thr])
    res = {k: write("results-" + k, [((t - t0) / 60, v / mib) for t, v, kind in pts
                                     if kind == k] or [(float("nan"), float("nan"))])
           for k in ("ok", "busy", "failed")}
    exp = write("expected", [((t - t0) / 60, v / mib) for t, v in lines["expected"]])
    ymax = max([v for _, v, _ in pts] + [v for _, v in lines["baseline"]]) / mib * 1.25
    cmds = [
        'set terminal pngcairo size 1100,520 font "DejaVu Sans,11"',
        "set output %s" % json.dumps(png),
        "set title %s" % json.dumps(a.title or (
            "%s rxe0/1 -> %s rxe0/1, profile %s: fault injected (tc tbf on %s's eth0) and"
            " removed" % (a.host, peer, a.profile, "vm2"))),
        'set xlabel "minutes into the run"',
        'set ylabel "write_bw (4 KiB messages), MiB/s" noenhanced',
        # Below zero a little, so results of 0 B/s (a window in which no
        # message completed: the test stalled) show on the axis.
        "set yrange [%g:%g]" % (-0.04 * ymax, ymax),
        "set key outside bottom center horizontal maxrows 3",
        "set grid ytics lc rgb '#dddddd'",
        "set style fill transparent solid 0.18 noborder",
    ]
    n = 1
    for a0, a1 in windows(reg):
        cmds.append("set object %d rect from %g, graph 0 to %g, graph 1 fc rgb '#d62728' "
                    "fs transparent solid 0.12 noborder behind" % (n, (a0 - t0) / 60,
                                                                   (a1 - t0) / 60))
        n += 1
    for f in data.get("faults", []):
        if f.get("kind") != a.profile:  # the other profile's fault
            continue
        for key, label, col in (("t_fault", "fault on", "#d62728"),
                                ("t_repair", "fault off", "#2ca02c")):
            x = (f[key] - t0) / 60
            cmds.append("set arrow from %g, graph 0 to %g, graph 1 nohead dt 2 lc rgb '%s'"
                        % (x, x, col))
            cmds.append("set label %s at %g, graph 0.97 left offset 0.3,0 tc rgb '%s'"
                        % (json.dumps(label), x, col))
    if firing:
        x = (min(t for t, _ in firing) - t0) / 60
        cmds.append("set arrow from %g, graph 0 to %g, graph 1 nohead lw 2 lc rgb '#ff7f0e'"
                    % (x, x))
        cmds.append('set label "alert firing" at %g, graph 0.90 left offset 0.3,0 '
                    "tc rgb '#ff7f0e'" % x)
    plots = [
        "%s using 1:3:2 with filledcurves lc rgb '#1f77b4' title 'baseline band "
        "(threshold to baseline)'" % json.dumps(band),
        "%s using 1:2 with lines lw 2 lc rgb '#1f77b4' title 'baseline'" % json.dumps(band),
        "%s using 1:3 with lines dt 3 lc rgb '#1f77b4' title 'threshold (bad below)'"
        % json.dumps(band),
        "%s using 1:2 with points pt 7 ps 1 lc rgb '#222222' title 'result (ok)'"
        % json.dumps(res["ok"]),
        "%s using 1:2 with points pt 6 ps 1 lc rgb '#888888' title 'ok on a busy link (not judged)'"
        % json.dumps(res["busy"]),
        "%s using 1:(0) with points pt 2 ps 1 lc rgb '#d62728' title 'test failed (no figure)'"
        % json.dumps(res["failed"]),
        # A fake point outside the range keeps the regression shading in the key.
        "NaN with boxes lc rgb '#d62728' title 'regression open'",
    ]
    if lines["expected"]:
        plots.append("%s using 1:2 with lines lw 2 lc rgb '#9467bd' title 'expected'"
                     % json.dumps(exp))
    else:
        cmds.append('set label "no expected figure: Soft-RoCE has no PCIe link and a '
                    'made-up rate" at graph 0.01, graph 0.96 font ",9" tc rgb "#666666"')
    cmds.append("plot " + ", \\\n  ".join(plots))
    script = os.path.join(tmp, "plot.gp")
    with open(script, "w") as f:
        f.write("\n".join(cmds) + "\n")
    subprocess.run(["gnuplot", script], check=True)
    for name in os.listdir(tmp):
        os.unlink(os.path.join(tmp, name))
    os.rmdir(tmp)
    print(png)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
