#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The Debian packages, end to end on this machine (needs root).

Builds ibpulse-probe, ibpulse-collector and ibpulse-exporter with
`dpkg-buildpackage -b -us -uc` from a clean copy of the tree, runs lintian
(no error, warning or info tag may remain), installs them with dpkg, checks
the system users, the conffiles, the man pages and the units
(`systemd-analyze verify`), then starts each program the way its unit
would: the unit's ExecStart with its ${STATE_DIRECTORY},
${RUNTIME_DIRECTORY} and ${CREDENTIALS_DIRECTORY}, as its User with its
groups. The collector and the exporter run for real on loopback (only
--port 0 --port-file is added to their ExecStart), the report service
pushes this host's report into the collector, the exporter serves it; the
daemon's ExecStart gets --print-config. Then it purges the packages and
checks that no file of theirs, no configuration, state or unit symlink is
left. Whatever fails, the cleanup purges and removes what the test made
(the system users too, when they were not there before), so the machine
is left as it was found.

usage: test_package.py SOURCE_ROOT
"""
import grp
import os
import pwd
import re
import resource
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request

PKGS = ["ibpulse-probe", "ibpulse-collector", "ibpulse-exporter"]
USERS = ["ibpulse", "ibpulse-probe"]
STATE = ["/var/lib/ibpulse", "/var/lib/private/ibpulse",
         "/var/lib/ibpulse-probe", "/var/lib/private/ibpulse-probe",
         "/run/ibpulse"]
UNITDIR = "/lib/systemd/system"
TOKEN = "pkgtest-token-0123456789abcdef"


class Failed(Exception):
    pass


def log(msg):
    print("test_package: " + msg, flush=True)


def run(cmd, check=True, **kw):
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       text=True, **kw)
    if check and p.returncode != 0:
        raise Failed("%s exited %d:\n%s" % (" ".join(cmd), p.returncode,
                                            p.stdout[-4000:]))
    return p


def expect(cond, what):
    if not cond:
        raise Failed(what)
    log("ok: " + what)


def pkg_status(name):
    p = run(["dpkg-query", "-W", "-f", "${db:Status-Status}", name],
            check=False)
    return p.stdout.strip() if p.returncode == 0 else "not-installed"


def user_exists(name):
    try:
        pwd.getpwnam(name)
        return True
    except KeyError:
        return False


def group_exists(name):
    try:
        grp.getgrnam(name)
        return True
    except KeyError:
        return False


class Machine:
    """What the machine had before: restored by cleanup()."""

    def __init__(self):
        self.users = {u: user_exists(u) for u in USERS}
        self.groups = {g: group_exists(g) for g in USERS + ["rdma"]}
        self.paths = {p: os.path.lexists(p) for p in STATE + ["/etc/ibpulse"]}
        self.procs = []

    def cleanup(self):
        if not self.paths["/etc/ibpulse"] and \
                os.path.exists("/etc/ibpulse/probe.token"):
            os.unlink("/etc/ibpulse/probe.token")
        for p in self.procs:
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
                try:
                    p.wait(10)
                except subprocess.TimeoutExpired:
                    p.kill()
                    p.wait()
        present = [p for p in PKGS if pkg_status(p) != "not-installed"]
        if present:
            run(["dpkg", "--purge"] + present, check=False)
        for path, existed in self.paths.items():
            if not existed and os.path.lexists(path):
                if os.path.isdir(path) and not os.path.islink(path):
                    shutil.rmtree(path, ignore_errors=True)
                else:
                    os.unlink(path)
        for u, existed in self.users.items():
            if not existed and user_exists(u):
                run(["userdel", u], check=False)
        for g, existed in self.groups.items():
            if not existed and group_exists(g):
                run(["groupdel", g], check=False)


def copy_tree(src, dst):
    """A clean copy: the files git knows (and new ones it would add)."""
    if os.path.isdir(os.path.join(src, ".git")) or \
            os.path.isfile(os.path.join(src, ".git")):
        files = run(["git", "-C", src, "ls-files", "-co", "--exclude-standard",
                     "-z"]).stdout.split("\0")
        for f in files:
            if not f or not os.path.lexists(os.path.join(src, f)):
                continue
            os.makedirs(os.path.join(dst, os.path.dirname(f)), exist_ok=True)
            shutil.copy2(os.path.join(src, f), os.path.join(dst, f),
                         follow_symlinks=False)
    else:
        shutil.copytree(src, dst, symlinks=True, ignore=shutil.ignore_patterns(
            "build*", ".lab-cache", ".demo", "__pycache__"))


def build(src, work):
    tree = os.path.join(work, "ibpulse")
    copy_tree(src, tree)
    deps = run(["dpkg-checkbuilddeps"], check=False, cwd=tree)
    if deps.returncode != 0:
        m = re.search(r"Unmet build dependencies: (.*)", deps.stdout)
        if not m:
            raise Failed("dpkg-checkbuilddeps: " + deps.stdout)
        names = re.sub(r"\([^)]*\)", "", m.group(1)).split()
        names = [n for n in names if n != "|"]
        log("installing build dependencies: " + " ".join(names))
        run(["apt-get", "-o", "DPkg::Lock::Timeout=300", "install", "-y",
             "-qq", "--no-install-recommends"] + names)
    env = dict(os.environ, DEB_BUILD_OPTIONS="nocheck parallel=%d"
               % (os.cpu_count() or 1))
    t0 = time.monotonic()
    run(["nice", "dpkg-buildpackage", "-b", "-us", "-uc"], cwd=tree, env=env)
    log("dpkg-buildpackage -b -us -uc: %.0f s" % (time.monotonic() - t0))
    debs = {}
    for p in PKGS:
        cands = [f for f in os.listdir(work)
                 if f.startswith(p + "_") and f.endswith(".deb")]
        expect(len(cands) == 1, "%s built (%s)" % (p, cands))
        debs[p] = os.path.join(work, cands[0])
    changes = [f for f in os.listdir(work) if f.endswith(".changes")]
    return debs, os.path.join(work, changes[0])


def check_lintian(changes):
    out = run(["lintian", changes], check=False).stdout
    tags = [ln for ln in out.splitlines() if re.match(r"^[EWI]: ", ln)]
    expect(not tags, "lintian: no error, warning or info tag%s"
           % ("" if not tags else ":\n" + "\n".join(tags)))


def unit_service(path):
    """The [Service] keys of a unit file (ExecStart, User, ...)."""
    keys, section = {}, None
    with open(path) as f:
        for line in f:
            line = line.strip()
            if not line or line[0] in "#;":
                continue
            if line.startswith("["):
                section = line
                continue
            if section == "[Service]" and "=" in line:
                k, v = line.split("=", 1)
                keys.setdefault(k.strip(), []).append(v.strip())
    return keys


class UnitRun:
    """Runs a unit's ExecStart as systemd would set it up (the parts the
    program sees: user, groups, directories, credentials, environment)."""

    def __init__(self, machine, work, unit):
        self.machine = machine
        self.work = work
        self.unit = unit
        self.keys = unit_service(os.path.join(UNITDIR, unit))
        self.user = self.keys.get("User", ["root"])[-1]
        pw = pwd.getpwnam(self.user)
        self.uid, self.gid = pw.pw_uid, pw.pw_gid
        self.groups = [grp.getgrnam(g).gr_gid for v in
                       self.keys.get("SupplementaryGroups", []) for g in v.split()]
        self.limits = [
            (res, resource.RLIM_INFINITY if v == "infinity" else int(v))
            for key, res in (("LimitNOFILE", resource.RLIMIT_NOFILE),
                             ("LimitMEMLOCK", resource.RLIMIT_MEMLOCK))
            for v in self.keys.get(key, [])]
        self.env = {"PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "LANG": "C.UTF-8"}
        self._dir("StateDirectory", "/var/lib", "STATE_DIRECTORY")
        self._dir("RuntimeDirectory", "/run", "RUNTIME_DIRECTORY")
        creds = self.keys.get("LoadCredential", [])
        if creds:
            cdir = os.path.join(work, "credentials", unit)
            os.makedirs(cdir, mode=0o700)
            for c in creds:
                name, src = c.split(":", 1)
                shutil.copyfile(src, os.path.join(cdir, name))
                os.chmod(os.path.join(cdir, name), 0o400)
                os.chown(os.path.join(cdir, name), self.uid, self.gid)
            os.chown(cdir, self.uid, self.gid)
            os.chmod(os.path.dirname(cdir), 0o755)
            self.env["CREDENTIALS_DIRECTORY"] = cdir

    def _dir(self, key, base, var):
        if key not in self.keys:
            return
        path = os.path.join(base, self.keys[key][-1])
        mode = int(self.keys.get(key + "Mode", ["0755"])[-1], 8)
        os.makedirs(path, exist_ok=True)
        os.chown(path, self.uid, self.gid)
        os.chmod(path, mode)
        self.env[var] = path

    def argv(self, extra=()):
        cmd = self.keys["ExecStart"][-1]
        cmd = re.sub(r"\$\{(\w+)\}", lambda m: self.env[m.group(1)], cmd)
        return cmd.split() + list(extra)

    def _preexec(self):
        for res, n in self.limits:
            try:
                resource.setrlimit(res, (n, n))
            except Exception:  # pylint: disable=broad-except
                pass  # no CAP_SYS_RESOURCE here; systemd would have it

    def start(self, extra=(), **kw):
        if "stdout" not in kw:
            self.log = os.path.join(self.work, self.unit + ".log")
            kw["stdout"] = open(self.log, "w")
            kw["stderr"] = subprocess.STDOUT
        p = subprocess.Popen(self.argv(extra), env=self.env, user=self.uid,
                             group=self.gid, extra_groups=self.groups,
                             preexec_fn=self._preexec, cwd="/", **kw)
        self.machine.procs.append(p)
        return p

    def run(self, extra=(), timeout=60):
        p = self.start(extra, stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, text=True)
        out, _ = p.communicate(timeout=timeout)
        if "RUNTIME_DIRECTORY" in self.env:  # systemd removes it on stop
            shutil.rmtree(self.env["RUNTIME_DIRECTORY"])
        return p.returncode, out


def wait_port(path, proc, unit):
    for _ in range(200):
        if os.path.exists(path) and open(path).read().strip():
            return int(open(path).read())
        if proc.poll() is not None:
            with open(unit.log) as f:
                raise Failed("%s exited %d before listening:\n%s"
                             % (unit.unit, proc.returncode, f.read()[-2000:]))
        time.sleep(0.05)
    raise Failed("%s did not write its port" % unit.unit)


def check_installed(src):
    for p in PKGS:
        expect(pkg_status(p) == "installed", p + " installed")
    for u in USERS:
        expect(user_exists(u), "system user %s exists" % u)
    expect("ibpulse-probe" in grp.getgrnam("rdma").gr_mem,
           "ibpulse-probe is in group rdma")
    for ini in ("probe", "collector", "exporter"):
        with open(os.path.join(src, "etc", ini + ".ini")) as a, \
                open("/etc/ibpulse/%s.ini" % ini) as b:
            expect(a.read() == b.read(), "/etc/ibpulse/%s.ini is etc/%s.ini"
                   % (ini, ini))
    for b in PKGS:
        r = run([b, "--help"], check=False)
        expect(r.returncode == 0 and "usage" in r.stdout, b + " --help")
        r = run([b, "--version"], check=False)
        expect(r.returncode == 0 and "0.1.0" in r.stdout, b + " --version")
        r = run(["man", "-w", b], check=False)
        expect(r.returncode == 0 and "man8" in r.stdout, "man page for " + b)
        r = run(["man", "-w", "5", b + ".ini"], check=False)
        expect(r.returncode == 0 and "man5" in r.stdout, "man page for %s.ini" % b)
    units = sorted(f for f in os.listdir(UNITDIR) if f.startswith("ibpulse"))
    expect(len(units) == 6, "6 units installed: %s" % units)
    r = run(["systemd-analyze", "verify"] +
            [os.path.join(UNITDIR, u) for u in units], check=False)
    expect(r.returncode == 0 and "ibpulse" not in r.stdout,
           "systemd-analyze verify: clean%s" % ("" if not r.stdout
                                               else ":\n" + r.stdout))
    wants = "/etc/systemd/system/multi-user.target.wants/"
    for u, on in (("ibpulse-collector.service", True),
                  ("ibpulse-exporter.service", True),
                  ("ibpulse-probe.service", False),
                  ("ibpulse-probe-fabric.service", False)):
        expect(os.path.islink(wants + u) == on,
               "%s %s on installation" % (u, "enabled" if on else "not enabled"))


def check_runs(machine, work):
    host = socket.gethostname()
    with open("/etc/ibpulse/collector.ini", "a") as f:
        f.write("%s = %s\n" % (host, TOKEN))  # [tokens] is the last section
    fd = os.open("/etc/ibpulse/probe.token", os.O_WRONLY | os.O_CREAT, 0o600)
    os.write(fd, (TOKEN + "\n").encode())
    os.close(fd)

    os.chmod(work, 0o755)
    ports = os.path.join(work, "ports")  # the services write their port here
    os.mkdir(ports)
    os.chmod(ports, 0o1777)
    coll = UnitRun(machine, work, "ibpulse-collector.service")
    cport_file = os.path.join(ports, "collector")
    cp = coll.start(["--port", "0", "--port-file", cport_file])
    cport = wait_port(cport_file, cp, coll)
    log("collector (its unit's ExecStart, as user %s) on port %d"
        % (coll.user, cport))
    expect(os.path.exists("/var/lib/ibpulse/ibpulse.db") and
           os.stat("/var/lib/ibpulse/ibpulse.db").st_uid == coll.uid,
           "the database is in the StateDirectory, owned by ibpulse")

    rep = UnitRun(machine, work, "ibpulse-probe-report.service")
    rc, out = rep.run(["--collector",
                       "http://127.0.0.1:%d/api/v1/report" % cport])
    expect(rc == 0, "ibpulse-probe-report.service's ExecStart pushed a report"
           " (%s)" % out.strip()[-300:])

    exp = UnitRun(machine, work, "ibpulse-exporter.service")
    eport_file = os.path.join(ports, "exporter")
    ep = exp.start(["--port", "0", "--port-file", eport_file])
    eport = wait_port(eport_file, ep, exp)
    body = urllib.request.urlopen("http://127.0.0.1:%d/metrics" % eport,
                                  timeout=30).read().decode()
    expect('ibpulse_host_up{host="%s"} 1' % host in body,
           "the exporter (as user %s) serves the pushed host as up" % exp.user)

    dmn = UnitRun(machine, work, "ibpulse-probe.service")
    rc, out = dmn.run(["--print-config"])
    expect(rc == 0 and "spool_dir = /var/lib/ibpulse-probe/spool" in out and
           "control_socket = /run/ibpulse/probe.sock" in out,
           "ibpulse-probe.service's ExecStart parses (--print-config, as %s)"
           % dmn.user)
    for p in (cp, ep):
        p.send_signal(signal.SIGTERM)
        expect(p.wait(30) == 0, "SIGTERM stops %s cleanly" % p.args[0])


def check_purged(files):
    for p in PKGS:
        expect(pkg_status(p) == "not-installed", p + " purged")
    left = [f for f in files if os.path.lexists(f) and not os.path.isdir(f)]
    expect(not left, "no file of the packages is left %s" % left)
    left = [p for p in STATE + ["/etc/ibpulse"] if os.path.lexists(p)]
    expect(not left, "no configuration or state left %s" % left)
    left = run(["find", "/etc/systemd", "/var/lib/systemd", "-name",
                "*ibpulse*"], check=False).stdout.split()
    expect(not left, "no unit symlink or deb-systemd-helper state left %s"
           % left)


def main():
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    src = os.path.abspath(sys.argv[1])
    if os.geteuid() != 0:
        print("test_package: needs root (it installs the packages)",
              file=sys.stderr)
        return 1
    present = [p for p in PKGS if pkg_status(p) != "not-installed"]
    if present:
        print("test_package: %s already on this machine; the test would "
              "replace it: purge it first" % present, file=sys.stderr)
        return 1
    machine = Machine()
    work = tempfile.mkdtemp(prefix="ibpulse-pkg-")
    t0 = time.monotonic()
    try:
        debs, changes = build(src, work)
        check_lintian(changes)
        run(["dpkg", "-i"] + [debs[p] for p in PKGS])
        files = [f for p in PKGS for f in
                 run(["dpkg", "-L", p]).stdout.split()]
        check_installed(src)
        check_runs(machine, work)
        os.unlink("/etc/ibpulse/probe.token")  # the admin's, not dpkg's
        run(["dpkg", "--purge"] + PKGS)
        check_purged(files)
        log("users %s stay after purge (Debian keeps system users); the "
            "test removes the ones it created" % USERS)
    except (Failed, subprocess.SubprocessError, OSError) as e:
        print("test_package: FAIL: %s" % e, file=sys.stderr)
        return 1
    finally:
        machine.cleanup()
        shutil.rmtree(work, ignore_errors=True)
        log("%.0f s" % (time.monotonic() - t0))
    print("test_package: all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
