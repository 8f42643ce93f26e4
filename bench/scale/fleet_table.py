#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The fleet driver's table: one row per run (summary.json of fleet.py),
then, per run, the settings it used and every fault's fate.

    fleet_table.py RUN_DIR/summary.json [...]
"""
import json
import sys


def _f(v, fmt="%.1f", none="-"):
    return none if v is None else fmt % v


def row(s):
    sc, cpu, http = s["score"], s["cpu"], s["http"]
    plan, res = http.get("plan", {}), http.get("results", {})
    reopen = "%d" % sc["open_after_repair"]
    if sc["open_after_repair"]:
        reopen += " (closed in %s / %s periods, %d open at the end)" % (
            _f(sc["close_periods_median"]), _f(sc["close_periods_max"]),
            sc["open_at_end"])
    return "| %s | %d s%s | %d of %d | %s / %s | %d | %d (%s) | %s | %.2f s (%.1f%%) | " \
        "%s / %s | %s / %s | %.0f%% |" % (
            "{:,}".format(s["hosts"]), s["period"],
            " (fell behind)" if s.get("behind") else "", sc["found"],
            sc["elements"], _f(sc["periods_median"]), _f(sc["periods_max"]),
            len(sc["late"]), len(sc["false"]), _f(sc["false_per_100"]),
            reopen, cpu["per_period_s"], 100 * cpu["share"],
            _f(plan.get("p50_ms"), "%.1f"), _f(plan.get("p99_ms"), "%.0f"),
            _f(res.get("p50_ms"), "%.1f"), _f(res.get("p99_ms"), "%.0f"),
            100 * cpu["driver_share"])


HEAD = ("| hosts | period | faults found | periods from first test to the "
        "right suspect (median / max) | late (> 2 periods) | false suspects "
        "(per 100 periods) | suspects open after the repair | collector CPU "
        "per period (share) | plan p50 / p99 ms | results p50 / p99 ms | "
        "driver CPU |\n|---:|---:|---|---|---:|---|---|---|---|---|---:|")


def fault_line(e):
    where = "%s, %s (%s)" % (e["element"], e["label"], e["group"])
    ft = ("first test %.2f periods after the fault" % (
        (e["first_test"] - e["t_on"]) / e["_P"]) if e["first_test"]
        else "never tested")
    met = "; tested against %s" % ", ".join(e["met"]) if e["met"] else (
        "; never tested against another faulty element"
        if e["group"].startswith("multi") else "")
    if e["found"]:
        what = "named %.2f periods after its first test%s%s" % (
            e["periods"] or 0.0,
            " (%.2f after the first bad result the collector counted)"
            % e["periods_from_first_bad"]
            if e.get("periods_from_first_bad") is not None else "",
            " (LATE)" if e["late"] else "")
    else:
        what = "MISSED: " + e["reason"]
    return "  - %s: %s, results that could show it: %d; %s%s" % (
        where, ft, e["tests"], what, met)


def details(s):
    sc, t = s["score"], s["tests"]
    out = ["", "%s hosts (%d ports, %d %s of up to %d hosts), period %d s, "
           "plan fetched every %g s, seed %d, scored on `%s` (%d polls)" % (
               "{:,}".format(s["hosts"]), s["ports"], s["leaves"],
               "leaf" if s["leaves"] == 1 else "leaves", s["hosts_per_leaf"],
               s["period"], s["plan_interval"], s["seed"], sc["source"],
               sc["polls"]),
           "  " + s.get("scaled", ""),
           "  settings: " + s.get("settings", ""),
           "  timeline: %(warmup)d healthy periods, waves of %(hold)d faulty "
           "+ %(settle)d healthy, %(tail)d healthy at the end: %(periods)d "
           "periods" % s["timeline"],
           "  tests: %s planned, %d run, %.0f results a period (%d busy, "
           "outcomes %s), %d missed their deadline before the plan came, %d "
           "moved and %d dropped by replans; tests_confirm %s; link "
           "regressions opened %d (%d naming a faulty port)" % (
               "{:,}".format(t["planned"]), t["started"], t["per_period"],
               t["busy"], t["outcomes"], t["missed_deadline"], t["moved"],
               t["dropped_by_replan"],
               [c for _, c in t["tests_confirm"]][-3:] or "absent",
               sc["links_opened"], sc["links_naming_fault"]),
           "  keeps up after the warm-up: %s; result posts at most %s s "
           "after due (p99 %s s), plan fetches p99 %s s late (in the "
           "warm-up %s s); %d connections, %d retries, errors %s; "
           "registration %s" % (
               ("NO: " + "; ".join(s["behind"])) if s.get("behind")
               else "yes", t["post_late_max_s"], t["post_late_p99_s"],
               t["fetch_late_p99_s"], t.get("warmup_fetch_late_p99_s"),
               s["connections"], s["http_retries"],
               s["http_errors"] or "none", s["register"]),
           "  faults:"]
    for e in sc["faults"]:
        e["_P"] = s["period"]
        out.append(fault_line(e))
    if sc["false"]:
        out.append("  false suspects:")
        out += ["  - " + d for d in sc["false"][:20]]
    if sc["related"]:
        out.append("  related (a faulty element's port or device):")
        out += ["  - " + d for d in sc["related"][:10]]
    return "\n".join(out)


def render(summaries):
    return "\n".join([HEAD] + [row(s) for s in summaries] +
                     [details(s) for s in summaries])


def main(argv):
    if not argv or argv[0] in ("-h", "--help"):
        print(__doc__.strip())
        return 0 if argv else 2
    sums = []
    for p in argv:
        with open(p) as f:
            sums.append(json.load(f))
    print(render(sums))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
