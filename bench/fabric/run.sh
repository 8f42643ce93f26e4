#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The fabric sweep against ibqueryerrors and one perfquery per switch on
# generated fat trees in ibsim (clean, MAD loss, a per-MAD delay), and the
# read of every switch's forwarding table against dump_fts (LMC 0 and 2)
# with the path function's rate. Prints Markdown tables (bench/README.md,
# "Fabric sweep" and "Forwarding tables and routes").
#
#   bash bench/fabric/run.sh [BUILD_DIR] [SIZES] [REPS] [DELAY_US] [WHAT]
#   bash bench/fabric/run.sh build 512,2000 5 100 sweep,routes
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$top/build}
sizes=${2:-512,2000}
reps=${3:-5}
delay=${4:-100}
what=${5:-sweep,routes}
probe=$build/probe/ibpulse-probe
shim=$build/bench/fabric/libmaddelay.so
rate=$build/bench/fabric/route_rate
for f in "$probe" "$shim" "$rate"; do
	if [ ! -e "$f" ]; then
		echo "no $f: build first (meson setup build && ninja -C build)" >&2
		exit 1
	fi
done
exec python3 "$top/bench/fabric/bench.py" "$probe" "$shim" --sizes "$sizes" \
	--reps "$reps" --delay-us "$delay" --what "$what" --route-rate "$rate" \
	--json "$build/fabric-bench.json"
