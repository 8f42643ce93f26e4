#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# scripts/demo.sh's host paths, run inside the lab where the kernel has
# rdma_rxe: with rxe0 removed and --create-rxe eth0, the demo creates the
# Soft-RoCE device rxe_ibpulse (saying it opens UDP port 4791), serves
# /metrics with that device ACTIVE on 127.0.0.1:PORT (as both of its
# probes, demo-a and demo-b, report it), stops by itself
# after --duration with status 0 and removes the device again.
#   test-demo-host.sh LAB_TOOL BUILD_DIR
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
. "$here/lib.sh"
build=${2:?usage: test-demo-host.sh LAB_TOOL BUILD_DIR}

if [ -z "${LAB:-}" ]; then
	lab_require "$1"
	lab_run "$1" --timeout 400 -- bash "$here/test-demo-host.sh" "$1" "$build"
fi

rdma link delete rxe0 || lab_fail "rdma link delete rxe0"
[ ! -e /sys/class/infiniband/rxe0 ] || lab_fail "rxe0 still there"
port=19480
out=/tmp/demo.out
bash "$top/scripts/demo.sh" --no-build --build-dir "$build" --workdir /tmp/demo \
	--create-rxe eth0 --duration 30 --interval 3 --port "$port" >"$out" 2>&1 &
demo=$!
trap 'kill "$demo" 2>/dev/null' EXIT

state=
for _ in $(seq 120); do
	state=$(curl -fsS --max-time 5 "http://127.0.0.1:$port/metrics" 2>/dev/null |
		grep '^ibpulse_port_state_id{.*device="rxe_ibpulse"' | awk '{print $NF}' | sort -u)
	[ "$state" = 4 ] && break
	kill -0 "$demo" 2>/dev/null || break
	sleep 1
done
[ "$state" = 4 ] || lab_fail "no ACTIVE rxe_ibpulse in /metrics: $(cat "$out")"
lab_ok "demo --create-rxe eth0: rxe_ibpulse ACTIVE in /metrics"
wait "$demo"
rc=$?
cat "$out"
[ "$rc" -eq 0 ] || lab_fail "demo.sh exited $rc"
grep -q 'UDP port 4791' "$out" || lab_fail "demo.sh did not say it opens UDP port 4791"
[ ! -e /sys/class/infiniband/rxe_ibpulse ] || lab_fail "rxe_ibpulse was not removed"
lab_ok "demo.sh stopped after --duration and removed rxe_ibpulse"
