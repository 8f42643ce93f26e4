#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Scale: finding a degraded port (issue 17). Runs the fleet driver
# (fleet.py: simulated probe daemons against BUILD's real collector through
# its API, faults injected at random) once per size, each with its own
# collector, database and period, and prints one table (fleet_table.py)
# with the settings used per size; draws each run (plot.py) into OUT.
# bench/README.md, "Scale: finding a degraded port", says how to read it.
#
#   bench/scale/run.sh BUILD [--sizes "64 512 2000"] [--periods "10 15 20"]
#                      [--tails "5 5 62"] [--out DIR] [--seed N]
#                      [-- FLEET_ARGS...]
#
# One period and one healthy tail (in periods) per size: the largest runs
# 100 periods (8 healthy, 3 waves of 5 faulty + 5 healthy, 62 healthy), the
# span the issue's false-suspect goal is stated over; about 55 minutes in
# all. FLEET_ARGS go to every run (fleet.py --help): --set planner.X=Y,
# --warmup, --waves, --hold, --settle, --faults, --noise...
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
sizes="64 512 2000" periods="10 15 20" tails="5 5 62" out='' seed=1

usage() { sed -n '3,/^set /p' "$0" | sed '$d; s/^# \{0,1\}//'; }
[ $# -gt 0 ] || { usage >&2; exit 2; }
case "$1" in -h | --help) usage; exit 0 ;; esac
build=$(realpath -m -- "$1")
shift
while [ $# -gt 0 ]; do
	case "$1" in
	--sizes) sizes=${2:?}; shift ;;
	--periods) periods=${2:?}; shift ;;
	--tails) tails=${2:?}; shift ;;
	--out) out=$(realpath -m -- "${2:?}"); shift ;;
	--seed) seed=${2:?}; shift ;;
	-h | --help) usage; exit 0 ;;
	--) shift; break ;;
	*) echo "run.sh: unknown option '$1' (--help)" >&2; exit 2 ;;
	esac
	shift
done
collector=$build/collector/ibpulse-collector
[ -x "$collector" ] || { echo "run.sh: no $collector (ninja -C $build collector/ibpulse-collector)" >&2; exit 2; }
read -r -a S <<<"$sizes"
read -r -a P <<<"$periods"
read -r -a T <<<"$tails"
[ ${#S[@]} -eq ${#P[@]} ] || { echo "run.sh: --sizes has ${#S[@]} values, --periods ${#P[@]}: one period per size" >&2; exit 2; }
[ ${#S[@]} -eq ${#T[@]} ] || { echo "run.sh: --sizes has ${#S[@]} values, --tails ${#T[@]}: one tail per size" >&2; exit 2; }
for v in "${S[@]}" "${P[@]}" "${T[@]}" "$seed"; do
	[[ "$v" =~ ^[0-9]+$ ]] || { echo "run.sh: '$v' is not a whole number" >&2; exit 2; }
done
out=${out:-$build/bench-scale}
mkdir -p "$out"

echo "# $(date -u +%FT%TZ) $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg), $(git -C "$top" rev-parse --short HEAD 2>/dev/null || echo '?')"
sums=()
rc=0
for i in "${!S[@]}"; do
	n=${S[$i]} p=${P[$i]} dir=$out/hosts-${S[$i]}
	rm -rf "$dir"
	echo "# $n hosts, period $p s: $dir (started $(date -u +%T), load $(cut -d' ' -f1 /proc/loadavg))" >&2
	python3 "$here/fleet.py" --collector "$collector" --schema-dir "$top/schema" \
		--hosts "$n" --period "$p" --tail "${T[$i]}" --seed "$seed" --out "$dir" "$@" \
		>"$dir.log" 2>&1 || rc=$?
	if [ -f "$dir/summary.json" ]; then
		sums+=("$dir/summary.json")
		python3 "$here/plot.py" "$dir/summary.json" --png "$dir/scale.png" >&2 || true
	else
		tail -n 20 "$dir.log" >&2
	fi
done
[ ${#sums[@]} -gt 0 ] || exit 1
python3 "$here/fleet_table.py" "${sums[@]}"
exit "$rc"
