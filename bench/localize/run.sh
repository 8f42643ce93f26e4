#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Localization at scale, simulated (issue 19): runs bench/localize/
# localize.py once per size, each with its own ibsim + OpenSM subnet,
# collector, database and period, and prints one table (loc_table.py) with
# the settings each used. bench/README.md, "Localization at scale", says
# how to read it.
#
#   bench/localize/run.sh BUILD [--sizes "64 512 2000"] [--periods "10 15 20"]
#                         [--repeats "4 4 2"] [--out DIR] [--seed N]
#                         [-- LOCALIZE_ARGS...]
#
# One period and one number of faults of each kind per size; faults one at
# a time (3 periods on, 2 healthy), then a healthy hour (12 shipped periods,
# time-scaled). About 20, 30 and 25 minutes. LOCALIZE_ARGS go to every run
# (localize.py --help): --lmc, --set planner.X=Y, --hold, --settle...
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
sizes="64 512 2000" periods="10 15 20" repeats="4 4 2" out='' seed=1

usage() { sed -n '3,/^set /p' "$0" | sed '$d; s/^# \{0,1\}//'; }
[ $# -gt 0 ] || { usage >&2; exit 2; }
case "$1" in -h | --help) usage; exit 0 ;; esac
build=$(realpath -m -- "$1")
shift
while [ $# -gt 0 ]; do
	case "$1" in
	--sizes) sizes=${2:?}; shift ;;
	--periods) periods=${2:?}; shift ;;
	--repeats) repeats=${2:?}; shift ;;
	--out) out=$(realpath -m -- "${2:?}"); shift ;;
	--seed) seed=${2:?}; shift ;;
	-h | --help) usage; exit 0 ;;
	--) shift; break ;;
	*) echo "run.sh: unknown option '$1' (--help)" >&2; exit 2 ;;
	esac
	shift
done
collector=$build/collector/ibpulse-collector probe=$build/probe/ibpulse-probe
for b in "$collector" "$probe"; do
	[ -x "$b" ] || { echo "run.sh: no $b (ninja -C $build)" >&2; exit 2; }
done
read -r -a S <<<"$sizes"
read -r -a P <<<"$periods"
read -r -a R <<<"$repeats"
[ ${#S[@]} -eq ${#P[@]} ] || { echo "run.sh: --sizes has ${#S[@]} values, --periods ${#P[@]}: one period per size" >&2; exit 2; }
[ ${#S[@]} -eq ${#R[@]} ] || { echo "run.sh: --sizes has ${#S[@]} values, --repeats ${#R[@]}: one per size" >&2; exit 2; }
for v in "${S[@]}" "${P[@]}" "${R[@]}" "$seed"; do
	[[ "$v" =~ ^[0-9]+$ ]] || { echo "run.sh: '$v' is not a whole number" >&2; exit 2; }
done
out=${out:-$build/bench-localize}
mkdir -p "$out"

echo "# $(date -u +%FT%TZ) $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg), $(git -C "$top" rev-parse --short HEAD 2>/dev/null || echo '?')"
sums=()
rc=0
for i in "${!S[@]}"; do
	n=${S[$i]} p=${P[$i]} dir=$out/hosts-${S[$i]}
	rm -rf "$dir"
	echo "# $n hosts, period $p s, ${R[$i]} faults of each kind: $dir (started $(date -u +%T), load $(cut -d' ' -f1 /proc/loadavg))" >&2
	python3 "$here/localize.py" --collector "$collector" --probe "$probe" \
		--schema-dir "$top/schema" --hosts "$n" --period "$p" \
		--repeat "${R[$i]}" --seed "$seed" --out "$dir" --quiet "$@" \
		>"$dir.log" 2>&1 || rc=$?
	if [ -f "$dir/summary.json" ]; then
		sums+=("$dir/summary.json")
	else
		tail -n 20 "$dir.log" >&2
	fi
done
[ ${#sums[@]} -gt 0 ] || exit 1
python3 "$here/loc_table.py" "${sums[@]}"
exit "$rc"
