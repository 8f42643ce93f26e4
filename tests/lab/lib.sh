# SPDX-License-Identifier: MIT
# shellcheck shell=bash
# Shared helpers of the lab test suite (sourced by tests/lab/test-*.sh). A
# test script runs twice: on the host it checks that the lab can run and
# boots it with itself as the command; inside the guest (LAB=1) it does the
# work. lab_require turns "the lab cannot run here" into a skip (77), but
# into a failure when CI is set: CI must run the lab.

lab_fail() {
	echo "FAIL: $*" >&2
	exit 1
}

lab_ok() {
	echo "ok: $*"
}

# lab_require TOOL: exit 77 (or 1 under CI) if the lab cannot run here.
lab_require() {
	local why
	if why=$("$1" check 2>&1); then
		return 0
	fi
	if [ -n "${CI:-}" ]; then
		echo "FAIL: the lab cannot run here and CI is set: $why" >&2
		exit 1
	fi
	echo "SKIP: $why" >&2
	exit 77
}

# lab_run TOOL RUN-ARGS...: `TOOL run RUN-ARGS...`, exiting with its status;
# a 77 from it (the kernel package could not be had after all) is a skip,
# but a failure under CI, like lab_require's.
lab_run() {
	local tool=$1 rc
	shift
	"$tool" run "$@"
	rc=$?
	if [ "$rc" -eq 77 ] && [ -n "${CI:-}" ]; then
		echo "FAIL: the lab could not run and CI is set" >&2
		exit 1
	fi
	exit "$rc"
}

# lab_retry TRIES CMD...: run CMD until it succeeds, one second apart; for
# perftest clients whose server (in the other VM) may not listen yet.
# CMD's output goes where the call's goes, every attempt's: a redirect
# around lab_retry collects the failed attempts too. To keep only the last
# attempt's output in a file, use lab_retry_out.
lab_retry() {
	local n=$1 i
	shift
	for ((i = 1; i <= n; i++)); do
		"$@" && return 0
		[ "$i" -lt "$n" ] && sleep 1
	done
	return 1
}

# lab_retry_out TRIES OUT ERR CMD...: lab_retry, with each attempt's stdout
# written to OUT and its stderr to ERR afresh (ERR may be OUT: both go
# there), so OUT holds the last attempt's output alone: one JSON document,
# not a failed attempt's followed by the good one's. A failed attempt's
# output is appended to ERR.tries, and a success after failures says on
# stderr how many attempts it took.
lab_retry_out() {
	local n=$1 out=$2 err=$3 i
	shift 3
	: >"$err.tries"
	for ((i = 1; i <= n; i++)); do
		if [ "$err" = "$out" ]; then
			"$@" >"$out" 2>&1
		else
			"$@" >"$out" 2>"$err"
		fi && {
			[ "$i" -gt 1 ] && echo "lab_retry_out: $1 succeeded at attempt $i of $n" >&2
			return 0
		}
		{
			echo "--- attempt $i of $n: $*"
			cat "$out"
			[ "$err" = "$out" ] || cat "$err"
		} >>"$err.tries"
		[ "$i" -lt "$n" ] && sleep 1
	done
	return 1
}

# lab_wait_listen PORT [SECONDS]: poll until a local TCP port listens.
lab_wait_listen() {
	local port=$1 tries=$((${2:-30} * 10)) i
	for ((i = 0; i < tries; i++)); do
		ss -Hltn "sport = :$port" 2>/dev/null | grep -q . && return 0
		sleep 0.1
	done
	return 1
}

# lab_bw_avg FILE: the BW average (MB/sec) column of perftest bw output.
lab_bw_avg() {
	awk '$1 ~ /^[0-9]+$/ && $2 ~ /^[0-9]+$/ && NF >= 5 {v = $4} END {print v}' "$1"
}

# lab_lat_typical FILE: the t_typical (usec) column of perftest lat output.
lab_lat_typical() {
	awk '$1 ~ /^[0-9]+$/ && $2 ~ /^[0-9]+$/ && NF >= 7 {v = $5} END {print v}' "$1"
}
