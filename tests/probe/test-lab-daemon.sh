#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Lab test of `ibpulse-probe daemon` on rxe0 in one VM: two daemons with
# distinct host names and responder ports test each other through static
# peers (no collector: results stay in their spools), A also runs the
# loopback self-test. Asserted: ok results with figures arrive from both
# and A's self-test; a paused B makes A's tests come back "refused";
# ib_write_bw running beside A's test flags a result busy; with eth0 down
# A keeps running and reports its port not ACTIVE, and after eth0 up its
# tests succeed again.
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

# conf NAME RESPONDER_PORT PEER_PORT EXTRA: one daemon's probe.ini
conf() {
	cat >"$w/$1.ini" <<INI
[probe]
host = $1
netdev_stats = false
[daemon]
counters_interval = 1
test_interval = 2
jitter = 0
duty_cycle = 1
responder_port = $2
responder_listen = 127.0.0.1
test_timeout = 5
spool_dir = $w/$1/spool
control_socket = $w/$1.sock
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

# results HOST PYTHON-CONDITION: how many spooled results of HOST match
results() {
	python3 - "$w/$1/spool" "$2" <<'PY'
import glob, json, sys
n = 0
for f in glob.glob(sys.argv[1] + "/*.json"):
    try:
        r = json.load(open(f))
    except ValueError:
        continue
    if eval(sys.argv[2], {"r": r}):
        n += 1
print(n)
PY
}
# wait_results HOST CONDITION COUNT SECONDS WHAT (python is slow under TCG:
# the loop runs against the clock, not a count of tries)
wait_results() {
	local end=$((SECONDS + $4)) n
	while :; do
		n=$(results "$1" "$2")
		[ "$n" -ge "$3" ] && return 0
		kill -0 "$pid_a" 2>/dev/null || lab_fail "daemon A died: $(tail "$w/lab-a.log")"
		[ "$SECONDS" -ge "$end" ] && break
		sleep 1
	done
	lab_fail "$5: $n of $3 after $4 s; A: $(tail -5 "$w/lab-a.log"); B: $(tail -5 "$w/lab-b.log")"
}
ok_peer='r["outcome"] == "ok" and not r["params"]["selftest"] and r["lat_median_seconds"] > 0'
wait_results lab-a "$ok_peer" 2 120 "A's tests of B"
wait_results lab-b "$ok_peer" 2 120 "B's tests of A"
lab_ok "both daemons measured each other"
wait_results lab-a 'r["outcome"] == "ok" and r["params"]["selftest"]' 1 120 "A's self-test"
lab_ok "A's loopback self-test"

"$PROBE" pause --socket "$w/lab-b.sock" >/dev/null || lab_fail "pause B"
wait_results lab-a 'r["outcome"] == "refused" and "paused" in r["error"]' 1 60 \
	"A refused by a paused B"
"$PROBE" resume --socket "$w/lab-b.sock" >/dev/null || lab_fail "resume B"
lab_ok "a paused responder refuses"

# Traffic beside the scheduled tests: some result of A is flagged busy.
ib_write_bw -d rxe0 -x 1 -s 65536 -D 12 -p 18700 >/dev/null 2>&1 &
pids+=($!)
sleep 1
ib_write_bw -d rxe0 -x 1 -s 65536 -D 10 -p 18700 127.0.0.1 >/dev/null 2>&1 &
pids+=($!)
wait_results lab-a 'r["busy"] and r["outcome"] == "ok"' 1 60 "a busy-flagged result"
lab_ok "a test beside ib_write_bw is flagged busy"
wait

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
before=$(results lab-a "$ok_peer")
ip link set eth0 up
lab_ok "port down reported, daemon alive"
wait_results lab-a "$ok_peer" $((before + 1)) 120 "A's tests after eth0 up"
lab_ok "tests resume after the port comes back"
