#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The probe's own /metrics: `ibpulse-probe metrics` and the daemon's
metrics_listen endpoint on the fixture trees.

Checked: every counter file of the tree appears on its port with its name
(the node_exporter names for the counters users know, the generic family
with a counter label otherwise) and scaling (x4 for the data counters,
milliseconds to seconds for lifespan); promtool accepts the text; the
daemon serves the same text as the one-shot command (modulo the timing
line) plus its responder's families (admitted tests, refusals by reason,
responder keys), in OpenMetrics when asked, gzipped when asked, read fresh per
scrape; 404 and 405 for other paths and methods; node_exporter 1.5's
InfiniBand collector on the same tree gives the same values under the
mirrored names; and the exporter, fed the same tree through the real
collector, serves exactly the same series for the families the probe
shares with it (so a dashboard reads either; test_pmetrics_same.c checks
the same without HTTP). promtool, node_exporter, the collector and the
exporter are required: a missing one fails, it does not skip.

usage: test_pmetrics.py PROBE FIXTURES PROMTOOL NODE_EXPORTER
                        [COLLECTOR EXPORTER SCHEMA_DIR]
"""
import gzip
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import unittest
import urllib.error
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import daemonlib  # noqa: E402
from daemonlib import free_port  # noqa: E402

PROBE = FIXTURES = PROMTOOL = NODE_EXPORTER = None
COLLECTOR = EXPORTER = SCHEMA = None
TOKEN = "tok-node01-0123456789abcdef"
TIMING = "ibpulse_probe_sysfs_read_seconds"

# Counter file -> (metric, scale): the names node_exporter's InfiniBand
# collector gives these counters, with our prefix (written out here, not
# taken from common/counters.c, so a renamed family fails).
NAMED = {
    ("counters", "port_xmit_data"):
        ("ibpulse_port_data_transmitted_bytes_total", 4),
    ("counters", "port_rcv_data"):
        ("ibpulse_port_data_received_bytes_total", 4),
    ("counters", "port_xmit_packets"):
        ("ibpulse_port_packets_transmitted_total", 1),
    ("counters", "port_rcv_packets"):
        ("ibpulse_port_packets_received_total", 1),
    ("counters", "symbol_error"): ("ibpulse_port_symbol_error_total", 1),
    ("counters", "link_downed"): ("ibpulse_port_link_downed_total", 1),
    ("counters", "link_error_recovery"):
        ("ibpulse_port_link_error_recovery_total", 1),
    ("counters", "port_rcv_errors"):
        ("ibpulse_port_errors_received_total", 1),
    ("counters", "port_xmit_discards"):
        ("ibpulse_port_discards_transmitted_total", 1),
    ("counters", "port_xmit_wait"): ("ibpulse_port_transmit_wait_total", 1),
    ("hw_counters", "out_of_buffer"):
        ("ibpulse_port_out_of_buffer_drops_total", 1),
    ("hw_counters", "out_of_sequence"):
        ("ibpulse_port_out_of_sequence_packets_received_total", 1),
    ("hw_counters", "packet_seq_err"):
        ("ibpulse_port_packet_sequence_errors_total", 1),
    ("hw_counters", "duplicate_request"):
        ("ibpulse_port_duplicate_requests_packets_total", 1),
    ("hw_counters", "local_ack_timeout_err"):
        ("ibpulse_port_local_ack_timeout_errors_total", 1),
    ("hw_counters", "np_cnp_sent"):
        ("ibpulse_port_np_cnp_packets_sent_total", 1),
    ("hw_counters", "np_ecn_marked_roce_packets"):
        ("ibpulse_port_np_ecn_marked_roce_packets_received_total", 1),
    ("hw_counters", "req_cqe_error"): ("ibpulse_port_req_cqes_errors_total", 1),
    ("hw_counters", "rx_write_requests"):
        ("ibpulse_port_rx_write_requests_total", 1),
    ("hw_counters", "lifespan"): ("ibpulse_port_lifespan_seconds", 0.001),
}
GENERIC = {"counters": "ibpulse_port_ib_counters_total",
           "hw_counters": "ibpulse_port_hw_counters_total"}

SAMPLE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$')
LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"')


def parse(text):
    """{(name, frozenset(labels)): value} of a 0.0.4 or OpenMetrics body."""
    out = {}
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        m = SAMPLE.match(line)
        if not m:
            raise AssertionError("not a sample line: %r" % line)
        labels = frozenset(LABEL.findall(m.group(2) or ""))
        key = (m.group(1), labels)
        if key in out:
            raise AssertionError("duplicate series: %r" % line)
        out[key] = float(m.group(3))
    return out


# Families only the daemon serves (its results spool).
DAEMON_ONLY = ("ibpulse_probe_results_pending",
               "ibpulse_probe_results_dropped_total")


def untimed(text):
    """@text without the timing sample and the daemon's own families."""
    return "\n".join(l for l in text.splitlines()
                     if not l.startswith(TIMING + " ") and
                     not any(l.startswith(f) or l.startswith("# HELP " + f)
                             or l.startswith("# TYPE " + f)
                             for f in DAEMON_ONLY))


