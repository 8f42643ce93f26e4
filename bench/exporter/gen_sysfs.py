#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Generate a sysfs tree of mlx5-like InfiniBand ports for node_exporter.

ROOT/class/infiniband/mlx5_N/{board_id,fw_ver,hca_type,node_guid}, and per
port state, phys_state, rate, counters/ (21 files) and hw_counters/ (41
files), as procfs' sysfs.InfiniBandClass() reads them; node_exporter runs
with --path.sysfs=ROOT.

usage: gen_sysfs.py ROOT [DEVICES [PORTS]]
"""
import os
import random
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "tests", "exporter"))
import ibpdb  # noqa: E402


def put(path, text):
    with open(path, "w") as f:
        f.write(text + "\n")


def main():
    root = sys.argv[1]
    devices = int(sys.argv[2]) if len(sys.argv) > 2 else 64
    ports = int(sys.argv[3]) if len(sys.argv) > 3 else 2
    rnd = random.Random(1)
    for d in range(devices):
        dev = os.path.join(root, "class", "infiniband", "mlx5_%d" % d)
        os.makedirs(dev, exist_ok=True)
        put(os.path.join(dev, "board_id"), "MT_0000000223")
        put(os.path.join(dev, "fw_ver"), "20.31.1014")
        put(os.path.join(dev, "hca_type"), "MT4123")
        put(os.path.join(dev, "node_guid"), "0002:c903:0010:%04x" % d)
        for p in range(1, ports + 1):
            port = os.path.join(dev, "ports", str(p))
            for sub, names in (("counters", ibpdb.IB_COUNTERS), ("hw_counters", ibpdb.HW_COUNTERS)):
                os.makedirs(os.path.join(port, sub), exist_ok=True)
                for n in names:
                    put(os.path.join(port, sub, n), str(rnd.getrandbits(32)))
            put(os.path.join(port, "state"), "4: ACTIVE")
            put(os.path.join(port, "phys_state"), "5: LinkUp")
            put(os.path.join(port, "rate"), "200 Gb/sec (4X HDR)")
            put(os.path.join(port, "link_layer"), "InfiniBand")
            put(os.path.join(port, "lid"), "0x%x" % (d * ports + p))


if __name__ == "__main__":
    main()
