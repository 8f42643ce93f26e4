#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The counters path on a real verbs device, in one lab VM: collector and
# exporter on loopback, `ibpulse-probe report --once` pushing rxe0. rxe's
# hw_counters (sent_pkts, rcvd_pkts) show in /metrics and move after a
# perftest ib_write_bw run; after `ip link set eth0 down` the exported
# port state is DOWN (state id 1), and after `up` ACTIVE (4) again.
#   test-counters-path.sh LAB_TOOL BUILD_DIR
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
. "$here/lib.sh"
build=${2:?usage: test-counters-path.sh LAB_TOOL BUILD_DIR}
bin_c=$build/collector/ibpulse-collector
bin_e=$build/exporter/ibpulse-exporter
bin_p=$build/probe/ibpulse-probe

if [ -z "${LAB:-}" ]; then
	for b in "$bin_c" "$bin_e" "$bin_p"; do [ -x "$b" ] || lab_fail "$b not built"; done
	lab_require "$1"
	lab_run "$1" --timeout 500 -- bash "$here/test-counters-path.sh" "$1" "$build"
fi

w=/tmp/counters-path
mkdir -p "$w"
pids=()
trap 'kill "${pids[@]}" 2>/dev/null' EXIT

wait_file() { # FILE PID: poll until a daemon wrote its port file
	for _ in $(seq 600); do
		[ -s "$1" ] && return 0
		kill -0 "$2" 2>/dev/null || return 1
		sleep 0.1
	done
	return 1
}

token=lab-counters-path-token-0123456789
printf '%s\n' "$token" >"$w/token"
cat >"$w/collector.ini" <<INI
[collector]
listen = 127.0.0.1
port = 0
db = $w/ibpulse.db
schema_dir = $src/schema
[tokens]
lab-vm1 = $token
INI
"$bin_c" serve --config "$w/collector.ini" --port-file "$w/cport" 2>"$w/collector.log" &
pids+=($!)
wait_file "$w/cport" $! || lab_fail "collector did not start: $(cat "$w/collector.log")"
"$bin_e" --db "$w/ibpulse.db" --listen 127.0.0.1 --port 0 --port-file "$w/eport" \
	2>"$w/exporter.log" &
pids+=($!)
wait_file "$w/eport" $! || lab_fail "exporter did not start: $(cat "$w/exporter.log")"
url=http://127.0.0.1:$(cat "$w/cport")/api/v1/report
metrics=http://127.0.0.1:$(cat "$w/eport")/metrics

push() {
	"$bin_p" report --once --collector "$url" --token-file "$w/token" --host lab-vm1 \
		2>>"$w/probe.log" || lab_fail "probe report failed: $(tail -5 "$w/probe.log")"
}
# metric NAME [LABEL=VALUE...]: the value of one rxe0 sample in /metrics
metric() {
	local name=$1
	shift
	python3 "$here/labcheck.py" metric "$metrics" "$name" host=lab-vm1 device=rxe0 port=1 "$@"
}
hw() { # COUNTER: a hw_counter of rxe0 as exported, whatever its metric name
	local line
	line=$(curl -fsS "$metrics" | grep -v '^#' | grep "counter=\"$1\"" | grep 'device="rxe0"')
	[ "$(wc -l <<<"$line")" = 1 ] && [ -n "$line" ] || lab_fail "no single $1 sample: '$line'"
	echo "${line##* }"
}

push
state=$(metric ibpulse_port_state_id) || lab_fail "no ibpulse_port_state_id for rxe0"
[ "$state" = 4 ] || lab_fail "exported state is $state, expected 4 (ACTIVE)"
sent0=$(hw sent_pkts)
rcvd0=$(hw rcvd_pkts)
lab_ok "exported: state ACTIVE, sent_pkts $sent0, rcvd_pkts $rcvd0"

args=(-d rxe0 -i 1 -x 1 -s 65536 -n 100 -F -p 18517)
timeout 120 ib_write_bw "${args[@]}" >"$w/bw.server" 2>&1 &
server=$!
lab_wait_listen 18517 60 || lab_fail "ib_write_bw server does not listen"
timeout 120 ib_write_bw "${args[@]}" 127.0.0.1 >"$w/bw.client" 2>&1 ||
	lab_fail "ib_write_bw client failed: $(cat "$w/bw.client")"
wait "$server" || lab_fail "ib_write_bw server failed: $(cat "$w/bw.server")"

push
sent1=$(hw sent_pkts)
rcvd1=$(hw rcvd_pkts)
# 100 writes of 64 KiB at MTU 1024 are 6400 packets each way at least.
awk -v a="$sent0" -v b="$sent1" 'BEGIN {exit !(b - a >= 6400)}' ||
	lab_fail "sent_pkts moved from $sent0 to $sent1 only"
awk -v a="$rcvd0" -v b="$rcvd1" 'BEGIN {exit !(b - a >= 6400)}' ||
	lab_fail "rcvd_pkts moved from $rcvd0 to $rcvd1 only"
lab_ok "after ib_write_bw: sent_pkts $sent0 -> $sent1, rcvd_pkts $rcvd0 -> $rcvd1"

ip link set eth0 down || lab_fail "ip link set eth0 down"
for _ in $(seq 50); do
	grep -q DOWN /sys/class/infiniband/rxe0/ports/1/state && break
	sleep 0.1
done
grep -q DOWN /sys/class/infiniband/rxe0/ports/1/state ||
	lab_fail "rxe0 still $(cat /sys/class/infiniband/rxe0/ports/1/state) 5 s after eth0 down"
push
state=$(metric ibpulse_port_state_id)
[ "$state" = 1 ] || lab_fail "exported state after eth0 down is $state, expected 1 (DOWN)"
lab_ok "eth0 down: exported port state DOWN (1)"

ip link set eth0 up || lab_fail "ip link set eth0 up"
for _ in $(seq 100); do
	grep -q ACTIVE /sys/class/infiniband/rxe0/ports/1/state && break
	sleep 0.1
done
push
state=$(metric ibpulse_port_state_id)
[ "$state" = 4 ] || lab_fail "exported state after eth0 up is $state, expected 4 (ACTIVE)"
lab_ok "eth0 up: exported port state ACTIVE (4)"
