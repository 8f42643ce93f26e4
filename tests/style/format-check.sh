#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Every C file of the tree is clang-format clean (the root .clang-format).
# Fails, naming each file, otherwise; fix with `clang-format -i FILE`.
# One clang-format process for the whole list (one per file took minutes
# on a loaded 2-core machine).
set -uo pipefail
top=${1:?usage: format-check.sh SOURCE_ROOT}
cd "$top" || exit 1
command -v clang-format >/dev/null || { echo "clang-format is missing (scripts/install-deps.sh installs it)"; exit 1; }
mapfile -t files < <(find . -path ./build\* -prune -o -path ./.lab-cache -prune -o \
	-path ./.demo -prune -o \( -name '*.c' -o -name '*.h' \) -print | sort)
[ ${#files[@]} -gt 0 ] || { echo "no C files under $top"; exit 1; }
out=$(clang-format --dry-run --Werror "${files[@]}" 2>&1)
rc=$?
mapfile -t bad < <(sed -n 's/^\(\.\/[^:]*\.[ch]\):[0-9]*:[0-9]*: error:.*/\1/p' <<<"$out" | sort -u)
for f in "${bad[@]}"; do
	echo "not clang-format clean: $f"
done
echo "${#files[@]} C files checked, ${#bad[@]} not clean"
# A failure that names no file (clang-format itself broke) still fails.
[ "$rc" -eq 0 ] && [ ${#bad[@]} -eq 0 ]
