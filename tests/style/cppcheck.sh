#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Static analysis of every C file the build compiles (its
# compile_commands.json: the programs, the libraries, the tests) with
# Debian's cppcheck: warnings (undefined behaviour, null dereferences,
# leaks, bad format strings), portability, performance and functions that
# nothing calls. Any finding fails the test, naming file and line. A
# finding that is wrong is silenced where it is, with a comment saying
# why (`// cppcheck-suppress ID` on the line before; --inline-suppr).
# Fails when cppcheck is missing (scripts/install-deps.sh installs it).
#   cppcheck.sh SOURCE_ROOT BUILD_DIR
set -uo pipefail
top=${1:?usage: cppcheck.sh SOURCE_ROOT BUILD_DIR}
build=${2:?usage: cppcheck.sh SOURCE_ROOT BUILD_DIR}
command -v cppcheck >/dev/null ||
	{ echo "cppcheck is missing (scripts/install-deps.sh installs it)"; exit 1; }
db=$build/compile_commands.json
[ -s "$db" ] || { echo "no $db (meson setup writes it)"; exit 1; }
cd "$top" || exit 1
n=$(python3 -c 'import json, sys; print(len(json.load(open(sys.argv[1]))))' "$db")
[ "$n" -gt 0 ] || { echo "no C file in $db"; exit 1; }
# One job: cppcheck's unusedFunction check needs to see the whole program.
out=$(cppcheck --project="$db" -j 1 -q --inline-suppr --error-exitcode=1 \
	--enable=warning,performance,portability,unusedFunction \
	--template='{file}:{line}: {severity} ({id}): {message}' 2>&1)
rc=$?
[ -z "$out" ] || echo "$out"
echo "cppcheck $(cppcheck --version | awk '{print $2}'): $n files, $(grep -c ': .* (.*): ' <<<"$out") findings"
# A failure with no finding (cppcheck itself broke) still fails.
[ "$rc" -eq 0 ] && [ -z "$out" ]
