#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The guests' half of the fault-injection run (tests/e2e/lab_fault.py runs
# it in both lab VMs with `ibpulse-lab run --vms 2`). vm1 runs the
# collector (planner, baselines, regressions), the exporter and the probe
# daemon lab-1; vm2 runs the probe daemon lab-2 and the fault agent, which
# applies what the host writes into $LAB_RUN/fault to vm2's eth0 with the
# host's tc: "none", "bw RATE" (tbf) or "lat DELAY" (netem), and answers
# in $LAB_RUN/fault.applied. The run directory is the channel because it
# is the one host directory the guests see uncached. Both end when
# $LAB_RUN/stop appears; vm1 then copies the database there.
#
# Environment (ibpulse-lab --env): FAULT_CONF (the host's directory with
# collector.ini, exporter.ini, lab-1.ini, lab-2.ini and the tokens),
# FAULT_BUILD (the meson build directory).
set -uo pipefail
: "${LAB_RUN:?run inside ibpulse-lab}" "${FAULT_CONF:?}" "${FAULT_BUILD:?}"
node=${LAB_NODE:?}
here=$(cd "$(dirname "$0")" && pwd)
w=/tmp/fault-vm
mkdir -p "$w"
pids=()
say() { echo "lab-fault: $*"; }
trap 'kill "${pids[@]}" 2>/dev/null' EXIT

# The host may not see the probe's files: copy them where it can, on exit.
save_logs() {
	local f
	for f in "$w"/*.log; do
		[ -e "$f" ] && cp "$f" "$LAB_RUN/vm$node-${f##*/}"
	done
}

# wait_file FILE PID WHAT: until the daemon wrote its port file (60 s)
wait_file() {
	local i
	for ((i = 0; i < 600; i++)); do
		[ -s "$1" ] && return 0
		kill -0 "$2" 2>/dev/null || { say "$3 exited: $(tail -n 5 "$w/$3.log")"; return 1; }
		sleep 0.1
	done
	say "$3 did not start within 60 s"
	return 1
}

start_probe() { # HOST
	cp "$FAULT_CONF/$1.token" "$w/$1.token"
	chmod 600 "$w/$1.token"
	"$FAULT_BUILD/probe/ibpulse-probe" daemon --config "$FAULT_CONF/$1.ini" 2>"$w/$1.log" &
	pids+=($!)
}

# apply SPEC: "none", "bw RATE" or "lat DELAY" on vm2's eth0's RoCE traffic
apply() {
	# shellcheck disable=SC2086 # SPEC is two words
	bash "$here/../lab/roce-fault.sh" eth0 $1
}

if [ "$node" = 1 ]; then
	say "LAB_RUN=$LAB_RUN"
	"$FAULT_BUILD/collector/ibpulse-collector" serve --config "$FAULT_CONF/collector.ini" \
		--port-file "$w/cport" 2>"$w/collector.log" &
	pids+=($!)
	wait_file "$w/cport" $! collector || exit 1
	"$FAULT_BUILD/exporter/ibpulse-exporter" --config "$FAULT_CONF/exporter.ini" \
		--port-file "$w/eport" 2>"$w/exporter.log" &
	pids+=($!)
	wait_file "$w/eport" $! exporter || exit 1
	start_probe lab-1
else
	start_probe lab-2
fi
say "vm$node ready"

applied=none
rc=0
while [ ! -e "$LAB_RUN/stop" ]; do
	for p in "${pids[@]}"; do
		kill -0 "$p" 2>/dev/null && continue
		say "a daemon of vm$node died: $(tail -n 5 "$w"/*.log)"
		rc=1
		break 2
	done
	if [ "$node" = 2 ]; then
		want=$(cat "$LAB_RUN/fault" 2>/dev/null) || want=none
		if [ -n "$want" ] && [ "$want" != "$applied" ]; then
			if apply "$want"; then
				applied=$want
				echo "$want $(date +%s.%N)" >"$LAB_RUN/fault.applied.tmp"
				mv "$LAB_RUN/fault.applied.tmp" "$LAB_RUN/fault.applied"
				say "fault: $want ($(tc qdisc show dev eth0 | tr '\n' ' '))"
			else
				rc=1
				break
			fi
		fi
	fi
	sleep 0.5
done

kill -TERM "${pids[@]}" 2>/dev/null
for p in "${pids[@]}"; do wait "$p" 2>/dev/null; done
pids=()
if [ "$node" = 1 ]; then
	db=$(sed -n 's/^db *= *//p' "$FAULT_CONF/collector.ini")
	sqlite3 "$db" ".backup '$LAB_RUN/ibpulse.db'" || rc=1
fi
save_logs
say "vm$node done"
exit "$rc"
