#!/bin/bash
# SPDX-License-Identifier: MIT
# Stage 2 of the ibpulse lab guest, run by stage 1 inside the chroot of the
# host's root. Configures eth0 and lo, creates the Soft-RoCE device rxe0 on
# eth0, waits for its port to be ACTIVE (and, with two VMs, for the peer to
# answer), then runs the caller's job with its output on the second serial
# port (/dev/ttyS1, streamed by the host) and writes the job's exit status to
# exit.<node> in the run directory. Setup messages go to the console (ttyS0).
# Copied into each run directory by ibpulse-lab; not meant to run elsewhere.
run=$(cd "$(dirname "$0")" && pwd)
node=1
for a in $(cat /proc/cmdline); do
	case "$a" in
	lab.node=*) node=${a#lab.node=} ;;
	esac
done
exec </dev/null >/dev/ttyS0 2>&1
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin

say() { echo "ibpulse-lab[vm$node]: $*"; }
finish() { # STATUS: record the status for the host, then return to stage 1
	echo "$1" >"$run/exit.$node.tmp" && mv "$run/exit.$node.tmp" "$run/exit.$node"
	echo "IBPULSE-LAB-EXIT=$1"
	sync
	exit "$1"
}

# shellcheck source=/dev/null
. "$run/node.$node.env" || { say "no node.$node.env"; finish 125; }

stty -F /dev/ttyS1 raw -echo 2>/dev/null
hostname "lab-vm$node" 2>/dev/null

# eth0 must be the NIC with the MAC address the host gave it: rxe treats a
# destination with its own MAC as loopback, so two VMs need distinct ones.
mac=$(cat /sys/class/net/eth0/address 2>/dev/null)
if [ "$mac" != "$LAB_MAC" ]; then
	say "eth0 has MAC '$mac', expected $LAB_MAC"
	finish 125
fi
ip link set lo up
ip addr add "$LAB_NODE_IP/24" dev eth0 || finish 125
ip link set eth0 up || finish 125
if [ -n "${LAB_USERNET_MAC:-}" ]; then
	for d in /sys/class/net/*; do
		[ "$(cat "$d/address")" = "$LAB_USERNET_MAC" ] || continue
		ip addr add 10.0.2.15/24 dev "${d##*/}" && ip link set "${d##*/}" up
	done
fi

if ! rdma link add rxe0 type rxe netdev eth0; then
	say "rdma link add rxe0 failed"
	finish 125
fi
state=/sys/class/infiniband/rxe0/ports/1/state
for _ in $(seq 100); do
	grep -q ACTIVE "$state" 2>/dev/null && break
	sleep 0.1
done
grep -q ACTIVE "$state" || { say "rxe0 not ACTIVE: $(cat "$state")"; finish 125; }

if [ -n "${LAB_PEER_IP:-}" ]; then
	ok=
	for _ in $(seq 120); do
		if busybox ping -c 1 -W 1 "$LAB_PEER_IP" >/dev/null 2>&1; then
			ok=1
			break
		fi
	done
	[ -n "$ok" ] || { say "peer $LAB_PEER_IP does not answer"; finish 125; }
fi
say "ready: rxe0 ACTIVE on eth0 $LAB_NODE_IP"

bash "$run/job.sh" </dev/null >/dev/ttyS1 2>&1
finish $?
