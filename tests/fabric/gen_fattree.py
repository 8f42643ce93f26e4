#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Generate a two-level fat tree as an ibsim net file (ibnetdiscover's format).

LEAVES leaf switches each carry HOSTS_PER_LEAF single-port HCAs on ports
1..HOSTS_PER_LEAF and one uplink to every one of SPINES spine switches on the
ports after them; spine S port L+1 goes to leaf L. Node ids are the node
descriptions ibsim serves: "h00000", "leaf000", "spine00". Shared by the
integration tests (tests/fabric/) and the benchmark (bench/fabric/): one
generator.

    gen_fattree.py LEAVES HOSTS_PER_LEAF SPINES [--narrow NODE:PORT]... > net

--narrow NODE:PORT enables only 1X on that port (ibsim's w=1 port option)
and 1X or 4X on its peer (w=3): the link trains at 1X and the peer shows 4X
enabled, 1X active, the classic degraded link. ibsim refuses a link whose
ends share no enabled width, so the peer must keep 1X.
"""
import argparse
import sys


def host(i):
    return "h%05d" % i


def leaf(i):
    return "leaf%03d" % i


def spine(i):
    return "spine%02d" % i


def generate(leaves, per_leaf, spines, narrow=()):
    """The net file's text; @narrow: (node, port) pairs enabled for 1X only."""
    narrow = set(narrow)

    def opt(node, port, peer, peer_port):
        if (node, port) in narrow:
            return "\tw=1"
        if (peer, peer_port) in narrow:
            return "\tw=3"
        return ""

    out = []
    for l in range(leaves):
        out.append('Switch\t%d "%s"' % (per_leaf + spines, leaf(l)))
        for h in range(per_leaf):
            out.append('[%d]\t"%s"[1]%s' % (h + 1, host(l * per_leaf + h),
                                          opt(leaf(l), h + 1,
                                              host(l * per_leaf + h), 1)))
        for s in range(spines):
            out.append('[%d]\t"%s"[%d]%s' % (per_leaf + s + 1, spine(s), l + 1,
                                           opt(leaf(l), per_leaf + s + 1,
                                               spine(s), l + 1)))
        out.append("")
    for s in range(spines):
        out.append('Switch\t%d "%s"' % (leaves, spine(s)))
        for l in range(leaves):
            out.append('[%d]\t"%s"[%d]%s' % (l + 1, leaf(l), per_leaf + s + 1,
                                           opt(spine(s), l + 1, leaf(l),
                                               per_leaf + s + 1)))
        out.append("")
    for l in range(leaves):
        for h in range(per_leaf):
            n = host(l * per_leaf + h)
            out.append('Hca\t1 "%s"' % n)
            out.append('[1]\t"%s"[%d]%s' % (leaf(l), h + 1, opt(n, 1, leaf(l), h + 1)))
            out.append("")
    return "\n".join(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("leaves", type=int)
    ap.add_argument("hosts_per_leaf", type=int)
    ap.add_argument("spines", type=int)
    ap.add_argument("--narrow", action="append", default=[],
                    metavar="NODE:PORT")
    a = ap.parse_args()
    if a.leaves < 1 or a.hosts_per_leaf < 1 or a.spines < 0:
        ap.error("LEAVES and HOSTS_PER_LEAF must be >= 1, SPINES >= 0")
    if a.hosts_per_leaf + a.spines > 254 or a.leaves > 254:
        ap.error("a switch has at most 254 ports here")
    narrow = []
    for n in a.narrow:
        node, _, port = n.rpartition(":")
        if not node or not port.isdigit():
            ap.error("--narrow wants NODE:PORT, got %r" % n)
        narrow.append((node, int(port)))
    sys.stdout.write(generate(a.leaves, a.hosts_per_leaf, a.spines, narrow))
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