def get(url, headers=None, method="GET"):
    """(status, headers, body bytes); HTTP errors are answers too."""
    req = urllib.request.Request(url, headers=headers or {}, method=method)
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            return r.status, r.headers, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.headers, e.read()


def counter_files(root):
    """(device, port, subdir, name, raw) for every counter file."""
    base = os.path.join(root, "class", "infiniband")
    for dev in sorted(os.listdir(base)):
        ports = os.path.join(base, dev, "ports")
        for port in sorted(os.listdir(ports)) if os.path.isdir(ports) else []:
            for sub in ("counters", "hw_counters"):
                d = os.path.join(ports, port, sub)
                for name in sorted(os.listdir(d)) if os.path.isdir(d) else []:
                    with open(os.path.join(d, name)) as f:
                        yield dev, port, sub, name, int(f.read())


class Base(unittest.TestCase):
    def run_cli(self, tree, *extra):
        r = subprocess.run([PROBE, "metrics", "--sysfs", tree, "--host",
                            "node01"] + list(extra),
                           capture_output=True, text=True, timeout=120)
        self.assertEqual(r.returncode, 0, r.stderr)
        return r.stdout

    def check_counters(self, text, tree):
        """Every counter file of @tree in @text, named and scaled."""
        series = parse(text)
        files = list(counter_files(tree))
        self.assertGreater(len(files), 50)
        per_port = {}
        for dev, port, sub, name, raw in files:
            what = "%s/%s/%s/%s" % (dev, port, sub, name)
            port_labels = frozenset({("host", "node01"), ("device", dev),
                                     ("port", port)})
            per_port[port_labels] = per_port.get(port_labels, 0) + 1
            if (sub, name) in NAMED:
                metric, scale = NAMED[(sub, name)]
                keys = [(metric, port_labels)]
            else:
                # a name of its own, or the generic family with a label
                generic = (GENERIC[sub], port_labels | {("counter", name)})
                keys = [k for k, v in series.items()
                        if k[0].startswith("ibpulse_port_") and
                        k[1] == port_labels and v == raw and
                        k[0].endswith("_total")] + [generic]
                keys = [k for k in keys if k in series]
                scale = 1
            self.assertTrue(keys and keys[0] in series, what + " missing")
            self.assertEqual(series[keys[0]], raw * scale, what)
        # and nothing else on the port: one counter sample per file
        skip = ("ibpulse_port_info", "ibpulse_port_state_id",
                "ibpulse_port_physical_state_id", "ibpulse_port_gid_info",
                "ibpulse_port_rate_bytes_per_second", "ibpulse_port_pkey_info",
                "ibpulse_port_error_saturated",
                "ibpulse_port_carrier_changes_total")
        for labels, n in per_port.items():
            got = [k for k in series
                   if k[0] not in skip and (k[1] == labels or (
                       k[1] - labels and labels <= k[1] and
                       dict(k[1] - labels).keys() == {"counter"}))]
            self.assertEqual(len(got), n, sorted(labels))
        return series


