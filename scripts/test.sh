#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Set up and run every ibpulse test from a fresh clone: installs the Debian
# packages, builds twice (gcc -Werror; clang with ASan+UBSan and the
# libFuzzer harnesses), runs the suites and ends with "N passed, N failed".
#
#   bash scripts/test.sh              # everything
#   SUITES="unit integration" bash scripts/test.sh   # a subset (gcc build)
set -uo pipefail
cd "$(dirname "$0")/.."
top=$PWD

bash scripts/install-deps.sh || { echo "dependency install failed"; echo "0 passed, 1 failed"; exit 1; }

suites=${SUITES:-"unit integration e2e lab"}
san_suites=${SAN_SUITES:-"unit integration fuzz"}
passed=0 failed=0 skipped=0

count() { # count results of one meson test run from its JSON log
	local log=$1 p f s
	read -r p f s < <(python3 - "$log" <<'PY'
import json, sys
p = f = s = 0
for line in open(sys.argv[1]):
    r = json.loads(line).get("result")
    if r in ("OK", "EXPECTEDFAIL"): p += 1
    elif r == "SKIP": s += 1
    else: f += 1
print(p, f, s)
PY
)
	passed=$((passed + p)) failed=$((failed + f)) skipped=$((skipped + s))
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
	[ -f "$dir/meson-logs/testlog.json" ] && count "$dir/meson-logs/testlog.json"
}

run_build "$top/build-ci" gcc "$suites"
if [ -z "${SKIP_SAN:-}" ]; then
	run_build "$top/build-ci-san" clang "$san_suites" \
		-Db_sanitize=address,undefined -Db_lundef=false -Dfuzzing=true
fi

echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
