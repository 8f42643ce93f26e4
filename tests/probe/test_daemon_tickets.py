#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Who may test a daemon's responder: tickets from the real collector.

Two probe daemons (node01, node02) on the rxe fixture tree register with
ibpulse-collector (planner period 20 s, 1 s slots), with neither a shared
secret nor responder_open: the default. The collector plans tests between
them and gives the initiator of each, in its plan, a ticket for it, and
each probe its own responder keys. Without a verbs device neither daemon
gets as far as connecting, so the planned initiator is played here, from
its own plan (fetched with its token), over the control protocol
(tests/verbs/ctrlwire.py). Checked against the planned responder:
  - the plan: each test's ticket is HMAC(responder's key, claims) as
    common/ticket.h says, the keys are this period's and the next;
  - a planned test (v3, the ticket's claims, MAC'd with the ticket) passes
    admission: refused only later by the device step, counted as a test;
  - the same ticket again is refused as a replay;
  - a client not in the plan (v2, no ticket) is refused as unauthenticated;
    a ticket whose claims were changed (another initiator host) fails its
    MAC; one for a period node02 holds no key for is refused; the ticket
    after its slot is refused as expired;
  - every refusal is counted by reason in the responder's status and
    /metrics,
    and logged once a minute per reason, not per peer;
  - the collector's key file is created 0600 and survives a restart: the
    same responder keys after it, the same ticket for the same slot; one
    that others may read stops the collector at start.

