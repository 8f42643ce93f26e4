# SPDX-License-Identifier: MIT
"""Scoring of the localization bench: bench/scale's Tracker (fleet_score.py)
follows every suspect GET /api/v1/regressions lists, host-side and in the
fabric; here a fault may be named by several keys (a cable by either of
its directed links) and the figures of issue 19 are computed:

- recall: faults named by a right suspect while on / faults injected;
- precision: right suspects / (right + false) suspects, each opening
  counted once; a link of a faulty spine is *related* (part of the
  element at fault), as bench/scale's device of a faulty port, and counts
  neither way;
- top-1: faults whose first suspect opened while they were on (or within
  a period after the repair; those right for another fault on at once
  aside) is a right one / faults injected;
- periods from the fault to detection (the first suspect of any kind,
  right or not) and from the fault's first test to the right suspect;
- false alarms per healthy hour: false suspects opened in the healthy
  tail, per hour of the shipped period (the tail is time-scaled as the
  rest: an hour is 3,600 s / the shipped period's periods).
"""
import os
import statistics
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "scale"))
import fleet_score  # noqa: E402


class LocTracker(fleet_score.Tracker):
    """fleet_score.Tracker with faults named by several keys and the
    links of a faulty spine related to it; @routes (loc_sim.Routes) says
    which spine a link enters or leaves."""

    def __init__(self, faults, fabric, period, routes, source="suspects",
                 grace=1.0):
        super().__init__(faults, fabric, period, source, grace)
        self.routes = routes
        self.by_key = {}
        for f in faults:
            for k in getattr(f.element, "keys", [f.key]):
                self.by_key.setdefault(k, []).append(f)

    def spine_of(self, switch, port):
        """The spine the link leaving @switch by @port touches, or None."""
        if switch.startswith("spine"):
            return switch
        if switch.startswith("leaf") and port and port > self.routes.per:
            return self.routes.spine(port - self.routes.per - 1)
        return None

    def classify(self, s):
        super().classify(s)
        if s.verdict != "false" or s.kind != "fabric_link":
            return
        # a link of a spine at fault: part of the element, not it
        for f in self.by_key.get(("switch", self.spine_of(s.host, s.port)),
                                 []):
            if self._in(f, s.since, self.grace):
                s.verdict, s.fault = "related", f
                s.note = "a link of the faulty %s" % f.key[1]
                return


def _med(v):
    return round(statistics.median(v), 2) if v else None


def localize_score(tracker, begin, end, tail_periods, period,
                   shipped_period, late=2.0):
    """Issue 19's figures over the run [@begin, @end]; the last
    @tail_periods periods are the healthy tail."""
    P = period
    base = tracker.score(begin, end, late)
    susp = list(tracker.suspects.values())
    right = [s for s in susp if s.verdict in ("right", "after repair")]
    false = [s for s in susp if s.verdict == "false"]
    faults = [f for f in tracker.faults if f.t_on is not None]
    top1, detect, to_right, by_kind = 0, [], [], {}
    for f in faults:
        lo, hi = f.t_on - fleet_score.EPS, (f.t_off or end) + P
        # suspects of this fault's time, but those of another fault on
        # at once
        seen = sorted((s for s in susp if lo <= s.since <= hi and
                       s.fault in (f, None)), key=lambda s: s.since)
        first = seen[0] if seen else None
        ok = first is not None and first.fault is f and first.verdict in (
            "right", "after repair")
        top1 += ok
        if first is not None:
            detect.append((first.since - f.t_on) / P)
        k = by_kind.setdefault(f.kind, {"faults": 0, "found": 0, "top1": 0,
                                        "periods": []})
        k["faults"] += 1
        k["top1"] += ok
    for e in base["faults"]:
        k = by_kind[e["kind"]]
        k["found"] += e["found"]
        if e["periods"] is not None:
            k["periods"].append(e["periods"])
            to_right.append(e["periods"])
    for k in by_kind.values():
        k["periods"] = _med(k.pop("periods"))
    tail_from = end - tail_periods * P
    healthy = [s for s in false if s.since >= tail_from]
    hour = 3600.0 / shipped_period  # shipped periods in an hour
    return dict(base, **{
        "recall": round(base["found"] / len(faults), 4) if faults else None,
        "precision": (round(len(right) / (len(right) + len(false)), 4)
                      if right or false else None),
        "top1": round(top1 / len(faults), 4) if faults else None,
        "detect_median": _med(detect),
        "detect_max": round(max(detect), 2) if detect else None,
        "right_median": _med(to_right),
        "right_max": round(max(to_right), 2) if to_right else None,
        "suspects_right": len(right), "suspects_false": len(false),
        "suspects_related": sum(1 for s in susp if s.verdict == "related"),
        "healthy_periods": tail_periods,
        "healthy_false": [s.describe() for s in healthy],
        "false_per_healthy_hour": (round(len(healthy) * hour / tail_periods,
                                         2) if tail_periods else None),
        "by_kind": by_kind,
    })
