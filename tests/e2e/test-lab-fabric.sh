#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The whole fabric-test path on rxe0 in one lab VM: three probe daemons
# (lab-a and lab-b in group leaf1, lab-c in leaf2; distinct host names,
# responder ports, spools, sockets and tokens), a collector whose planner
# has a 40 s period, and an exporter, all on loopback. Asserted, in order:
# (1) every planned port has fresh ok results in /metrics, no port and no
# group pair overdue; (2) after a kill -9 of the collector for 25 s or more
# and a restart on the same database and port, every result measured in the
# meantime arrives exactly once (per host: rows == tests run, spools empty,
# nothing rejected or dropped); (3) after a kill -9 of lab-c, lab-a or
# lab-b records an error result for a test with lab-c and later an ok
# result again, and /metrics shows lab-c's host_up 0 and its port overdue.
#   test-lab-fabric.sh LAB_TOOL BUILD_DIR
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
. "$src/tests/lab/lib.sh"
build=${2:?usage: test-lab-fabric.sh LAB_TOOL BUILD_DIR}
bin_c=$build/collector/ibpulse-collector
bin_e=$build/exporter/ibpulse-exporter
bin_p=$build/probe/ibpulse-probe

if [ -z "${LAB:-}" ]; then
	for b in "$bin_c" "$bin_e" "$bin_p"; do [ -x "$b" ] || lab_fail "$b not built"; done
	lab_require "$1"
	lab_run "$1" --timeout 840 --mem 2048 -- bash "$here/test-lab-fabric.sh" "$1" "$build"
fi

w=/tmp/fabric
db=$w/ibpulse.db
cport=19470
hosts=(lab-a lab-b lab-c)
declare -A pid=() leaf=([lab-a]=leaf1 [lab-b]=leaf1 [lab-c]=leaf2)
declare -A rport=([lab-a]=18611 [lab-b]=18612 [lab-c]=18613)
mkdir -p "$w"
kill_all() {
	local p
	for p in "${pid[@]}"; do kill -9 "$p" 2>/dev/null; done
}
trap kill_all EXIT

# --- diagnostics ---------------------------------------------------------

sql() { sqlite3 -readonly -cmd '.timeout 5000' "$db" "$@" 2>&1; }
metrics() { curl -fsS --max-time 20 "http://127.0.0.1:$(cat "$w/eport")/metrics"; }

fail() {
	local h
	echo "FAIL: $*" >&2
	echo "--- diagnostics at $(date +%s)" >&2
	for h in "${hosts[@]}"; do
		echo "--- $h status: $("$bin_p" status --socket "$w/$h.sock" 2>&1)" >&2
		echo "--- $h spool: $(ls -R "$w/$h/spool" 2>&1 | tr '\n' ' ')" >&2
		echo "--- $h log (tail):" >&2
		tail -n 25 "$w/$h.log" >&2
	done
	echo "--- collector log (tail):" >&2
	tail -n 25 "$w/collector.log" >&2
	echo "--- kernel log (oom, kills):" >&2
	dmesg 2>&1 | grep -iE 'oom|killed process|segfault' | tail -n 5 >&2
	echo "--- exporter log (tail):" >&2
	tail -n 10 "$w/exporter.log" >&2
	echo "--- results (host, peer, outcome, count):" >&2
	sql 'SELECT host, peer_host, outcome, count(*) FROM result GROUP BY 1, 2, 3' >&2
	echo "--- newest results:" >&2
	sql "SELECT host, peer_host, profile, outcome, printf('%.1f', started),
		plan_id, error FROM result ORDER BY started DESC LIMIT 12" >&2
	echo "--- plan entries:" >&2
	sql 'SELECT * FROM plan_entry LIMIT 20' >&2
	echo "--- /metrics (hosts, test ports):" >&2
	metrics 2>&1 | grep -E '^ibpulse_(host_up|test_port_results|test_port_overdue|test_(planned|overdue)_)' >&2
	exit 1
}

# wait_for SECONDS WHAT CMD...: poll CMD once a second until it succeeds;
# a daemon that died (other than one killed on purpose) fails at once.
wait_for() {
	local secs=$1 end=$((SECONDS + $1)) what=$2 h
	shift 2
	while ! "$@"; do
		for h in "${!pid[@]}"; do
			[ "${killed:-}" = "$h" ] && continue
			kill -0 "${pid[$h]}" 2>/dev/null || fail "$h died waiting for $what"
		done
		[ "$SECONDS" -ge "$end" ] && fail "$what: not after $secs s"
		sleep 1
	done
}

wait_file() { [ -s "$1" ]; }

# --- collector, exporter ---------------------------------------------------

