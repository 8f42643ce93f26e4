#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Lab fault tests of the verbs engine, in one VM on rxe0: a responder
# killed mid-test and the port taken down mid-test (ip link set eth0 down)
# both end the client with a non-zero status and a clear error well within
# its timeout (20 s of the fault), never a hang; the link comes back up
# after. A client killed mid-test costs the responder an error result and
# nothing else: it serves the next client.
#   test-lab-verbs-faults.sh LAB_TOOL PROBE
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../lab/lib.sh"

if [ -z "${LAB:-}" ]; then
	tool=${1:?usage: test-lab-verbs-faults.sh LAB_TOOL PROBE}
	probe=${2:?usage: test-lab-verbs-faults.sh LAB_TOOL PROBE}
	lab_require "$tool"
	lab_run "$tool" --timeout 600 --env "PROBE=$probe" -- \
		bash "$here/test-lab-verbs-faults.sh"
fi

out=/dev/shm/faults

# wait_active SECONDS: rxe0's port back to ACTIVE.
wait_active() {
	local i
	for ((i = 0; i < $1 * 10; i++)); do
		grep -q ACTIVE /sys/class/infiniband/rxe0/ports/1/state && return 0
		sleep 0.1
	done
	return 1
}

# flowing SECONDS: wait until rxe0 has sent 2000 more packets (the test runs).
flowing() {
	local c=/sys/class/infiniband/rxe0/ports/1/hw_counters/sent_pkts i
	local base
	base=$(cat "$c")
	for ((i = 0; i < $1 * 10; i++)); do
		[ $(($(cat "$c") - base)) -gt 2000 ] && return 0
		sleep 0.1
	done
	return 1
}

# fault NAME PORT ACTION ERROR_RE [TEST ARGS...]: a 30 s test (write_bw
# -q 2 unless given), ACTION once traffic flows; the client's error must
# match ERROR_RE.
fault() {
	local name=$1 port=$2 action=$3 re=$4 rc start end
	shift 4
	[ $# -gt 0 ] || set -- write_bw -q 2
	"$PROBE" serve -p "$port" -d rxe0 --timeout 5 >"$out.server" 2>&1 &
	server=$!
	lab_wait_listen "$port" 60 || lab_fail "serve does not listen"
	timeout 90 "$PROBE" run "$@" --peer "127.0.0.1:$port" -d rxe0 \
		--no-pin -D 30 --timeout 5 --json >"$out.json" 2>"$out.err" &
	client=$!
	flowing 60 || lab_fail "$name: no traffic on rxe0: $(cat "$out.err")"
	start=$(date +%s)
	eval "$action"
	wait "$client"
	rc=$?
	end=$(date +%s)
	kill "$server" 2>/dev/null
	wait "$server" 2>/dev/null
	cat "$out.err"
	[ "$rc" -ne 124 ] || lab_fail "$name: the client hung until timeout(1)"
	[ "$rc" -eq 1 ] || lab_fail "$name: client status $rc, expected 1"
	[ $((end - start)) -lt 20 ] ||
		lab_fail "$name: the client took $((end - start)) s to notice"
	python3 - "$out.json" "$re" <<'PY' || lab_fail "$name: bad JSON: $(cat "$out.json")"
import json, re, sys
d = json.load(open(sys.argv[1]))
assert d["status"] == "error" and re.search(sys.argv[2], d["error"]), d
PY
	lab_ok "$name: client failed $((end - start)) s after the fault: $(head -c 300 "$out.err")"
}

fault "responder killed" 18801 'kill -9 $server' 'control connection|retry'
# The new modes: credits stop a bidirectional SEND (the dead peer posts
# no receives), and a latency test in duration mode spins on a dead peer.
fault "responder killed, bidirectional send_bw" 18804 'kill -9 $server' \
	'control connection|retry|no progress' send_bw -b -q 2
fault "responder killed, write_lat -D" 18805 'kill -9 $server' \
	'control connection|retry|no progress' write_lat
fault "port down" 18802 'ip link set eth0 down' 'is now down|DOWN|retry'
ip link set eth0 up
wait_active 30 || lab_fail "rxe0 did not come back ACTIVE"
lab_ok "rxe0 ACTIVE again"

# A client killed mid-test: the responder logs an error, frees the test's
# resources and its slot (--max-concurrent 1), and serves the next client.
"$PROBE" serve -p 18803 -d rxe0 --timeout 5 --max-concurrent 1 \
	>"$out.server" 2>&1 &
server=$!
lab_wait_listen 18803 60 || lab_fail "serve does not listen"
# Not under timeout(1): the kill must reach the probe itself.
"$PROBE" run write_bw --peer 127.0.0.1:18803 -d rxe0 --no-pin -D 30 \
	>/dev/null 2>&1 &
client=$!
flowing 60 || lab_fail "client killed: no traffic on rxe0"
kill -9 "$client"
wait "$client" 2>/dev/null
lab_retry_out 30 "$out.next" "$out.next" timeout 60 "$PROBE" run write_lat \
	--peer 127.0.0.1:18803 -d rxe0 --no-pin -n 100 ||
	lab_fail "client killed: the next client failed: $(cat "$out.next" "$out.server")"
kill "$server"
wait "$server"
grep -q "test failed" "$out.server" ||
	lab_fail "client killed: the responder logged no error: $(cat "$out.server")"
lab_ok "client killed: responder logged $(grep -m1 'test failed' "$out.server" | head -c 200); next client served"
