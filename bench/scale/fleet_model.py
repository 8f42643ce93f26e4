# SPDX-License-Identifier: MIT
"""The simulated fabric of the fleet driver: hosts, their HCAs and ports,
what a probe daemon sends about them (registration, counter report, test
results), the noise of healthy results and the faults.

Noise model (sources in bench/scale/README.md):
- every port has a nominal write_bw figure (NDR: 49 GB/s for 64 KiB
  writes over 2 QPs; HDR: 24.4 GB/s) and a one-way share of the 1.9 us
  write_lat, each moved by a small per-port offset (--port-spread, a
  gaussian share, 0.3% by default) that stays for the whole run: cables,
  HCAs and slots differ a little, and the collector's baselines learn it;
- every result is that figure times (1 + N(0, --noise)) (0.3% by
  default): healthy HDR/NDR ports repeat within about 0.05% run to run,
  so this is several times noisier than real hardware;
- a share --outliers of results (0.2%) is 5-30% worse, as when another
  job's traffic crosses the path; --busy-share of them (half) are flagged
  busy as the real probe flags them (it saw the extra bytes in its ports'
  counters), the others are not (the interference was elsewhere in the
  fabric, where the probe's counters cannot see it);
- a share --fail-share of tests (0.05%) fails (outcome timeout, no
  figures);
- a result between two ports is limited by the weaker end: bandwidth is
  the lower of both ends' capacities (a port's, capped by its device's
  PCIe link), latency the sum of both ends' one-way shares and extra
  delays.
"""
import math
import uuid

# Per link speed: the port's rate as the kernel reports it, the nominal
# write_bw (64 KiB, 2 QPs) and write_lat (2 B) figures, the HCA's PCIe
# link (GT/s, lanes).
SPEEDS = {
    "ndr": {"rate": 50000000000, "bw": 49.0e9, "lat": 1.9e-6,
            "pcie": (32.0, 16), "hca": "MT4129"},
    "hdr": {"rate": 25000000000, "bw": 24.4e9, "lat": 1.9e-6,
            "pcie": (16.0, 16), "hca": "MT4123"},
}

# The daemon's built-in profiles (docs/probe.md, "[profile NAME]").
PROFILES = {
    "bw": {"test": "write_bw", "size": 65536, "qps": 2, "duration": 2.0,
           "iters": 0},
    "lat": {"test": "write_lat", "size": 2, "qps": 1, "duration": 0.0,
            "iters": 1000},
}

# Fault kinds the driver draws from (--faults).
KINDS = ("port90", "port75", "port50", "pcie", "flap", "multi", "lat")
DEFAULT_KINDS = ("port90", "port75", "port50", "pcie", "flap", "multi")


class Port:
    def __init__(self, host, device, num, index, lid):
        self.host, self.device, self.num = host, device, num
        self.index = index  # on its host: the planner's rail
        self.lid = lid
        self.key = ("port", host.name, device.name, num)
        self.cap = 0.0       # healthy bandwidth, bytes/s
        self.half_lat = 0.0  # healthy one-way share of latency, s


class Device:
    def __init__(self, host, name):
        self.host, self.name = host, name
        self.key = ("device", host.name, name)
        self.ports = []


class Host:
    def __init__(self, idx, leaf):
        self.idx = idx
        self.name = "h%05d" % idx
        self.leaf = "leaf%03d" % leaf
        self.token = "tok-%s-%016x" % (self.name, (idx * 0x9e3779b97f4a7c15)
                                       & 0xffffffffffffffff)
        self.address = "10.%d.%d.%d" % (idx >> 16, (idx >> 8) & 255, idx & 255)
        self.devices = []
        self.ports = []


