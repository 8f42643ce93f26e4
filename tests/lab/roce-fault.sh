#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Degrade the RoCE v2 traffic that leaves an interface, or stop doing so:
#   roce-fault.sh IFACE none | bw RATE | lat DELAY
# "bw RATE" shapes it with tbf (RATE as tc takes it: 2mbit, 500kbit), as in
# LAB.md "Degrading a link on purpose"; "lat DELAY" delays it with netem
# (2ms). Only UDP port 4791 is touched, as a degraded fabric link would be:
# in the lab the probes' pushes, plans and test control cross the same
# eth0, and slowing them too would break the probe, not the link. htb
# sends RoCE to class 1:20 and the rest to 1:10, neither limited; the
# fault is 1:20's qdisc. Each call replaces the previous one. Used inside
# lab VMs (tests/e2e/lab-fault-guest.sh, scripts/demo.sh --inject-fault),
# where the lab's initramfs has sch_tbf, sch_htb, cls_u32 and sch_netem;
# traffic of a device to itself bypasses every qdisc.
set -uo pipefail
dev=${1:?usage: roce-fault.sh IFACE none | bw RATE | lat DELAY}
kind=${2:?usage: roce-fault.sh IFACE none | bw RATE | lat DELAY}
arg=${3:-}

roce_class() {
	tc qdisc add dev "$dev" root handle 1: htb default 10 &&
		tc class add dev "$dev" parent 1: classid 1:10 htb rate 10gbit &&
		tc class add dev "$dev" parent 1: classid 1:20 htb rate 10gbit &&
		tc filter add dev "$dev" parent 1: protocol ip prio 1 u32 \
			match ip protocol 17 0xff match ip dport 4791 0xffff flowid 1:20
}

case "$kind" in
none | bw | lat) ;;
*) echo "roce-fault.sh: unknown fault '$kind' (none, bw RATE, lat DELAY)" >&2; exit 2 ;;
esac
[ "$kind" = none ] || [ -n "$arg" ] || { echo "roce-fault.sh: $kind needs a value" >&2; exit 2; }
tc qdisc del dev "$dev" root 2>/dev/null
case "$kind" in
none) exit 0 ;;
bw) roce_class && tc qdisc add dev "$dev" parent 1:20 handle 20: \
	tbf rate "$arg" burst 64kb latency 50ms ;;
lat) roce_class && tc qdisc add dev "$dev" parent 1:20 handle 20: netem delay "$arg" ;;
esac