{
	cat <<INI
[collector]
listen = 127.0.0.1
port = $cport
db = $db
schema_dir = $src/schema
threads = 2
checkpoint_interval = 2
[planner]
period = 40
group_label = leaf
duty_cycle = 1
slot_seconds = 5
replan_interval = 0
[planner_profiles]
lat = 5
[tokens]
INI
	for h in "${hosts[@]}"; do
		echo "$h = token-$h-0123456789abcdef"
	done
} >"$w/collector.ini"
cat >"$w/exporter.ini" <<INI
[exporter]
listen = 127.0.0.1
port = 0
db = $db
stale_after = 15
test_period = 40
INI

start_collector() {
	rm -f "$w/cport"
	"$bin_c" serve --config "$w/collector.ini" --port-file "$w/cport" \
		2>>"$w/collector.log" &
	pid[collector]=$!
	wait_for 60 "the collector listening" wait_file "$w/cport"
}
start_collector
"$bin_e" --config "$w/exporter.ini" --port-file "$w/eport" 2>"$w/exporter.log" &
pid[exporter]=$!
wait_for 60 "the exporter listening" wait_file "$w/eport"

# --- three daemons -----------------------------------------------------------

for h in "${hosts[@]}"; do
	mkdir -p "$w/$h"
	echo "token-$h-0123456789abcdef" >"$w/$h/token"
	chmod 600 "$w/$h/token"
	cat >"$w/$h.ini" <<INI
[probe]
host = $h
collector_url = http://127.0.0.1:$cport/api/v1/report
token_file = $w/$h/token
netdev_stats = false
connect_timeout = 1
timeout = 5
[daemon]
counters_interval = 2
push_interval = 2
plan_interval = 5
duty_cycle = 1
jitter = 0
responder_listen = 127.0.0.1
responder_address = 127.0.0.1
responder_port = ${rport[$h]}
test_timeout = 5
spool_dir = $w/$h/spool
control_socket = $w/$h.sock
backoff_min = 0.2
backoff_max = 2
[labels]
leaf = ${leaf[$h]}
[profile lat]
test = write_lat
size = 2
iters = 200
INI
	"$bin_p" daemon --config "$w/$h.ini" 2>"$w/$h.log" &
	pid[$h]=$!
done
lab_ok "collector, exporter and daemons ${hosts[*]} started"

# --- 1. every planned port has fresh ok results ------------------------------

# mval NAME [LABEL=VALUE...]: the value of the one sample of NAME with
# those labels in /metrics (empty if none)
mval() {
	local name=$1 lines
	shift
	lines=$(grep -E "^$name(\{| )" <<<"$metrics_text")
	for l in "$@"; do
		lines=$(grep -F "${l%%=*}=\"${l#*=}\"" <<<"$lines")
	done
	[ -n "$lines" ] && [ "$(wc -l <<<"$lines")" = 1 ] && echo "${lines##* }"
}

all_fresh() {
	local h v
	metrics_text=$(metrics) || return 1
	for h in "${hosts[@]}"; do
		v=$(mval ibpulse_test_port_results host=$h device=rxe0 port=1 profile=lat outcome=ok)
		[ -n "$v" ] && [ "$v" -ge 1 ] || return 1
		[ "$(mval ibpulse_test_port_overdue host=$h device=rxe0 port=1)" = 0 ] || return 1
	done
	[ "$(mval ibpulse_test_planned_ports)" = 3 ] &&
		[ "$(mval ibpulse_test_overdue_ports)" = 0 ] &&
		[ "$(mval ibpulse_test_planned_group_pairs)" = 1 ] &&
		[ "$(mval ibpulse_test_overdue_group_pairs)" = 0 ]
}
t0=$SECONDS
wait_for 360 "ok results for every planned port in /metrics" all_fresh
lab_ok "every planned port has fresh ok results, none overdue, group pair leaf1-leaf2 covered ($((SECONDS - t0)) s)"

# --- 2. collector killed: every result arrives exactly once ------------------

# st HOST KEY: one number of HOST's status line
st() {
	"$bin_p" status --socket "$w/$1.sock" 2>/dev/null |
		grep -o "\"$2\":[a-z0-9]*" | cut -d: -f2
}
stored() { sql "SELECT count(*) FROM result WHERE host = '$1'"; }
spooled_total() {
	local h n=0 s
	for h in "${hosts[@]}"; do
		s=$(st "$h" spooled)
		n=$((n + ${s:-0}))
	done
	echo "$n"
}

declare -A run0=() run1=() db0=()
kill -9 "${pid[collector]}"
wait "${pid[collector]}" 2>/dev/null
killed=collector
down_at=$SECONDS
for h in "${hosts[@]}"; do
	run0[$h]=$(st "$h" tests_run)
	db0[$h]=$(stored "$h")
done
lab_ok "collector killed; tests run: a ${run0[lab-a]} b ${run0[lab-b]} c ${run0[lab-c]}, stored: a ${db0[lab-a]} b ${db0[lab-b]} c ${db0[lab-c]}"
# Down for 25 s at least, and until two results wait in the spools.
outage_done() { [ $((SECONDS - down_at)) -ge 25 ] && [ "$(spooled_total)" -ge 2 ]; }
wait_for 150 "two results spooled while the collector is down" outage_done
measured=0
for h in "${hosts[@]}"; do
	run1[$h]=$(st "$h" tests_run)
	measured=$((measured + run1[$h] - run0[$h]))
