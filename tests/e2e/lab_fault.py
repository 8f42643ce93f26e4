#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Proof by fault injection: a degraded link becomes an alert naming it.

Two lab VMs (tests/lab/ibpulse-lab run --vms 2): vm1 runs the collector,
the exporter and the probe daemon lab-1, vm2 the daemon lab-2 (guest side:
lab-fault-guest.sh); the planner tests lab-1 against lab-2 once a period,
in a direction drawn per period. On this host a real Prometheus loaded
with the shipped rules (grafana/alerts/ibpulse.rules.yml, unchanged: the
baseline rules have no `for:`) scrapes the exporter through a port
forward. Phases, each checked by asking Prometheus's HTTP API and the
collector's GET /api/v1/regressions:

1. warm-up and a healthy control: the links learn their baselines; no
   regression opens and no baseline alert is ever pending or firing;
2. per --fault: degrade vm2's eth0 (tbf at a share of the link's learned
   threshold for bandwidth, netem delay for latency); the regression
   opens in the database within one K-of-M window of the link's results,
   ibpulse_link_regression shows it and the alert fires naming both ends;
   then remove the fault and see the regression close ("recovered") and
   the alert resolve.

The figures (results and periods from fault to alert, from repair to
resolve, the healthy noise against the threshold, false alarms) go to
--summary as JSON; --out keeps the Prometheus series of the run for
bench/regression/plot.py. The meson test `lab-regression` runs it short;
bench/regression/run.sh runs it long.
"""
import argparse
import json
import os
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.parse

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.normpath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(TOP, "tests", "exporter"))
import harness as H  # noqa: E402

HOSTS = ("lab-1", "lab-2")
BASELINE_ALERTS = ("IbpulseLinkBandwidthRegression|IbpulseLinkLatencyRegression|"
                   "IbpulseLinkUnderExpected|IbpulseSuspect|IbpulseGroupPairSuspect")
ADMIN = "lab-fault-admin-token-0123456789"
PROFILES = {
    # name: (probe.ini section body, metric judged)
    # 4 KiB messages: 128 in flight (the engine's send depth) are 512 KiB
    # to drain after the test's 2 s, which a shaped link does in seconds;
    # 64 KiB ones would be 8 MiB and miss the test's deadline.
    "bw": ("test = write_bw\nsize = 4096\nqps = 1\nduration = 2\n", "bandwidth"),
    "lat": ("test = write_lat\nsize = 2\niters = 100\n", "latency"),
}
ALERT_OF = {"bandwidth": "IbpulseLinkBandwidthRegression",
            "latency": "IbpulseLinkLatencyRegression"}
SUMMARY_OF = {"bandwidth": "Bandwidth regression on %s rxe0/1 -> %s rxe0/1 (%s)",
              "latency": "Latency regression on %s rxe0/1 -> %s rxe0/1 (%s)"}


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--lab", required=True, help="tests/lab/ibpulse-lab")
    p.add_argument("--build", required=True, help="meson build directory")
    p.add_argument("--rules", default=os.path.join(TOP, "grafana", "alerts", "ibpulse.rules.yml"))
    p.add_argument("--prometheus", default="prometheus")
    p.add_argument("--period", type=int, default=15, help="planner period, s (10-...)")
    p.add_argument("--slot", type=float, default=15, help="planner slot, s")
    p.add_argument("--profiles", default="bw", help="profiles the probes register: bw, lat, bw,lat")
    p.add_argument("--healthy-results", type=int, default=6,
                   help="ok results per profile (either direction) in the healthy phase,"
                   " once both links have a baseline")
    p.add_argument("--healthy-seconds", type=float, default=0,
                   help="at least this long a healthy phase, s")
    p.add_argument("--fault", action="append", choices=("bw", "lat"), default=[],
                   help="faults to inject in turn (default: bw)")
    p.add_argument("--fault-share", type=float, default=0.15,
                   help="bw fault: tbf rate as a share of the link's baseline")
    p.add_argument("--delay-share", type=float, default=4,
                   help="lat fault: netem delay as a multiple of the link's threshold")
    p.add_argument("--hold", type=float, default=0,
                   help="keep a fault this long after its alert fired, s")
    p.add_argument("--min-results", type=int, default=3)
    p.add_argument("--bad-results", type=int, default=3)
    p.add_argument("--judged-results", type=int, default=5)
    p.add_argument("--good-results", type=int, default=3)
    # Not the shipped 0.2 and 3: single rounds of rxe under TCG on a loaded
    # 2-core host range from 0.1x to 2x their median (bench/README.md,
    # "Fault injection"), which at spread_factor 3 puts the threshold at 0.
    p.add_argument("--margin", type=float, default=0.7)
    p.add_argument("--latency-margin", type=float, default=1.0)
    p.add_argument("--spread-factor", type=float, default=1)
    p.add_argument("--count-false-alarms", action="store_true",
                   help="count regressions in the healthy phase instead of failing")
    p.add_argument("--timeout", type=int, default=1100, help="whole lab run, s")
    p.add_argument("--summary", help="write the figures here (JSON)")
    p.add_argument("--out", help="keep the run's Prometheus series and database here")
    a = p.parse_args(argv)
    a.fault = a.fault or ["bw"]
    a.profiles = [x for x in a.profiles.split(",") if x]
    for x in a.profiles:
        if x not in PROFILES:
            p.error("--profiles: unknown profile '%s' (bw, lat)" % x)
    for f in a.fault:
        if f not in a.profiles:
            p.error("--fault %s needs the profile %s in --profiles" % (f, f))
    if a.period < 10:
        p.error("--period must be at least 10 (the planner's minimum)")
    return a


# ---- configuration written for the guests -------------------------------

def write_conf(a, conf):
    """collector.ini, exporter.ini, lab-N.ini and tokens into @conf (a
    /tmp directory the guests see read-only at the same path)."""
    tokens = {h: "token-%s-0123456789abcdef" % h for h in HOSTS}
    db = "/tmp/fault-vm/ibpulse.db"
    prof_secs = "".join("%s = %g\n" % (p, a.slot) for p in a.profiles)
    with open(os.path.join(conf, "collector.ini"), "w") as f:
        f.write("""[collector]
