#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Lab test of `ibpulse-probe daemon` on rxe0 in one VM: two daemons with
# distinct host names and responder ports test each other through static
# peers with a shared secret (no collector: results stay in their
# spools), A also runs the
# loopback self-test. Asserted: ok results with figures arrive from both
# and A's self-test; a paused B makes A's tests come back "refused";
# ib_write_bw running beside A's test flags a result busy; with eth0 down
# A keeps running and reports its port not ACTIVE, and after eth0 up its
# tests succeed again; SIGTERM ends a 40 s test at once, spooled "aborted".
# Daemon E asks B (control protocol v2) for rxe0/1 and for a port B lacks:
# the latter comes back "refused" naming B's valid ports. E reads its own
# counters from a frozen copy of rxe0's sysfs tree (a stand-in for a quiet
# port of its own: one VM has one rxe port), so when ib_write_bw runs only
# B's counters (sent back in RESULT) see it: flagged busy, the responder
# named and not the initiator.
#   test-lab-daemon.sh LAB_TOOL PROBE
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../lab/lib.sh"

if [ -z "${LAB:-}" ]; then
	tool=${1:?usage: test-lab-daemon.sh LAB_TOOL PROBE}
	probe=${2:?usage: test-lab-daemon.sh LAB_TOOL PROBE}
	lab_require "$tool"
	lab_run "$tool" --timeout 600 --env "PROBE=$probe" -- \
		bash "$here/test-lab-daemon.sh"
fi

w=/dev/shm/daemon
mkdir -p "$w"
pids=()
trap 'kill "${pids[@]}" 2>/dev/null; ip link set eth0 up' EXIT

# Both daemons authenticate their tests with a shared secret.
printf 'lab-daemon-secret-0123456789abcdef\n' >"$w/secret"
chmod 600 "$w/secret"

# conf NAME RESPONDER_PORT PEER_PORT EXTRA: one daemon's probe.ini
conf() {
	cat >"$w/$1.ini" <<INI
[probe]
host = $1
netdev_stats = false
[daemon]
counters_interval = 1
test_interval = 4
jitter = 3
duty_cycle = 1
responder_port = $2
responder_listen = 127.0.0.1
test_timeout = 5
spool_dir = $w/$1/spool
control_socket = $w/$1.sock
secret_file = $w/secret
$4
[peers]
peer = 127.0.0.1:$3
[profile lat]
test = write_lat
size = 2
iters = 200
INI
}
conf lab-a 18601 18602 "selftest = true
selftest_interval = 10
selftest_profile = lat"
conf lab-b 18602 18601 ""
for n in lab-a lab-b; do
	"$PROBE" daemon --config "$w/$n.ini" 2>"$w/$n.log" &
	pids+=($!)
done
pid_a=${pids[0]}
echo "started daemons A and B"

# E's sysfs: rxe0's files (not its symlinks) as they are now. One python
# process: thousands of cat processes are slow under TCG.
python3 - "$w/sys-e" <<'PY' || lab_fail "copying rxe0's sysfs tree"
import os, sys
src = "/sys/class/infiniband/rxe0"
dst = os.path.join(sys.argv[1], "class", "infiniband", "rxe0")
for root, dirs, files in os.walk(src):
    rel = os.path.relpath(root, src)
    for f in files:
        p = os.path.join(root, f)
        try:
            data = open(p, "rb").read()
        except OSError:
            continue
        os.makedirs(os.path.join(dst, rel), exist_ok=True)
        with open(os.path.join(dst, rel, f), "wb") as out:
            out.write(data)
PY
cat >"$w/lab-e.ini" <<INI
[probe]
host = lab-e
netdev_stats = false
sysfs_root = $w/sys-e
[daemon]
counters_interval = 1
test_interval = 2
jitter = 1
duty_cycle = 1
responder_port = 18605
responder_listen = 127.0.0.1
test_timeout = 5
spool_dir = $w/lab-e/spool
control_socket = $w/lab-e.sock
secret_file = $w/secret
[peers]
b = 127.0.0.1:18602/rxe0/1
nodev = 127.0.0.1:18602/mlx5_9/1
[profile lat]
test = write_lat
size = 2
iters = 200
INI
"$PROBE" daemon --config "$w/lab-e.ini" 2>"$w/lab-e.log" &
pid_e=$!
pids+=("$pid_e")

# results HOST STRING...: how many spooled results of HOST hold every
# STRING (one compact JSON object per file; grep, python is slow in TCG)
results() {
	local dir=$w/$1/spool lines
	shift
	lines=$(find "$dir" -maxdepth 1 -name '*.json' -exec cat {} + 2>/dev/null |
		sed 's/}{"id"/}\n{"id"/g')
	for s in "$@"; do
		lines=$(grep -F -- "$s" <<<"$lines")
	done
	[ -n "$lines" ] && wc -l <<<"$lines" || echo 0
}
# wait_results HOST COUNT SECONDS WHAT STRING...: against the clock
wait_results() {
	local host=$1 count=$2 secs=$3 what=$4 end=$((SECONDS + $3)) n
	shift 4
	while :; do
		n=$(results "$host" "$@")
		[ "$n" -ge "$count" ] && return 0
		kill -0 "$pid_a" 2>/dev/null || lab_fail "daemon A died: $(tail "$w/lab-a.log")"
		[ "$SECONDS" -ge "$end" ] && break
		sleep 1
	done
	lab_fail "$what: $n of $count after $secs s; A: $(tail -5 "$w/lab-a.log"); B: $(tail -5 "$w/lab-b.log")"
}
ok_peer=('"outcome":"ok"' '"lat_median_seconds"' '"selftest":false')
wait_results lab-a 2 180 "A's tests of B" "${ok_peer[@]}"
wait_results lab-b 2 180 "B's tests of A" "${ok_peer[@]}"
# a latency test measures no bandwidth: its results carry none (a 0 there
# was read as the link's bandwidth by the per-port aggregates)
n=$(results lab-a '"lat_median_seconds"' '"bw_avg_bytes_per_second"')
[ "$n" -eq 0 ] || lab_fail "$n latency results carry a bandwidth figure"
lab_ok "both daemons measured each other"
wait_results lab-a 1 180 "A's self-test" '"outcome":"ok"' '"selftest":true'

