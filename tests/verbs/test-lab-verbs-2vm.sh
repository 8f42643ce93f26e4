#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Cross-VM lab test of the verbs engine: two VMs, each with its own rxe0,
# joined over qemu's UDP socket netdev. VM 1 answers five tests (serve
# --once each); VM 2 runs write_bw, send_lat, send_bw, write_lat in
# duration mode and ud_send_lat against it with the default GID selection
# (RoCE v2, IPv4) and checks the results. Bidirectional SEND runs in the
# one-VM test only: across the VMs it once failed under CI load with an
# rxe receive copy error (tests/lab/README.md, "What was found here").
#   test-lab-verbs-2vm.sh LAB_TOOL PROBE
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../lab/lib.sh"

if [ -z "${LAB:-}" ]; then
	tool=${1:?usage: test-lab-verbs-2vm.sh LAB_TOOL PROBE}
	probe=${2:?usage: test-lab-verbs-2vm.sh LAB_TOOL PROBE}
	lab_require "$tool"
	lab_run "$tool" --vms 2 --timeout 800 --env "PROBE=$probe" -- \
		bash "$here/test-lab-verbs-2vm.sh"
fi

out=/dev/shm/verbs2
if [ "$LAB_NODE" = 1 ]; then
	for port in 18901 18902 18903 18904 18905; do
		timeout 300 "$PROBE" serve --once -p "$port" -d rxe0 --json \
			>"$out.server" 2>&1 || lab_fail "serve: $(cat "$out.server")"
		python3 -c 'import json,sys
d = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")][-1]
assert d["status"] == "ok" and d["client"]["status"] == "ok", d' "$out.server" ||
			lab_fail "responder result: $(cat "$out.server")"
		lab_ok "responder on port $port: ok"
	done
	exit 0
fi

# run PORT TEST ARGS...: retried until VM 1's responder listens. Each
# attempt writes $out.json afresh (lab_retry_out): a redirect around the
# retry once left a refused attempt's JSON before the good one's.
run() {
	local port=$1 test=$2
	shift 2
	lab_retry_out 60 "$out.json" "$out.err" timeout 120 "$PROBE" run "$test" \
		--peer "$LAB_PEER_IP:$port" -d rxe0 --no-pin --json "$@" ||
		lab_fail "$test: $(cat "$out.err"; tail -n 20 "$out.err.tries")"
	python3 "$here/check-result.py" "$test" "$out.json" - "$@" ||
		lab_fail "$test: implausible result"
	python3 - "$out.json" "$LAB_PEER_IP" <<'PY' || lab_fail "$test: $(cat "$out.json")"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["status"] == "ok", d
assert d["parameters"]["remote_gid"] == "::ffff:" + sys.argv[2], d["parameters"]
assert d["parameters"]["gid_type"] == "RoCE v2", d["parameters"]
PY
}

run 18901 write_bw -D 2 -q 2
run 18902 send_lat -n 200
lab_ok "write_bw and send_lat across two VMs"
run 18903 send_bw -D 2 -q 2
run 18904 write_lat -D 2
run 18905 ud_send_lat -n 200
lab_ok "send_bw, write_lat -D and ud_send_lat across two VMs"