listen = 0.0.0.0
port = 19470
db = %s
schema_dir = %s
threads = 2
checkpoint_interval = 2
admin_token = %s
[planner]
period = %d
group_label = leaf
duty_cycle = 1
slot_seconds = %g
replan_interval = 0
[planner_profiles]
%s[baseline]
min_results = %d
bad_results = %d
judged_results = %d
good_results = %d
margin = %g
latency_margin = %g
spread_factor = %g
[tokens]
%s""" % (db, os.path.join(TOP, "schema"), ADMIN, a.period, a.slot, prof_secs,
         a.min_results, a.bad_results, a.judged_results, a.good_results, a.margin,
         a.latency_margin, a.spread_factor,
         "".join("%s = %s\n" % kv for kv in tokens.items())))
    with open(os.path.join(conf, "exporter.ini"), "w") as f:
        f.write("[exporter]\nlisten = 0.0.0.0\nport = 9471\ndb = %s\nstale_after = 15\n"
                "test_period = 600\n" % db)
    profiles = "".join("[profile %s]\n%s" % (p, PROFILES[p][0]) for p in a.profiles)
    # busy_tolerance 100: rxe under TCG retransmits on timers across the
    # lossy UDP link between the VMs, and its ports then move 20 to 40
    # times the test's own packets with nothing else running; at the
    # default (0.1) almost every result would be flagged busy and left out
    # of the baselines. Slow counters and pushes leave vm1's one vCPU to
    # the tests; test_timeout 20: under load a control message between the
    # VMs took over 10 s ("waiting for CHALLENGE: Connection timed out").
    for n, h in enumerate(HOSTS, 1):
        with open(os.path.join(conf, h + ".token"), "w") as f:
            f.write(tokens[h] + "\n")
        collector = "127.0.0.1" if n == 1 else "192.0.2.1"
        with open(os.path.join(conf, h + ".ini"), "w") as f:
            f.write("""[probe]
