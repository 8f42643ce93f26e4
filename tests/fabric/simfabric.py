# SPDX-License-Identifier: MIT
"""A simulated InfiniBand subnet for tests and benchmarks: ibsim + opensm.

One Sim is one ibsim process serving a net file, with opensm run once
(`opensm -o`) to assign LIDs, a console fed through a fifo, and helpers to
run any libibumad program against it under libumad2sim.so (perfquery,
ibnetdiscover, ibqueryerrors, ibpulse-probe). ibsim listens on abstract
unix sockets, one simulator per network namespace: callers run in their
own namespace (in_private_netns()) so that tests run in parallel.
Shared by tests/fabric/ and bench/fabric/.
"""
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

UMAD2SIM = "/usr/lib/x86_64-linux-gnu/umad2sim/libumad2sim.so"
NETNS_MARK = "IBPULSE_FABRIC_NETNS"

# perfquery's field names -> the sysfs names ibpulse reports
PERFQUERY_NAMES = {
    "SymbolErrorCounter": "symbol_error",
    "LinkErrorRecoveryCounter": "link_error_recovery",
    "LinkDownedCounter": "link_downed",
    "PortRcvErrors": "port_rcv_errors",
    "PortRcvRemotePhysicalErrors": "port_rcv_remote_physical_errors",
    "PortRcvSwitchRelayErrors": "port_rcv_switch_relay_errors",
    "PortXmitDiscards": "port_xmit_discards",
    "PortXmitConstraintErrors": "port_xmit_constraint_errors",
    "PortRcvConstraintErrors": "port_rcv_constraint_errors",
    "LocalLinkIntegrityErrors": "local_link_integrity_errors",
    "ExcessiveBufferOverrunErrors": "excessive_buffer_overrun_errors",
    "VL15Dropped": "VL15_dropped",
    "PortXmitWait": "port_xmit_wait",
    "PortXmitData": "port_xmit_data",
    "PortRcvData": "port_rcv_data",
    "PortXmitPkts": "port_xmit_packets",
    "PortRcvPkts": "port_rcv_packets",
    "PortUnicastXmitPkts": "unicast_xmit_packets",
    "PortUnicastRcvPkts": "unicast_rcv_packets",
    "PortMulticastXmitPkts": "multicast_xmit_packets",
    "PortMulticastRcvPkts": "multicast_rcv_packets",
    "PortLocalPhysicalErrors": "port_local_physical_errors",
    "PortMalformedPktErrors": "port_malformed_packet_errors",
    "PortBufferOverrunErrors": "port_buffer_overrun_errors",
    "PortDLIDMappingErrors": "port_dlid_mapping_errors",
    "PortVLMappingErrors": "port_vl_mapping_errors",
    "PortLoopingErrors": "port_looping_errors",
    "PortInactiveDiscards": "port_inactive_discards",
    "PortNeighborMTUDiscards": "port_neighbor_mtu_discards",
    "PortSwLifetimeLimitDiscards": "port_sw_lifetime_limit_discards",
    "PortSwHOQLifetimeLimitDiscards": "port_sw_hoq_lifetime_limit_discards",
}


def need_tools(extra=()):
    """Fail (never skip) when the simulator's packages are missing."""
    missing = [t for t in ("ibsim", "opensm", "perfquery", "ibnetdiscover",
                           "ibqueryerrors", "ibportstate", *extra)
               if not shutil.which(t)]
    if not os.path.exists(UMAD2SIM):
        missing.append(UMAD2SIM)
    if missing:
        sys.exit("missing %s: run scripts/install-deps.sh (ibsim-utils, "
                 "opensm, infiniband-diags)" % ", ".join(missing))


def in_private_netns(argv=None):
    """Re-exec this program in a network namespace of its own, once.

    As root `unshare -n`; otherwise a user namespace too (`unshare -rn`).
    Its loopback is brought up (iproute2).
    """
    if os.environ.get(NETNS_MARK) == "1":
        return
    argv = argv or [sys.executable] + sys.argv
    env = dict(os.environ, **{NETNS_MARK: "1"})
    flags = ["-n"] if os.geteuid() == 0 else ["-r", "-n"]
    # loopback up: collectors and exporters of the tests listen there
    up = 'ip link set lo up && exec "$0" "$@"'
    try:
        rc = subprocess.call(["unshare", *flags, "--", "sh", "-c", up,
                              *argv], env=env)
    except FileNotFoundError:
        sys.exit("unshare (util-linux) is missing")
    sys.exit(rc)


def parse_perfquery(text):
    """perfquery's "Name:....value" lines as {sysfs name: int}."""
    out = {}
    for line in text.splitlines():
        m = re.match(r"^(\w+):\.*(\S+)$", line)
        if m and m.group(1) in PERFQUERY_NAMES:
            out[PERFQUERY_NAMES[m.group(1)]] = int(m.group(2), 0)
    return out


