# SPDX-License-Identifier: MIT
"""The collector's settings for a fleet run: read the shipped defaults
from the real binary (`--print-config`), scale their time keys to the
run's short period, add the caller's `--set section.key=value`, write the
config and the tokens file, and read back the effective settings the
collector will use.

Why scale: a run cannot last the shipped period (an hour today) times
dozens of periods. What decides detection "in periods" is how many tests
each port takes per period and how long each profile holds a port, in
slots: the driver keeps the shipped number of rounds when the short
period allows slots of at least 1 s (the collector's minimum), else as
many rounds as whole seconds, and keeps each port's budget (duty_cycle x
rounds) and each profile's length in rounds as the shipped defaults
have them. replan_interval and plan_refresh keep their share of the
period (at least 1 s); the plan is fetched five times a period (the
daemon's plan_interval, 60 s against a 300 s period), or every
refresh_seconds of the plan when shorter, as the daemon does.
"""
import math
import os
import subprocess

# Keys the driver writes itself; --set may not change them.
OWN = {"collector.listen", "collector.port", "collector.db",
       "collector.schema_dir", "collector.tokens_file",
       "collector.admin_token", "collector.enrolled_file"}
ADMIN = "fleet-admin-0123456789abcdef"


def parse_ini(text):
    """{section: {key: value}} of --print-config output (set keys only)."""
    out, sec = {}, None
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith(("#", ";")):
            continue
        if line.startswith("[") and line.endswith("]"):
            sec = out.setdefault(line[1:-1], {})
        elif "=" in line and sec is not None:
            k, _, v = line.partition("=")
            sec[k.strip()] = v.strip()
    return out


def print_config(collector, path):
    """The effective settings of config @path; ValueError with the
    collector's own message (it names the bad key and its range)."""
    p = subprocess.run([collector, "--config", path, "--print-config"],
                       capture_output=True, text=True, timeout=60)
    if p.returncode != 0:
        raise ValueError(p.stderr.strip() or "exit %d" % p.returncode)
    return parse_ini(p.stdout)


def shipped(collector, tmp):
    """The collector's built-in defaults."""
    path = os.path.join(tmp, "defaults.ini")
    with open(path, "w") as f:
        f.write("[collector]\ndb = %s\n" % os.path.join(tmp, "unused.db"))
    return print_config(collector, path)


def scale(defaults, period):
    """The [planner] and [planner_profiles] keys that give a run of
    @period seconds the shipped defaults' rounds, budget and lengths;
    with a note saying so."""
    pl = defaults["planner"]
    p0, s0 = float(pl["period"]), float(pl["slot_seconds"])
    d0, r0 = float(pl["duty_cycle"]), float(pl["replan_interval"])
    f0 = float(pl.get("plan_refresh", 0))
    rounds0 = max(1, min(1024, int(math.floor(p0 / s0 + 1e-9))))
    budget = max(1, int(math.floor(d0 * rounds0 + 1e-9)))
    rounds = max(1, min(rounds0, int(period)))
    slot = period / rounds
    duty = min(1.0, (budget + 0.5) / rounds)
    keys = {"planner.period": "%d" % period,
            "planner.slot_seconds": "%g" % slot,
            "planner.duty_cycle": "%.6g" % duty,
            "planner.replan_interval": "%d" % max(1, round(r0 * period / p0))}
    if f0 > 0:
        keys["planner.plan_refresh"] = "%d" % max(1, round(f0 * period / p0))
    lengths = []
    for name, secs in defaults.get("planner_profiles", {}).items():
        k = max(1, int(math.ceil(float(secs) / s0 - 1e-9)))
        keys["planner_profiles." + name] = "%g" % max(1.0, k * slot)
        lengths.append("%s %d" % (name, k))
    note = ("time scaled from the shipped defaults: period %g s -> %d s, "
            "%d rounds of %g s -> %d of %g s, a port's budget %d rounds "
            "(duty_cycle %g -> %.3g), replan_interval %g -> %s s, "
            "plan_refresh %g -> %s s%s"
            % (p0, period, rounds0, s0, rounds, slot, budget, d0, duty, r0,
               keys["planner.replan_interval"], f0,
               keys.get("planner.plan_refresh", "-"),
               ("; profiles in rounds: " + ", ".join(lengths))
               if lengths else "; every profile one round"))
    return keys, note


def parse_sets(sets):
    """--set SECTION.KEY=VALUE, in order; ValueError naming a bad one."""
    out = {}
    for s in sets:
        k, eq, v = s.partition("=")
        sec, dot, key = k.strip().partition(".")
        if not eq or not dot or not sec or not key:
            raise ValueError("--set '%s': expected SECTION.KEY=VALUE, e.g. "
                             "planner.period=20 or suspect.bad_results=3" % s)
        if k.strip() in OWN:
            raise ValueError("--set '%s': %s is the driver's own (it runs "
                             "the collector on a fresh database, port 0)"
                             % (s, k.strip()))
        out[k.strip()] = v.strip()
    return out


def write(out_dir, fabric, keys, schema_dir, extra_tokens=()):
    """collector.ini and tokens under @out_dir (and @extra_tokens, (host,
    token) pairs: a fabric poller's); returns the config path."""
    tokens = os.path.join(out_dir, "tokens")
    with open(tokens, "w") as f:
        for h in fabric.hosts:
            f.write("%s %s\n" % (h.name, h.token))
        for host, tok in extra_tokens:
            f.write("%s %s\n" % (host, tok))
    os.chmod(tokens, 0o600)
    base = {"collector.listen": "127.0.0.1", "collector.port": "0",
            "collector.db": os.path.join(out_dir, "ibpulse.db"),
            "collector.schema_dir": schema_dir,
            "collector.tokens_file": tokens,
            "collector.admin_token": ADMIN,
            "collector.enrolled_file": os.path.join(out_dir, "enrolled"),
            "collector.log_level": "info"}
    base.update(keys)
    sections = {}
    for k, v in base.items():
        sec, _, key = k.partition(".")
        sections.setdefault(sec, []).append((key, v))
    path = os.path.join(out_dir, "collector.ini")
    with open(path, "w") as f:
        f.write("; written by bench/scale/fleet.py\n")
        for sec, kv in sections.items():
            f.write("\n[%s]\n" % sec)
            for k, v in kv:
                f.write("%s = %s\n" % (k, v))
    return path


def summary(settings):
    """The settings that shape tests and judgements, one line: every key
    outside [collector] and [tokens]."""
    parts = []
    for sec in sorted(settings):
        if sec in ("collector", "tokens"):
            continue
        for k, v in sorted(settings[sec].items()):
            if k != "ticket_key_file":
                parts.append("%s.%s=%s" % (sec, k, v))
    return " ".join(parts)
