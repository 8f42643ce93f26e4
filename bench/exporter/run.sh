#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Exporter benchmark: /metrics time for 500k counter series (1,000 hosts x
# 8 ports x 62 counters) over loopback, and node_exporter's InfiniBand
# collector per series on a generated sysfs tree. Prints a Markdown table.
#
#   bash bench/exporter/run.sh [BUILD_DIR] [HOSTS] [RUNS]
#   bash bench/exporter/run.sh --concurrent BEFORE_BUILD AFTER_BUILD [HOSTS] [SCRAPERS]
#
# BUILD_DIR defaults to ./build (meson setup build && ninja -C build).
# --concurrent: SCRAPERS (50) curl scrapers at once against each build's
# exporter on one database (concurrent.py): latency, CPU, peak RSS.
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
if [ "${1:-}" = "--concurrent" ]; then
	[ $# -ge 3 ] || { echo "usage: $0 --concurrent BEFORE_BUILD AFTER_BUILD [HOSTS] [SCRAPERS]" >&2; exit 2; }
	for b in "$2" "$3"; do
		[ -x "$b/exporter/ibpulse-exporter" ] || { echo "no $b/exporter/ibpulse-exporter" >&2; exit 1; }
	done
	exec python3 "$top/bench/exporter/concurrent.py" "$top/schema" "${4:-1000}" "${5:-50}" \
		"before=$2/exporter/ibpulse-exporter" "after=$3/exporter/ibpulse-exporter"
fi
build=${1:-$top/build}
hosts=${2:-1000}
runs=${3:-5}
exporter=$build/exporter/ibpulse-exporter
if [ ! -x "$exporter" ]; then
	echo "no $exporter: build first (meson setup build && ninja -C build)" >&2
	exit 1
fi
node_exporter=$(command -v prometheus-node-exporter || command -v node_exporter || echo prometheus-node-exporter)
exec python3 "$top/bench/exporter/bench.py" "$exporter" "$top/schema" "$node_exporter" "$hosts" "$runs"