class Sim:
    """One ibsim serving @netfile, its console and its LIDs."""

    def __init__(self, netfile, host="h00000", limits=None, workdir=None,
                 sm_args=()):
        self.netfile = os.path.abspath(netfile)
        self.host = host
        self.limits = limits or []  # e.g. ["-N", "4096", "-S", "512"]
        self.sm_args = list(sm_args)  # opensm's, e.g. ["-l", "2"] (LMC)
        self.dir = workdir or tempfile.mkdtemp(prefix="ibsim-",
                                               dir=os.environ.get("TMPDIR"))
        self.proc = self.sm = None
        self.fifo_fd = None
        self.marker = 0

    # ------------------------------------------------------------ life
    def start(self, timeout=120):
        fifo = os.path.join(self.dir, "console")
        os.mkfifo(fifo, 0o600)
        # O_RDWR: the fifo never sees EOF and opening does not block
        self.fifo_fd = os.open(fifo, os.O_RDWR)
        self.log = open(os.path.join(self.dir, "ibsim.log"), "w+")
        self.proc = subprocess.Popen(
            ["ibsim", *self.limits, "-s", self.netfile], stdin=self.fifo_fd,
            stdout=self.log, stderr=subprocess.STDOUT, cwd=self.dir)
        self._wait_log("sim>", timeout)
        self.opensm_once(timeout)
        return self

    def stop(self):
        for p in (self.sm, self.proc):
            if p and p.poll() is None:
                p.terminate()
                try:
                    p.wait(5)
                except subprocess.TimeoutExpired:
                    p.kill()
                    p.wait()
        if self.fifo_fd is not None:
            os.close(self.fifo_fd)
            self.fifo_fd = None

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()

    def _wait_log(self, text, timeout):
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if self.proc.poll() is not None:
                raise RuntimeError("ibsim exited %s: %s" %
                                   (self.proc.returncode, self.log_text()))
            if text in self.log_text():
                return
            time.sleep(0.02)
        raise RuntimeError("ibsim: no %r within %ss" % (text, timeout))

    def log_text(self):
        with open(self.log.name, errors="replace") as f:
            return f.read()

    # ----------------------------------------------------- the programs
    def env(self, **extra):
        env = dict(os.environ)
        pre = env.get("LD_PRELOAD")
        env["LD_PRELOAD"] = UMAD2SIM + (":" + pre if pre else "")
        env["SIM_HOST"] = self.host
        # a sanitizer build under the preloaded shim: the shim comes first
        # in the library list, and its own bugs are not ours (*.supp)
        here = os.path.dirname(os.path.abspath(__file__))
        env["ASAN_OPTIONS"] = ":".join(filter(None, [
            env.get("ASAN_OPTIONS"), "verify_asan_link_order=0",
            "suppressions=" + os.path.join(here, "asan.supp")]))
        env["LSAN_OPTIONS"] = ":".join(filter(None, [
            env.get("LSAN_OPTIONS"),
            "suppressions=" + os.path.join(here, "lsan.supp")]))
        env.update(extra)
        return env

    def run(self, argv, timeout=120, env=None, check=False, **kw):
        """Run @argv against the simulator; a CompletedProcess (text)."""
        p = subprocess.run(argv, env=env or self.env(), capture_output=True,
                           text=True, timeout=timeout, cwd=self.dir, **kw)
        if check and p.returncode:
            raise RuntimeError("%s exited %d: %s" %
                               (argv, p.returncode, p.stderr[-2000:]))
        return p

    def popen(self, argv, env=None, **kw):
        return subprocess.Popen(argv, env=env or self.env(), cwd=self.dir,
                                **kw)

    def opensm_once(self, timeout=120):
        """opensm -o: sweep once, assign LIDs, bring the subnet up, exit.

        Again later: a new sweep (and routes) for what changed, e.g. after
        an Unlink in the console. With the Sim's sm_args each time.
        """
        env = self.env(OSM_TMP_DIR=self.dir, OSM_CACHE_DIR=self.dir)
        log = os.path.join(self.dir, "opensm.log")
        p = subprocess.Popen(["opensm", "-o", *self.sm_args, "-f", log],
                             env=env,
                             cwd=self.dir, stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL)
        try:
            p.wait(timeout)
        except subprocess.TimeoutExpired:
            p.kill()  # opensm ignores SIGTERM while it sweeps
            p.wait()
            raise RuntimeError("opensm -o did not finish in %ss" % timeout)
        if p.returncode:
            raise RuntimeError("opensm -o exited %d (see %s)" %
                               (p.returncode, log))

    def opensm_background(self, timeout=120, args=()):
        """opensm serving SA queries (ibqueryerrors needs them); -d2
        flushes its log after each line, where SUBNET UP is looked for."""
        env = self.env(OSM_TMP_DIR=self.dir, OSM_CACHE_DIR=self.dir)
        log = os.path.join(self.dir, "opensm-bg.log")
        self.sm = subprocess.Popen(["opensm", "-d2", *args, "-f", log],
                                   env=env,
                                   cwd=self.dir, stdout=subprocess.DEVNULL,
                                   stderr=subprocess.DEVNULL)
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if os.path.exists(log) and "SUBNET UP" in open(
                    log, errors="replace").read():
                return
            if self.sm.poll() is not None:
                raise RuntimeError("opensm exited %d" % self.sm.returncode)
            time.sleep(0.05)
        raise RuntimeError("opensm: no SUBNET UP in %ss" % timeout)

    # ------------------------------------------------------- the console
    def console(self, line, timeout=30):
        """Send one console command; return what ibsim printed for it."""
        self.marker += 1
        mark = "# ibpulse-marker-%d" % self.marker
        start = len(self.log_text())
        os.write(self.fifo_fd, (line + "\n" + mark + "\n").encode())
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            text = self.log_text()
            i = text.find(mark, start)
            if i >= 0:
                return text[start:i]
            time.sleep(0.01)
        raise RuntimeError("ibsim console: no answer to %r" % line)

    # ---------------------------------------------------------- queries
    def lids(self):
        """{node description: base LID} from `ibnetdiscover -p`."""
        p = self.run(["ibnetdiscover", "-p"], check=True)
        out = {}
        for line in p.stdout.splitlines():
            m = re.match(r"^(SW|CA)\s+(\d+)\s+\d+\s+0x[0-9a-f]+.*\( '([^']*)'",
                         line)
            if m:
                out[m.group(3)] = int(m.group(2))
        return out

    def perfquery(self, lid, port, *flags):
        p = self.run(["perfquery", *flags, str(lid), str(port)], check=True)
        return parse_perfquery(p.stdout)
