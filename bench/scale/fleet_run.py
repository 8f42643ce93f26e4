# SPDX-License-Identifier: MIT
"""The fleet driver's run (fleet.py): the simulated daemons, the fault
clock, the pollers, and the figures of one run, in one asyncio loop.

A host behaves as docs/probe.md describes the daemon: it registers, posts
a counter report, fetches its plan at registration and every
plan_interval seconds (a random phase per host), and runs every test it
initiates at its not_before, or at once when the plan came after
not_before but before the deadline, and drops it when the deadline
passed first (the daemon's run_pick_plan). A replan that moves a test it
has not started moves it; a test the new plan no longer lists is not
run. Each result is computed when its test starts (the faults on then)
and posted when the profile's length has passed.
"""
import asyncio
import os
import time

import fleet_score
from fleet_http import HttpError, Pool, percentile

CLK = os.sysconf("SC_CLK_TCK")


def proc_cpu(pid):
    """utime + stime of @pid in seconds (/proc/PID/stat), None if gone."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / CLK


def own_cpu():
    t = os.times()
    return t.user + t.system


class Stats:
    def __init__(self):
        self.planned = set()     # plan ids this driver's hosts initiate
        self.started = 0
        self.missed = 0          # deadline passed before the plan came
        self.moved = 0           # rescheduled by a replan
        self.dropped = 0         # no longer in the plan before they ran
        self.unknown_peer = 0
        self.posted = 0
        self.failed_posts = 0
        self.post_errors = []
        self.outcomes = {}
        self.busy = 0
        self.late = []           # (when, seconds a post went after due)
        self.fetch_late = []     # (when, seconds a fetch went after due)
        self.per_period = {}     # run period -> results posted
        self.confirm = []        # (period, tests_confirm) from coverage
        self.coverage = []       # (period, planned pairs, unplaced)


class Driver:
    def __init__(self, a, fabric, faults, period, settings, pid, port, rng):
        self.a, self.fabric, self.faults = a, fabric, faults
        self.period, self.settings, self.pid = period, settings, pid
        self.port, self.rng = port, rng
        self.plan_interval = a.plan_interval
        prof = settings.get("planner_profiles", {})
        slot = float(settings["planner"]["slot_seconds"])
        self.length = {p: float(prof.get(p, slot)) for p in ("bw", "lat")}
        self.tracker = fleet_score.Tracker(faults, fabric, period, a.suspects)
        self.stats = Stats()
        self.pending = {h.name: {} for h in fabric.hosts}  # id -> (task, nb)
        self.done = {h.name: set() for h in fabric.hosts}
        self.inflight = set()
        self.stop = False
        self.begin = self.end = None
        self.cpu_series = []     # (run period, collector cpu s, driver s)
        self.total = (a.warmup + a.waves * (a.hold + a.settle) + a.tail)
        for f in faults:
            f.period_on = a.warmup + f.wave * (a.hold + a.settle)
            f.period_off = f.period_on + a.hold

    # ---- the daemons ---------------------------------------------------

    async def register_all(self):
        async def one(h):
            st, plan = await self.pool.request(
                "POST", "/api/v1/register", self.fabric.registration(h),
                h.token, kind="register")
            if st != 200:
                raise HttpError("register %s: %d %s" % (h.name, st, plan))
            st, ans = await self.pool.request(
                "POST", "/api/v1/report", self.fabric.report(h, time.time()),
                h.token, kind="report")
            if st != 200:
                raise HttpError("report %s: %d %s" % (h.name, st, ans))
            self.schedule(h, plan)
        await asyncio.gather(*(one(h) for h in self.fabric.hosts))

    async def host_loop(self, h):
        nxt = time.time() + self.rng.uniform(0, self.plan_interval)
        while not self.stop:
            await asyncio.sleep(max(0.0, nxt - time.time()))
            if self.stop:
                return
            fetched = time.time()
            self.stats.fetch_late.append((fetched, fetched - nxt))
            try:
                st, plan = await self.pool.request(
                    "GET", "/api/v1/plan", None, h.token, kind="plan")
            except HttpError as e:
                self.stats.post_errors.append(str(e))
                st, plan = 0, None
            every = self.plan_interval
            if st == 200 and plan and not self.stop:
                self.schedule(h, plan)
                # as the daemon: the collector's refresh_seconds when
                # shorter (it adds confirmation tests mid-period)
                refresh = float(plan.get("refresh_seconds") or 0)
                if 0 < refresh < every:
                    every = refresh
            # As the daemon: the next fetch plan_interval after this one
            # began, never a burst to catch up.
            nxt = fetched + every

    def schedule(self, h, plan):
        """Take @h's plan as the daemon does (module comment)."""
        now = time.time()
        pending, done = self.pending[h.name], self.done[h.name]
        listed = set()
        for t in plan.get("tests") or []:
            tid = t["id"]
            listed.add(tid)
            self.stats.planned.add(tid)
            if tid in done:
                continue
            nb = float(t.get("not_before") or now)
            if tid in pending:
                if pending[tid][1] == nb:
                    continue
                pending.pop(tid)[0].cancel()
                self.stats.moved += 1
            dl = t.get("deadline")
            if dl is not None and now > float(dl):
                self.stats.missed += 1
                done.add(tid)
                continue
            task = asyncio.ensure_future(self.run_test(h, t, max(nb, now)))
            pending[tid] = (task, nb)
        for tid in [k for k in pending if k not in listed]:
            pending.pop(tid)[0].cancel()
            self.stats.dropped += 1

    async def run_test(self, h, t, start):
        await asyncio.sleep(max(0.0, start - time.time()))
        if self.stop:
            return
        self.pending[h.name].pop(t["id"], None)
        self.done[h.name].add(t["id"])
        loc, peer = t.get("local") or {}, t.get("peer") or {}
        a = self.fabric.port_by_key.get(("port", h.name, loc.get("device"),
                                         loc.get("port")))
        b = self.fabric.port_by_key.get(("port", peer.get("host"),
                                         peer.get("device"),
                                         peer.get("port_num")))
        if a is None or b is None:
            self.stats.unknown_peer += 1
            return
        self.stats.started += 1
        dur = self.length.get(t["profile"], 1.0)
        r, hit = self.fabric.result(a, b, t["profile"], t["id"], start, dur,
                                    self.rng, self.a, entry=t)
        self.evidence(a, b, hit, start)
        task = asyncio.current_task()
        self.inflight.add(task)
        try:
            await asyncio.sleep(max(0.0, start + dur - time.time()))
            await self.post(h, r, start + dur)
        finally:
            self.inflight.discard(task)

    def evidence(self, a, b, hit, start):
        for f in hit:
            f.tests += 1
            if f.first_test is None or start < f.first_test:
                f.first_test = start
            f.partners.add(b.key if f.key in (a.key, a.device.key) else a.key)
            # Two faulty elements in one test (the multi fault's ports in
            # one leaf and rail): each names the other.
            f.met.update("%s %s" % (g.key[0], "/".join(map(str, g.key[1:])))
                         for g in hit if g is not f)

    async def post(self, h, r, due):
        s = self.stats
        s.late.append((due, time.time() - due))
        body = {"version": 1, "host": h.name, "results": [r],
                "dropped": {"spool_full": 0, "expired": 0}}
        try:
            st, ans = await self.pool.request("POST", "/api/v1/results", body,
                                              h.token, kind="results")
        except HttpError as e:
            st, ans = 0, str(e)
        if st != 200:
            s.failed_posts += 1
            if len(s.post_errors) < 20:
                s.post_errors.append("%s: %s %s" % (h.name, st, ans))
            return
        s.posted += 1
        s.outcomes[r["outcome"]] = s.outcomes.get(r["outcome"], 0) + 1
        s.busy += 1 if r.get("busy") else 0
        k = self.run_period(r["started"])
        s.per_period[k] = s.per_period.get(k, 0) + 1

    # ---- clock, faults, pollers ---------------------------------------

    def run_period(self, t):
        return int((t - self.begin) // self.period) if self.begin else -1

    async def sleep_until(self, t):
        while not self.stop and time.time() < t:
            await asyncio.sleep(min(1.0, t - time.time()))

    async def fault_clock(self):
        for k in range(self.total + 1):
            await self.sleep_until(self.begin + k * self.period)
            now = time.time()
            self.progress(k)
            for f in self.faults:
                if f.period_on == k:
                    self.apply(f, now, on=True)
                if f.period_off == k:
                    self.apply(f, now, on=False)
            for f in self.faults:
                if f.kind == "pcie" and k in (f.period_on, f.period_off):
                    h = f.element.host
                    await self.pool.request("POST", "/api/v1/report",
                                            self.fabric.report(h, now),
                                            h.token, kind="report")

    def apply(self, f, now, on):
        table = (self.fabric.device_fault if f.key[0] == "device"
                 else self.fabric.port_fault)
        if on:
            f.t_on = now
            table[f.key] = f
        else:
            f.t_off = now
            table.pop(f.key, None)

    async def poll_regressions(self):
        while not self.stop:
            await self.regressions_once()
            await asyncio.sleep(self.a.poll)

    async def regressions_once(self):
        from fleet_conf import ADMIN
        try:
            st, ans = await self.admin.request("GET", "/api/v1/regressions",
                                              None, ADMIN, kind="regressions")
        except HttpError:
            return
        if st == 200 and isinstance(ans, dict):
            self.tracker.observe(time.time(), ans)

    async def poll_coverage(self):
        from fleet_conf import ADMIN
        if self.a.coverage <= 0:
            return
        k = 0
        while not self.stop and k < self.total:
            await self.sleep_until(self.begin + (k + 0.95) * self.period)
            try:
                st, ans = await self.admin.request(
                    "GET", "/api/v1/coverage", None, ADMIN, kind="coverage")
            except HttpError:
                st = 0
            if st == 200 and isinstance(ans, dict):
                self.stats.coverage.append((k, len(ans.get("pairs") or []),
                                            ans.get("tests_unplaced")))
                if "tests_confirm" in ans:
                    self.stats.confirm.append((k, ans["tests_confirm"]))
            k += self.a.coverage

    def progress(self, k):
        cpu, mine = proc_cpu(self.pid), own_cpu()
        self.cpu_series.append((k, cpu, mine))
        if self.a.quiet or k == 0:
            return
        c0, m0 = self.cpu_series[-2][1], self.cpu_series[-2][2]
        st = self.tracker.samples[-1] if self.tracker.samples else None
        print("fleet: period %d/%d %s: %d results, collector CPU %.2f s, "
              "driver %.2f s, p99 ms: results %s, plan %s, connection wait "
              "%s; suspects %s right / %s false, %d link regressions" % (
                  k, self.total, self.phase(k - 1),
                  self.stats.per_period.get(k - 1, 0),
                  (cpu or 0) - (c0 or 0), mine - m0,
                  self.recent_p99(self.pool.times, "results"),
                  self.recent_p99(self.pool.times, "plan"),
                  self.recent_p99(self.pool.waits, "plan"),
                  st[2] if st else "-", st[3] if st else "-",
                  st[5] if st else 0), flush=True)

    @staticmethod
    def recent_p99(table, kind):
        v = table.get(kind, [])[-5000:]
        return "%.0f" % (percentile(v, 0.99) * 1e3) if v else "-"

    def phase(self, k):
        on = [f for f in self.faults if f.period_on <= k < f.period_off]
        if on:
            return "(faults on: %s)" % ", ".join(sorted({f.group for f in on}))
        return "(warm-up)" if k < self.a.warmup else "(healthy)"

    # ---- the run -------------------------------------------------------

    async def main(self):
        self.pool = Pool(self.port, self.a.connections)
        # The operator's polls on their own connections, from their own
        # address: a probe's requests never wait behind them, nor they
        # behind the probes' (as on a real fabric).
        self.admin = Pool(self.port, 2, first_addr=250)
        t0, c0, m0 = time.time(), proc_cpu(self.pid), own_cpu()
        await self.register_all()
        reg = {"seconds": round(time.time() - t0, 2),
               "collector_cpu": round(proc_cpu(self.pid) - c0, 2),
               "driver_cpu": round(own_cpu() - m0, 2)}
        # Start at the next period boundary, at least a second ahead.
        self.begin = (int((time.time() + 1) // self.period) + 1) * self.period
        hosts = [asyncio.ensure_future(self.host_loop(h))
                 for h in self.fabric.hosts]
        pollers = [asyncio.ensure_future(self.poll_regressions()),
                   asyncio.ensure_future(self.poll_coverage())]
        await self.sleep_until(self.begin)
        c1, m1 = proc_cpu(self.pid), own_cpu()
        await self.fault_clock()
        self.end = time.time()
        c2, m2 = proc_cpu(self.pid), own_cpu()
        self.stop = True
        for h in self.pending.values():
            for task, _ in h.values():
                task.cancel()
        if self.inflight:
            await asyncio.wait(list(self.inflight), timeout=60)
        for t in hosts + pollers:
            t.cancel()
        await asyncio.gather(*hosts, *pollers, return_exceptions=True)
        self.stop = False
        await self.regressions_once()
        self.tracker.finish(time.time())
        await self.pool.close()
        await self.admin.close()
        return self.summary(reg, c2 - c1, m2 - m1)

    def summary(self, reg, cpu, mine):
        a, s, P = self.a, self.stats, self.period
        wall = self.end - self.begin
        periods = wall / P
        score = self.tracker.score(self.begin, self.end, a.late_periods)
        cov = [c for _, c, _ in s.coverage]
        # Behind: after the warm-up (the start-up's burst of first plans
        # and new links is not the steady state), a fetch (p99) came a
        # whole interval late, when the next one was due; or results went
        # out an interval after their tests.
        since = self.begin + a.warmup * P
        fetch = [v for t, v in s.fetch_late if t >= since]
        posts = [v for t, v in s.late if t >= since]
        behind = []
        late = percentile(fetch, 0.99)
        if late is not None and late > self.plan_interval:
            behind.append("plan fetches p99 %.1f s late (every %g s)"
                          % (late, self.plan_interval))
        late = percentile(posts, 0.99)
        if late is not None and late > self.plan_interval:
            behind.append("results posted p99 %.1f s after their tests "
                          "ended" % late)
        return {
            "behind": behind,
            "hosts": a.hosts, "ports": len(self.fabric.port_by_key),
            "leaves": len(self.fabric.leaves()), "hosts_per_leaf":
            a.hosts_per_leaf, "period": P, "plan_interval": self.plan_interval,
            "seed": a.seed, "kinds": a.kinds, "waves": a.waves,
            "timeline": {"warmup": a.warmup, "hold": a.hold,
                         "settle": a.settle, "tail": a.tail,
                         "periods": self.total},
            "begin": self.begin, "end": self.end, "score": score,
            "register": reg,
            "cpu": {"collector_s": round(cpu, 2),
                    "per_period_s": round(cpu / periods, 3),
                    "share": round(cpu / wall, 4),
                    "driver_s": round(mine, 2),
                    "driver_share": round(mine / wall, 4),
                    "series": self.cpu_series},
            "http": dict({k: self.pool.stats(k) for k in self.pool.times},
                         **{k: self.admin.stats(k) for k in self.admin.times}),
            "http_errors": dict(self.pool.errors, **self.admin.errors),
            "http_retries": self.pool.retries + self.admin.retries,
            "connections": a.connections,
            "tests": {
                "planned": len(s.planned), "started": s.started,
                "missed_deadline": s.missed, "moved": s.moved,
                "dropped_by_replan": s.dropped,
                "unknown_peer": s.unknown_peer, "results_posted": s.posted,
                "results_failed_posts": s.failed_posts,
                "post_errors": s.post_errors, "outcomes": s.outcomes,
                "busy": s.busy,
                "per_period": round(s.posted / periods, 1),
                "post_late_p99_s": _r(percentile(posts, 0.99)),
                "post_late_max_s": _r(max(posts) if posts else None),
                "fetch_late_p99_s": _r(percentile(fetch, 0.99)),
                "warmup_fetch_late_p99_s": _r(percentile(
                    [v for t, v in s.fetch_late if t < since], 0.99)),
                "coverage_pairs_median": sorted(cov)[len(cov) // 2]
                if cov else None,
                "tests_confirm": s.confirm},
        }


def _r(v):
    return None if v is None else round(v, 3)