usage: test_daemon_tickets.py PROBE COLLECTOR SCHEMA_DIR FIXTURES_DIR
"""
import json
import os
import socket
import stat
import subprocess
import sys
import tempfile
import time
import unittest
import urllib.request

import daemonlib

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "verbs"))
import ctrlwire  # noqa: E402
from ctrlwire import CHALLENGE, HELLO, REFUSE, REQUEST  # noqa: E402

PROBE = COLLECTOR = SCHEMA = FIXTURES = None
TOKENS = {"node01": "tok-node01-0123456789abcdef",
          "node02": "tok-node02-0123456789abcdef"}
PERIOD = 20
SKEW = PERIOD / 4  # dticket.h: at most a quarter period


class Tickets(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        t = self.tmp.name
        self.db = os.path.join(t, "ibpulse.db")
        self.port = daemonlib.free_port()
        self.ccfg = os.path.join(t, "collector.ini")
        with open(self.ccfg, "w") as f:
            f.write("[collector]\nlisten = 127.0.0.1\nport = %d\ndb = %s\n"
                    "schema_dir = %s\n"
                    "[planner]\nperiod = %d\nslot_seconds = 1\n"
                    "duty_cycle = 1\nreplan_interval = 0\n"
                    "[tokens]\n%s\n"
                    % (self.port, self.db, SCHEMA, PERIOD,
                       "\n".join("%s = %s" % kv for kv in TOKENS.items())))
        self.procs, self.logs = {}, {}
        self.start_collector()
        self.rports = {h: daemonlib.free_port() for h in TOKENS}
        self.mports = {h: daemonlib.free_port() for h in TOKENS}
        for host in TOKENS:
            self.start_daemon(host)

    def tearDown(self):
        for p in self.procs.values():
            if p.poll() is None:
                p.kill()
                p.wait()
        for f in self.logs.values():
            f.close()
        self.tmp.cleanup()

    def log(self, name):
        f = self.logs[name]
        f.flush()
        f.seek(0)
        return f.read()

    def spawn(self, name, argv):
        if name in self.logs:
            self.logs[name].close()
        self.logs[name] = open(os.path.join(self.tmp.name, name + ".log"),
                               "w+")
        self.procs[name] = subprocess.Popen(argv, stdout=subprocess.DEVNULL,
                                            stderr=self.logs[name])

    def start_collector(self):
        self.spawn("collector", [COLLECTOR, "serve", "--config", self.ccfg])
        self.wait_for(self.connects, "the collector listening")

    def connects(self):
        try:
            socket.create_connection(("127.0.0.1", self.port), 1).close()
            return True
        except OSError:
            return False

    def start_daemon(self, host):
        d = os.path.join(self.tmp.name, host)
        os.makedirs(d, exist_ok=True)
        tok = os.path.join(d, "token")
        with open(tok, "w") as f:
            f.write(TOKENS[host] + "\n")
        cfg = os.path.join(d, "probe.ini")
        extra = ("responder_port = %d\nmetrics_listen = 127.0.0.1:%d\n"
                 % (self.rports[host], self.mports[host]))
        with open(cfg, "w") as f:
            f.write("[probe]\nhost = %s\nsysfs_root = %s\n"
                    "collector_url = http://127.0.0.1:%d/api/v1/report\n"
                    "token_file = %s\nnetdev_stats = false\ntimeout = 5\n"
                    "connect_timeout = 1\n"
                    "[daemon]\ncounters_interval = 1\npush_interval = 2\n"
                    "plan_interval = 5\nduty_cycle = 1\n%s"
                    "responder_listen = 127.0.0.1\n"
                    "responder_address = 127.0.0.1\ntest_timeout = 5\n"
                    "spool_dir = %s/spool\ncontrol_socket = %s/sock\n"
                    "backoff_min = 0.1\nbackoff_max = 1\n"
                    % (host, os.path.join(FIXTURES, "sysfs-rxe"), self.port,
                       tok, extra, d, d))
        self.spawn(host, [PROBE, "daemon", "--config", cfg])

    def wait_for(self, cond, what, timeout=90):
        deadline = time.monotonic() + timeout
        while not cond():
            for name, p in self.procs.items():
                if p.poll() is not None:
                    self.fail("%s exited waiting for %s:\n%s"
                              % (name, what, self.log(name)))
            if time.monotonic() > deadline:
                self.fail("timed out waiting for %s:\n%s"
                          % (what, "\n".join(self.log(n) for n in self.logs)))
            time.sleep(0.1)

    def status(self, host):
        out = subprocess.run(
            [PROBE, "status", "--socket",
             os.path.join(self.tmp.name, host, "sock")],
            capture_output=True, text=True, timeout=30)
        self.assertEqual(out.returncode, 0, out.stderr)
        return json.loads(out.stdout)

    def plan(self, host):
        req = urllib.request.Request(
            "http://127.0.0.1:%d/api/v1/plan" % self.port,
            headers={"Authorization": "Bearer " + TOKENS[host]})
        with urllib.request.urlopen(req, timeout=30) as r:
            return json.load(r)

    def keys(self, host):
        """@host's responder keys by period, from its own plan."""
        return {k["period"]: bytes.fromhex(k["key"])
                for k in self.plan(host)["responder_keys"]}

    def planned(self):
        """Every planned test as (initiator, test)."""
        return [(h, t) for h in TOKENS for t in self.plan(h)["tests"]]

    def ask(self, responder, version, ticket=b"", key=None, device="",
            port=0):
        """HELLO, CHALLENGE, REQUEST: the REFUSE's (code, reason)."""
        with socket.create_connection(("127.0.0.1", self.rports[responder]),
                                      timeout=30) as s:
            s.settimeout(30)
            nonce_c = os.urandom(16)
            s.sendall(ctrlwire.msg(HELLO, nonce_c, version))
            v, mtype, p = ctrlwire.recv_msg(s)
            self.assertEqual((v, mtype), (version, CHALLENGE), p)
            body = ctrlwire.request(version=version, device=device,
                                    port=port, ticket=ticket)
            mac = (ctrlwire.request_mac(key, p[:16], nonce_c, body)
                   if key else bytes(32))
            s.sendall(ctrlwire.msg(REQUEST, body + mac, version))
            v, mtype, p = ctrlwire.recv_msg(s)
        self.assertEqual((v, mtype), (version, REFUSE), p)
        return ctrlwire.refusal(p)

    def present(self, host, t, period=None, key=None):
        """@host's planned test @t, as its daemon would send it."""
        tk = t["ticket"]
        block = ctrlwire.ticket_block(
            t["id"], host, t["local"]["device"], t["local"]["port"],
            tk["period"] if period is None else period, tk["not_before_ms"],
            tk["deadline_ms"])
        return self.ask(t["peer"]["host"], 3, block,
                        key or bytes.fromhex(tk["key"]),
                        t["peer"]["device"], t["peer"]["port_num"])

    def in_slot(self, t, now):
        return (t["ticket"]["not_before_ms"] / 1000 - SKEW + 0.5 < now <
                t["ticket"]["deadline_ms"] / 1000 + SKEW - 1.5)

    def metric(self, host, name):
        with urllib.request.urlopen("http://127.0.0.1:%d/metrics"
                                    % self.mports[host], timeout=30) as r:
            for line in r.read().decode().splitlines():
                if line.startswith(name + " "):
                    return float(line.split()[-1])
        return None

    def test_planned_replayed_and_strangers(self):
        self.wait_for(lambda: self.planned() and
                      all(self.status(h)["responder_keys"] >= 2
                          for h in TOKENS),
                      "a plan with tests, both responders keyed")
        plan = self.plan("node01")
        period = int(plan["period_start"] // PERIOD)
        keys = {h: self.keys(h) for h in TOKENS}
        for h in TOKENS:
            self.assertEqual(sorted(keys[h]), [period, period + 1])
        self.assertNotEqual(keys["node01"][period], keys["node02"][period])
        for h, t in self.planned():
            tk = t["ticket"]
            self.assertEqual(tk["period"], period)
            self.assertEqual(tk["not_before_ms"],
                             round(t["not_before"] * 1000))
            self.assertEqual(tk["deadline_ms"], round(t["deadline"] * 1000))
            want = ctrlwire.mint(keys[t["peer"]["host"]][period], t["id"], h,
                                 t["local"]["device"], t["local"]["port"],
                                 t["peer"]["device"], t["peer"]["port_num"],
                                 period, tk["not_before_ms"],
                                 tk["deadline_ms"])
            self.assertEqual(tk["key"], want.hex(), t)

        # A planned test whose slot is now (or soon).
        chosen = []

        def slot_now():
            now = time.time()
            chosen[:] = [(h, t) for h, t in self.planned()
                         if self.in_slot(t, now)][:1]
            return chosen
        self.wait_for(slot_now, "a planned test in its slot", 60)
        h, t = chosen[0]
        r = t["peer"]["host"]
        before = self.status(r)
        for _ in range(3):  # the responder's own (instantly failing)
            code, why = self.present(h, t)  # test may hold its port
            if "busy" not in why:
                break
            time.sleep(0.2)
        self.assertIn("device is not usable", why, "admitted: %s" % why)
        st = self.status(r)
        self.assertEqual(st["responder_tests"], before["responder_tests"] + 1)

        # The same ticket again.
        code, why = self.present(h, t)
        self.assertEqual(code, -13)
        self.assertIn("ticket already used", why)
        # Not in the plan: no ticket, no secret.
        code, why = self.ask(r, 2, device=t["peer"]["device"],
                             port=t["peer"]["port_num"])
        self.assertIn("not admitted", why)
        # A forged claim: the initiator's ticket, presented as node09's.
        bad = dict(t, ticket=dict(t["ticket"]))
        code, why = self.present("node09", bad)
        self.assertIn("authentication failed", why)
        # A period the responder holds no key for (MAC'd with a guess).
        code, why = self.present(h, t, period=period + 7,
                                 key=os.urandom(32))
        self.assertIn("no responder key for period", why)
        st = self.status(r)
        by = st["responder_refused_by"]
        self.assertEqual(by["replayed"], 1, st)
        self.assertGreaterEqual(by["unauthenticated"], 1, st)
        self.assertEqual(by["auth_failed"], 1, st)
        self.assertEqual(by["no_key"], 1, st)
        self.assertEqual(self.metric(
            r, 'ibpulse_probe_responder_refused_total{reason="replayed"}'), 1)
        self.assertEqual(self.metric(
            r, 'ibpulse_probe_responder_refused_total{reason="no_key"}'), 1)
        self.assertGreaterEqual(self.metric(
            r, "ibpulse_probe_responder_tests_total"), 1)

        # After its slot (and before the same slot a period later).
        end = t["ticket"]["deadline_ms"] / 1000 + SKEW + 0.5
        time.sleep(max(0, end - time.time()))
        code, why = self.present(h, t)
        self.assertIn("expired", why)
        self.assertEqual(self.status(r)["responder_refused_by"]["ticket_expired"], 1)
        log = self.log(r)
        self.assertEqual(log.count("refused a peer (replayed"), 1, log)

    def test_key_file_and_restart(self):
        path = self.db + ".ticket-key"
        self.assertEqual(stat.S_IMODE(os.stat(path).st_mode), 0o600)
        # Early enough in a period that the restart stays inside it.
        self.wait_for(lambda: self.planned() and
                      time.time() % PERIOD < PERIOD - 8,
                      "a plan, early in a period")
        keys = {h: self.keys(h) for h in TOKENS}
        first = {(h, t["id"], t["ticket"]["not_before_ms"]): t["ticket"]
                 for h, t in self.planned()}
        self.procs["collector"].kill()
        self.procs["collector"].wait()
        self.start_collector()
        # The same master key: the same responder keys, and a test the
        # new plan put in the same slot gets the same ticket (a replan
        # may move slots: a new slot is a new ticket).
        self.assertEqual(keys, {h: self.keys(h) for h in TOKENS})
        again = {(h, t["id"], t["ticket"]["not_before_ms"]): t["ticket"]
                 for h, t in self.planned()}
        self.assertTrue(first and again)
        for k in set(first) & set(again):
            self.assertEqual(first[k], again[k])
        # A key file others may read is refused at start.
        os.chmod(path, 0o644)
        self.procs["collector"].kill()
        self.procs["collector"].wait()
        r = subprocess.run([COLLECTOR, "serve", "--config", self.ccfg],
                           capture_output=True, text=True, timeout=30)
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("readable by group or others", r.stderr)


if __name__ == "__main__":
    PROBE, COLLECTOR, SCHEMA, FIXTURES = sys.argv[1:5]
    daemonlib.PROBE = PROBE
    unittest.main(argv=sys.argv[:1], verbosity=2)
