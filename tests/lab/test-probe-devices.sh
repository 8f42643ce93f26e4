#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# `ibpulse-probe devices` on a real verbs device: inside the lab, the JSON
# listing describes rxe0 exactly as the kernel's sysfs does (state, rate,
# GID table with types, P_Key table, hw_counters), and the human listing
# names rxe0, its P_Key and its RoCE v2 GIDs.
#   test-probe-devices.sh LAB_TOOL BUILD_DIR
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
build=${2:?usage: test-probe-devices.sh LAB_TOOL BUILD_DIR}
probe=$build/probe/ibpulse-probe

if [ -z "${LAB:-}" ]; then
	[ -x "$probe" ] || lab_fail "$probe not built"
	lab_require "$1"
	lab_run "$1" --timeout 300 -- bash "$here/test-probe-devices.sh" "$1" "$build"
fi

# The GID table grows while the guest's network settles (a fec0:: address
# from qemu's router advertisement comes a few seconds after boot): wait
# until it has not changed for 2 s, so the probe and the check read the same.
gids() { cat /sys/class/infiniband/rxe0/ports/1/gids/* 2>/dev/null; }
prev=$(gids)
stable=0
for _ in $(seq 1 40); do
	sleep 0.5
	cur=$(gids)
	if [ "$cur" = "$prev" ]; then
		stable=$((stable + 1))
		[ "$stable" -ge 4 ] && break
	else
		stable=0
		prev=$cur
	fi
done

"$probe" devices --json >/tmp/devices.json || lab_fail "ibpulse-probe devices --json failed"
python3 "$here/labcheck.py" devices /tmp/devices.json || exit 1

"$probe" devices >/tmp/devices.txt || lab_fail "ibpulse-probe devices failed"
cat /tmp/devices.txt
grep -q "rxe0" /tmp/devices.txt || lab_fail "no rxe0 in the listing"
grep -q "0xffff" /tmp/devices.txt || lab_fail "no P_Key 0xffff in the listing"
grep -q "RoCE v2" /tmp/devices.txt || lab_fail "no RoCE v2 GID in the listing"
lab_ok "ibpulse-probe devices lists rxe0"
