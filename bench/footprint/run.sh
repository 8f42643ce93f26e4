#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Footprint of the probe daemon between tests (CPU share, RSS) on the mlx5
# fixture tree, pushing to the real collector. Builds nothing.
#
#   bash bench/footprint/run.sh BUILD_DIR [WINDOW_SECONDS] [INTERVAL...]
set -euo pipefail
build=$(realpath "${1:?usage: run.sh BUILD_DIR [WINDOW] [INTERVAL...]}")
shift
top=$(cd "$(dirname "$0")/../.." && pwd)
probe=$build/probe/ibpulse-probe
collector=$build/collector/ibpulse-collector
[ -x "$probe" ] && [ -x "$collector" ] || { echo "build $build first (ninja -C $build)"; exit 1; }
FOOTPRINT_ANCHOR=$build/bench/footprint/footprint-anchor \
	exec python3 "$top/bench/footprint/footprint.py" "$probe" "$collector" \
	"$top/schema" "$top/tests/fixtures/sysfs-mlx5" "$@"
