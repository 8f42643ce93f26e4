#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# ibpulse's main job in one command: install the dependencies, build, and run
# the counters path (probe -> collector -> exporter) with /metrics on the
# host's 127.0.0.1. Where the host has an RDMA device the stack runs on the
# host; with --create-rxe IFACE it first creates a Soft-RoCE device on IFACE
# (the kernel must have rdma_rxe); otherwise the whole stack runs inside the
# Soft-RoCE lab VM (tests/lab/ibpulse-lab) with the exporter forwarded to the
# host. Runs until Ctrl-C, or for --duration seconds.
set -uo pipefail

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
lab=$top/tests/lab/ibpulse-lab

usage() {
	cat <<'EOF'
Usage: scripts/demo.sh [OPTIONS]

Installs the dependencies (scripts/install-deps.sh), builds into build/ and
runs probe -> collector -> exporter, serving Prometheus metrics on
http://127.0.0.1:PORT/metrics until Ctrl-C.

  With an RDMA device (/sys/class/infiniband/*): runs on this host.
  --create-rxe IFACE  no RDMA device but a kernel with rdma_rxe: create the
                      Soft-RoCE device rxe_ibpulse on IFACE first (this opens
                      UDP port 4791 on IFACE); removed again at the end.
  Otherwise: runs inside the Soft-RoCE lab VM (qemu; the kernel package is
  downloaded once, ~70 MB) and forwards the exporter to this host.

Options:
  --port PORT         host port of /metrics (default 9471)
  --duration SEC      stop after SEC seconds (default: run until Ctrl-C)
  --interval SEC      seconds between probe reports (default 10)
  --lab               use the lab VM even if this host has an RDMA device
  --no-traffic        in the lab, do not run perftest to make counters move
  --no-install        skip scripts/install-deps.sh
  --no-build          skip the install and the build (binaries must exist)
  --build-dir DIR     meson build directory (default: build/ in the repo)
  --workdir DIR       database and logs on the host (default: .demo/ in the repo)
  -h, --help          this text
EOF
}

say() { echo "demo: $*" >&2; }
die() {
	say "$*"
	exit 1
}

port=9471 duration=0 interval=10 force_lab= traffic=1 install=1 rxe_if= inside= build_it=1
build=$top/build
workdir=$top/.demo
while [ $# -gt 0 ]; do
	case "$1" in
	--port) port=${2:-}; shift ;;
	--duration) duration=${2:-}; shift ;;
	--interval) interval=${2:-}; shift ;;
	--create-rxe) rxe_if=${2:-}; shift ;;
	--lab) force_lab=1 ;;
	--no-traffic) traffic= ;;
	--no-install) install= ;;
	--no-build) install= build_it= ;;
	--build-dir) build=$(realpath -m -- "${2:-}"); shift ;;
	--workdir) workdir=$(realpath -m -- "${2:-}"); shift ;;
	--inside-lab) inside=1 ;;
	-h | --help) usage; exit 0 ;;
	*) usage >&2; die "unknown option '$1'" ;;
	esac
	shift
done
[[ "$port" =~ ^[0-9]+$ ]] && [ "$port" -ge 1 ] && [ "$port" -le 65535 ] ||
	die "--port must be 1..65535, not '$port'"
[[ "$duration" =~ ^[0-9]+$ ]] || die "--duration must be a number of seconds, not '$duration'"
[[ "$interval" =~ ^[1-9][0-9]*$ ]] || die "--interval must be >= 1 second, not '$interval'"

bin_c=$build/collector/ibpulse-collector
bin_e=$build/exporter/ibpulse-exporter
bin_p=$build/probe/ibpulse-probe

# --- the stack: collector, exporter, a probe pushing every interval ---------

pids=()
rxe_created=
stop=

cleanup() {
	local p
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
	for p in "${pids[@]}"; do wait "$p" 2>/dev/null; done
	pids=()
	if [ -n "$rxe_created" ]; then
		rdma link delete rxe_ibpulse 2>/dev/null && say "removed the Soft-RoCE device rxe_ibpulse"
	fi
}

wait_port_file() { # FILE PID NAME LOG
	local i
	for ((i = 0; i < 600; i++)); do
		[ -s "$1" ] && return 0
		kill -0 "$2" 2>/dev/null || die "$3 exited: $(tail -n 5 "$4")"
		sleep 0.1
	done
	die "$3 did not start within 60 s: $(tail -n 5 "$4")"
}

# stack_run WORKDIR LISTEN: run the stack until stop or duration; the
# exporter listens on LISTEN:$port.
stack_run() {
	local w=$1 listen=$2 host token end
	mkdir -p "$w" || die "cannot create $w"
	host=$(hostname | tr -c 'A-Za-z0-9._\n-' '_')
	token=$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')
	printf '%s\n' "$token" >"$w/token"
	chmod 600 "$w/token"
	cat >"$w/collector.ini" <<EOF
[collector]
listen = 127.0.0.1
port = 0
db = $w/ibpulse.db
schema_dir = $top/schema
[tokens]
$host = $token
EOF
	rm -f "$w/cport" "$w/eport"
	"$bin_c" serve --config "$w/collector.ini" --port-file "$w/cport" 2>>"$w/collector.log" &
	pids+=($!)
	wait_port_file "$w/cport" $! collector "$w/collector.log"
	"$bin_e" --db "$w/ibpulse.db" --listen "$listen" --port "$port" --port-file "$w/eport" \
		2>>"$w/exporter.log" &
	pids+=($!)
	wait_port_file "$w/eport" $! exporter "$w/exporter.log"
	local url=http://127.0.0.1:$(cat "$w/cport")/api/v1/report
	say "collector on ${url%/api/*}, database $w/ibpulse.db, logs in $w${inside:+ (inside the VM)}"

	end=0
	[ "$duration" -gt 0 ] && end=$((SECONDS + duration))
	local first=1 next=0
	while [ -z "$stop" ] && { [ "$end" -eq 0 ] || [ "$SECONDS" -lt "$end" ]; }; do
		if [ "$SECONDS" -ge "$next" ]; then
			next=$((SECONDS + interval))
			[ -n "$inside" ] && [ -n "$traffic" ] && lab_traffic "$w"
			if "$bin_p" report --once --collector "$url" --token-file "$w/token" \
				--host "$host" 2>>"$w/probe.log"; then
				[ -n "$first" ] && banner
				first=
			else
				say "probe report failed: $(tail -n 1 "$w/probe.log")"
			fi
		fi
		sleep 1
	done
	say "stopping"
}

banner() {
	local u=http://127.0.0.1:$port/metrics
	cat <<EOF

  ibpulse is running: Prometheus metrics at $u
    curl -s $u | grep '^ibpulse_port'

  Prometheus scrape config (prometheus.yml):
    scrape_configs:
      - job_name: ibpulse
        scrape_interval: 15s
        static_configs:
          - targets: ['127.0.0.1:$port']

EOF
	if [ "$duration" -gt 0 ]; then
		echo "  (stopping after $duration s)"
	else
		echo "  Ctrl-C to stop."
	fi
}

# A short perftest run on rxe0 so the demo's counters move.
lab_traffic() {
	local w=$1 p=18600 i
	timeout 20 ib_write_bw -d rxe0 -x 1 -s 65536 -D 2 -F -p $p >"$w/bw.server" 2>&1 &
	local srv=$!
	for ((i = 0; i < 100; i++)); do
		ss -Hltn "sport = :$p" | grep -q . && break
		sleep 0.1
	done
	timeout 20 ib_write_bw -d rxe0 -x 1 -s 65536 -D 2 -F -p $p 127.0.0.1 >"$w/bw.client" 2>&1
	wait "$srv"
}

# --- setup and the choice of where to run ------------------------------------

setup() {
	if [ -n "$install" ]; then
		say "installing dependencies (scripts/install-deps.sh)"
		bash "$top/scripts/install-deps.sh" || die "dependency install failed"
	fi
	if [ -n "$build_it" ] && [ ! -f "$build/build.ninja" ]; then
		say "configuring $build"
		meson setup "$build" >"$top/build-setup.log" 2>&1 ||
			die "meson setup failed: see $top/build-setup.log"
	fi
	if [ -n "$build_it" ]; then
		say "building (ninja -C $build)"
		ninja -C "$build" >/dev/null || die "build failed: ninja -C $build"
	fi
	local b
	for b in "$bin_c" "$bin_e" "$bin_p"; do
		[ -x "$b" ] || die "$b was not built"
	done
}

host_devices() {
	local d
	for d in /sys/class/infiniband/*; do
		[ -e "$d" ] && return 0
	done
	return 1
}

port_busy() {
	ss -Hltn "sport = :$1" 2>/dev/null | grep -q .
}

# Does this kernel have Soft-RoCE (loaded, built in, or as a module)?
have_rxe() {
	[ -d /sys/module/rdma_rxe ] || modinfo rdma_rxe >/dev/null 2>&1
}

create_rxe() { # IFACE
	[ "$(id -u)" -eq 0 ] || die "--create-rxe needs root"
	have_rxe || die "this kernel has no rdma_rxe module: no Soft-RoCE here"
	[ -e "/sys/class/net/$1" ] || die "no network interface '$1'"
	say "creating Soft-RoCE device rxe_ibpulse on $1: this opens UDP port 4791 (RoCE v2) on $1"
	[ -d /sys/module/rdma_rxe ] || modprobe rdma_rxe || die "modprobe rdma_rxe failed"
	rdma link add rxe_ibpulse type rxe netdev "$1" || die "rdma link add failed"
	rxe_created=1
}

run_on_host() {
	port_busy "$port" && die "port $port is in use: choose another with --port"
	say "RDMA devices here: $(ls /sys/class/infiniband | tr '\n' ' ')"
	stack_run "$workdir" 127.0.0.1
}

run_in_lab() {
	local why
	why=$("$lab" check 2>&1) || die "no RDMA device on this host and the lab VM cannot run here: $why"
	port_busy "$port" && die "port $port is in use: choose another with --port"
	local t=$((duration > 0 ? duration + 600 : 315360000))
	say "running the stack inside the Soft-RoCE lab VM (rxe0), /metrics forwarded to 127.0.0.1:$port"
	local args=(--port "$port" --interval "$interval" --duration "$duration" --no-install
		--build-dir "$build" --inside-lab)
	[ -z "$traffic" ] && args+=(--no-traffic)
	exec "$lab" run --timeout "$t" --forward "$port:$port" -- bash "$top/scripts/demo.sh" "${args[@]}"
}

main() {
	if [ -n "$inside" ]; then
		trap cleanup EXIT
		trap 'stop=1' INT TERM
		stack_run /tmp/ibpulse-demo 0.0.0.0
		return
	fi
	setup
	trap cleanup EXIT
	trap 'stop=1' INT TERM
	if [ -z "$force_lab" ] && [ -n "$rxe_if" ] && ! host_devices; then
		create_rxe "$rxe_if"
	fi
	if [ -z "$force_lab" ] && host_devices; then
		run_on_host
		return
	fi
	say "no RDMA device on this host."
	if [ -z "$force_lab" ] && have_rxe; then
		say "its kernel has Soft-RoCE (rdma_rxe): 'scripts/demo.sh --create-rxe IFACE' would create"
		say "a device on IFACE (opening UDP port 4791 there); using the lab VM instead."
	fi
	run_in_lab
}

main