host = %s
collector_url = http://%s:19470/api/v1/report
token_file = /tmp/fault-vm/%s.token
netdev_stats = false
connect_timeout = 2
timeout = 10
[daemon]
counters_interval = 5
push_interval = 5
plan_interval = 5
duty_cycle = 1
jitter = 0
responder_address = 192.0.2.%d
responder_port = 18611
test_timeout = 20
busy_tolerance = 100
spool_dir = /tmp/fault-vm/spool
control_socket = /tmp/fault-vm/probe.sock
backoff_min = 0.2
backoff_max = 2
[labels]
leaf = leaf1
%s""" % (h, collector, h, n, profiles))
    with open(os.path.join(conf, "conf.json"), "w") as f:
        json.dump(vars(a), f)


# ---- the run ------------------------------------------------------------

class Run:
    def __init__(self, a, procs, tmp):
        self.a, self.procs, self.tmp = a, procs, tmp
        self.events = []        # (host time, what)
        self.lab = None
        self.lab_run = None
        self.prom = None

    def note(self, what):
        now = time.time()
        self.events.append((now, what))
        print("lab-fault: +%5.0f s %s" % (now - self.t0, what), flush=True)

    # -- the lab's output and its run directory
    def lab_output(self):
        with open(self.lab_log, errors="replace") as f:
            return f.read()

    def lab_alive(self):
        if self.lab.poll() is not None:
            raise H.Failure("the lab exited with %s:\n%s" % (self.lab.returncode,
                                                              self.lab_output()[-4000:]))
        return True

    def start_lab(self):
        a = self.a
        self.he, self.hc = H.free_port(), H.free_port()
        self.lab_log = os.path.join(self.tmp, "lab.out")
        argv = [a.lab, "run", "--vms", "2", "--keep", "--timeout", str(a.timeout),
                "--forward", "%d:9471" % self.he, "--forward", "%d:19470" % self.hc,
                "--env", "FAULT_CONF=" + self.conf, "--env", "FAULT_BUILD=" + a.build,
                "--", "bash", os.path.join(HERE, "lab-fault-guest.sh")]
        with open(self.lab_log, "wb") as out:
            self.lab = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT,
                                        stdin=subprocess.DEVNULL)

        def ready():
            self.lab_alive()
            text = self.lab_output()
            for line in text.splitlines():
                if line.startswith("[vm1] lab-fault: LAB_RUN="):
                    self.lab_run = line.split("=", 1)[1].strip()
            return (self.lab_run and "[vm1] lab-fault: vm1 ready" in text
                    and "[vm2] lab-fault: vm2 ready" in text)
        H.wait_for("both VMs ready (boot, collector, exporter, daemons)", ready,
                   timeout=300, interval=1)
        self.note("VMs ready, run directory %s" % self.lab_run)

    def stop_lab(self):
        """Ask the guests to stop (vm1 copies its database into the run
        directory) and wait for the lab to end."""
        if not self.lab:
            return
        if self.lab_run and os.path.isdir(self.lab_run):
            open(os.path.join(self.lab_run, "stop"), "w").close()
        try:
            self.lab.wait(timeout=120)
        except subprocess.TimeoutExpired:
            self.lab.terminate()
            self.lab.wait(timeout=60)

    def set_fault(self, spec):
        tmp = os.path.join(self.lab_run, "fault.tmp")
        with open(tmp, "w") as f:
            f.write(spec + "\n")
        os.rename(tmp, os.path.join(self.lab_run, "fault"))

        def applied():
            self.lab_alive()
            with open(os.path.join(self.lab_run, "fault.applied")) as f:
                words = f.read().split()
            return float(words[-1]) if " ".join(words[:-1]) == spec else None
        guest_t = H.wait_for("vm2 applying fault '%s'" % spec, applied, timeout=60,
                             interval=0.5)
        self.note("fault '%s' applied in vm2" % spec)
        return time.time(), guest_t

    # -- Prometheus and the collector's API
    def start_prometheus(self):
        # Scrapes every 15 s, not faster: the exporter shares vm1's one
        # emulated vCPU with the collector, a probe and rxe, and a 20 KB
        # /metrics took 5 to 16 s there under load (0.2 s natively).
        a = self.a
        port = H.free_port()
        cfg = os.path.join(self.tmp, "prometheus.yml")
        with open(cfg, "w") as f:
            f.write("""global:
  scrape_interval: 15s
  scrape_timeout: 15s
  evaluation_interval: 2s
rule_files:
  - %s
scrape_configs:
  - job_name: ibpulse
    static_configs:
      - targets: ['127.0.0.1:%d']
