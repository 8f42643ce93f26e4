# SPDX-License-Identifier: MIT
"""The localization bench's model on top of bench/scale's (fleet_model.py,
its noise model and host faults unchanged): the hosts are the simulated
subnet's HCAs with the LIDs OpenSM gave them (one HCA, one port each, as
gen_fattree.py wires them), and a bandwidth result is also limited by the
links and switches its data crossed, as the switches' tables route it to
the DLID the plan chose (loc_sim.Routes). Latency results are left alone
by every fault here, as bench/scale's bandwidth faults leave them.

The faults (--faults, drawn one at a time):

| kind | what |
|---|---|
| port60 | one host port at 60% (issue 17's element) |
| pcie | an HCA's PCIe link at half width (bench/scale's) |
| uplink50 | one cable between a leaf and a spine at 50%, both ways (a lane down) |
| spine | a whole spine: every link into and out of it at 50% |
| flap | a cable between a leaf and a spine that goes down and up: every other result across it at 50%, and its ends count LinkDowned and symbol errors (planted through the ibsim console, read by the fabric role) |
"""
import sys
import os

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "scale"))
import fleet_model  # noqa: E402

KINDS = ("port60", "pcie", "uplink50", "spine", "flap")
FABRIC_KINDS = ("uplink50", "spine", "flap")


class Cable:
    """A fabric element at fault: a leaf-spine cable (both directed links)
    or a whole switch; .key names it as a suspect would, .keys every
    suspect that is right for it."""

    def __init__(self, kind, keys, label):
        self.key = keys[0]
        self.keys = keys
        self.kind = kind
        self.label = label


class RoutedFabric(fleet_model.Fabric):
    """fleet_model.Fabric over @subnet (loc_sim.Subnet): hosts h00000...
    named as gen_fattree names them, their ports' LIDs the subnet's."""

    def __init__(self, subnet, speed, rng, spread):
        super().__init__(subnet.hosts, subnet.per, 1, 1, speed, rng, spread)
        self.subnet = subnet
        self.routes = subnet.routes
        for h in self.hosts:
            h.ports[0].lid = subnet.host_lid(h.idx)
            h.ports[0].span = 1 << subnet.lmc
        self.link_fault = {}    # (switch, egress port) -> Fault
        self.switch_fault = {}  # switch name -> Fault
        self.unrouted = 0
        self.dlid = 0           # of the test being computed

    def path(self, a, dlid):
        return self.routes.path(a.host.idx, dlid)

    def _fabric_cap(self, a, b, dlid):
        """What the path from a to b (to @dlid) allows, and its faults."""
        p = self.path(a, dlid or b.lid)
        if p is None:
            self.unrouted += 1
            return float("inf"), []
        links, switches = p
        cap, hit = float("inf"), []
        for sw in switches:
            f = self.switch_fault.get(sw)
            if f and f not in hit:
                cap = min(cap, self.speed["bw"] * f.share)
                hit.append(f)
        for link in links:
            f = self.link_fault.get(link)
            if not f:
                continue
            share = f.share
            if f.kind == "flap":
                f.flaps += 1
                share = f.share if f.flaps % 2 else 1.0
            cap = min(cap, self.speed["bw"] * share)
            if f not in hit:
                hit.append(f)
        return cap, hit

    def _static_cap(self, port):
        """An end's capacity without moving a flapping fault's count."""
        cap = port.cap
        f = self.port_fault.get(port.key)
        if f and f.kind not in ("flap", "lat"):
            cap *= f.share
        f = self.device_fault.get(port.device.key)
        if f:
            cap = min(cap, self.speed["bw"] * f.share)
        return cap

    def figures(self, a, b, profile, rng, o):
        r, hit = super().figures(a, b, profile, rng, o)
        if not fleet_model.PROFILES[profile]["test"].endswith("_bw"):
            return r, hit
        cap, fhit = self._fabric_cap(a, b, self.dlid)
        if r.get("outcome") != "ok" or not fhit:
            return r, hit
        # the path's narrowest point, the ends' noise kept
        lim = min(1.0, cap / min(self._static_cap(a), self._static_cap(b)))
        for k in ("bw_avg_bytes_per_second", "bw_peak_bytes_per_second",
                  "bw_min_bytes_per_second", "msg_rate_per_second"):
            r[k] = r[k] * lim
        return r, (hit if r.get("busy") else hit + fhit)

    def result(self, a, b, profile, plan_id, started, duration, rng, o,
               entry=None):
        self.dlid = (entry or {}).get("peer", {}).get("dlid") or 0
        r, hit = super().result(a, b, profile, plan_id, started, duration,
                                rng, o)
        if self.dlid:
            r["params"]["dlid"] = self.dlid  # as the probe writes it
        return r, hit


