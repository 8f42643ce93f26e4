#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A two-level fat tree as a fabric poller reports it (docs/api.md,
"Fabric"), with linear forwarding tables routed destination-mod-k as
OpenSM's fat-tree and up/down engines route such a tree: leaf L carries
hosts on ports 1..PER and spine S on port PER + 1 + S; spine S port L + 1
goes to leaf L; every LID d of a host on another leaf leaves a leaf by
spine d % SPINES, so with LMC > 0 a host's 2^LMC LIDs take different
spines. For the collector's tests (test_localize.py); the simulated
subnets of tests/fabric/ and bench/ serve real tables from OpenSM.
"""


class FatTree:
    def __init__(self, leaves, per, spines, lmc=0, prefix="h", first_lid=0):
        self.leaves, self.per, self.spines, self.lmc = leaves, per, spines, lmc
        self.hosts = leaves * per
        self.span = 1 << lmc
        self.prefix = prefix
        self.first_lid = first_lid  # hosts' LIDs from there (0: next)

    # names, GUIDs and LIDs
    def host(self, i):
        return "%s%02d" % (self.prefix, i)

    def host_guid(self, i):
        return 0x0002c90300000001 + i

    def leaf_guid(self, leaf):
        return 0x0002c90300100000 + leaf

    def spine_guid(self, s):
        return 0x0002c90300200000 + s

    def host_lid(self, i):
        """The base LID: a multiple of 2^LMC, after the switches'."""
        first = -(-max(1 + self.leaves + self.spines, self.first_lid) //
                  self.span)
        return (first + i) * self.span

    def leaf_lid(self, leaf):
        return 1 + leaf

    def spine_lid(self, s):
        return 1 + self.leaves + s

    def leaf_of(self, i):
        return i // self.per

    def spine_of(self, lid):
        """The spine a leaf sends destination LID @lid to."""
        return lid % self.spines

    def top(self):
        return self.host_lid(self.hosts - 1) + self.span - 1

    # tables
    def leaf_lft(self, leaf):
        t = [255] * (self.top() + 1)
        for i in range(self.hosts):
            for k in range(self.span):
                d = self.host_lid(i) + k
                t[d] = (i % self.per + 1 if self.leaf_of(i) == leaf
                        else self.per + 1 + self.spine_of(d))
        for other in range(self.leaves):
            d = self.leaf_lid(other)
            t[d] = 0 if other == leaf else self.per + 1 + self.spine_of(d)
        for s in range(self.spines):
            t[self.spine_lid(s)] = self.per + 1 + s
        return t

    def spine_lft(self, s):
        t = [255] * (self.top() + 1)
        for i in range(self.hosts):
            for k in range(self.span):
                t[self.host_lid(i) + k] = self.leaf_of(i) + 1
        for leaf in range(self.leaves):
            t[self.leaf_lid(leaf)] = leaf + 1
        t[self.spine_lid(s)] = 0
        return t

    @staticmethod
    def runs(table):
        out = []
        for lid, port in enumerate(table):
            if not out or out[-1] != port:
                out += [lid, port]
        return out

    # the path of a write: the links between switches, by egress end
    def up(self, leaf, s):
        return (self.leaf_guid(leaf), self.per + 1 + s)

    def down(self, s, leaf):
        return (self.spine_guid(s), leaf + 1)

    def links(self, a, b, dlid=None):
        """The links between switches of the path from host a to the LID
        @dlid of host b (default its base LID)."""
        d = self.host_lid(b) if dlid is None else dlid
        la, lb = self.leaf_of(a), self.leaf_of(b)
        if la == lb:
            return []
        s = self.spine_of(d)
        return [self.up(la, s), self.down(s, lb)]

    # the report
    @staticmethod
    def gid(g):
        return "0x%016x" % g

    def _port(self, port, lid, lmc, remote, rport, **extra):
        p = {"port": port, "lid": lid, "lmc": lmc, "state": 4,
             "phys_state": 5, "width_active": 4, "width_enabled": 4,
             "speed_active": "NDR", "rate_bytes_per_second": 50000000000,
             "remote_guid": self.gid(remote), "remote_port": rport,
             "counters": {"symbol_error": 0, "link_downed": 0,
                          "port_xmit_wait": 0}}
        p.update(extra)
        return p

    def nodes(self, extra=None):
        """Every node; @extra: {(guid, port): {key: value}} for ports."""
        extra = extra or {}
        out = []
        for leaf in range(self.leaves):
            g = self.leaf_guid(leaf)
            ports = []
            for h in range(self.per):
                i = leaf * self.per + h
                ports.append(self._port(h + 1, self.leaf_lid(leaf), 0,
                                        self.host_guid(i), 1,
                                        **extra.get((g, h + 1), {})))
            for s in range(self.spines):
                p = self.per + 1 + s
                ports.append(self._port(p, self.leaf_lid(leaf), 0,
                                        self.spine_guid(s), leaf + 1,
                                        **extra.get((g, p), {})))
            out.append({"guid": self.gid(g), "type": 2,
                        "description": "leaf%03d" % leaf,
                        "lid": self.leaf_lid(leaf),
                        "numports": self.per + self.spines,
                        "lft": {"top": self.top(),
                                "runs": self.runs(self.leaf_lft(leaf))},
                        "ports": ports})
        for s in range(self.spines):
            g = self.spine_guid(s)
            ports = [self._port(leaf + 1, self.spine_lid(s), 0,
                                self.leaf_guid(leaf), self.per + 1 + s,
                                **extra.get((g, leaf + 1), {}))
                     for leaf in range(self.leaves)]
            out.append({"guid": self.gid(g), "type": 2,
                        "description": "spine%02d" % s,
                        "lid": self.spine_lid(s), "numports": self.leaves,
                        "lft": {"top": self.top(),
                                "runs": self.runs(self.spine_lft(s))},
                        "ports": ports})
        for i in range(self.hosts):
            leaf = self.leaf_of(i)
            out.append({"guid": self.gid(self.host_guid(i)), "type": 1,
                        "description": "%s mlx5_0" % self.host(i),
                        "numports": 1,
                        "ports": [self._port(1, self.host_lid(i), self.lmc,
                                             self.leaf_guid(leaf),
                                             i % self.per + 1)]})
        return out

    def report(self, poller, when, extra=None):
        return {"version": 1, "host": poller, "timestamp": when,
                "devices": [],
                "fabric": {"ca": "mlx5_0", "port": 1, "discovered": when,
                           "swept": when, "routed": when,
                           "nodes": self.nodes(extra)}}

    def registration(self, i, ports=None, group=None):
        """POST /api/v1/register of host @i: one InfiniBand port."""
        return {"version": 1, "host": self.host(i),
                "responder": {"address": "10.0.%d.%d" % (i // 250,
                                                         i % 250 + 1),
                              "port": 18515},
                "labels": {"leaf": group or "leaf%03d" % self.leaf_of(i)},
                "profiles": ["bw", "lat"],
                "ports": ports or [{
                    "device": "mlx5_0", "port": 1, "state": 4,
                    "link_layer": "InfiniBand", "lid": self.host_lid(i),
                    "subnet_prefix": "fe80:0000:0000:0000",
                    "pkeys": [65535]}]}
