#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Two-VM lab test: two VMs, each with its own rxe0, joined by a UDP socket
# link; perftest ib_send_lat runs from vm2 to vm1 across it (server first,
# client retrying until the server listens), and both sides report a
# latency. With equal MAC addresses rxe would keep the packets in one VM;
# this also checks that the two ports have distinct GIDs.
#   test-two-vms.sh LAB_TOOL
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"

if [ -z "${LAB:-}" ]; then
	tool=${1:?usage: test-two-vms.sh LAB_TOOL}
	lab_require "$tool"
	lab_run "$tool" --vms 2 --timeout 500 -- bash "$here/test-two-vms.sh"
fi

gid=$(cat /sys/class/infiniband/rxe0/ports/1/gids/1)
lab_ok "vm$LAB_NODE rxe0 GID[1] $gid"
expect=$(printf '0000:0000:0000:0000:0000:ffff:%02x%02x:%02x%02x' ${LAB_NODE_IP//./ })
[ "$gid" = "$expect" ] || lab_fail "GID[1] is $gid, expected $expect for $LAB_NODE_IP"

out=/dev/shm/lat
args=(-d rxe0 -i 1 -x 1 -s 2 -n 300 -F -p 18516)
if [ "$LAB_NODE" = 1 ]; then
	timeout 300 ib_send_lat "${args[@]}" >"$out" 2>&1
else
	run_client() { timeout 120 ib_send_lat "${args[@]}" "$LAB_PEER_IP" >"$out" 2>&1; }
	lab_retry 60 run_client
fi
rc=$?
cat "$out"
[ "$rc" -eq 0 ] || lab_fail "ib_send_lat on vm$LAB_NODE exited $rc"
typ=$(lab_lat_typical "$out")
awk -v t="$typ" 'BEGIN {exit !(t + 0 > 0)}' || lab_fail "no typical latency in the output"
lab_ok "ib_send_lat vm$LAB_NODE: typical $typ us across two VMs"
