#!/bin/bash
# SPDX-License-Identifier: MIT
# Stage 2 of the ibpulse lab guest, run by stage 1 inside the chroot of the
# host's root once eth0 has its address. Creates the Soft-RoCE device rxe0
# on eth0 (with the host's rdma tool: busybox has none), waits for its port
# to be ACTIVE (and, with two VMs, for the peer to answer), then runs the caller's job with its output on the second serial
# port (/dev/ttyS1, streamed by the host) and writes the job's exit status to
# exit.<node> in the run directory. Setup messages go to the console (ttyS0).
# Copied into each run directory by ibpulse-lab; not meant to run elsewhere.
run=${0%/*}
node=1
for a in $(</proc/cmdline); do
	case "$a" in
	lab.node=*) node=${a#lab.node=} ;;
	esac
done
exec </dev/null >/dev/ttyS0 2>&1
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin

say() { # MESSAGE: to the console, with the guest's uptime
	local up
	read -r up _ </proc/uptime
	echo "ibpulse-lab[vm$node] $up: $*"
}
finish() { # STATUS: record the status for the host, then return to stage 1
	echo "$1" >"$run/exit.$node"
	echo "IBPULSE-LAB-EXIT=$1"
	sync
	exit "$1"
}

# shellcheck source=/dev/null
. "$run/node.$node.env" || { say "no node.$node.env"; finish 125; }

say "stage 2"
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

# Two VMs: ping the peer until it answers, then meet it at a barrier in the
# shared run directory. Pinging first means neither node starts its job (and
# may power off) before both have reached the other over the link.
if [ -n "${LAB_PEER_IP:-}" ]; then
	peer=$((3 - node))
	end=$((SECONDS + 240))
	until busybox ping -c 1 -W 1 "$LAB_PEER_IP" >/dev/null 2>&1; do
		[ "$SECONDS" -lt "$end" ] || { say "peer $LAB_PEER_IP does not answer"; finish 125; }
		sleep 0.2
	done
	: >"$run/ready.$node"
	end=$((SECONDS + 240))
	until [ -e "$run/ready.$peer" ]; do
		[ "$SECONDS" -lt "$end" ] || { say "peer vm$peer never got ready"; finish 125; }
		sleep 0.2
	done
fi
say "ready: rxe0 ACTIVE on eth0 $LAB_NODE_IP"

bash "$run/job.sh" </dev/null >/dev/ttyS1 2>&1
finish $?
