#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Lab test of the verbs engine: in one VM, every test type runs
# probe-to-probe on rxe0 (ibpulse-probe serve --once, then run against
# 127.0.0.1) and its JSON has status ok and plausible non-zero figures;
# bidirectional SEND without receiver-not-ready NAKs; latency in duration
# mode; UD send latency.
#   test-lab-verbs.sh LAB_TOOL PROBE
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../lab/lib.sh"

if [ -z "${LAB:-}" ]; then
	tool=${1:?usage: test-lab-verbs.sh LAB_TOOL PROBE}
	probe=${2:?usage: test-lab-verbs.sh LAB_TOOL PROBE}
	lab_require "$tool"
	lab_run "$tool" --timeout 800 --env "PROBE=$probe" -- \
		bash "$here/test-lab-verbs.sh"
fi

out=/dev/shm/verbs
port=18600
common=(-d rxe0 --no-pin --timeout 10)
serve_args=()

# one TEST [ARGS...]: a responder for one client, the client, then checks.
one() {
	local test=$1 rc src
	shift
	port=$((port + 1))
	timeout 120 "$PROBE" serve -p "$port" --once --json -d rxe0 \
		"${serve_args[@]}" >"$out.server" 2>&1 &
	local server=$!
	lab_wait_listen "$port" 60 || lab_fail "serve does not listen: $(cat "$out.server")"
	timeout 120 "$PROBE" run "$test" --peer "127.0.0.1:$port" "${common[@]}" \
		--json "$@" >"$out.json" 2>"$out.err"
	rc=$?
	wait "$server"
	src=$?
	[ "$rc" -eq 0 ] && [ "$src" -eq 0 ] ||
		lab_fail "$test $*: client $rc, server $src: $(cat "$out.err" "$out.server")"
	python3 "$here/check-result.py" "$test" "$out.json" "$out.server" "$@" ||
		lab_fail "$test $*: implausible result: $(cat "$out.json")"
}

one write_bw -D 2 -q 2
one read_bw -D 2 -q 2
one send_bw -D 2 -q 2
one write_bw -D 2 -b
one write_bw -n 2000 -s 64 --post-list 8 --cq-mod 16
one fadd_bw -n 2000
one cas_bw -n 2000
one write_lat -n 300
one send_lat -n 300
one read_lat -n 300
one fadd_lat -n 300
one cas_lat -n 300
one write_lat -n 100 -s 4096 --inline 0
one send_bw -n 500 -s 4096 --gid v2-ipv4 --pkey 0xffff --mtu 1024
one write_bw -n 200 -s 10000 -q 3 --verify
one read_bw -n 200 -s 10000 -q 3 --verify
one send_bw -n 200 -s 10000 -q 3 --verify
lab_ok "every test type ran probe-to-probe on rxe0"

# Bidirectional SEND: both sides send and receive at once, and neither
# ever finds the other's receive queue empty (rxe counts RNR NAKs both
# ways; the client and the responder share rxe0 here).
rnr() {
	cat /sys/class/infiniband/rxe0/ports/1/hw_counters/{rcvd,send}_rnr_err |
		awk '{n += $1} END {print n + 0}'
}
rnr0=$(rnr)
one send_bw -b -n 2000 -q 2
one send_bw -b -D 2 -q 2
one send_bw -b -n 3000 -s 64 --post-list 8 --cq-mod 16
[ "$(rnr)" -eq "$rnr0" ] ||
	lab_fail "bidirectional SEND: $(($(rnr) - rnr0)) receiver-not-ready NAKs"
lab_ok "bidirectional SEND both ways, no receiver-not-ready NAK"

# Latency tests in duration mode: samples from the window only.
one write_lat -D 2
one send_lat -D 2
one read_lat -D 1 --margin 0.1
one fadd_lat -D 1
one cas_lat -D 1
lab_ok "latency tests in duration mode"