class OneShot(Base):
    def test_every_counter_named_and_scaled(self):
        tree = os.path.join(FIXTURES, "sysfs-mlx5")
        series = self.check_counters(self.run_cli(tree), tree)
        # the saturated error counters of mlx5_2 say so
        sat = ("ibpulse_port_error_saturated", frozenset(
            {("host", "node01"), ("device", "mlx5_2"), ("port", "1"),
             ("counter", "symbol_error")}))
        self.assertEqual(series.get(sat), 1)
        deg = ("ibpulse_device_pcie_link_degraded",
               frozenset({("host", "node01"), ("device", "mlx5_1")}))
        self.assertEqual(series.get(deg), 1)

    def test_promtool_accepts(self):
        for tree in ("sysfs-mlx5", "sysfs-mlx4", "sysfs-rxe",
                     "sysfs-garbage"):
            text = self.run_cli(os.path.join(FIXTURES, tree))
            r = subprocess.run([PROMTOOL, "check", "metrics"], input=text,
                               capture_output=True, text=True, timeout=60)
            self.assertEqual(r.returncode, 0, tree + ": " + r.stdout +
                             r.stderr)

    def test_openmetrics_flag(self):
        text = self.run_cli(os.path.join(FIXTURES, "sysfs-rxe"),
                            "--openmetrics")
        self.assertTrue(text.endswith("# EOF\n"))
        self.assertIn("# TYPE ibpulse_port_hw_counters counter\n", text)

    def test_no_pma_one_line_per_port(self):
        """Counters that read "N/A (no PMA)" (mlx4 VFs) cost their values
        and one warning per port, not one per file (it was 24 here)."""
        with tempfile.TemporaryDirectory() as t:
            tree = os.path.join(t, "sysfs")
            shutil.copytree(os.path.join(FIXTURES, "sysfs-mlx4"), tree)
            ports = os.path.join(tree, "class", "infiniband", "mlx4_0",
                                 "ports")
            n = 0
            for port in ("1", "2"):
                d = os.path.join(ports, port, "counters")
                for name in os.listdir(d):
                    with open(os.path.join(d, name), "w") as f:
                        f.write("N/A (no PMA)\n")
                    n += 1
            self.assertEqual(n, 24)
            r = subprocess.run([PROBE, "metrics", "--sysfs", tree, "--host",
                                "node01"], capture_output=True, text=True,
                               timeout=120)
            self.assertEqual(r.returncode, 0, r.stderr)
            warns = [l for l in r.stderr.splitlines() if ": warn: " in l]
            self.assertEqual(len(warns), 2, r.stderr)
            self.assertIn("ports/1/counters: 16 counters read", warns[0])
            self.assertIn("ports/2/counters: 8 counters read", warns[1])
            series = parse(r.stdout)
            self.assertFalse([k for k in series
                              if k[0] == "ibpulse_port_ib_counters_total"])
            # counters_ext/ still reads
            key = ("ibpulse_port_legacy_packets_received_total", frozenset(
                {("host", "node01"), ("device", "mlx4_0"), ("port", "2")}))
            self.assertEqual(series[key], 47)

    def test_bad_flag(self):
        r = subprocess.run([PROBE, "metrics", "--bogus"],
                           capture_output=True, text=True, timeout=60)
        self.assertEqual(r.returncode, 2)
        self.assertIn("--bogus", r.stderr)


