# SPDX-License-Identifier: MIT
"""Scoring of the fleet driver: what GET /api/v1/regressions named, against
the faults the driver injected.

Each poll's open suspects are matched to the faults: a suspect of kind
`port` naming a faulty port's host, device and port, or of kind `device`
naming a faulty device, whose `since` lies in the fault's window, is
*right*; a port of a faulty device or the device of a faulty port is
*related* (not the element at fault, not a healthy one either), as is
the faulty element named for the other metric; one whose
`since` falls in the period after the repair is *after repair* (the fault
named too late); anything else names a healthy element and is *false*.
A collector without the `suspects` list (before issue 17) is scored on
its older `suspect_ports` (kind port) when the source is "auto".

The periods to detection count from the fault's first test: the first
result that could show it (ok, not busy, of the metric the fault affects,
crossing the element after the injection) to the `since` of the right
suspect.
"""
import statistics

EPS = 1.0  # seconds of clock slack between the driver and the collector


def element_name(key):
    return "/".join(str(k) for k in key[1:])


class Suspect:
    def __init__(self, ident, entry, now):
        self.ident = ident
        self.kind, self.host, self.device, self.port = ident[:4]
        self.profile, self.metric, self.since = ident[4:]
        # a link between switches and a switch (issue 19) are named by
        # the switch (its description) and the port the traffic leaves
        self.key = (("port", self.host, self.device, self.port)
                    if self.kind == "port" else
                    ("fabric_link", self.host, self.port)
                    if self.kind == "fabric_link" else
                    ("switch", self.host) if self.kind == "switch" else
                    ("device", self.host, self.device))
        self.entry = entry
        self.first_seen = now
        self.closed = None   # the collector's time, else when it went
        self.verdict = None
        self.fault = None
        self.note = ""

    def is_open(self):
        return self.closed is None

    def describe(self):
        return "%s %s (%s %s) since %.0f%s" % (
            self.kind, element_name(self.key), self.profile, self.metric,
            self.since, (": " + self.note) if self.note else "")


def _entries(ans, source):
    """([(ident, entry)] open, {ident: closed time}, the source used)."""
    if source in ("auto", "suspects") and "suspects" in ans:
        out, closed = [], {}
        for lst, into in ((ans.get("suspects") or [], out),
                          (ans.get("suspects_closed") or [], None)):
            for e in lst:
                kind = e.get("kind")
                if kind in ("fabric_link", "switch"):
                    ident = (kind, e.get("a_node_desc"), None,
                             e.get("a_port"), e.get("profile"),
                             e.get("metric"), e.get("since"))
                else:
                    port = e.get("port") if kind == "port" else None
                    ident = (kind, e.get("host"), e.get("device"), port,
                             e.get("profile"), e.get("metric"),
                             e.get("since"))
                if into is None:
                    closed[ident] = e.get("closed")
                else:
                    into.append((ident, e))
        return out, closed, "suspects"
    if source in ("auto", "suspect_ports"):
        out = [(("port", e.get("host"), e.get("device"), e.get("port"),
                 e.get("profile"), e.get("metric"), e.get("since")), e)
               for e in ans.get("suspect_ports") or []]
        return out, {}, "suspect_ports"
    return [], {}, "none"


