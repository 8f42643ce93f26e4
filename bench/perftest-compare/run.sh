#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# perftest vs the ibpulse verbs engine in one Soft-RoCE lab boot.
#   bench/perftest-compare/run.sh [BUILD_DIR] [ROUNDS] [CASE-SUBSTRING]
# BUILD_DIR defaults to ./build; it must hold probe/ibpulse-probe.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build=$(cd "${1:-$root/build}" && pwd)
rounds=${2:-3}
echo "host: $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg) before"
"$root/tests/lab/ibpulse-lab" run --timeout 1500 -- \
	python3 "$here/compare.py" "$build/probe/ibpulse-probe" "$rounds" "${3:-}"
rc=$?
echo "host: load average $(cut -d' ' -f1-3 /proc/loadavg) after"
exit $rc