""" % (json.dumps(os.path.abspath(a.rules)), self.he))
        tsdb = os.path.join(a.out, "tsdb") if a.out else os.path.join(self.tmp, "tsdb")
        p = self.procs.start("prometheus", [
            a.prometheus, "--config.file=" + cfg, "--storage.tsdb.path=" + tsdb,
            "--web.listen-address=127.0.0.1:%d" % port, "--log.level=warn"])
        self.prom = "http://127.0.0.1:%d" % port

        def ready():
            self.procs.check_alive(p)
            return H.http(self.prom + "/-/ready", timeout=5)[0] == 200
        H.wait_for("prometheus ready", ready, timeout=90, interval=0.5)
        # The shipped file loaded whole: every alert it defines is there.
        st, _, body = H.http(self.prom + "/api/v1/rules")
        groups = json.loads(body)["data"]["groups"]
        names = {r["name"] for g in groups for r in g["rules"]}
        with open(a.rules) as f:
            want = {ln.split(":", 1)[1].strip() for ln in f if ln.strip().startswith("- alert:")}
        H.check(want and want == names, "rules loaded %s, the file has %s"
                % (sorted(names), sorted(want)))
        self.note("prometheus at %s with %d rules of %s" % (self.prom, len(names), a.rules))

    def query(self, expr, t=None):
        q = {"query": expr}
        if t is not None:
            q["time"] = "%.3f" % t
        st, _, body = H.http(self.prom + "/api/v1/query?" + urllib.parse.urlencode(q), timeout=20)
        if st != 200:
            raise ValueError("query %s: HTTP %d %s" % (expr, st, body[:300]))
        return json.loads(body)["data"]["result"]

    def query_range(self, expr, start, end, step=2):
        q = urllib.parse.urlencode({"query": expr, "start": "%.3f" % start,
                                    "end": "%.3f" % end, "step": step})
        st, _, body = H.http(self.prom + "/api/v1/query_range?" + q, timeout=60)
        if st != 200:
            raise ValueError("query_range %s: HTTP %d %s" % (expr, st, body[:300]))
        return json.loads(body)["data"]["result"]

    def alerts(self):
        st, _, body = H.http(self.prom + "/api/v1/alerts", timeout=20)
        return json.loads(body)["data"]["alerts"]

    def regressions(self):
        st, _, body = H.http("http://127.0.0.1:%d/api/v1/regressions" % self.hc,
                             headers={"Authorization": "Bearer " + ADMIN}, timeout=20)
        if st != 200:
            raise ValueError("GET /api/v1/regressions: HTTP %d %s" % (st, body[:300]))
        return json.loads(body)

    def ok_counts(self):
        """{profile: ok results of either direction} as Prometheus has them."""
        out = {}
        for s in self.query('ibpulse_test_results_total{outcome="ok"}'):
            p = s["metric"]["profile"]
            out[p] = out.get(p, 0) + int(float(s["value"][1]))
        return out

    def wait_results(self, what, n, base=None, min_seconds=0):
        """Until every profile has @n more ok results than in @base, and
        @min_seconds passed."""
        base = base or {}
        start = time.time()
        # One test a period at best; under load a third of them fail.
        timeout = min_seconds + (2 * len(self.a.profiles) * n + 10) * self.a.period + 60

        def done():
            self.lab_alive()
            c = self.ok_counts()
            return (all(c.get(p, 0) - base.get(p, 0) >= n for p in self.a.profiles)
                    and time.time() - start >= min_seconds and c)
        c = H.wait_for(what, done, timeout=timeout, interval=2)
        self.note("%s: ok results %s" % (what, ", ".join(
            "%s %d" % (p, c.get(p, 0)) for p in self.a.profiles)))
        return c


# ---- phases -------------------------------------------------------------

def healthy_phase(run, a):
    t_start = run.t0
    # Warm-up: both links of every profile judged, by their own baseline
    # or, before min_results of their own, by their ports' pooled ones.
    for p in a.profiles:
        metric = PROFILES[p][1]
        fam = ("ibpulse_link_bandwidth_baseline_bytes_per_second" if metric == "bandwidth"
               else "ibpulse_link_latency_baseline_seconds")

        def judged():
            run.lab_alive()
            return len(run.query('%s{profile="%s"}' % (fam, p))) == 2
        H.wait_for("baselines of both %s links" % p, judged,
                   timeout=(4 * len(a.profiles) * a.min_results + 20) * a.period + 60,
                   interval=2)
    run.note("warm-up done: both links have a baseline")
    base = run.ok_counts()
    run.t_healthy = time.time()
    run.wait_results("healthy phase", a.healthy_results, base, a.healthy_seconds)
    t_end = time.time()
    span = "%ds" % (t_end - t_start + 5)
    fired = run.query('max_over_time(ALERTS{alertname=~"%s"}[%s])' % (BASELINE_ALERTS, span))
    regressed = run.query('max_over_time(ibpulse_link_regression[%s]) == 1' % span)
    api = run.regressions()
    false = len(api["open"]) + len(api["closed"])
    run.healthy = {"seconds": t_end - t_start, "healthy_seconds": t_end - run.t_healthy,
                   "alerts": [s["metric"] for s in fired],
                   "regressions": api["open"] + api["closed"], "false_alarms": false}
    if not a.count_false_alarms:
        H.check(not fired, "healthy run: baseline alerts pending or firing: %s"
                % [s["metric"] for s in fired])
        H.check(not regressed, "healthy run: ibpulse_link_regression was 1: %s"
                % [s["metric"] for s in regressed])
        H.check(false == 0, "healthy run: regressions in the collector: %s"
                % json.dumps(api["open"] + api["closed"]))
        judged = run.query("ibpulse_link_regression == 0")
        H.check(len(judged) == 2 * len(a.profiles),
                "healthy run: not every link judged: %s" % [s["metric"] for s in judged])
    run.note("healthy for %.0f s: %d baseline alerts, %d regressions"
             % (t_end - t_start, len(fired), false))


def link_value(run, fam, host, profile):
    r = run.query('%s{host="%s",profile="%s"}' % (fam, host, profile))
    H.check(len(r) == 1, "%s of %s/%s: %s" % (fam, host, profile, r))
    return float(r[0]["value"][1])


def fault_spec(run, a, kind):
    if kind == "lat":
        # netem on vm2's egress lengthens one way of each round trip, and
        # a latency test reports half the round trip: a delay of a few
        # times the threshold (which healthy rxe under TCG puts at 5 to
        # 12 ms) is what a regression needs to stand out of the noise.
        thr = max(x for x in (link_value(run, "ibpulse_link_latency_threshold_seconds", h, "lat")
                              for h in HOSTS))
        return "lat %dms" % max(1, round(thr * a.delay_share * 1000)), thr
    # The bandwidth fault is set from what the link learned: a tbf rate at
    # --fault-share of its baseline and at most half its threshold (bad
    # below it), so the fault is deep enough whatever TCG's speed today.
    base = link_value(run, "ibpulse_link_bandwidth_baseline_bytes_per_second", "lab-2", "bw")
    thr = link_value(run, "ibpulse_link_bandwidth_threshold_bytes_per_second", "lab-2", "bw")
    H.check(thr > 0, "lab-2 -> lab-1 learned a threshold of 0 (baseline %.0f B/s): its results"
            " spread so far that no fault can count; lower --spread-factor" % base)
    kbit = max(256, int(min(base * a.fault_share, thr * 0.5) * 8 / 1000))
    return "bw %dkbit" % kbit, thr


def wait_alert(run, metric, profile, want_host):
    """Until the collector has the regression open, Prometheus shows
    ibpulse_link_regression 1 and the alert fires naming both ends of a
    link between lab-1 and lab-2 (initiated by @want_host if given)."""
    name = ALERT_OF[metric]
    seen = {}

    def fired():
        run.lab_alive()
        api = run.regressions()
        for r in api["open"]:
            if (r["metric"] == metric and r["profile"] == profile
                    and (not want_host or r["host"] == want_host)):
                seen.setdefault("api", (time.time(), r))
        if "api" not in seen:
            return None
        h = seen["api"][1]["host"]
        reg = run.query('ibpulse_link_regression{host="%s",profile="%s",metric="%s"} == 1'
                        % (h, profile, metric))
        if reg:
            seen.setdefault("metric", (time.time(), reg[0]["metric"]))
        for al in run.alerts():
            if (al["labels"].get("alertname") == name and al["labels"].get("host") == h
                    and al["labels"].get("profile") == profile and al["state"] == "firing"):
                seen.setdefault("alert", (time.time(), al))
        return "metric" in seen and "alert" in seen and seen
    # A link is tested in about 1 period of 2 x profiles (the direction and
    # the profile are drawn per period), and a third of the tests fail.
    timeout = (3 * len(run.a.profiles) * run.a.bad_results + 10) * run.a.period + 60
    H.wait_for("%s firing for %s" % (name, want_host or "a link of lab-1 and lab-2"),
               fired, timeout=timeout, interval=1)
    reg = seen["api"][1]
    al = seen["alert"][1]
    lb, ann = al["labels"], al["annotations"]
    peer = "lab-1" if reg["host"] == "lab-2" else "lab-2"
    want = {"alertname": name, "host": reg["host"], "device": "rxe0", "port": "1",
            "peer_host": peer, "peer_device": "rxe0", "peer_port": "1",
            "profile": profile, "severity": "warning"}
    for k, v in want.items():
        H.check(lb.get(k) == v, "alert label %s=%r, want %r: %s" % (k, lb.get(k), v, lb))
    H.check(ann.get("summary") == SUMMARY_OF[metric] % (reg["host"], peer, profile),
            "alert summary: %r" % ann.get("summary"))
    desc = ann.get("description", "")
    H.check("%s rxe0 port 1" % reg["host"] in desc and "%s rxe0 port 1" % peer in desc
            and "baseline of" in desc and "unknown" not in desc,
            "alert description does not name both ends and the baseline: %r" % desc)
    H.check((reg["peer_host"], reg["peer_device"], reg["peer_port"]) == (peer, "rxe0", 1),
            "regression's other end: %s" % reg)
    run.note("%s firing: %s (%s)" % (name, ann["summary"], desc.split(". See")[0]))
    return seen


def wait_resolved(run, metric, reg):
    name = ALERT_OF[metric]
    seen = {}

    def resolved():
        run.lab_alive()
        api = run.regressions()
        for r in api["closed"]:
            if r["id"] == reg["id"]:
                seen.setdefault("api", (time.time(), r))
        if "api" not in seen:
            return None
        H.check(seen["api"][1]["reason"] == "recovered",
                "regression closed as %s" % seen["api"][1]["reason"])
        q = run.query('ibpulse_link_regression{host="%s",profile="%s",metric="%s"}'
                      % (reg["host"], reg["profile"], metric))
        if q and float(q[0]["value"][1]) == 0:
            seen.setdefault("metric", (time.time(), None))
        firing = [al for al in run.alerts() if al["labels"].get("alertname") == name
                  and al["labels"].get("host") == reg["host"]]
        if not firing and "metric" in seen:
            seen.setdefault("alert", (time.time(), None))
        return "alert" in seen and seen
    timeout = (3 * len(run.a.profiles) * run.a.good_results + 10) * run.a.period + 60
    H.wait_for("%s resolved" % name, resolved, timeout=timeout, interval=1)
    run.note("regression %d closed (recovered), %s resolved" % (reg["id"], name))
    return seen


def fault_phase(run, a, kind):
    profile = kind
    metric = PROFILES[profile][1]
    spec, thr = fault_spec(run, a, kind)
    t_fault, g_fault = run.set_fault(spec)
    # tbf on vm2's egress slows what vm2 sends: the bandwidth link that
    # lab-2 initiates (write_bw's data flows initiator -> responder).
    seen = wait_alert(run, metric, profile, "lab-2" if kind == "bw" else None)
    reg = seen["api"][1]
    if a.hold:
        time.sleep(a.hold)
    t_repair, g_repair = run.set_fault("none")
    gone = wait_resolved(run, metric, reg)
    other = None
    if kind == "bw":
        # The other direction's data never crossed the shaper: it must
        # have stayed silent all along.
        span = "%ds" % (time.time() - t_fault + 5)
        other = run.query('max_over_time(ibpulse_link_regression{host="lab-1",profile="bw"}[%s])'
                          % span)
        H.check(other and all(float(x["value"][1]) == 0 for x in other),
                "lab-1 -> lab-2, whose data vm2's shaper never saw, regressed too: %s" % other)
    return {"kind": kind, "spec": spec, "threshold_at_fault": thr,
            "t_fault": t_fault, "guest_t_fault": g_fault,
            "t_api_open": seen["api"][0], "t_metric": seen["metric"][0],
            "t_firing": seen["alert"][0],
            "alert_active_at": seen["alert"][1].get("activeAt"),
            "alert": seen["alert"][1], "regression": reg,
            "t_repair": t_repair, "guest_t_repair": g_repair,
            "t_api_closed": gone["api"][0], "t_resolved": gone["alert"][0],
            "closed": gone["api"][1]}


# ---- figures from the database --------------------------------------------

def link_results(db, host, profile, metric):
    col = "bw_avg_bytes_per_second" if metric == "bandwidth" else "lat_median_seconds"
    with sqlite3.connect("file:%s?mode=ro" % db, uri=True) as c:
        return c.execute(
            "SELECT started, %s, started + coalesce(duration_seconds, 0) FROM result"
            " WHERE host = ? AND profile = ? AND outcome = 'ok' AND NOT busy"
            " AND %s IS NOT NULL ORDER BY started" % (col, col), (host, profile)).fetchall()


def replay_noise(rows, a, metric, until):
    """The collector's judgement replayed over the healthy results: how
    far single results stray from the rolling baseline, and how many
    would be bad alone (the K-of-M window is what keeps them silent)."""
    acc, bad, n, ratios = [], 0, 0, []
    for started, v, _ in rows:
        if started > until:
            break
        if len(acc) >= a.min_results:
            b = statistics.median(acc[-20:])
            s = 1.4826 * statistics.median(abs(x - b) for x in acc[-20:])
            if metric == "bandwidth":
                thr = min(b * (1 - a.margin), b - a.spread_factor * s)
                is_bad = v < thr
            else:
                thr = max(b * (1 + a.latency_margin), b + a.spread_factor * s, b + 1e-6)
                is_bad = v > thr
            n += 1
            bad += is_bad
            ratios.append(v / b)
        else:
            is_bad = False
        if not is_bad:
            acc.append(v)
    vals = [v for s, v, _ in rows if s <= until]
    med = statistics.median(vals) if vals else None
    return {"results": len(vals), "median": med,
            "min_share": min(vals) / med if vals else None,
            "max_share": max(vals) / med if vals else None,
            "judged": n, "single_bad": bad,
            "share_p10": sorted(ratios)[len(ratios) // 10] if ratios else None}


def figures(run, a, faults, db):
    out = {"period": a.period, "profiles": a.profiles, "healthy": run.healthy,
           "settings": {k: getattr(a, k) for k in (
               "min_results", "bad_results", "judged_results", "good_results",
               "margin", "latency_margin", "spread_factor", "fault_share", "delay_share")},
           "faults": [], "noise": {}}
    for p in a.profiles:
        metric = PROFILES[p][1]
        for h in HOSTS:
            rows = link_results(db, h, p, metric)
            out["noise"]["%s/%s" % (h, p)] = replay_noise(
                rows, a, metric, faults[0]["guest_t_fault"] if faults else 1e18)
    for f in faults:
        reg = f["regression"]
        metric = PROFILES[f["kind"]][1]
        rows = link_results(db, reg["host"], reg["profile"], metric)
        # Results that ended after the fault was applied (one that started
        # just before may have run under it) up to the one that opened it.
        after = [r for r in rows if r[2] >= f["guest_t_fault"] and r[0] <= reg["opened"]]
        repaired = [r for r in rows if r[2] >= f["guest_t_repair"]
                    and r[0] <= f["closed"]["closed"]]
        g = {"kind": f["kind"], "spec": f["spec"], "link": "%s -> %s" % (reg["host"],
                                                                           reg["peer_host"]),
             "baseline": reg["baseline"], "threshold": reg["threshold"],
             "figure": reg["figure"], "results_fault_to_open": len(after),
             "results_repair_to_close": len(repaired),
             "seconds_fault_to_open_result": reg["opened"] - f["guest_t_fault"],
             "seconds_fault_to_db": f["t_api_open"] - f["t_fault"],
             "seconds_fault_to_firing": f["t_firing"] - f["t_fault"],
             "seconds_db_to_firing": f["t_firing"] - f["t_api_open"],
             "seconds_repair_to_resolved": f["t_resolved"] - f["t_repair"],
             "periods_fault_to_firing": (f["t_firing"] - f["t_fault"]) / a.period,
             "periods_repair_to_resolved": (f["t_resolved"] - f["t_repair"]) / a.period,
             "alert_summary": f["alert"]["annotations"]["summary"],
             "t_fault": f["t_fault"], "t_firing": f["t_firing"], "t_repair": f["t_repair"],
             "t_resolved": f["t_resolved"], "host": reg["host"], "profile": reg["profile"]}
        # The regression needs K bad results of this link, and opens with
        # the K-th unless one of them was not bad: never past a window (a
        # bad result of noise just before the fault may be one of the K).
        H.check(1 <= len(after) <= a.judged_results,
                "%s: the regression opened after %d results of the link since the fault"
                " (K %d, M %d)" % (g["link"], len(after), a.bad_results, a.judged_results))
        out["faults"].append(g)
    return out


def dump_series(run, a, faults, t_end):
    """The run's series for bench/regression/plot.py."""
    series = {}
    exprs = {
        "bandwidth": "ibpulse_link_bandwidth_bytes_per_second",
        "baseline": "ibpulse_link_bandwidth_baseline_bytes_per_second",
        "threshold": "ibpulse_link_bandwidth_threshold_bytes_per_second",
        "expected": "ibpulse_link_bandwidth_expected_bytes_per_second",
        "latency": "ibpulse_link_latency_seconds",
        "latency_baseline": "ibpulse_link_latency_baseline_seconds",
        "latency_threshold": "ibpulse_link_latency_threshold_seconds",
        "regression": "ibpulse_link_regression",
        "alerts": 'ALERTS{alertname=~"%s"}' % BASELINE_ALERTS,
        "result_time": "ibpulse_test_pair_timestamp_seconds",
        "result_bandwidth": 'ibpulse_test_pair_bandwidth_bytes_per_second{stat="avg"}',
        "result_success": "ibpulse_test_pair_success",
        "result_busy": "ibpulse_test_pair_busy",
    }
    for k, e in exprs.items():
        series[k] = run.query_range(e, run.t0, t_end, step=2)
    with open(os.path.join(a.out, "series.json"), "w") as f:
        json.dump({"t0": run.t0, "t_end": t_end, "period": a.period, "series": series,
                   "events": run.events,
                   "faults": [{k: v for k, v in x.items() if k.startswith("t_") or k in (
                       "kind", "spec", "regression", "closed")} for x in faults]}, f)