class Served(Base, daemonlib.DaemonMixin):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        t = self.tmp.name
        self.tree = os.path.join(t, "sysfs")
        shutil.copytree(os.path.join(FIXTURES, "sysfs-mlx5"), self.tree,
                        symlinks=True)
        self.cfg = os.path.join(t, "probe.ini")
        with open(self.cfg, "w") as f:
            f.write("[probe]\nhost = node01\nsysfs_root = %s\n"
                    "netdev_stats = false\n"
                    "[daemon]\nresponder_port = 0\n"
                    "responder_listen = 127.0.0.1\nspool_dir = %s\n"
                    "control_socket = %s\nmetrics_listen = 127.0.0.1:0\n"
                    % (self.tree, os.path.join(t, "spool"),
                       os.path.join(t, "probe.sock")))
        self.log = open(os.path.join(t, "daemon.log"), "w+")
        self.proc = subprocess.Popen([PROBE, "daemon", "--config", self.cfg],
                                     stdout=subprocess.DEVNULL,
                                     stderr=self.log)
        port = self.wait_log(r"serving /metrics on 127\.0\.0\.1:(\d+)")
        self.url = "http://127.0.0.1:%s" % port

    def tearDown(self):
        self.stop_daemon()
        self.tmp.cleanup()

    def wait_log(self, pattern):
        """The first group of @pattern once the daemon's log has it."""
        self.wait_for(lambda: re.search(pattern, self.daemon_log()), pattern)
        return re.search(pattern, self.daemon_log()).group(1)

    def test_same_as_cli_and_fresh(self):
        st, h, body = get(self.url + "/metrics")
        self.assertEqual(st, 200)
        self.assertEqual(h["Content-Type"], "text/plain; version=0.0.4; "
                         "charset=utf-8")
        served = body.decode()
        self.check_counters(served, self.tree)
        # The daemon adds its responder's families; the rest is the CLI's.
        own = [l for l in served.splitlines()
               if "ibpulse_probe_responder_" in l]
        host = "\n".join(l for l in served.splitlines()
                         if "ibpulse_probe_responder_" not in l)
        self.assertEqual(untimed(host), untimed(self.run_cli(self.tree)))
        for line in ("ibpulse_probe_responder_tests_total 0",
                     'ibpulse_probe_responder_refused_total'
                     '{reason="unauthenticated"} 0',
                     'ibpulse_probe_responder_refused_total'
                     '{reason="replayed"} 0',
                     "ibpulse_probe_responder_keys 0"):
            self.assertIn(line, own)
        self.assertIn(TIMING + " ", served)
        # and the spool: nothing waits, nothing was dropped
        series = parse(served)
        for reason in ("spool_full", "expired", "unwritable"):
            self.assertEqual(series[(DAEMON_ONLY[1], frozenset(
                {("host", "node01"), ("reason", reason)}))], 0)
        for store in ("disk", "memory"):
            self.assertEqual(series[(DAEMON_ONLY[0], frozenset(
                {("host", "node01"), ("store", store)}))], 0)
        # a counter that moves between scrapes moves in the next scrape
        path = os.path.join(self.tree, "class", "infiniband", "mlx5_0",
                            "ports", "1", "counters", "port_xmit_data")
        with open(path, "w") as f:
            f.write("1000\n")
        key = ("ibpulse_port_data_transmitted_bytes_total", frozenset(
            {("host", "node01"), ("device", "mlx5_0"), ("port", "1")}))
        self.assertEqual(parse(get(self.url + "/metrics")[2].decode())[key],
                         4000)

    def test_negotiation_and_gzip(self):
        accept = ("application/openmetrics-text;version=1.0.0,"
                  "text/plain;version=0.0.4;q=0.5,*/*;q=0.1")
        st, h, body = get(self.url + "/metrics", {"Accept": accept,
                                                  "Accept-Encoding": "gzip"})
        self.assertEqual(st, 200)
        self.assertEqual(h["Content-Encoding"], "gzip")
        self.assertTrue(h["Content-Type"].startswith(
            "application/openmetrics-text; version=1.0.0"))
        text = gzip.decompress(body).decode()
        self.assertTrue(text.endswith("# EOF\n"))
        plain = parse(get(self.url + "/metrics")[2].decode())
        om = parse(text)
        self.assertEqual(set(om), set(plain))
        st, h, body = get(self.url + "/metrics",
                          {"Accept-Encoding": "gzip"})
        self.assertEqual(h["Content-Encoding"], "gzip")
        self.assertEqual(set(parse(gzip.decompress(body).decode())),
                         set(plain))

    def test_other_paths_and_methods(self):
        self.assertEqual(get(self.url + "/")[0], 404)
        self.assertEqual(get(self.url + "/metricsx")[0], 404)
        st, h, _ = get(self.url + "/metrics", method="POST")
        self.assertEqual(st, 405)
        self.assertIn("GET", h["Allow"])
        self.assertEqual(get(self.url + "/metrics", method="DELETE")[0], 405)
        self.assertEqual(get(self.url + "/metrics", method="HEAD")[0], 200)
        # SIGTERM still stops the daemon cleanly with the endpoint up
        self.proc.terminate()
        self.assertEqual(self.proc.wait(60), 0, self.daemon_log())


