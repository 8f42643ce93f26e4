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
set -uo pipefail
cd "$(dirname "$0")/.."
top=$PWD

bash scripts/install-deps.sh || { echo "dependency install failed"; echo "0 passed, 1 failed"; exit 1; }

# ship: the Debian packages, the OCI image and the Kubernetes manifests
# (they test packaging, not code: the gcc build only).
suites=${SUITES:-"unit integration ship e2e lab"}
san_suites=${SAN_SUITES:-"unit integration fuzz"}
passed=0 failed=0 skipped=0

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
# tests/lab/README.md). A lab test that fails is run once more, alone; it
# counts as passed only if that run passes, and is named as FLAKY either
# way so the first failure is never hidden. Returns 1 when it retried (and
# so has counted the run itself), 0 when there was nothing to retry.
retry_lab() { # DIR
	local dir=$1 names
	names=$(python3 - "$dir/meson-logs/testlog.json" <<'PY'
import json, sys
for line in open(sys.argv[1]):
    t = json.loads(line)
    # "ibpulse:lab / lab-smoke": suite "lab", test "lab-smoke"
    suite, _, name = t["name"].partition(" / ")
    if suite.split(":")[-1] == "lab" and t.get("result") not in ("OK", "SKIP", "EXPECTEDFAIL"):
        print(name)
PY
)
	[ -n "$names" ] || return 0
	cp "$dir/meson-logs/testlog.json" "$dir/meson-logs/testlog-first.json"
	echo "$names" >"$dir/meson-logs/lab-retried.txt"
	for n in $names; do
		echo "FLAKY? lab test $n failed; running it once more"
	done
	# shellcheck disable=SC2086
	meson test -C "$dir" --print-errorlogs --num-processes 1 $names
	count "$dir/meson-logs/testlog.json"
	count "$dir/meson-logs/testlog-first.json" "$dir/meson-logs/lab-retried.txt"
	return 1
}

run_build() { # DIR CC SUITES MESON_ARGS...
	local dir=$1 cc=$2 su=$3; shift 3
	local args=()
	for s in $su; do args+=(--suite "$s"); done
	rm -rf "$dir"
	if ! CC=$cc meson setup "$dir" -Dwerror=true "$@" >"$dir.setup.log" 2>&1 ||
	   ! ninja -C "$dir" >"$dir.build.log" 2>&1; then
		cat "$dir.setup.log" "$dir.build.log" 2>/dev/null | tail -40
		echo "build $dir ($cc) FAILED"
		failed=$((failed + 1))
		return
	fi
	meson test -C "$dir" --print-errorlogs --num-processes 2 "${args[@]}"
	[ -f "$dir/meson-logs/testlog.json" ] || return
	retry_lab "$dir" || return
	count "$dir/meson-logs/testlog.json"
}

# The C unit tests once more under valgrind (meson.build's 'valgrind'
# test setup: memcheck, leaks) on the gcc build: what ASan's build does not
# see (reads of uninitialised memory) and the real allocator. All of them:
# about 80 s of CPU, 3 min on a 2-core machine under a load of 13.
run_valgrind() { # DIR
	local dir=$1
	[ -f "$dir/build.ninja" ] || return
	meson test -C "$dir" --setup valgrind --print-errorlogs --num-processes 2
	[ -f "$dir/meson-logs/testlog-valgrind.json" ] || { failed=$((failed + 1)); return; }
	count "$dir/meson-logs/testlog-valgrind.json"
}

run_build "$top/build-ci" gcc "$suites"
case " $suites " in
*" unit "*) [ -n "${SKIP_VALGRIND:-}" ] || run_valgrind "$top/build-ci" ;;
esac
if [ -z "${SKIP_SAN:-}" ]; then
	run_build "$top/build-ci-san" clang "$san_suites" \
		-Db_sanitize=address,undefined -Db_lundef=false -Dfuzzing=true
fi

echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
