#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Lab smoke test: in one VM, rxe0 is ACTIVE, ibv_devinfo lists it with an
# Ethernet link layer, and a short perftest ib_write_bw between two
# processes on rxe0 (RoCE v2 GID index 1, out-of-band TCP on 127.0.0.1)
# completes with a non-zero bandwidth.
#   test-smoke.sh LAB_TOOL
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"

if [ -z "${LAB:-}" ]; then
	tool=${1:?usage: test-smoke.sh LAB_TOOL}
	lab_require "$tool"
	lab_run "$tool" --timeout 400 -- bash "$here/test-smoke.sh"
fi

state=$(cat /sys/class/infiniband/rxe0/ports/1/state)
[[ "$state" == *ACTIVE* ]] || lab_fail "rxe0 port state is '$state'"
lab_ok "rxe0 port 1: $state"

info=$(ibv_devinfo -d rxe0) || lab_fail "ibv_devinfo -d rxe0 failed"
grep -q 'state:.*PORT_ACTIVE' <<<"$info" || lab_fail "ibv_devinfo: not PORT_ACTIVE: $info"
grep -q 'link_layer:.*Ethernet' <<<"$info" || lab_fail "ibv_devinfo: no Ethernet link layer"
lab_ok "ibv_devinfo lists rxe0, PORT_ACTIVE, Ethernet"

out=/dev/shm/smoke
port=18515
args=(-d rxe0 -i 1 -x 1 -s 65536 -n 200 -F -p "$port")
timeout 120 ib_write_bw "${args[@]}" >"$out.server" 2>&1 &
server=$!
lab_wait_listen "$port" 60 || lab_fail "ib_write_bw server does not listen: $(cat "$out.server")"
timeout 120 ib_write_bw "${args[@]}" 127.0.0.1 >"$out.client" 2>&1
rc=$?
wait "$server"
src=$?
cat "$out.client"
[ "$rc" -eq 0 ] && [ "$src" -eq 0 ] ||
	lab_fail "ib_write_bw: client $rc, server $src: $(cat "$out.server")"
bw=$(lab_bw_avg "$out.client")
awk -v b="$bw" 'BEGIN {exit !(b + 0 > 0)}' || lab_fail "ib_write_bw average '$bw' is not > 0"
lab_ok "ib_write_bw 64 KiB x 200 on rxe0 loopback: $bw MB/s"