def main(argv):
    a = parse_args(argv)
    # Where the lab or Prometheus cannot run this is a skip, but never
    # under CI, which must run it (tests/lab/README.md).
    why = None
    if not shutil.which(a.prometheus):
        why = "no %s (scripts/install-deps.sh installs Debian's prometheus)" % a.prometheus
    else:
        r = subprocess.run([a.lab, "check"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        if r.returncode:
            why = "the lab cannot run here: " + r.stdout.decode(errors="replace").strip()
    if why:
        H.check(not os.environ.get("CI"), why + " (and CI is set)")
        print("SKIP: " + why)
        return H.SKIP
    for b in ("collector/ibpulse-collector", "exporter/ibpulse-exporter", "probe/ibpulse-probe"):
        H.check(os.access(os.path.join(a.build, b), os.X_OK), "%s not built" % b)
    if a.out:
        shutil.rmtree(os.path.join(a.out, "tsdb"), ignore_errors=True)
        os.makedirs(a.out, exist_ok=True)
    conf = tempfile.mkdtemp(prefix="lab-fault.", dir="/tmp")
    os.chmod(conf, 0o755)
    with H.session("lab-fault-host.") as (procs, tmp):
        run = Run(a, procs, tmp)
        run.conf = conf
        run.t0 = time.time()
        try:
            write_conf(a, conf)
            run.start_lab()
            run.start_prometheus()
            healthy_phase(run, a)
            faults = [fault_phase(run, a, k) for k in a.fault]
            t_end = time.time()
            if a.out:
                dump_series(run, a, faults, t_end)
            run.stop_lab()
            db = os.path.join(run.lab_run, "ibpulse.db")
            H.check(run.lab.returncode == 0 and os.path.exists(db),
                    "the guests did not end cleanly (%s):\n%s"
                    % (run.lab.returncode, run.lab_output()[-3000:]))
            out = figures(run, a, faults, db)
            out["seconds_total"] = time.time() - run.t0
            if a.out:
                shutil.copy(db, os.path.join(a.out, "ibpulse.db"))
            if a.summary:
                with open(a.summary, "w") as f:
                    json.dump(out, f, indent=1)
            print(json.dumps(out, indent=1))
        except BaseException:
            sys.stderr.write("---- lab output (tail) ----\n%s\n"
                             % (run.lab_output()[-6000:] if run.lab else ""))
            run.stop_lab()
            if run.lab_run:
                for n in sorted(os.listdir(run.lab_run)) if os.path.isdir(run.lab_run) else []:
                    if n.endswith(".log") and n.startswith("vm"):
                        with open(os.path.join(run.lab_run, n), errors="replace") as f:
                            sys.stderr.write("---- %s (tail) ----\n%s\n" % (n, f.read()[-3000:]))
            raise
        finally:
            if run.lab and run.lab.poll() is None:
                run.lab.terminate()
                run.lab.wait(timeout=60)
            if run.lab_run and sys.exc_info()[0] is None:
                shutil.rmtree(run.lab_run, ignore_errors=True)
            elif run.lab_run:
                sys.stderr.write("lab-fault: the run directory (database, logs) is kept:"
                                 " %s\n" % run.lab_run)
            shutil.rmtree(conf, ignore_errors=True)
    print("lab-fault: ok: %d fault(s), each an alert naming the link, resolved after the repair;"
          " healthy run silent" % len(a.fault))
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except H.Failure as e:
        print("FAIL: %s" % e, file=sys.stderr)
        sys.exit(1)
