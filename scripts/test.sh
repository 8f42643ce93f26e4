#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Set up and run every ibpulse test from a fresh clone: installs the Debian
# packages, builds twice (gcc -Werror; clang with ASan+UBSan and the
# libFuzzer harnesses), runs the suites and ends with "N passed, N failed".
#
#   bash scripts/test.sh              # everything
#   SUITES="unit integration" bash scripts/test.sh   # a subset (gcc build)
#   SKIP_VALGRIND=1 bash scripts/test.sh   # without the unit tests under
#                                          # valgrind
#   LAB_JOBS=2 bash scripts/test.sh   # lab tests two at a time
#
# Three streams run at once once the gcc build is done (tests/lab/README.md,
# "Time", has the figures):
#  - the lab suite, in the background, LAB_JOBS (1) tests at a time,
#    longest first. They spend much of their time waiting on the clock
#    (planner periods, daemons' intervals, alert rules) in TCG VMs, and are
#    the longest part; their fault-injection tests fail when the host is
#    loaded (at 10 on 2 cores already), hence one at a time by default;
#  - the clang build and its suites, in the background;
#  - the gcc build's other suites, then its unit tests under valgrind,
#    then the suite localize alone (a simulated subnet and fleet on 10 s
#    periods, about 9.5 minutes, while the lab's last tests run).
# The last two run under nice (REST_NICE, 5) so the VMs' emulated CPUs
# come first: they fill the CPU the lab leaves idle. The background
# streams' output is kept in build-ci/lab-stream.log and
# build-ci-san.stream.log and printed when they end; the wall time of each
# phase and the CPU times follow.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
top=$PWD

bash scripts/install-deps.sh || { echo "dependency install failed"; echo "0 passed, 1 failed"; exit 1; }

# ship: the Debian packages, the OCI image and the Kubernetes manifests
# (they test packaging, not code: the gcc build only). lint: static
# analysis, cppcheck and shellcheck (tests/style).
suites=${SUITES:-"unit lint integration ship e2e localize lab"}
san_suites=${SAN_SUITES:-"unit integration fuzz"}
lab_jobs=${LAB_JOBS:-1}
passed=0 failed=0 skipped=0 no_suites=''
t_start=$SECONDS
phases=()

phase() { # NAME START: note how long a phase took, for the summary
	phases+=("$(printf '%-34s %5d s' "$1" $((SECONDS - $2)))")
}

count() { # LOG [SKIP_NAMES_FILE]: count one meson test run from its JSON log
	local log=$1 p f s
	read -r p f s < <(python3 - "$log" "${2:-/dev/null}" <<'PY'
import json, sys
skip = set(open(sys.argv[2]).read().splitlines())
p = f = s = 0
for line in open(sys.argv[1]):
    t = json.loads(line)
    if t["name"].split(" / ", 1)[-1] in skip:
        continue
    r = t.get("result")
    if r in ("OK", "EXPECTEDFAIL"): p += 1
    elif r == "SKIP": s += 1
    else: f += 1
print(p, f, s)
PY
)
	passed=$((passed + p)) failed=$((failed + f)) skipped=$((skipped + s))
}

# The lab suite runs real verbs traffic on Soft-RoCE inside qemu under TCG
# emulation, where rxe's retransmit timers fire under host load (LAB.md,
# tests/lab/README.md); the suite no-san runs a simulated fleet on 10 s
# planner periods beside the lab's VMs. A test of SUITE that fails is run
# once more, alone; it counts as passed only if that run passes, and is
# named as FLAKY either way so the first failure is never hidden.
retry_suite() { # DIR LOGBASE SUITE
	local dir=$1 log=$1/meson-logs/$2.json names
	names=$(python3 - "$log" "$3" <<'PY'
import json, sys
for line in open(sys.argv[1]):
    t = json.loads(line)
    # "ibpulse:lab / lab-smoke": suites "lab", test "lab-smoke"
    suites, _, name = t["name"].partition(" / ")
    if sys.argv[2] in suites.split(":")[-1].split("+") and t.get("result") not in ("OK", "SKIP", "EXPECTEDFAIL"):
        print(name)
PY
)
	if [ -z "$names" ]; then
		count "$log"
		return
	fi
	echo "$names" >"$dir/meson-logs/$2-retried.txt"
	for n in $names; do
		echo "FLAKY? $3 test $n failed; running it once more, alone"
	done
	# shellcheck disable=SC2086
	meson test -C "$dir" --no-rebuild --print-errorlogs --num-processes 1 \
		--logbase "$2-retry" $names
	count "$dir/meson-logs/$2-retry.json"
	count "$log" "$dir/meson-logs/$2-retried.txt"
}

