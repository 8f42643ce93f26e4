#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Every C file of the tree is clang-format clean (the root .clang-format).
# Fails, naming each file, otherwise; fix with `clang-format -i FILE`.
set -uo pipefail
top=${1:?usage: format-check.sh SOURCE_ROOT}
cd "$top" || exit 1
command -v clang-format >/dev/null || { echo "clang-format is missing (scripts/install-deps.sh installs it)"; exit 1; }
mapfile -t files < <(find . -path ./build\* -prune -o -path ./.lab-cache -prune -o \
	-path ./.demo -prune -o \( -name '*.c' -o -name '*.h' \) -print | sort)
[ ${#files[@]} -gt 0 ] || { echo "no C files under $top"; exit 1; }
bad=0
for f in "${files[@]}"; do
	if ! clang-format --dry-run --Werror "$f" >/dev/null 2>&1; then
		echo "not clang-format clean: $f"
		bad=$((bad + 1))
	fi
done
echo "${#files[@]} C files checked, $bad not clean"
[ "$bad" -eq 0 ]
