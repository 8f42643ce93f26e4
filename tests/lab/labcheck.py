#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Checks the lab tests run inside the guest, against the live sysfs.

  labcheck.py devices JSON_FILE      `ibpulse-probe devices --json` output
      describes rxe0 as the kernel does: state, phys_state, rate, link
      layer, every valid GID with its type and netdev (a RoCE v2 GID for
      the port's IPv4 address among them), P_Key 0xffff at index 0 and the
      hw_counters (sent_pkts, rcvd_pkts).
  labcheck.py metric URL NAME [LABEL=VALUE...]
      print the value of the one sample of /metrics whose metric name is
      NAME and whose labels include the given ones (exit 1 if none).
"""
import json
import os
import re
import sys
import urllib.request

PORT = "/sys/class/infiniband/rxe0/ports/1"


def sysfs(path):
    with open(os.path.join(PORT, path)) as f:
        return f.read().strip()


def fail(msg):
    print("FAIL: " + msg, file=sys.stderr)
    sys.exit(1)


def check(cond, msg):
    if not cond:
        fail(msg)


def rate_bytes(text):
    # "2.5 Gb/sec (1X SDR)" -> bytes per second
    m = re.match(r"([0-9.]+) Gb/sec", text)
    check(m, "cannot parse rate %r" % text)
    return int(float(m.group(1)) * 1e9 / 8)


def kernel_gids():
    gids = {}
    for name in os.listdir(os.path.join(PORT, "gids")):
        try:
            gtype = sysfs("gid_attrs/types/" + name)
            ndev = sysfs("gid_attrs/ndevs/" + name)
        except OSError:  # EINVAL: an empty slot
            continue
        gids[int(name)] = (sysfs("gids/" + name), gtype, ndev)
    return gids


def check_devices(path):
    with open(path) as f:
        report = json.load(f)
    devs = {d["name"]: d for d in report["devices"]}
    check("rxe0" in devs, "rxe0 not listed: %s" % list(devs))
    ports = {p["port"]: p for p in devs["rxe0"]["ports"]}
    check(1 in ports, "rxe0 has no port 1")
    p = ports[1]
    state = int(sysfs("state").split(":")[0])
    check(state == 4, "kernel says rxe0 is not ACTIVE: %d" % state)
    check(p["state"] == state, "state %r, kernel %d" % (p["state"], state))
    phys = int(sysfs("phys_state").split(":")[0])
    check(p["phys_state"] == phys, "phys_state %r, kernel %d" % (p["phys_state"], phys))
    want = rate_bytes(sysfs("rate"))
    check(p["rate_bytes_per_second"] == want,
          "rate %r, kernel %d" % (p["rate_bytes_per_second"], want))
    check(p["link_layer"] == "Ethernet", "link layer %r" % p["link_layer"])

    gids = {g["index"]: g for g in p["gids"]}
    for idx, (gid, gtype, ndev) in kernel_gids().items():
        check(idx in gids, "GID index %d (%s) missing" % (idx, gid))
        g = gids[idx]
        check(g["gid"] == gid, "GID %d is %r, kernel %r" % (idx, g["gid"], gid))
        check(g["type"] == gtype, "GID %d type %r, kernel %r" % (idx, g.get("type"), gtype))
        check(g.get("netdev") == ndev, "GID %d netdev %r, kernel %r" % (idx, g.get("netdev"), ndev))
    ip = os.environ["LAB_NODE_IP"]
    mapped = "0000:0000:0000:0000:0000:ffff:%02x%02x:%02x%02x" % tuple(
        int(x) for x in ip.split("."))
    check(any(g["gid"] == mapped and g["type"] == "RoCE v2" for g in gids.values()),
          "no RoCE v2 GID for %s" % ip)

    pkeys = {k["index"]: k for k in p["pkeys"]}
    check(0 in pkeys and pkeys[0]["pkey"] == 0xffff, "P_Key index 0 is not 0xffff: %r" % pkeys)

    hw = p["counters"]["hw"]
    for name in ("sent_pkts", "rcvd_pkts"):
        check(name in hw, "hw_counters has no %s: %s" % (name, sorted(hw)))
        check(isinstance(hw[name], int) and hw[name] >= 0, "%s is %r" % (name, hw[name]))
    print("ok: probe devices --json matches sysfs for rxe0: state %d, rate %d B/s, "
          "%d GIDs, P_Key 0xffff, %d hw_counters" % (state, want, len(gids), len(hw)))


SAMPLE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})? (\S+)')
LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"')


def metric(url, name, wanted):
    with urllib.request.urlopen(url, timeout=30) as r:
        text = r.read().decode()
    found = []
    for line in text.splitlines():
        m = SAMPLE.match(line)
        if not m or m.group(1) != name:
            continue
        labels = dict(LABEL.findall(m.group(3) or ""))
        if all(labels.get(k) == v for k, v in wanted.items()):
            found.append(m.group(4))
    if len(found) != 1:
        print("%d samples of %s%r in %s" % (len(found), name, wanted, url), file=sys.stderr)
        sys.exit(1)
    print(found[0])


def main(argv):
    if len(argv) >= 3 and argv[1] == "devices":
        check_devices(argv[2])
    elif len(argv) >= 4 and argv[1] == "metric":
        metric(argv[2], argv[3], dict(a.split("=", 1) for a in argv[4:]))
    else:
        print(__doc__, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
