#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Draw what a 10,000-host scrape costs before and after a change of the
exporter, from one output of bench_results.py --before, with gnuplot
(Debian's gnuplot-nox, pngcairo): for each row of the block cache (share
of hosts changed x format), the exporter's CPU and curl's wall time of
the build before and of the build after, which scraped the same changes
of one database, side by side; and issue 21's goal (0.5 s) as a line.

    bench/exporter/plot.py BENCH.txt OUT.png [--labels before,after]

BENCH.txt is the Markdown bench_results.py prints (other lines ignored).
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

ROW = re.compile(r"^\| block cache, after a change of ([\d.]+)% of the hosts, (.+?)"
                 r"( \(before: [^)]*\))? \|.*\| ([\d.]+) \| ([\d.]+) \|$")


def rows(path):
    """{label: (wall, cpu)} of the rows of the build after, and of the one
    before, in the order printed."""
    after, before = {}, {}
    with open(path) as f:
        for line in f:
            m = ROW.match(line.strip())
            if not m:
                continue
            label = "%s%% %s" % (m.group(1), "gzip" if "gzip" in m.group(2) else "text")
            (before if m.group(3) else after)[label] = (float(m.group(4)), float(m.group(5)))
    return before, after


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("bench")
    ap.add_argument("png")
    ap.add_argument("--labels", default="before,after")
    a = ap.parse_args()
    names = a.labels.split(",")
    b, c = rows(a.bench)
    order = [k for k in c if k in b]
    if not order:
        sys.exit("plot.py: no row of the block cache for both builds (--before)")
    with tempfile.TemporaryDirectory() as tmp:
        dat = os.path.join(tmp, "d.dat")
        with open(dat, "w") as f:
            for k in order:
                f.write('"%s" %s %s %s %s\n' % (k, b[k][1], c[k][1],
                                                  b[k][0], c[k][0]))
        gp = os.path.join(tmp, "p.gp")
        with open(gp, "w") as f:
            f.write("""set terminal pngcairo size 1200,520 font ",10"
set output "%(png)s"
set multiplot layout 1,2 title "Exporter, 10,000 hosts (2.2 million samples): a scrape after a change of a share of the hosts"
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set boxwidth 0.9
set xtics rotate by -30 nomirror
set grid ytics
set key top center
set yrange [0:*]
set arrow 1 from graph 0, first 0.5 to graph 1, first 0.5 nohead dt 2 lw 2 lc rgb "red" front
set label 1 "goal 0.5 s" at graph 0.01, first 0.53 tc rgb "red" front
set ylabel "exporter CPU, s (median)"
set title "CPU"
plot "%(dat)s" using 2:xtic(1) title "%(b)s" lc rgb "#999999", "" using 3 title "%(c)s" lc rgb "#2b6cb0"
set ylabel "wall, s (curl, median)"
set title "wall"
plot "%(dat)s" using 4:xtic(1) title "%(b)s" lc rgb "#999999", "" using 5 title "%(c)s" lc rgb "#2b6cb0"
unset multiplot
""" % {"png": a.png, "dat": dat, "b": names[0], "c": names[1]})
        subprocess.run(["gnuplot", gp], check=True)
    print(a.png)


if __name__ == "__main__":
    main()
