#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The probe's own /metrics against node_exporter 1.5's InfiniBand
# collector on the same sysfs trees (the mlx5 fixture and a generated
# DEVICES x 2 ports tree): series, ms per scrape (median, p90), CPU ms per
# scrape, RSS. Prints a Markdown table, and one of the CPU of the renderer
# alone (BUILD/bench/probe-metrics/render-bench, when built).
#
#   bash bench/probe-metrics/run.sh [BUILD_DIR] [DEVICES] [RUNS]
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$top/build}
devices=${2:-8}
runs=${3:-200}
probe=$build/probe/ibpulse-probe
if [ ! -x "$probe" ]; then
	echo "no $probe: build first (meson setup build && ninja -C build)" >&2
	exit 1
fi
node_exporter=$(command -v prometheus-node-exporter || command -v node_exporter || echo prometheus-node-exporter)
render=$build/bench/probe-metrics/render-bench
[ -x "$render" ] || render=
exec python3 "$top/bench/probe-metrics/bench.py" "$probe" "$node_exporter" "$devices" "$runs" ${render:+"$render"}
