#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Draw one fleet run (summary.json of bench/scale/fleet.py) with gnuplot
(Debian's gnuplot-nox, pngcairo), in two panels sharing the time axis in
planner periods:

- above, per period: the faulty elements on (a line), the suspects open
  that name them (green), the suspects naming a healthy element (red)
  and those naming a faulty element's port or device (orange);
- below, one row per faulty element: the fault from injection to repair
  (a bar), its first test (a tick) and the moment the collector named it
  (a dot; a cross at the right end when it never did).

    bench/scale/plot.py RUN_DIR/summary.json [--png FILE] [--title TEXT]
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile


def rows(path, data):
    with open(path, "w") as f:
        for r in data or [[float("nan")] * 4]:
            f.write(" ".join("%.6g" % x if isinstance(x, (int, float))
                             else json.dumps(x) for x in r) + "\n")
    return json.dumps(path)


def faults(s):
    """Per faulty element: (row, on, off, first test, named, label), in
    periods from the start of the run."""
    P, t0, out = s["period"], s["begin"], []
    order = sorted(s["score"]["faults"], key=lambda e: (e["t_on"], e["group"]))
    for i, e in enumerate(order):
        def per(t):
            return float("nan") if t is None else (t - t0) / P
        short = e["group"]
        share = re.search(r"\d+%", e["label"])
        if short.startswith("multi") and share:
            short += " at " + share.group(0)
        out.append((i + 1, per(e["t_on"]), per(e["t_off"]),
                    per(e["first_test"]), per(e["detected"]),
                    "%s  %s" % (e["element"].split(" ", 1)[1], short)))
    return out


def script(s, tmp, png, title, related="its port or device"):
    series = s["score"]["series"]  # [k, active, right, false, related, links]
    f = faults(s)
    end = s["timeline"]["periods"]
    per = rows(os.path.join(tmp, "per"), [[k + 0.5] + v for k, *v in series])
    bars = rows(os.path.join(tmp, "bars"), [(r, a, b) for r, a, b, *_ in f])
    first = rows(os.path.join(tmp, "first"), [(r, t) for r, _, _, t, *_ in f])
    named = rows(os.path.join(tmp, "named"),
                 [(r, d) for r, _, _, _, d, _ in f if d == d])
    never = rows(os.path.join(tmp, "never"),
                 [(r, end) for r, _, _, _, d, _ in f if d != d])
    ymax = max([v for row in series for v in row[1:6]] + [1]) + 1
    sc = s["score"]
    cmds = [
        'set terminal pngcairo size 1100,%d font "DejaVu Sans,10"'
        % (430 + 22 * len(f)),
        "set output %s" % json.dumps(png),
        "set termoption noenhanced",
        "set multiplot layout 2,1 title %s" % json.dumps(title or (
            "%s hosts, %d s periods: %d of %d faults named, %d false "
            "suspects (scored on %s)%s" % (
                "{:,}".format(s["hosts"]), s["period"], sc["found"],
                sc["elements"], len(sc["false"]), sc["source"],
                "; the run fell behind" if s.get("behind") else ""))),
        # Both panels on one time axis: the same margins.
        "set lmargin at screen 0.27",
        "set rmargin at screen 0.71",
        "set xrange [0:%d]" % end,
        "set ytics 1" if ymax <= 12 else "set ytics autofreq",
        "set grid ytics lc rgb '#dddddd'",
        "set key outside right top vertical",
        "set ylabel 'per period (most open)'",
        "set yrange [0:%g]" % ymax,
        "set style fill solid 0.6 noborder",
        "set boxwidth 0.28",
        "plot %s using ($1-0.3):3 with boxes lc rgb '#2ca02c' title "
        "'suspects naming a faulty element', \\\n"
        "  %s using 1:4 with boxes lc rgb '#d62728' title "
        "'suspects naming a healthy one', \\\n"
        "  %s using ($1+0.3):5 with boxes lc rgb '#ff7f0e' title "
        "%s, \\\n"
        "  %s using ($1-0.5):2 with steps lw 2 lc rgb '#222222' title "
        "'faulty elements on', \\\n"
        "  %s using ($1-0.5):6 with steps dt 2 lc rgb '#9467bd' title "
        "'link regressions open'" % (
            per, per, per, "'%s'" % related.replace("'", ""), per, per),
        "set xlabel 'planner periods into the run'",
        "set ylabel ''",
        "set yrange [0.3:%g] reverse" % (len(f) + 0.7),
        "set ytics (%s) font ',8'" % ", ".join(
            # tic labels are formats: a % is %%
            "%s %d" % (json.dumps(lab.replace("%", "%%")), r)
            for r, _, _, _, _, lab in f),
        "set grid xtics lc rgb '#eeeeee'",
        "plot %s using 2:1:($3-$2):(0) with vectors nohead lw 8 "
        "lc rgb '#f4b6b6' title 'fault on', \\\n"
        "  %s using 2:1 with points pt 2 ps 1.2 lc rgb '#1f77b4' title "
        "'first test', \\\n"
        "  %s using 2:1 with points pt 7 ps 1.2 lc rgb '#2ca02c' title "
        "'named', \\\n"
        "  %s using 2:1 with points pt 1 ps 1.5 lc rgb '#d62728' title "
        "'never named'" % (bars, first, named, never),
        "unset multiplot",
    ]
    return "\n".join(cmds) + "\n"


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("summary", help="summary.json of a fleet run")
    p.add_argument("--png", help="default: scale.png beside the summary")
    p.add_argument("--title", default="")
    p.add_argument("--related", default="its port or device",
                   help="the legend of suspects related to a fault (a "
                   "faulty port's device; bench/localize: a link of a "
                   "faulty spine)")
    a = p.parse_args(argv)
    with open(a.summary) as f:
        s = json.load(f)
    png = a.png or os.path.join(os.path.dirname(a.summary) or ".",
                                "scale.png")
    with tempfile.TemporaryDirectory(prefix="scaleplot.") as tmp:
        gp = os.path.join(tmp, "plot.gp")
        with open(gp, "w") as f:
            f.write(script(s, tmp, png, a.title, a.related))
        subprocess.run(["gnuplot", gp], check=True)
    print(png)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