class Fault:
    """One faulty element (a port or a device) of a drawn fault."""

    def __init__(self, group, kind, label, element, share=1.0, delay=0.0):
        self.group, self.kind, self.label = group, kind, label
        self.element = element  # Port or Device
        self.key = element.key
        self.share = share      # bandwidth kept (bad results, for flap)
        self.delay = delay      # extra one-way latency, s
        self.wave = None
        self.period_on = self.period_off = None  # run periods (planned)
        self.t_on = self.t_off = None  # wall clock when applied
        self.flaps = 0
        self.first_test = None  # started of the first result that could show it
        self.tests = 0          # such results while active
        self.partners = set()   # port keys tested against it while active
        self.met = set()        # other faulty elements it was tested against

    def metric(self):
        return "latency" if self.kind == "lat" else "bandwidth"


class Fabric:
    """N hosts in leaves of @per_leaf, each with @devices HCAs of @ports
    ports; the healthy figures drawn from @rng once."""

    def __init__(self, n, per_leaf, devices, ports, speed, rng, spread):
        self.speed = SPEEDS[speed]
        self.hosts, self.by_name = [], {}
        self.port_by_key, self.device_by_key = {}, {}
        lid = 1
        for i in range(n):
            h = Host(i, i // per_leaf)
            for d in range(devices):
                dev = Device(h, "mlx5_%d" % d)
                for p in range(ports):
                    port = Port(h, dev, p + 1, len(h.ports), lid)
                    lid += 1
                    port.cap = self.speed["bw"] * (1 + self._off(rng, spread))
                    port.half_lat = self.speed["lat"] / 2 * (
                        1 + self._off(rng, spread))
                    dev.ports.append(port)
                    h.ports.append(port)
                    self.port_by_key[port.key] = port
                h.devices.append(dev)
                self.device_by_key[dev.key] = dev
            self.hosts.append(h)
            self.by_name[h.name] = h
        self.port_fault = {}    # port key -> active Fault
        self.device_fault = {}  # device key -> active Fault

    @staticmethod
    def _off(rng, sd):
        """A per-element offset: gaussian, clipped at 3 sd."""
        return max(-3 * sd, min(3 * sd, rng.gauss(0.0, sd)))

    def leaves(self):
        out = {}
        for h in self.hosts:
            out.setdefault(h.leaf, []).append(h)
        return out

    # ---- what a probe sends ------------------------------------------

    def registration(self, h):
        return {"version": 1, "host": h.name,
                "responder": {"address": h.address, "port": 18515},
                "labels": {"leaf": h.leaf},
                "profiles": sorted(PROFILES),
                "ports": [{"device": p.device.name, "port": p.num, "state": 4,
                           "link_layer": "InfiniBand", "lid": p.lid,
                           "subnet_prefix": "fe80:0000:0000:0000",
                           "pkeys": [65535]} for p in h.ports]}

    def report(self, h, now):
        """A counter report of @h as the daemon pushes it: rate, state,
        PCIe (the current width halved on a device whose fault is on)."""
        devs = []
        speed, width = self.speed["pcie"]
        for d in h.devices:
            cur = width // 2 if (
                d.key in self.device_fault and
                self.device_fault[d.key].kind == "pcie") else width
            guid = "%04x:%04x:%04x:%04x" % (0xb859, h.idx >> 8 & 0xffff,
                                             h.idx & 0xffff,
                                             int(d.name.split("_")[1]))
            devs.append({
                "name": d.name, "node_guid": guid, "sys_image_guid": guid,
                "fw_ver": "28.39.1002", "hca_type": self.speed["hca"],
                "board_id": "MT_0000000838", "node_desc": "%s %s" % (h.name,
                                                                    d.name),
                "numa_node": 0,
                "pcie": {"address": "0000:%02x:00.0" % (0x3b + len(devs)),
                         "current_speed_gts": speed, "max_speed_gts": speed,
                         "current_width": cur, "max_width": width,
                         "aer_correctable": 0, "aer_nonfatal": 0,
                         "aer_fatal": 0},
                "ports": [{"port": p.num, "state": 4, "phys_state": 5,
                           "rate_bytes_per_second": self.speed["rate"],
                           "link_layer": "InfiniBand", "lid": p.lid,
                           "sm_lid": 1, "lmc": 0,
                           "pkeys": [{"index": 0, "pkey": 65535}],
                           "counters": {"ib": {
                               "port_xmit_data": int(now) * 1000 + p.lid,
                               "port_rcv_data": int(now) * 1000 + p.lid,
                               "symbol_error": 0, "link_downed": 0,
                               "link_error_recovery": 0,
                               "port_rcv_errors": 0}}}
                          for p in d.ports]})
        return {"version": 1, "host": h.name, "timestamp": now,
                "probe_version": "0.1.0-fleet", "devices": devs}

    # ---- results -----------------------------------------------------

    def _cap(self, port, bw_test):
        """Bandwidth one end allows now, and the faults it crossed."""
        cap, hit = port.cap, []
        f = self.port_fault.get(port.key)
        if f:
            if f.kind == "flap":
                if bw_test:
                    f.flaps += 1
                    if f.flaps % 2:
                        cap *= f.share
            elif f.kind != "lat":
                cap *= f.share
            hit.append(f)
        f = self.device_fault.get(port.device.key)
        if f:
            cap = min(cap, self.speed["bw"] * f.share)
            hit.append(f)
        return cap, hit

    def _half_lat(self, port):
        f = self.port_fault.get(port.key)
        return port.half_lat + (f.delay if f else 0.0)

    def figures(self, a, b, profile, rng, o):
        """The figures of one test a -> b of @profile started now, as
        (fields, faults crossed); the probe's own fields (id, plan...) are
        added by result()."""
        bw_test = PROFILES[profile]["test"].endswith("_bw")
        cap_a, hit_a = self._cap(a, bw_test)
        cap_b, hit_b = self._cap(b, bw_test)
        hit = hit_a + hit_b
        if rng.random() < o.fail_share:
            return {"outcome": "timeout", "busy": False,
                    "error": "no completion within the test timeout"}, []
        worse = 0.0
        r = {"outcome": "ok", "busy": False}
        if rng.random() < o.outliers:
            worse = rng.uniform(0.05, 0.30)
            if rng.random() < o.busy_share:
                r["busy"] = True
                r["busy_reason"] = "%s: port moved %.1fx the test's bytes" % (
                    rng.choice(("initiator", "responder")), 1.5 + 3 * worse)
        noise = 1 + rng.gauss(0.0, o.noise)
        if bw_test:
            bw = min(cap_a, cap_b) * noise * (1 - worse)
            r.update({"bw_avg_bytes_per_second": bw,
                      "bw_peak_bytes_per_second": bw * 1.004,
                      "bw_min_bytes_per_second": bw * 0.97,
                      "msg_rate_per_second": bw / PROFILES[profile]["size"],
                      "cpu_seconds": 0.9 * PROFILES[profile]["duration"]})
        else:
            lat = (self._half_lat(a) + self._half_lat(b)) * noise * (1 + worse)
            r.update({"msg_rate_per_second": 0.5 / lat,
                      "lat_min_seconds": lat * 0.97,
                      "lat_median_seconds": lat,
                      "lat_mean_seconds": lat * 1.01,
                      "lat_p99_seconds": lat * 1.15,
                      "lat_p999_seconds": lat * 1.4,
                      "lat_max_seconds": lat * 3.0,
                      "lat_stdev_seconds": lat * 0.03,
                      "cpu_seconds": 0.01})
        evidence = [f for f in hit if (f.kind == "lat") != bw_test]
        return r, ([] if r["busy"] else evidence)

    def result(self, a, b, profile, plan_id, started, duration, rng, o,
               entry=None):
        """One result as the daemon posts it (docs/api.md, POST
        /api/v1/results), and the faults it is evidence of. @entry: the
        plan entry it ran (a routed model reads its DLID)."""
        fig, hit = self.figures(a, b, profile, rng, o)
        p = PROFILES[profile]
        params = {"test": p["test"], "size": p["size"], "qps": p["qps"],
                  "duration": p["duration"], "iters": p["iters"], "pkey": 0,
                  "sl": 0, "selftest": False, "gid_index": 0, "mtu": 4096,
                  "used_pkey": 65535,
                  "used_iters": p["iters"] or int(math.ceil(
                      duration * 1e4))}
        r = {"id": str(uuid.UUID(int=rng.getrandbits(128), version=4)),
             "plan_id": plan_id, "profile": profile, "test": p["test"],
             "started": started, "duration_seconds": duration,
             "error": None, "wc_status": None,
             "local": {"device": a.device.name, "port": a.num},
             "peer": {"host": b.host.name, "device": b.device.name,
                      "port": b.num},
             "params": params}
        r.update(fig)
        return r, hit