done
waiting=$(spooled_total)
[ "$measured" -ge 1 ] || fail "no test ran during the $((SECONDS - down_at)) s outage"
killed=
start_collector
lab_ok "collector restarted after $((SECONDS - down_at)) s; $measured tests ran meanwhile, $waiting results spooled"

# A consistent snapshot: per host the tests run did not change across the
# database read and the spool was empty before it, so every result is
# committed (the spool deletes a file only after a 2xx) and no new one is.
# One status call per host and phase: each is a process start, slow in TCG.
declare -A snap=() snap_db=()
settled() {
	local h line
	snap_db=()
	for h in "${hosts[@]}"; do
		line=$("$bin_p" status --socket "$w/$h.sock" 2>/dev/null) || return 1
		grep -q '"spooled":0,' <<<"$line" || return 1
		snap[$h]=$(grep -o '"tests_run":[0-9]*' <<<"$line" | cut -d: -f2)
	done
	while IFS='|' read -r h n; do
		snap_db[$h]=$n
	done <<<"$(sql 'SELECT host, count(*) FROM result GROUP BY host')"
	for h in "${hosts[@]}"; do
		[ "$(st "$h" tests_run)" = "${snap[$h]}" ] || return 1
	done
}
wait_for 240 "the spools drained after the restart" settled
for h in "${hosts[@]}"; do
	[ "${snap_db[$h]:-0}" = "${snap[$h]}" ] ||
		fail "$h: ${snap[$h]} tests run but ${snap_db[$h]:-0} results stored"
	[ $((${snap_db[$h]:-0} - db0[$h])) -ge $((run1[$h] - run0[$h])) ] ||
		fail "$h: stored ${db0[$h]} -> ${snap_db[$h]:-0}, fewer than the $((run1[$h] - run0[$h])) measured during the outage"
	[ -z "$(ls -A "$w/$h/spool/rejected" 2>/dev/null)" ] ||
		fail "$h: rejected results: $(ls "$w/$h/spool/rejected")"
	[ "$(st "$h" spool_full)" = 0 ] && [ "$(st "$h" expired)" = 0 ] ||
		fail "$h dropped results"
done
dups=$(sql 'SELECT count(*) - count(DISTINCT result_id) FROM result')
[ "$dups" = 0 ] || fail "$dups duplicate result ids"
lab_ok "exactly once: stored per host = tests run (a ${snap[lab-a]} b ${snap[lab-b]} c ${snap[lab-c]}), spools empty, nothing rejected or dropped"

# --- 3. a probe killed: errors for its pairs, up 0, ports overdue ------------

# Ideally while lab-c takes part in a test (either role).
c_testing() { "$bin_p" status --socket "$w/lab-c.sock" 2>/dev/null | grep -q '"testing":true'; }
end=$((SECONDS + 60))
while [ "$SECONDS" -lt "$end" ] && ! c_testing; do
	sleep 0.2
done
c_testing && how="during a test" || how="between tests"
killed=lab-c
kill -9 "${pid[lab-c]}"
wait "${pid[lab-c]}" 2>/dev/null
kill_at=$(date +%s)
lab_ok "lab-c killed $how"

err_row() {
	err=$(sql "SELECT host || ' ' || outcome || ' ' || started FROM result
		WHERE host IN ('lab-a', 'lab-b') AND peer_host = 'lab-c'
		AND outcome NOT IN ('ok', 'refused')
		AND started + coalesce(duration_seconds, 0) >= $kill_at - 1
		ORDER BY started LIMIT 1")
	[ -n "$err" ]
}
wait_for 240 "an error result of lab-a or lab-b for a test with lab-c" err_row
lab_ok "error recorded for a pair with the dead probe: $err"
err_started=${err##* }
ok_after() {
	[ -n "$(sql "SELECT 1 FROM result WHERE host IN ('lab-a', 'lab-b')
		AND outcome = 'ok' AND started > $err_started LIMIT 1")" ]
}
wait_for 180 "an ok result of lab-a or lab-b after that error" ok_after
lab_ok "lab-a and lab-b go on testing"

c_down() {
	metrics_text=$(metrics) || return 1
	[ "$(mval ibpulse_host_up host=lab-c)" = 0 ] &&
		[ "$(mval ibpulse_test_port_overdue host=lab-c device=rxe0 port=1)" = 1 ] &&
		[ "$(mval ibpulse_host_up host=lab-a)" = 1 ] &&
		[ "$(mval ibpulse_host_up host=lab-b)" = 1 ]
}
wait_for 60 "lab-c's host_up 0 and its port overdue" c_down
lab_ok "lab-c: ibpulse_host_up 0, rxe0/1 overdue; lab-a and lab-b up"