# UD send latency: iterations, duration, a full path MTU; and a message
# bigger than the path MTU (1024 on rxe0 here) refused with the range.
one ud_send_lat -n 300
one ud_send_lat -D 1
one ud_send_lat -n 100 -s 1024 --inline 0
port=$((port + 1))
timeout 120 "$PROBE" serve -p "$port" --once -d rxe0 >"$out.server" 2>&1 &
server=$!
lab_wait_listen "$port" 60 || lab_fail "serve does not listen"
timeout 120 "$PROBE" run ud_send_lat --peer "127.0.0.1:$port" "${common[@]}" \
	-n 100 -s 2048 >"$out.bad" 2>&1
rc=$?
wait "$server"
[ "$rc" -eq 1 ] && grep -q "valid range 1..1024 (the path MTU)" "$out.bad" ||
	lab_fail "UD above the MTU: status $rc: $(cat "$out.bad" "$out.server")"
lab_ok "UD send latency; a UD message above the path MTU is refused"

# The responder's port named by the client (control protocol v2): its own
# is served, another is refused with the one it serves.
one write_bw -n 200 --peer-device rxe0 --peer-ib-port 1
port=$((port + 1))
timeout 120 "$PROBE" serve -p "$port" --once -d rxe0 >"$out.server" 2>&1 &
server=$!
lab_wait_listen "$port" 60 || lab_fail "serve does not listen"
timeout 120 "$PROBE" run write_bw --peer "127.0.0.1:$port" "${common[@]}" \
	-n 100 --peer-device mlx5_9 >"$out.bad" 2>&1
rc=$?
wait "$server"
[ "$rc" -eq 1 ] && grep -q "no device mlx5_9 here: this responder serves rxe0 port 1" "$out.bad" ||
	lab_fail "--peer-device mlx5_9: status $rc: $(cat "$out.bad" "$out.server")"
lab_ok "the responder's port named by the client; another refused naming its own"

# Shared secret: the same on both sides runs; another one is refused.
secret=$(mktemp /dev/shm/verbs-secret.XXXXXX)
other=$(mktemp /dev/shm/verbs-other.XXXXXX)
echo "a shared secret for the verbs lab test" >"$secret"
echo "not the secret the responder was given" >"$other"
serve_args=(--secret-file "$secret")
one write_lat -n 100 --secret-file "$secret"
lab_ok "HMAC challenge-response with a shared secret"
port=$((port + 1))
timeout 120 "$PROBE" serve -p "$port" --once -d rxe0 --secret-file "$secret" \
	>"$out.server" 2>&1 &
server=$!
lab_wait_listen "$port" 60 || lab_fail "serve does not listen"
timeout 120 "$PROBE" run write_lat --peer "127.0.0.1:$port" "${common[@]}" \
	-n 100 --secret-file "$other" >"$out.bad" 2>&1
rc=$?
wait "$server"
[ "$rc" -eq 1 ] && grep -q "authentication failed" "$out.bad" &&
	grep -q "authentication failed" "$out.server" ||
	lab_fail "wrong secret: status $rc: $(cat "$out.bad" "$out.server")"
lab_ok "a wrong secret is refused, and both sides say so"
serve_args=()

# bad_choice WHAT EXPECT ARGS...: refused up front, naming the valid choices.
bad_choice() {
	local what=$1 expect=$2 rc
	shift 2
	timeout 60 "$PROBE" run write_bw --peer 127.0.0.1:1 --no-pin "$@" \
		>"$out.bad" 2>&1
	rc=$?
	[ "$rc" -eq 1 ] || lab_fail "$what: status $rc: $(cat "$out.bad")"
	grep -q -- "$expect" "$out.bad" || lab_fail "$what: no '$expect' in: $(cat "$out.bad")"
	lab_ok "$what refused, naming the choices"
}
bad_choice "unknown device" "devices: rxe0" -d nope0
bad_choice "unknown GID selector" "::ffff:10.0.2.15" -d rxe0 --gid 10.9.9.9
bad_choice "P_Key not in the table" "0xffff (full)" -d rxe0 --pkey 0x8001
bad_choice "no such port" "valid ports: 1..1" -d rxe0 -i 2