build() { # DIR CC MESON_ARGS...: configure and build; 1 (counted) on failure
	local dir=$1 cc=$2 t0=$SECONDS
	shift 2
	rm -rf "$dir"
	if ! CC=$cc meson setup "$dir" -Dwerror=true "$@" >"$dir.setup.log" 2>&1 ||
	   ! ninja -C "$dir" -j 2 >"$dir.build.log" 2>&1; then
		cat "$dir.setup.log" "$dir.build.log" 2>/dev/null | tail -40
		echo "build $dir ($cc) FAILED"
		failed=$((failed + 1))
		return 1
	fi
	phase "build ${dir##*/} ($cc)" "$t0"
}

run_suites() { # DIR LOGBASE SUITES...: meson test, 2 at a time, counted
	local dir=$1 logbase=$2 args=() s t0=$SECONDS
	shift 2
	[ $# -gt 0 ] || return 0
	for s in "$@"; do args+=(--suite "$s"); done
	for s in $no_suites; do args+=(--no-suite "$s"); done
	meson test -C "$dir" --no-rebuild --print-errorlogs --num-processes 2 \
		--logbase "$logbase" "${args[@]}"
	if [ -f "$dir/meson-logs/$logbase.json" ]; then
		retry_suite "$dir" "$logbase" no-san
	else
		failed=$((failed + 1))
	fi
	phase "tests ${dir##*/}: $*" "$t0"
}

# The C unit tests once more under valgrind (meson.build's 'valgrind'
# test setup: memcheck, leaks) on the gcc build: what ASan's build does not
# see (reads of uninitialised memory) and the real allocator.
run_valgrind() { # DIR
	local dir=$1 t0=$SECONDS
	meson test -C "$dir" --no-rebuild --setup valgrind --print-errorlogs --num-processes 2
	[ -f "$dir/meson-logs/testlog-valgrind.json" ] || { failed=$((failed + 1)); return; }
	count "$dir/meson-logs/testlog-valgrind.json"
	phase "valgrind (gcc unit tests)" "$t0"
}

# A stream in the background: FUNCTION ARGS... run with its output in
# LOG; its counts and phases go to LOG.count and LOG.phases, which
# stream_end adds to this shell's.
stream_start() { # LOG FUNCTION ARGS...: prints nothing; sets stream_pid
	local log=$1
	shift
	(
		passed=0 failed=0 skipped=0 phases=()
		"$@"
		printf '%s %s %s\n' "$passed" "$failed" "$skipped" >"$log.count"
		printf '%s\n' "${phases[@]}" >"$log.phases"
	) >"$log" 2>&1 &
	stream_pid=$!
}

stream_end() { # PID LOG NAME: wait for the stream, print its log, count
	local t0=$SECONDS p f s
	wait "$1"
	phase "waiting for the $3 stream at the end" "$t0"
	echo "=== $3 (background stream, $2) ==="
	cat "$2"
	if read -r p f s <"$2.count"; then
		passed=$((passed + p)) failed=$((failed + f)) skipped=$((skipped + s))
		mapfile -t -O ${#phases[@]} phases <"$2.phases"
	else
		echo "the $3 stream left no counts"
		failed=$((failed + 1))
	fi
}

# One suite on its own, JOBS tests at a time, its failures once more
# alone (retry_suite): the lab suite (LAB_JOBS at a time) and the suite
# localize (bench/localize/localize.py in small: an ibsim + OpenSM subnet
# of 128 hosts, the real fabric role and collector, 10 faults on 10 s
# planner periods; alone, after the other suites and valgrind, while the
# lab's last tests run).
suite_alone() { # DIR SUITE JOBS
	local dir=$1 t0=$SECONDS
	meson test -C "$dir" --no-rebuild --print-errorlogs --num-processes "$3" \
		--logbase "testlog-$2" --suite "$2"
	if [ -f "$dir/meson-logs/testlog-$2.json" ]; then
		retry_suite "$dir" "testlog-$2" "$2"
	else
		failed=$((failed + 1))
	fi
	phase "$2 suite ($3 at a time)" "$t0"
}

# The clang build (ASan, UBSan, libFuzzer) and its suites, but for the
# tests in the suite 'no-san': runs whose simulated fleet and subnet keep
# 10 s planner periods, which 2 cores cannot hold under ASan beside the
# other streams (their code runs under ASan in the smaller tests).
san_stream() { # DIR
	local no_suites=no-san
	# shellcheck disable=SC2086
	build "$1" clang -Db_sanitize=address,undefined -Db_lundef=false -Dfuzzing=true &&
		run_suites "$1" testlog $san_suites
}

gcc_dir=$top/build-ci san_dir=$top/build-ci-san
rest=() lab='' localize=''
for s in $suites; do
	case $s in
	lab) lab=1 ;;
	localize) localize=1 ;;
	*) rest+=("$s") ;;
	esac
