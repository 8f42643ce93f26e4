#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The fabric sweep against ibqueryerrors and one perfquery per switch on
# generated fat trees in ibsim (clean, MAD loss, a per-MAD delay). Prints a
# Markdown table (bench/README.md, "Fabric sweep").
#
#   bash bench/fabric/run.sh [BUILD_DIR] [SIZES] [REPS] [DELAY_US]
#   bash bench/fabric/run.sh build 512,2000 5 100
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$top/build}
sizes=${2:-512,2000}
reps=${3:-5}
delay=${4:-100}
probe=$build/probe/ibpulse-probe
shim=$build/bench/fabric/libmaddelay.so
for f in "$probe" "$shim"; do
	if [ ! -e "$f" ]; then
		echo "no $f: build first (meson setup build && ninja -C build)" >&2
		exit 1
	fi
done
exec python3 "$top/bench/fabric/bench.py" "$probe" "$shim" --sizes "$sizes" \
	--reps "$reps" --delay-us "$delay" --json "$build/fabric-bench.json"
