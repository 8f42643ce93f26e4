#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Measure the lab: boot-to-command times (one VM, two VMs) and perftest on
# rxe0 in one VM (loopback) and across two VMs (UDP socket link), printed
# as Markdown table rows for tests/lab/README.md. Slow (a few minutes under
# TCG). Usage: tests/lab/figures.sh [boot|one|two]...
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
tool=$here/ibpulse-lab

# perf TEST ROLE [PEER] ARGS...: one perftest side; prints its result line.
perf() {
	local t=$1 peer=$2
	shift 2
	if [ -z "$peer" ]; then
		timeout 120 "$t" "$@" >/dev/shm/srv 2>&1 &
		local s=$!
		lab_wait_listen 18520 30
		timeout 120 "$t" "$@" 127.0.0.1 >/dev/shm/cli 2>&1
		wait "$s"
	elif [ "$peer" = server ]; then
		timeout 300 "$t" "$@" >/dev/shm/cli 2>&1
	else
		run() { timeout 120 "$t" "$@" "$peer" >/dev/shm/cli 2>&1; }
		lab_retry 60 run "$@"
	fi
	case "$t" in
	*_bw) echo "| $t | ${*:10} | $(lab_bw_avg /dev/shm/cli) MB/s average |" ;;
	*) echo "| $t | ${*:10} | $(lab_lat_typical /dev/shm/cli) us typical |" ;;
	esac
}

inside() {
	local mode=$1 peer=
	[ "$mode" = two ] && { [ "$LAB_NODE" = 1 ] && peer=server || peer=$LAB_PEER_IP; }
	local base=(-d rxe0 -i 1 -x 1 -F -p 18520)
	for t in ib_write_bw ib_read_bw ib_send_bw; do
		perf "$t" "$peer" "${base[@]}" -s 65536 -q 2 -D 4
		[ "$mode" = two ] && sleep 2 # the server of the next test starts first
	done
	for t in ib_write_lat ib_read_lat ib_send_lat; do
		perf "$t" "$peer" "${base[@]}" -s 2 -n 3000
		[ "$mode" = two ] && sleep 2
	done
}

if [ -n "${LAB:-}" ]; then
	inside "$1"
	exit
fi

boot() { # ARGS...: seconds for `ibpulse-lab run ARGS -- true`, best of 3
	local best='' s e d
	for _ in 1 2 3; do
		s=$(date +%s.%N)
		"$tool" run "$@" -- true >/dev/null || return 1
		e=$(date +%s.%N)
		d=$(awk -v s="$s" -v e="$e" 'BEGIN {printf "%.1f", e - s}')
		[ -z "$best" ] || awk -v a="$d" -v b="$best" 'BEGIN {exit !(a < b)}' && best=$d
	done
	echo "$best"
}

[ $# -gt 0 ] || set -- boot one two
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg); $(nproc) cores"
for what in "$@"; do
	case "$what" in
	boot)
		echo "| one VM, run -- true, best of 3 | $(boot) s |"
		echo "| two VMs, run --vms 2 -- true, best of 3 | $(boot --vms 2) s |"
		;;
	one) "$tool" run --timeout 900 -- bash "$here/figures.sh" one ;;
	two) "$tool" run --vms 2 --timeout 1200 -- bash "$here/figures.sh" two ;;
	esac
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