class DualStack(Served):
    """metrics_listen = :PORT (no address) is every address, IPv4 and IPv6."""

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        t = self.tmp.name
        self.cfg = os.path.join(t, "probe.ini")
        with open(self.cfg, "w") as f:
            f.write("[probe]\nhost = node01\nsysfs_root = %s\n"
                    "netdev_stats = false\n[daemon]\nresponder_port = 0\n"
                    "responder_listen = 127.0.0.1\nspool_dir = %s\n"
                    "control_socket = %s\nmetrics_listen = :0\n"
                    % (os.path.join(FIXTURES, "sysfs-mlx5"),
                       os.path.join(t, "spool"), os.path.join(t, "probe.sock")))
        self.log = open(os.path.join(t, "daemon.log"), "w+")
        self.proc = subprocess.Popen([PROBE, "daemon", "--config", self.cfg],
                                     stdout=subprocess.DEVNULL,
                                     stderr=self.log)
        self.port = self.wait_log(r"serving /metrics on \[::\]:(\d+)")

    def test_both_families(self):
        for host in ("127.0.0.1", "[::1]"):
            st, _, _ = get("http://%s:%s/metrics" % (host, self.port))
            self.assertEqual(st, 200, host)

    # Served's tests run once, on 127.0.0.1
    test_same_as_cli_and_fresh = None
    test_negotiation_and_gzip = None
    test_other_paths_and_methods = None


class BadListen(unittest.TestCase):
    def test_rejected_at_load(self):
        for bad in ("127.0.0.1", "localhost:9469", "1.2.3.4:70000",
                    "::1:9469", "127.0.0.1:x"):
            r = subprocess.run(
                [PROBE, "daemon", "--print-config", "--set",
                 "metrics_listen=" + bad],
                capture_output=True, text=True, timeout=60)
            self.assertEqual(r.returncode, 2, bad)
            self.assertIn("metrics_listen", r.stderr)
        r = subprocess.run([PROBE, "daemon", "--print-config", "--set",
                            "metrics_listen=[::1]:9469"],
                           capture_output=True, text=True, timeout=60)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("metrics_listen = [::1]:9469", r.stdout)


class NodeExporter(Base):
    """node_exporter's series on the same tree, under the mirrored names."""

    def need_node_exporter(self):
        """A missing node_exporter fails: the test command installs it."""
        self.assertTrue(shutil.which(NODE_EXPORTER),
                        "%s not found: scripts/install-deps.sh installs "
                        "prometheus-node-exporter" % NODE_EXPORTER)

    def node_exporter(self, tree):
        """node_infiniband_* series node_exporter serves from @tree."""
        with tempfile.TemporaryFile() as log:
            port = free_port()
            p = subprocess.Popen(
                [NODE_EXPORTER, "--path.sysfs=" + tree,
                 "--collector.disable-defaults", "--collector.infiniband",
                 "--web.listen-address=127.0.0.1:%d" % port],
                stdout=log, stderr=log)
            try:
                text = self.scrape(p, port)
            finally:
                p.kill()
                p.wait()
        return {k: v for k, v in parse(text).items()
                if k[0].startswith("node_infiniband_")}

    def compare(self, tree, host="node01"):
        """Every series of node_exporter's on @tree is ours, same value."""
        ours = parse(self.run_cli(tree))
        theirs = self.node_exporter(tree)
        for (name, labels), v in theirs.items():
            ld = dict(labels)
            if name == "node_infiniband_info":
                mine = [k for k in ours if k[0] == "ibpulse_device_info"
                        and labels <= k[1]]
                self.assertEqual(len(mine), 1, ld)
                continue
            mapped = re.sub(r"^node_infiniband_(port_)?", "ibpulse_port_",
                            name)
            key = (mapped, frozenset({("host", host),
                                      ("device", ld["device"]),
                                      ("port", ld["port"])}))
            self.assertIn(key, ours, name)
            self.assertEqual(ours[key], v, name)
        return theirs

    def test_same_values_as_node_exporter(self):
        self.need_node_exporter()
        theirs = self.compare(os.path.join(FIXTURES, "sysfs-mlx5"))
        self.assertGreater(len(theirs), 40)

    def test_counters_ext_as_node_exporter(self):
        """mlx4 before Linux 4.5: the 16 legacy_* series node_exporter
        serves from counters_ext/ (8 counters x 2 ports) are ours too,
        with the same values (the data counters x4)."""
        self.need_node_exporter()
        theirs = self.compare(os.path.join(FIXTURES, "sysfs-mlx4"))
        legacy = [k for k in theirs if "_legacy_" in k[0]]
        self.assertEqual(len(legacy), 16, sorted(theirs))
        key = ("node_infiniband_legacy_data_transmitted_bytes_total",
               frozenset({("device", "mlx4_0"), ("port", "1")}))
        self.assertEqual(theirs[key], 98765432109876 * 4)

    def scrape(self, p, port):
        deadline = time.monotonic() + 60
        while True:
            try:
                st, _, body = get("http://127.0.0.1:%d/metrics" % port)
                if st == 200:
                    return body.decode()
            except OSError:
                pass
            if p.poll() is not None or time.monotonic() > deadline:
                self.fail("node_exporter did not answer")
            time.sleep(0.1)


