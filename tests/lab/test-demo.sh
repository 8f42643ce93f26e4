#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The README's main command on a host without RDMA: scripts/demo.sh runs
# the stack in the lab VM and forwards the exporter to the host. While it
# runs, the host's 127.0.0.1:PORT/metrics shows rxe0 ACTIVE with moving
# hw_counters (the demo runs perftest inside); with --duration it then
# stops by itself with status 0 and leaves no VM behind.
#   test-demo.sh LAB_TOOL BUILD_DIR
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
. "$here/lib.sh"
tool=${1:?usage: test-demo.sh LAB_TOOL BUILD_DIR}
build=${2:?usage: test-demo.sh LAB_TOOL BUILD_DIR}

if ls /sys/class/infiniband/* >/dev/null 2>&1; then
	echo "SKIP: this host has an RDMA device; the demo would not use the lab" >&2
	exit 77
fi
lab_require "$tool"

port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
out=$(mktemp)
trap 'kill "$demo" 2>/dev/null; wait "$demo" 2>/dev/null; rm -f "$out"' EXIT
bash "$top/scripts/demo.sh" --no-install --build-dir "$build" --duration 45 --interval 5 \
	--port "$port" >"$out" 2>&1 &
demo=$!

url=http://127.0.0.1:$port/metrics
seen=() deadline=$((SECONDS + 240))
while [ "$SECONDS" -lt "$deadline" ] && kill -0 "$demo" 2>/dev/null; do
	v=$(curl -fsS --max-time 10 "$url" 2>/dev/null |
		grep '^ibpulse_port_hw_counters_total{.*device="rxe0".*counter="sent_pkts"' | awk '{print $NF}')
	[ -n "$v" ] && seen+=("$v")
	[ ${#seen[@]} -ge 2 ] && [ "${seen[-1]}" != "${seen[0]}" ] && break
	sleep 2
done
[ ${#seen[@]} -ge 2 ] || lab_fail "no rxe0 sent_pkts at $url: $(cat "$out")"
[ "${seen[-1]}" != "${seen[0]}" ] || lab_fail "sent_pkts did not move: ${seen[*]}"
state=$(curl -fsS "$url" | grep '^ibpulse_port_state_id{.*device="rxe0"' | awk '{print $NF}')
[ "$state" = 4 ] || lab_fail "rxe0 state $state in $url"
lab_ok "demo: $url shows rxe0 ACTIVE, sent_pkts ${seen[0]} -> ${seen[-1]}"
grep -q "scrape_configs" "$out" || lab_fail "no scrape config printed: $(cat "$out")"

wait "$demo"
rc=$?
demo=
cat "$out"
[ "$rc" -eq 0 ] || lab_fail "demo.sh exited $rc"
lab_ok "demo.sh stopped by itself after --duration"