def draw_faults(fabric, kinds, waves, rng, o):
    """The faults of the run, drawn from @rng: each kind of @kinds once,
    dealt into @waves waves in a random order, each on hosts no other
    fault uses. Returns [Fault] (a multi fault gives several)."""
    order = list(kinds)
    rng.shuffle(order)
    free = [h for h in fabric.hosts]
    rng.shuffle(free)
    out = []
    for i, kind in enumerate(order):
        group = "%s#%d" % (kind, i + 1)
        for f in _draw_one(fabric, kind, group, free, rng, o):
            f.wave = i % waves
            out.append(f)
    return out


def _take(free, pred=None):
    for i, h in enumerate(free):
        if pred is None or pred(h):
            return free.pop(i)
    raise ValueError("not enough hosts to draw the faults on (each fault "
                     "takes hosts no other fault uses): raise --hosts or "
                     "draw fewer --faults")


def _draw_one(fabric, kind, group, free, rng, o):
    if kind.startswith("port"):
        share = int(kind[4:]) / 100.0
        h = _take(free)
        return [Fault(group, "port", "port at %d%%" % int(kind[4:]),
                      rng.choice(h.ports), share=share)]
    if kind == "pcie":
        h = _take(free)
        return [Fault(group, "pcie", "PCIe width halved",
                      rng.choice(h.devices), share=o.pcie_share)]
    if kind == "flap":
        h = _take(free)
        return [Fault(group, "flap", "flapping port (%d%% every other result)"
                      % round(o.flap_share * 100), rng.choice(h.ports),
                      share=o.flap_share)]
    if kind == "lat":
        h = _take(free)
        delay = o.lat_delay_share * fabric.speed["lat"]
        return [Fault(group, "lat", "port +%.2f us latency" % (delay * 1e6),
                      rng.choice(h.ports), delay=delay)]
    if kind == "multi":
        return _draw_multi(fabric, group, free, rng)
    raise ValueError("unknown fault kind '%s'" % kind)


def _draw_multi(fabric, group, free, rng):
    """2 to 5 ports at once; about half of them (at least 2) in one leaf
    and rail, so the planner may test them against each other."""
    n = rng.randint(2, 5)
    same = max(2, (n + 1) // 2)
    by_leaf = {}
    for h in free:
        by_leaf.setdefault(h.leaf, []).append(h)
    leaves = [leaf for leaf, hs in by_leaf.items() if len(hs) >= same]
    if not leaves:
        raise ValueError("no leaf with %d healthy hosts left for a multi "
                         "fault" % same)
    leaf = rng.choice(sorted(leaves))
    rail = rng.randrange(len(free[0].ports))
    hosts = [_take(free, lambda h: h.leaf == leaf) for _ in range(same)]
    hosts += [_take(free) for _ in range(n - same)]
    out = []
    for k, h in enumerate(hosts):
        share = rng.choice((0.9, 0.75, 0.5))
        port = h.ports[rail] if k < same else rng.choice(h.ports)
        out.append(Fault(group, "port", "one of %d ports at once, %d%%%s"
                         % (n, round(share * 100),
                            ", same leaf and rail" if k < same else ""),
                         port, share=share))
    return out