class SameAsExporter(Base):
    """The exporter, fed the same tree, serves the same shared series."""

    def setUp(self):
        self.assertTrue(COLLECTOR and EXPORTER and SCHEMA,
                        "no collector/exporter given (tests/probe/"
                        "meson.build passes them)")
        self.tmp = tempfile.TemporaryDirectory()
        self.procs = []

    def tearDown(self):
        for p in self.procs:
            if p.poll() is None:
                p.kill()
                p.wait()
        self.tmp.cleanup()

    def start(self, argv, port_file):
        log = open(port_file + ".log", "w")
        p = subprocess.Popen(argv, stdout=log, stderr=log)
        log.close()
        self.procs.append(p)
        deadline = time.monotonic() + 60
        while not (os.path.exists(port_file) and os.path.getsize(port_file)):
            if p.poll() is not None or time.monotonic() > deadline:
                with open(port_file + ".log") as f:
                    self.fail("%s did not start: %s" % (argv[0], f.read()))
            time.sleep(0.05)
        with open(port_file) as f:
            return int(f.read())

    def test_shared_families_identical(self):
        t = self.tmp.name
        db = os.path.join(t, "ibpulse.db")
        cfg = os.path.join(t, "collector.ini")
        with open(cfg, "w") as f:
            f.write("[collector]\nlisten = 127.0.0.1\nport = 0\ndb = %s\n"
                    "schema_dir = %s\n[tokens]\nnode01 = %s\n"
                    % (db, SCHEMA, TOKEN))
        tok = os.path.join(t, "token")
        with open(tok, "w") as f:
            f.write(TOKEN + "\n")
        cport = self.start([COLLECTOR, "serve", "--config", cfg,
                            "--port-file", os.path.join(t, "cport")],
                           os.path.join(t, "cport"))
        tree = os.path.join(FIXTURES, "sysfs-mlx5")
        r = subprocess.run(
            [PROBE, "report", "--once", "--collector",
             "http://127.0.0.1:%d/api/v1/report" % cport, "--token-file",
             tok, "--host", "node01", "--sysfs-root", tree],
            capture_output=True, text=True, timeout=120)
        self.assertEqual(r.returncode, 0, r.stderr)
        eport = self.start([EXPORTER, "--db", db, "--listen", "127.0.0.1",
                            "--port", "0", "--port-file",
                            os.path.join(t, "eport")],
                           os.path.join(t, "eport"))
        st, _, body = get("http://127.0.0.1:%d/metrics" % eport)
        self.assertEqual(st, 200)
        exp = parse(body.decode())
        ours = {k: v for k, v in parse(self.run_cli(tree)).items()
                if not k[0].startswith("ibpulse_probe_")}
        families = {k[0] for k in ours}
        self.assertGreater(len(families), 30)
        exp = {k: v for k, v in exp.items() if k[0] in families}
        self.assertEqual(sorted(set(ours) - set(exp)), [])
        self.assertEqual(sorted(set(exp) - set(ours)), [])
        for k, v in ours.items():
            self.assertEqual(exp[k], v, k)


def main():
    global PROBE, FIXTURES, PROMTOOL, NODE_EXPORTER
    global COLLECTOR, EXPORTER, SCHEMA
    PROBE, FIXTURES, PROMTOOL, NODE_EXPORTER = sys.argv[1:5]
    daemonlib.PROBE = PROBE
    if len(sys.argv) >= 8:
        COLLECTOR, EXPORTER, SCHEMA = sys.argv[5:8]
    if not shutil.which(PROMTOOL):
        # A failure, not a skip: the test command installs prometheus
        # (scripts/install-deps.sh), and a missing tool must not pass.
        print("%s not found: scripts/install-deps.sh installs prometheus"
              % PROMTOOL)
        return 1
    res = unittest.main(argv=sys.argv[:1], exit=False, verbosity=2).result
    return 0 if res.wasSuccessful() else 1


if __name__ == "__main__":
    sys.exit(main())
