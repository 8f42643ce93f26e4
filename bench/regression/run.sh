#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Fault injection, the long run: tests/e2e/lab_fault.py (the lab test
# lab-regression, which runs it short) with both profiles (write_bw and
# write_lat between the two lab VMs), a healthy phase of --healthy-minutes
# in which every regression counts as a false alarm, then a bandwidth
# fault (tbf on vm2's RoCE traffic) and a latency fault (netem delay), each
# held --hold seconds after its alert fired and then removed. Prints the
# table bench/README.md keeps ("Fault injection") and, with --png, draws the
# bandwidth fault from the run's Prometheus series (plot.py).
#
#   bench/regression/run.sh [--healthy-minutes 30] [--hold 60] [--faults "bw lat"]
#                           [--build DIR] [--out DIR] [--png FILE] [-- LAB_FAULT_ARGS...]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
minutes=30 hold=60 faults="bw lat" build=$top/build out=$top/build/bench-regression png=

usage() { sed -n '2,/^set /p' "$0" | sed '$d; s/^# \{0,1\}//'; }
while [ $# -gt 0 ]; do
	case "$1" in
	--healthy-minutes) minutes=${2:?}; shift ;;
	--hold) hold=${2:?}; shift ;;
	--faults) faults=${2?}; shift ;;
	--build) build=$(realpath -m -- "${2:?}"); shift ;;
	--out) out=$(realpath -m -- "${2:?}"); shift ;;
	--png) png=$(realpath -m -- "${2:?}"); shift ;;
	-h | --help) usage; exit 0 ;;
	--) shift; break ;;
	*) echo "run.sh: unknown option '$1' (--help)" >&2; exit 2 ;;
	esac
	shift
done
[[ "$minutes" =~ ^[0-9]+([.][0-9]+)?$ ]] || { echo "--healthy-minutes: a number, not '$minutes'" >&2; exit 2; }
[[ "$hold" =~ ^[0-9]+$ ]] || { echo "--hold: seconds, not '$hold'" >&2; exit 2; }

# A 20 s period (the lab test's is 15): two profiles share the slots.
args=(--lab "$top/tests/lab/ibpulse-lab" --build "$build" --profiles "bw,lat" --period 20 --slot 20
	--healthy-seconds "$(awk -v m="$minutes" 'BEGIN {print m * 60}')" --count-false-alarms
	--hold "$hold" --out "$out" --summary "$out/summary.json"
	--timeout "$(awk -v m="$minutes" -v h="$hold" 'BEGIN {print int(m * 60 + 4 * h + 3600)}')")
for f in $faults; do args+=(--fault "$f"); done
mkdir -p "$out"
python3 "$top/tests/e2e/lab_fault.py" "${args[@]}" "$@" >"$out/run.log" 2>&1 || {
	tail -n 60 "$out/run.log" >&2
	exit 1
}
grep '^lab-fault: +' "$out/run.log" >&2

python3 - "$out/summary.json" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
h = s["healthy"]
hours = h["healthy_seconds"] / 3600
print("period %d s, settings %s" % (s["period"], s["settings"]))
print()
print("| phase | figure |")
print("|---|---|")
print("| healthy run | %.0f min (%.0f after warm-up), %d regressions opened: %.1f false alarms per hour |"
      % (h["seconds"] / 60, h["healthy_seconds"] / 60, h["false_alarms"],
         h["false_alarms"] / hours if hours else 0))
for link, n in sorted(s["noise"].items()):
    if n["results"]:
        print("| noise %s | %d results, median %.3g, min %.2fx / max %.2fx of it; "
              "%d of %d judged were bad alone |" % (link, n["results"], n["median"],
              n["min_share"], n["max_share"], n["single_bad"], n["judged"]))
for f in s["faults"]:
    print("| %s fault (%s) on %s | regression open after %d results of the link, alert firing %.1f"
          " periods (%.0f s) after the fault, %.0f s after the database had it; resolved %.1f"
          " periods (%.0f s, %d results) after the repair |"
          % (f["kind"], f["spec"], f["link"], f["results_fault_to_open"],
             f["periods_fault_to_firing"], f["seconds_fault_to_firing"],
             f["seconds_db_to_firing"], f["periods_repair_to_resolved"],
             f["seconds_repair_to_resolved"], f["results_repair_to_close"]))
PY
if [ -n "$png" ]; then
	python3 "$here/plot.py" "$out" --png "$png"
fi
