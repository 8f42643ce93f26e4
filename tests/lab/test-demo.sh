#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The README's main command on a host without RDMA, with the fault:
# `scripts/demo.sh --inject-fault --prometheus` runs the stack in two lab
# VMs and forwards the exporter to the host, where it starts Debian's
# Prometheus with the shipped rules. While it runs, the host's
# 127.0.0.1:PORT/metrics shows rxe0 ACTIVE with moving hw_counters (the
# demo's tests move them), ok test results, a learned baseline and then,
# once vm2's RoCE traffic is shaped, ibpulse_link_regression 1 for the
# link demo-b -> demo-a; the demo says so, and the printed Prometheus URL
# has IbpulseLinkBandwidthRegression firing for that link. A SIGTERM
# (the path of a Ctrl-C) then stops it with status 0, leaving neither the
# forwarded port nor Prometheus behind.
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
command -v prometheus >/dev/null || {
	[ -n "${CI:-}" ] && lab_fail "no prometheus (scripts/install-deps.sh installs it)"
	echo "SKIP: no prometheus (apt-get install prometheus)" >&2
	exit 77
}

free_port() {
	python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
port=$(free_port)
pport=$(free_port)
out=$(mktemp)
work=$(mktemp -d)
demo=
trap '[ -n "$demo" ] && kill -TERM "$demo" 2>/dev/null && wait "$demo"; rm -rf "$out" "$work"' EXIT
# --duration bounds a run that goes wrong; the test stops it itself.
bash "$top/scripts/demo.sh" --no-install --build-dir "$build" --workdir "$work" \
	--inject-fault --prometheus --prometheus-port "$pport" --duration 1300 --interval 5 \
	--period 15 --port "$port" >"$out" 2>&1 &
demo=$!

url=http://127.0.0.1:$port/metrics
# wait_metrics SECONDS WHAT EGREP: until a line of /metrics matches
wait_metrics() {
	local end=$((SECONDS + $1)) line
	while [ "$SECONDS" -lt "$end" ]; do
		kill -0 "$demo" 2>/dev/null || lab_fail "the demo exited waiting for $2: $(cat "$out")"
		line=$(curl -fsS --max-time 10 "$url" 2>/dev/null | grep -E -m 1 "$3") && {
			echo "$line"
			return 0
		}
		sleep 2
	done
	lab_fail "$2 not in $url after $1 s: $(tail -n 40 "$out")"
}

# The demo's banner first: until it is printed, the port may still be free
# and another lab test's exporter could answer there (seen in CI: a scrape
# of another VM's rxe0 passed the counter check, then the banner was missing).
deadline=$((SECONDS + 300))
until grep -q "scrape_configs" "$out"; do
	kill -0 "$demo" 2>/dev/null || lab_fail "the demo exited before its banner: $(cat "$out")"
	[ "$SECONDS" -lt "$deadline" ] || lab_fail "no banner (scrape config) after 300 s: $(cat "$out")"
	sleep 2
done
seen=() deadline=$((SECONDS + 300))
while [ "$SECONDS" -lt "$deadline" ] && kill -0 "$demo" 2>/dev/null; do
	v=$(curl -fsS --max-time 10 "$url" 2>/dev/null |
		grep '^ibpulse_port_hw_counters_total{.*device="rxe0".*counter="sent_pkts"' |
		awk '{print $NF; exit}')
	[ -n "$v" ] && seen+=("$v")
	[ ${#seen[@]} -ge 2 ] && [ "${seen[-1]}" != "${seen[0]}" ] && break
	sleep 2
done
[ ${#seen[@]} -ge 2 ] || lab_fail "no rxe0 sent_pkts at $url: $(cat "$out")"
[ "${seen[-1]}" != "${seen[0]}" ] || lab_fail "sent_pkts did not move: ${seen[*]}"
state=$(curl -fsS "$url" | grep '^ibpulse_port_state_id{.*device="rxe0"' | awk '{print $NF; exit}')
[ "$state" = 4 ] || lab_fail "rxe0 state $state in $url"
lab_ok "demo: $url shows rxe0 ACTIVE, sent_pkts ${seen[0]} -> ${seen[-1]}"

wait_metrics 300 "ok test results" '^ibpulse_test_results_total\{.*outcome="ok".*\} [1-9]' >/dev/null
b=$(wait_metrics 300 "a learned baseline" \
	'^ibpulse_link_bandwidth_baseline_bytes_per_second\{.*host="demo-b"')
lab_ok "test results and a baseline: ${b##* } B/s for demo-b -> demo-a"

r=$(wait_metrics 600 "the regression" \
	'^ibpulse_link_regression\{.*host="demo-b".*metric="bandwidth".*\} 1$')
[[ "$r" == *'peer_host="demo-a"'* ]] || lab_fail "regression of another link: $r"
grep -q "FAULT injected" "$out" || lab_fail "the demo did not say it injected the fault: $(cat "$out")"
lab_ok "regression open: $r"
for _ in $(seq 15); do grep -q "REGRESSION open: demo-b" "$out" && break; sleep 1; done
grep -q "REGRESSION open: demo-b rxe0/1 -> demo-a rxe0/1 (bw, bandwidth)" "$out" ||
	lab_fail "the demo did not report the regression: $(tail -n 20 "$out")"

purl=$(grep -o "Prometheus with ibpulse's alert rules: http://127.0.0.1:[0-9]*" "$out" | awk '{print $NF}')
[ "$purl" = "http://127.0.0.1:$pport" ] || lab_fail "no Prometheus URL printed: $(head -n 20 "$out")"
firing=
for _ in $(seq 60); do
	firing=$(curl -fsS --max-time 10 "$purl/api/v1/alerts" 2>/dev/null | python3 -c '
import json, sys
for a in json.load(sys.stdin)["data"]["alerts"]:
    l = a["labels"]
    if (l.get("alertname") == "IbpulseLinkBandwidthRegression" and a["state"] == "firing"
            and l.get("host") == "demo-b" and l.get("peer_host") == "demo-a"):
        print(a["annotations"]["summary"])') && [ -n "$firing" ] && break
	sleep 2
done
[ -n "$firing" ] || lab_fail "IbpulseLinkBandwidthRegression not firing at $purl"
lab_ok "Prometheus at $purl: $firing"

kill -TERM "$demo"
wait "$demo"
rc=$?
demo=
cat "$out"
[ "$rc" -eq 0 ] || lab_fail "demo.sh exited $rc on SIGTERM"
! curl -fsS --max-time 5 "$url" >/dev/null 2>&1 || lab_fail "$url still answers after the demo stopped"
! curl -fsS --max-time 5 "$purl/-/ready" >/dev/null 2>&1 || lab_fail "Prometheus still runs"
lab_ok "demo.sh stopped on SIGTERM with status 0, VMs and Prometheus gone"