done

# The lab's kernel and initramfs while gcc builds (download, unpack: an
# I/O-bound minute on a fresh clone). A failure here shows again, and
# counts, in the lab tests themselves.
prep_pid=
if [ -n "$lab" ]; then
	bash tests/lab/ibpulse-lab prepare >"$top/build-ci-lab-prepare.log" 2>&1 &
	prep_pid=$!
fi

lab_pid='' san_pid=''
if build "$gcc_dir" gcc; then
	if [ -n "$lab" ]; then
		[ -n "$prep_pid" ] && { wait "$prep_pid" || tail -5 "$top/build-ci-lab-prepare.log"; }
		stream_start "$gcc_dir/lab-stream.log" suite_alone "$gcc_dir" lab "$lab_jobs"
		lab_pid=$stream_pid
		echo "lab suite started in the background ($lab_jobs at a time): $gcc_dir/lab-stream.log"
	fi
fi
# The rest yields the CPU to the lab's VMs (nice 5: a third of their
# share when both want it; rxe retransmits on timers). Not more: at nice
# 10 and a load of 20, a ticket of the clang build's probe_daemon_tickets
# expired before its use (tests/lab/README.md, "Time").
renice -n "${REST_NICE:-5}" -p $$ >/dev/null 2>&1
[ -n "$prep_pid" ] && wait "$prep_pid" 2>/dev/null
if [ -z "${SKIP_SAN:-}" ]; then
	stream_start "$san_dir.stream.log" san_stream "$san_dir"
	san_pid=$stream_pid
	echo "clang build and its suites started in the background: $san_dir.stream.log"
fi
if [ -f "$gcc_dir/build.ninja" ]; then
	run_suites "$gcc_dir" testlog "${rest[@]}"
	case " $suites " in
	*" unit "*) [ -n "${SKIP_VALGRIND:-}" ] || run_valgrind "$gcc_dir" ;;
	esac
	[ -z "$localize" ] || suite_alone "$gcc_dir" localize 1
fi
[ -n "$san_pid" ] && stream_end "$san_pid" "$san_dir.stream.log" "clang build"
[ -n "$lab_pid" ] && stream_end "$lab_pid" "$gcc_dir/lab-stream.log" "lab"

echo "=== wall time per phase (load average now: $(cut -d' ' -f1-3 /proc/loadavg)) ==="
printf '%s\n' "${phases[@]}"
printf '%-34s %5d s\n' "total (after install-deps)" $((SECONDS - t_start))
echo "CPU time of the tests and builds (user, system; this shell, then its children):"
times
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