class Tracker:
    """Follows the suspects the collector names, poll after poll."""

    def __init__(self, faults, fabric, period, source="auto", grace=1.0):
        self.faults, self.period, self.source = faults, period, source
        self.grace = grace * period
        self.by_key = {}
        for f in faults:
            self.by_key.setdefault(f.key, []).append(f)
        self.ports_of = {d.key: [p.key for p in d.ports]
                         for d in fabric.device_by_key.values()}
        self.suspects = {}   # ident -> Suspect
        self.links = {}      # regression id -> names a faulty port?
        self.samples = []    # (now, active, right, false, related, links)
        self.used = None     # the source of the last poll
        self.polls = 0

    # ---- matching ------------------------------------------------------

    def _in(self, f, since, grace=0.0):
        if f.t_on is None or since < f.t_on - EPS:
            return False
        return f.t_off is None or since <= f.t_off + grace

    def classify(self, s):
        for f in self.by_key.get(s.key, []):
            if self._in(f, s.since, self.grace) and s.metric != f.metric():
                s.verdict, s.fault = "related", f
                s.note = "the faulty element, on %s (its fault is on %s)" % (
                    s.metric, f.metric())
                return
            if self._in(f, s.since):
                s.verdict, s.fault = "right", f
                return
            if self._in(f, s.since, self.grace):
                s.verdict, s.fault = "after repair", f
                return
        rel = []
        if s.kind == "port":
            rel = self.by_key.get(("device", s.host, s.device), [])
        else:
            for pk in self.ports_of.get(s.key, []):
                rel += self.by_key.get(pk, [])
        for f in rel:
            if self._in(f, s.since, self.grace):
                s.verdict, s.fault = "related", f
                s.note = "%s of the faulty %s" % (s.kind, element_name(f.key))
                return
        s.verdict = "false"
        keys = [s.key] if s.kind == "port" else self.ports_of.get(s.key, [])
        met = sorted({f.group for f in self.faults
                      if any(k in f.partners for k in keys)})
        s.note = ("tested against faulty %s" % ", ".join(met) if met
                  else "no faulty partner")

    # ---- polls ---------------------------------------------------------

    def observe(self, now, ans):
        """Take one answer of GET /api/v1/regressions seen at @now."""
        self.polls += 1
        entries, closed, self.used = _entries(ans, self.source)
        seen = set()
        for ident, e in entries:
            seen.add(ident)
            s = self.suspects.get(ident)
            if s is None:
                s = self.suspects[ident] = Suspect(ident, e, now)
                if not isinstance(s.since, (int, float)):
                    s.since = now
                self.classify(s)
            s.closed = None
        for ident, s in self.suspects.items():
            if ident in seen:
                continue
            if s.closed is None:
                s.closed = closed.get(ident) or now
        faulty = set(self.by_key)
        for r in ans.get("open") or []:
            if r.get("id") not in self.links:
                ends = {("port", r.get("host"), r.get("device"), r.get("port")),
                        ("port", r.get("peer_host"), r.get("peer_device"),
                         r.get("peer_port"))}
                self.links[r.get("id")] = bool(ends & faulty)
        self._sample(now, len(ans.get("open") or []))

    def _sample(self, now, links):
        active = sum(1 for f in self.faults if f.t_on is not None
                     and f.t_on <= now and (f.t_off is None or now < f.t_off))
        opened = [s for s in self.suspects.values() if s.is_open()]
        right = {s.fault.key for s in opened
                 if s.verdict in ("right", "after repair")}
        false = {s.key for s in opened if s.verdict == "false"}
        related = {s.key for s in opened if s.verdict == "related"}
        self.samples.append((now, active, len(right), len(false),
                             len(related), links))

    def finish(self, now):
        """The run is over: suspects still open stay open (closed None)."""
        self.end = now

    # ---- the score -----------------------------------------------------

    @staticmethod
    def late_extra(f):
        """Periods more a fault kind may take: a port that flaps (every
        other result bad) shows half the evidence a steady fault does per
        test, so it gets one period more than the goal's 2."""
        return 1.0 if f.kind == "flap" else 0.0

    def _fault_score(self, f, late):
        P = self.period
        named = [s for s in self.suspects.values() if s.fault is f
                 and s.verdict in ("right", "after repair")]
        right = [s for s in named if s.verdict == "right"]
        det = min((s.since for s in right), default=None)
        e = {"group": f.group, "label": f.label, "kind": f.kind,
             "element": "%s %s" % (f.key[0], element_name(f.key)),
             "metric": f.metric(), "wave": f.wave, "t_on": f.t_on,
             "t_off": f.t_off, "first_test": f.first_test, "tests": f.tests,
             "met": sorted(f.met), "found": det is not None,
             "detected": det, "periods": None, "periods_from_fault": None,
             "late": False, "reason": None,
             "suspects": [s.describe() for s in named]}
        if det is not None:
            e["periods_from_fault"] = round((det - f.t_on) / P, 2)
            first = min(right, key=lambda x: x.since)
            fb = first.entry.get("first_bad")
            if isinstance(fb, (int, float)):
                e["periods_from_first_bad"] = round((det - fb) / P, 2)
            if f.first_test is not None:
                e["periods"] = round(max(0.0, det - f.first_test) / P, 2)
                e["late"] = e["periods"] > late + self.late_extra(f)
        elif f.first_test is None:
            e["reason"] = "never tested while faulty"
        elif named:
            e["reason"] = "named only after the repair"
        else:
            e["reason"] = "no suspect named it"
        e.update(self._after_repair(f, named))
        return e

    def _after_repair(self, f, named):
        """How long the suspects of @f stayed open after its repair."""
        if f.t_off is None:
            return {"open_after_repair": False, "close_periods": None,
                    "open_at_end": False}
        past = [s for s in named if s.closed is None or s.closed > f.t_off]
        if not past:
            return {"open_after_repair": False, "close_periods": None,
                    "open_at_end": False}
        still = any(s.closed is None for s in past)
        close = None if still else round(
            (max(s.closed for s in past) - f.t_off) / self.period, 2)
        return {"open_after_repair": True, "close_periods": close,
                "open_at_end": still}

    def score(self, begin, end, late=2.0):
        """The run's figures; @begin/@end: the scored run (wall clock)."""
        P = self.period
        faults = [self._fault_score(f, late) for f in self.faults
                  if f.t_on is not None]
        found = [e for e in faults if e["found"]]
        per = [e["periods"] for e in found if e["periods"] is not None]
        false = [s for s in self.suspects.values() if s.verdict == "false"]
        related = [s for s in self.suspects.values()
                   if s.verdict == "related"]
        periods = (end - begin) / P
        reopen = [e for e in faults if e["open_after_repair"]]
        closes = [e["close_periods"] for e in reopen
                  if e["close_periods"] is not None]
        return {
            "source": self.used, "polls": self.polls,
            "periods": round(periods, 2),
            "faults": faults, "elements": len(faults), "found": len(found),
            "missed": [e for e in faults if not e["found"]],
            "late": [e for e in found if e["late"]],
            "periods_median": (round(statistics.median(per), 2)
                               if per else None),
            "periods_max": round(max(per), 2) if per else None,
            "false": [s.describe() for s in false],
            "false_per_100": (round(len(false) * 100.0 / periods, 2)
                              if periods > 0 else None),
            "related": [s.describe() for s in related],
            "open_after_repair": len(reopen),
            "close_periods_median": (round(statistics.median(closes), 2)
                                     if closes else None),
            "close_periods_max": round(max(closes), 2) if closes else None,
            "open_at_end": sum(1 for e in faults if e["open_at_end"]),
            "links_opened": len(self.links),
            "links_naming_fault": sum(1 for v in self.links.values() if v),
            "series": self.per_period(begin),
        }

    def per_period(self, begin):
        """Per run period: the most faults active, right, false and
        related suspects open, and link regressions open, in any poll."""
        out = {}
        for now, *vals in self.samples:
            k = int((now - begin) // self.period)
            if k < 0:
                continue
            row = out.setdefault(k, [0] * len(vals))
            out[k] = [max(a, b) for a, b in zip(row, vals)]
        return [[k] + out[k] for k in sorted(out)]