lab_ok "A's loopback self-test"

"$PROBE" pause --socket "$w/lab-b.sock" >/dev/null || lab_fail "pause B"
wait_results lab-a 1 90 "A refused by a paused B" '"outcome":"refused"' 'paused'

"$PROBE" resume --socket "$w/lab-b.sock" >/dev/null || lab_fail "resume B"
lab_ok "a paused responder refuses"

# Traffic beside the scheduled tests: some result of A is flagged busy.
# The perftest server listens before its client starts (TCG is slow).
ib_write_bw -d rxe0 -x 1 -s 65536 -D 25 -p 18700 >"$w/perf-s.log" 2>&1 &
pids+=($!)
perf=($!)
lab_wait_listen 18700 30 || lab_fail "ib_write_bw server: $(cat "$w/perf-s.log")"
lab_retry_out 5 "$w/perf-c.log" "$w/perf-c.log" \
	ib_write_bw -d rxe0 -x 1 -s 65536 -D 25 -p 18700 127.0.0.1 &
pids+=($!)
perf+=($!)
wait_results lab-a 1 90 "a busy-flagged result (perftest: $(tail -3 "$w/perf-c.log"))" \
	'"busy":true' '"outcome":"ok"'

lab_ok "a test beside ib_write_bw is flagged busy"
wait_results lab-e 1 60 "E's test of B flagged busy by the responder alone (E: $(tail -3 "$w/lab-e.log"))" \
	'"busy":true' '"busy_reason":"responder: '
lab_ok "traffic seen only at the responder's port: busy, the responder named"
wait "${perf[@]}"
wait_results lab-e 1 60 "E's request for a port B lacks refused naming rxe0/1" \
	'"outcome":"refused"' 'no ACTIVE port mlx5_9/1' 'valid: rxe0/1'
wait_results lab-e 1 60 "E's tests of B's rxe0/1" '"outcome":"ok"' '"device":"rxe0"'
lab_ok "a port the responder lacks is refused naming the valid ones"
kill "$pid_e"

# Port down: A keeps running and says so; up: tests succeed again.
ip link set eth0 down
for ((i = 0; i < 30; i++)); do
	"$PROBE" status --socket "$w/lab-a.sock" | grep -q '"active":false' && break
	sleep 1
done
"$PROBE" status --socket "$w/lab-a.sock" | grep -q '"active":false' ||
	lab_fail "A does not report rxe0 down: $("$PROBE" status --socket "$w/lab-a.sock")"
sleep 3
kill -0 "$pid_a" || lab_fail "A died with the port down"
before=$(results lab-a "${ok_peer[@]}")
ip link set eth0 up
lab_ok "port down reported, daemon alive"
wait_results lab-a $((before + 1)) 180 "A's tests after eth0 up" "${ok_peer[@]}"
lab_ok "tests resume after the port comes back"

# SIGTERM during a long test: the daemon ends it at once (not after its
# 40 s) and spools it with outcome "aborted". Daemon C only self-tests.
conf lab-c 18603 18602 "selftest = true
selftest_interval = 10
selftest_profile = long
peer_profiles = lat
[profile long]
test = write_bw
size = 65536
duration = 40"
"$PROBE" daemon --config "$w/lab-c.ini" 2>"$w/lab-c.log" &
pid_c=$!
pids+=("$pid_c")
# Testing for 3 s in a row: the long test, not a short one of B.
seen=0
for ((i = 0; i < 180 && seen < 4; i++)); do
	if "$PROBE" status --socket "$w/lab-c.sock" 2>/dev/null |
		grep -q '"testing":true'; then
		seen=$((seen + 1))
	else
		seen=0
	fi
	sleep 1
done
[ "$seen" -ge 4 ] ||
	lab_fail "C never ran its long self-test: $(tail -5 "$w/lab-c.log")"
t0=$SECONDS
kill -TERM "$pid_c"
for ((i = 0; i < 150; i++)); do
	kill -0 "$pid_c" 2>/dev/null || break
	sleep 0.2
done
kill -0 "$pid_c" 2>/dev/null && lab_fail "C still runs $((SECONDS - t0)) s after SIGTERM"
[ "$(results lab-c '"outcome":"aborted"')" -ge 1 ] ||
	lab_fail "no aborted result in C's spool: $(tail -5 "$w/lab-c.log")"
lab_ok "SIGTERM aborts a running test within $((SECONDS - t0)) s, spooled as aborted"