def _cable_keys(routes, leaf, spine):
    """Both directed links of the cable leaf <-> spine, as suspects name
    them: (kind, switch, egress port)."""
    return [("fabric_link", routes.leaf(leaf), routes.per + 1 + spine),
            ("fabric_link", routes.spine(spine), leaf + 1)]


def draw(fabric, kinds, repeat, rng, o, per_wave=1):
    """The faults of the run: each kind of @kinds @repeat times, in a
    random order, @per_wave at a time (one by default), on elements no
    other fault uses: hosts apart, and cables only of spines no spine
    fault takes (with fewer spines than twice the spine faults, one at a
    time, those take turns on half the spines). Returns
    [fleet_model.Fault]."""
    order = [k for k in kinds for _ in range(repeat)]
    rng.shuffle(order)
    free = list(fabric.hosts)
    rng.shuffle(free)
    r = fabric.routes
    spines = list(range(r.spines))
    rng.shuffle(spines)
    n_spine = order.count("spine")
    turns = n_spine > r.spines // 2 and per_wave == 1
    if turns:
        # few spines (64 hosts: 2): the spine faults take turns on half of
        # them, one fault at a time, and the others keep their cables
        spines = spines[:max(1, r.spines // 2)]
    else:
        spines = spines[:n_spine]  # the spine faults', in turn
    cables = [(leaf, s) for leaf in range(r.leaves) for s in range(r.spines)
              if s not in spines]
    spine_turn = 0
    rng.shuffle(cables)
    out = []
    for i, kind in enumerate(order):
        group = "%s#%d" % (kind, i + 1)
        if kind == "port60":
            h = fleet_model._take(free)
            f = fleet_model.Fault(group, "port", "port at 60%",
                                  h.ports[0], share=0.6)
        elif kind == "pcie":
            h = fleet_model._take(free)
            f = fleet_model.Fault(group, "pcie", "PCIe width halved",
                                  h.devices[0], share=o.pcie_share)
        elif kind in ("uplink50", "flap"):
            if not cables:
                raise ValueError("not enough cables for the faults drawn")
            leaf, s = cables.pop()
            keys = _cable_keys(r, leaf, s)
            label = "%s <-> %s %s" % (r.leaf(leaf), r.spine(s), (
                "at 50%" if kind == "uplink50"
                else "flapping (every other result at 50%, counters)"))
            f = fleet_model.Fault(group, kind, label,
                                  Cable(kind, keys, label), share=0.5)
        elif kind == "spine":
            if not spines or (not turns and spine_turn >= len(spines)):
                raise ValueError("not enough spines for the faults drawn")
            s = spines[-1 - spine_turn % len(spines)]
            spine_turn += 1
            label = "%s, every link at 50%%" % r.spine(s)
            f = fleet_model.Fault(group, "spine", label, Cable(
                "spine", [("switch", r.spine(s))], label), share=0.5)
        else:
            raise ValueError("unknown fault kind '%s'" % kind)
        f.wave = i // per_wave
        out.append(f)
    return out


def apply(fabric, f, on):
    """Turn fabric fault @f on or off in @fabric's tables."""
    if f.kind in ("uplink50", "flap"):
        for _, sw, port in f.element.keys:
            if on:
                fabric.link_fault[(sw, port)] = f
            else:
                fabric.link_fault.pop((sw, port), None)
    elif f.kind == "spine":
        sw = f.element.key[1]
        if on:
            fabric.switch_fault[sw] = f
        else:
            fabric.switch_fault.pop(sw, None)
