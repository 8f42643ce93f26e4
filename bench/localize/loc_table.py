#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The localization bench's table: one row per run (summary.json of
localize.py), then per run its subnet, the settings it used, the figures
by fault kind and every fault's fate.

    loc_table.py RUN_DIR/summary.json [...]
"""
import json
import sys


def _f(v, fmt="%.1f", none="-"):
    return none if v is None else fmt % v


def _pct(v):
    return _f(None if v is None else 100 * v, "%.1f%%")


HEAD = ("| hosts | period | faults | recall | precision | top-1 | periods "
        "fault -> detection (median / max) | periods first test -> right "
        "suspect (median / max) | late (> 2) | false alarms per healthy "
        "hour | collector CPU per period (share) |\n"
        "|---:|---:|---:|---:|---:|---:|---|---|---:|---:|---|")


def late(lz):
    """Faults named more than 2 periods after their first test: the
    issue's goal for every kind (the scorer's own "late", which fails the
    CI form, allows a flapping link one period more)."""
    return sum(1 for e in lz["faults"] if e["found"] and (e["periods"] or 0) > 2)


def row(s):
    lz, cpu = s["localize"], s["cpu"]
    return "| %s | %d s%s | %d | %s | %s | %s | %s / %s | %s / %s | %d | " \
        "%s | %.2f s (%.1f%%) |" % (
            "{:,}".format(s["hosts"]), s["period"],
            " (fell behind)" if s.get("behind") else "", lz["elements"],
            _pct(lz["recall"]), _pct(lz["precision"]), _pct(lz["top1"]),
            _f(lz["detect_median"], "%.2f"), _f(lz["detect_max"], "%.2f"),
            _f(lz["right_median"], "%.2f"), _f(lz["right_max"], "%.2f"),
            late(lz), _f(lz["false_per_healthy_hour"], "%.2f"),
            cpu["per_period_s"], 100 * cpu["share"])


def details(s):
    lz, sub = s["localize"], s["subnet"]
    out = ["%s hosts: %d leaves of %d hosts, %d spines, LMC %d, %d directed "
           "links between switches (ibsim + opensm up in %.1f s); %d "
           "results the driver could not route" % (
               "{:,}".format(s["hosts"]), sub["leaves"],
               sub["hosts_per_leaf"], sub["spines"], sub["lmc"],
               sub["links"], sub["start_seconds"], sub["unrouted_results"]),
           "  settings: " + s["settings"],
           "  " + s["scaled"],
           "  suspects: %d right, %d false, %d related (a link of a faulty "
           "spine); healthy tail %d periods: %d false" % (
               lz["suspects_right"], lz["suspects_false"],
               lz["suspects_related"], lz["healthy_periods"],
               len(lz["healthy_false"]))]
    for kind, k in sorted(lz["by_kind"].items()):
        out.append("  %s: %d of %d found, top-1 %d, periods to the right "
                   "suspect (median) %s" % (kind, k["found"], k["faults"],
                                            k["top1"], _f(k["periods"],
                                                          "%.2f")))
    for e in lz["faults"]:
        if e["found"]:
            what = "named %.2f periods after its first test%s" % (
                e["periods"] or 0, " (LATE)" if e["late"]
                else " (more than 2)" if (e["periods"] or 0) > 2 else "")
        else:
            what = "MISSED: %s" % e["reason"]
        out.append("  - %s, %s: %s; results that could show it: %d" % (
            e["element"], e["label"], what, e["tests"]))
    for d in lz["false"]:
        out.append("  - false: " + d)
    return "\n".join(out)


def render(summaries):
    return "\n".join([HEAD] + [row(s) for s in summaries] + [""] +
                     [details(s) for s in summaries])


def main(argv):
    if not argv or argv[0] in ("-h", "--help"):
        print(__doc__.strip())
        return 0 if argv else 2
    sums = []
    for path in argv:
        with open(path) as f:
            sums.append(json.load(f))
    print(render(sums))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
