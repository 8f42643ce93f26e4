#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# ibpulse's main job in one command: install the dependencies, build, and run
# the whole path (two probe daemons testing each other as the collector's
# planner says, counters and results into SQLite, baselines and regressions,
# the exporter) with /metrics on the host's 127.0.0.1. Where the host has an
# RDMA device the stack runs on the host; with --create-rxe IFACE it first
# creates a Soft-RoCE device on IFACE (the kernel must have rdma_rxe);
# otherwise it runs inside the Soft-RoCE lab (tests/lab/ibpulse-lab), one VM,
# or two with --inject-fault, which then degrades the link between them so a
# regression opens. --prometheus adds Debian's Prometheus with the shipped
# alert rules. Runs until Ctrl-C, or for --duration seconds.
set -uo pipefail

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
lab=$top/tests/lab/ibpulse-lab

usage() {
	cat <<'EOF'
Usage: scripts/demo.sh [OPTIONS]

Installs the dependencies (scripts/install-deps.sh), builds into build/ and
runs the collector, the exporter and two probe daemons that test each other
(write_bw, planned by the collector every --period), serving Prometheus
metrics on http://127.0.0.1:PORT/metrics until Ctrl-C: port counters, test
results, each link's learned baseline and, once one opens, its regression.

  With an RDMA device (/sys/class/infiniband/*): runs on this host; the two
                      daemons test each other through the first device.
  --create-rxe IFACE  no RDMA device but a kernel with rdma_rxe: create the
                      Soft-RoCE device rxe_ibpulse on IFACE first (this opens
                      UDP port 4791 on IFACE); removed again at the end.
  Otherwise: runs inside the Soft-RoCE lab VM (qemu; the kernel package is
  downloaded once, ~70 MB) and forwards the exporter to this host.

Options:
  --port PORT         host port of /metrics (default 9471)
  --duration SEC      stop after SEC seconds (default: run until Ctrl-C)
  --interval SEC      seconds between counter pushes (default 10)
  --period SEC        the planner's test period, one test a period (default 20, >= 10)
  --inject-fault      in the lab, with two VMs: once the link between them has
                      a baseline, shape vm2's RoCE traffic (tc tbf) to a tenth
                      of it, so the collector opens a bandwidth regression on
                      that link (and IbpulseLinkBandwidthRegression fires)
  --prometheus        also run Debian's prometheus on this host, loaded with
                      grafana/alerts/ibpulse.rules.yml, scraping the demo
  --prometheus-port P its port on 127.0.0.1 (default 9090)
  --lab               use the lab VM even if this host has an RDMA device
  --no-traffic        no tests (the daemons stay paused): counters only
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

port=9471 duration=0 interval=10 period=20 force_lab='' traffic=1 install=1 rxe_if='' inside=''
build_it=1 fault='' prom='' prom_port=9090
build=$top/build
workdir=$top/.demo
while [ $# -gt 0 ]; do
	case "$1" in
	--port) port=${2:-}; shift ;;
	--duration) duration=${2:-}; shift ;;
	--interval) interval=${2:-}; shift ;;
	--period) period=${2:-}; shift ;;
	--create-rxe) rxe_if=${2:-}; shift ;;
	--inject-fault) fault=1 ;;
	--prometheus) prom=1 ;;
	--prometheus-port) prom_port=${2:-}; shift ;;
	--lab) force_lab=1 ;;
	--no-traffic) traffic= ;;
	--no-install) install= ;;
	--no-build) install='' build_it='' ;;
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
[[ "$prom_port" =~ ^[0-9]+$ ]] && [ "$prom_port" -ge 1 ] && [ "$prom_port" -le 65535 ] ||
	die "--prometheus-port must be 1..65535, not '$prom_port'"
[[ "$duration" =~ ^[0-9]+$ ]] || die "--duration must be a number of seconds, not '$duration'"
[[ "$interval" =~ ^[1-9][0-9]*$ ]] || die "--interval must be >= 1 second, not '$interval'"
[[ "$period" =~ ^[0-9]+$ ]] && [ "$period" -ge 10 ] && [ "$period" -le 3600 ] ||
	die "--period must be 10..3600 seconds, not '$period'"
[ -z "$fault" ] || [ -n "$traffic" ] || die "--inject-fault needs tests: drop --no-traffic"

bin_c=$build/collector/ibpulse-collector
bin_e=$build/exporter/ibpulse-exporter
bin_p=$build/probe/ibpulse-probe
# Inside the lab with two VMs, which one this is (1: the collector's).
node=${LAB_NODE:-1}
cport=19470 # the collector's port in two VMs (vm2's daemon must know it)

# --- the stack: collector, exporter, two probe daemons ----------------------

pids=()
rxe_created=
stop=
lab_pid=

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

newtoken() { od -An -N16 -tx1 /dev/urandom | tr -d ' \n'; }

# The collector: planner every $period, baselines judged after 3 results
# and a regression after 3 bad of the last 5 (2 good close it). In the lab
# single results of rxe under TCG range from 0.1x to 2x their median
# (bench/README.md, "Fault injection"): a result is bad there below 30% of
# the baseline, and one spread (not three) below it.
collector_conf() { # WORKDIR LISTEN PORT
	local slot=$((period / 2)) margin=0.2 spread=3
	[ -n "$inside" ] && margin=0.7 spread=1
	cat <<EOF
[collector]
listen = $2
port = $3
db = $1/ibpulse.db
schema_dir = $top/schema
threads = 2
admin_token = $(cat "$1/admin.token")
[planner]
period = $period
slot_seconds = $slot
duty_cycle = 1
replan_interval = 0
[planner_profiles]
bw = $slot
[baseline]
min_results = 3
bad_results = 3
judged_results = 5
good_results = 2
margin = $margin
spread_factor = $spread
[tokens]
demo-a = $DEMO_TOKEN_A
demo-b = $DEMO_TOKEN_B
EOF
}

# probe_conf WORKDIR NAME COLLECTOR_URL RESPONDER_ADDRESS RESPONDER_PORT
probe_conf() {
	cat <<EOF
[probe]
host = $2
collector_url = $3
token_file = $1/$2.token
[daemon]
counters_interval = $interval
push_interval = $interval
plan_interval = 5
duty_cycle = 1
jitter = 0
responder_address = $4
responder_port = $5
spool_dir = $1/$2.spool
control_socket = $1/$2.sock
pause_file = $1/no-tests
EOF
	# rxe under TCG retransmits on timers: its ports move 20-40 times a
	# test's own packets with nothing else running (tests/e2e/lab_fault.py).
	# Under load a control message between two VMs can take over 10 s.
	if [ -n "$inside" ]; then
		printf 'busy_tolerance = 100\ntest_timeout = 20\n'
	fi
	# 4 KiB messages: the 128 in flight drain in seconds on a shaped link
	# (64 KiB ones, 8 MiB, would miss the test's deadline).
	cat <<EOF
[profile bw]
test = write_bw
size = 4096
qps = 1
duration = 2
EOF
}

start_probe() { # WORKDIR NAME TOKEN COLLECTOR_URL RESPONDER_ADDRESS RESPONDER_PORT
	local w=$1
	printf '%s\n' "$3" >"$w/$2.token"
	chmod 600 "$w/$2.token"
	probe_conf "$w" "$2" "$4" "$5" "$6" >"$w/$2.ini"
	"$bin_p" daemon --config "$w/$2.ini" 2>>"$w/$2.log" &
	pids+=($!)
}

# stack_run WORKDIR LISTEN: run the stack until stop or duration; the
# exporter listens on LISTEN:$port. In two lab VMs, vm1 runs the
# collector, the exporter and probe demo-a, vm2 probe demo-b.
stack_run() {
	local w=$1 listen=$2 url peer_ip=127.0.0.1 my_ip=127.0.0.1 end
	mkdir -p "$w" || die "cannot create $w"
	rm -f "$w/cport" "$w/eport"
	if [ -n "$traffic" ]; then rm -f "$w/no-tests"; else : >"$w/no-tests"; fi
	if [ -n "${LAB_PEER_IP:-}" ]; then
		my_ip=$LAB_NODE_IP peer_ip=$LAB_PEER_IP
	fi
	if [ "$node" = 1 ]; then
		newtoken >"$w/admin.token"
		chmod 600 "$w/admin.token"
		local clisten=127.0.0.1 cp=0
		[ -n "${LAB_PEER_IP:-}" ] && clisten=0.0.0.0 cp=$cport
		collector_conf "$w" "$clisten" "$cp" >"$w/collector.ini"
		"$bin_c" serve --config "$w/collector.ini" --port-file "$w/cport" 2>>"$w/collector.log" &
		pids+=($!)
		wait_port_file "$w/cport" $! collector "$w/collector.log"
		"$bin_e" --db "$w/ibpulse.db" --listen "$listen" --port "$port" --port-file "$w/eport" \
			2>>"$w/exporter.log" &
		pids+=($!)
		wait_port_file "$w/eport" $! exporter "$w/exporter.log"
		url=http://127.0.0.1:$(cat "$w/cport")
		say "collector on $url, database $w/ibpulse.db, logs in $w${inside:+ (inside the VM)}"
		start_probe "$w" demo-a "$DEMO_TOKEN_A" "$url/api/v1/report" "$my_ip" 18601
	fi
	if [ -z "${LAB_PEER_IP:-}" ]; then
		start_probe "$w" demo-b "$DEMO_TOKEN_B" "$url/api/v1/report" "$my_ip" 18602
	elif [ "$node" = 2 ]; then
		start_probe "$w" demo-b "$DEMO_TOKEN_B" "http://$peer_ip:$cport/api/v1/report" "$my_ip" 18602
	fi
	[ -n "$traffic" ] || say "--no-traffic: the daemons stay paused (no tests), counters only"

	end=0
	[ "$duration" -gt 0 ] && end=$((SECONDS + duration))
	local first=1 next=0 injected=
	while [ -z "$stop" ] && { [ "$end" -eq 0 ] || [ "$SECONDS" -lt "$end" ]; }; do
		if [ "$SECONDS" -ge "$next" ]; then
			next=$((SECONDS + 5))
			if [ "$node" = 1 ]; then
				[ -n "$first" ] && port_shown "$w" && { banner; first=; }
				progress "$w"
			elif [ -n "$fault" ] && [ -z "$injected" ]; then
				inject_fault "$w" "http://$peer_ip:$port/metrics" && injected=1
			fi
		fi
		sleep 1
	done
	say "stopping"
}

# Does our own /metrics show a port yet (the first counters arrived)?
port_shown() {
	curl -fsS --max-time 10 "http://127.0.0.1:$(cat "$1/eport")/metrics" 2>/dev/null |
		grep -q '^ibpulse_port_state_id{'
}

# progress WORKDIR: say what changed: results, baselines, regressions.
progress() {
	local m ok bl open line
	m=$(curl -fsS --max-time 10 "http://127.0.0.1:$(cat "$1/eport")/metrics" 2>/dev/null) ||
		return 0
	ok=$(awk '/^ibpulse_test_results_total\{.*outcome="ok"/ {s += $NF} END {print s + 0}' <<<"$m")
	bl=$(grep -c '^ibpulse_link_bandwidth_baseline_bytes_per_second{' <<<"$m")
	open=$(grep -E '^ibpulse_link_regression\{.*\} 1$' <<<"$m" | sort)
	if [ "$ok $bl" != "${shown_counts:-}" ]; then
		shown_counts="$ok $bl"
		say "tests: $ok ok results; links with a learned baseline: $bl"
	fi
	if [ "$open" != "${shown_open:-}" ]; then
		shown_open=$open
		while IFS= read -r line; do
			[ -n "$line" ] || continue
			say "REGRESSION open: $(label host "$line") $(label device "$line")/$(label port "$line") ->" \
				"$(label peer_host "$line") $(label peer_device "$line")/$(label peer_port "$line")" \
				"($(label profile "$line"), $(label metric "$line")); the collector says:"
			curl -fsS --max-time 10 -H "Authorization: Bearer $(cat "$1/admin.token")" \
				"http://127.0.0.1:$(cat "$1/cport")/api/v1/regressions" | head -c 600 >&2
			echo >&2
		done <<<"$open"
	fi
}

label() { # NAME LINE: a label's value in an exposition line
	sed -n "s/.*[{,]$1=\"\\([^\"]*\\)\".*/\\1/p" <<<"$2"
}

# inject_fault WORKDIR METRICS_URL (vm2): once demo-b -> demo-a has a
# baseline, shape vm2's RoCE traffic to a tenth of it (at least 256 kbit/s).
inject_fault() {
	local b kbit
	b=$(curl -fsS --max-time 10 "$2" 2>/dev/null |
		grep '^ibpulse_link_bandwidth_baseline_bytes_per_second{.*host="demo-b"' |
		awk '{print $NF; exit}')
	[ -n "$b" ] || return 1
	kbit=$(awk -v b="$b" 'BEGIN {k = int(b * 8 / 10 / 1000); print (k < 256 ? 256 : k)}')
	bash "$top/tests/lab/roce-fault.sh" eth0 bw "${kbit}kbit" || die "tc failed"
	say "FAULT injected: vm2's RoCE traffic shaped to $kbit kbit/s (tc tbf), a tenth of the" \
		"demo-b -> demo-a baseline of $(awk -v b="$b" 'BEGIN {printf "%.1f", b / 1e6}') MB/s;" \
		"the collector opens a regression after 3 bad results of that link"
}

banner() {
	local u=http://127.0.0.1:$port/metrics
	cat <<EOF

  ibpulse is running: Prometheus metrics at $u
    curl -s $u | grep '^ibpulse_port'
    curl -s $u | grep -E '^ibpulse_(test_results_total|link_)'

  Prometheus scrape config (prometheus.yml):
    scrape_configs:
      - job_name: ibpulse
        scrape_interval: 15s
        static_configs:
          - targets: ['127.0.0.1:$port']
    rule_files: ['$top/grafana/alerts/ibpulse.rules.yml']

EOF
	if [ "$duration" -gt 0 ]; then
		echo "  (stopping after $duration s)"
	else
		echo "  Ctrl-C to stop."
	fi
}

# --- Prometheus on this host --------------------------------------------------

start_prometheus() {
	command -v prometheus >/dev/null || die "--prometheus: no prometheus (apt-get install prometheus)"
	port_busy "$prom_port" && die "--prometheus-port $prom_port is in use: choose another"
	local d=$workdir/prometheus i
	mkdir -p "$d" || die "cannot create $d"
	cat >"$d/prometheus.yml" <<EOF
global:
  scrape_interval: 15s
  scrape_timeout: 15s
  evaluation_interval: 5s
rule_files:
  - $top/grafana/alerts/ibpulse.rules.yml
scrape_configs:
  - job_name: ibpulse
    static_configs:
      - targets: ['127.0.0.1:$port']
EOF
	prometheus --config.file="$d/prometheus.yml" --storage.tsdb.path="$d/data" \
		--web.listen-address="127.0.0.1:$prom_port" --log.level=warn 2>>"$d/prometheus.log" &
	pids+=($!)
	for ((i = 0; i < 300; i++)); do
		curl -fsS --max-time 2 "http://127.0.0.1:$prom_port/-/ready" >/dev/null 2>&1 && break
		kill -0 "${pids[-1]}" 2>/dev/null || die "prometheus exited: $(tail -n 5 "$d/prometheus.log")"
		sleep 0.2
	done
	say "Prometheus with ibpulse's alert rules: http://127.0.0.1:$prom_port" \
		"(alerts: http://127.0.0.1:$prom_port/alerts; data in $d)"
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
	[ -z "$fault" ] || die "--inject-fault needs the lab's two VMs (no tc fault on this host's device): add --lab"
	port_busy "$port" && die "port $port is in use: choose another with --port"
	say "RDMA devices here: $(ls /sys/class/infiniband | tr '\n' ' ')"
	[ -n "$prom" ] && start_prometheus
	stack_run "$workdir" 127.0.0.1
}

run_in_lab() {
	local why
	why=$("$lab" check 2>&1) || die "no RDMA device on this host and the lab VM cannot run here: $why"
	port_busy "$port" && die "port $port is in use: choose another with --port"
	local t=$((duration > 0 ? duration + 600 : 315360000)) vms=1
	[ -n "$fault" ] && vms=2
	say "running the stack inside the Soft-RoCE lab ($vms VM(s), rxe0), /metrics forwarded to 127.0.0.1:$port"
	local args=(--port "$port" --interval "$interval" --period "$period" --duration "$duration"
		--no-install --build-dir "$build" --inside-lab)
	[ -z "$traffic" ] && args+=(--no-traffic)
	[ -n "$fault" ] && args+=(--inject-fault)
	local cmd=("$lab" run --vms "$vms" --timeout "$t" --forward "$port:$port"
		--env "DEMO_TOKEN_A=$(newtoken)" --env "DEMO_TOKEN_B=$(newtoken)"
		-- bash "$top/scripts/demo.sh" "${args[@]}")
	[ -n "$prom" ] && start_prometheus
	# Not exec'd: Prometheus is ours to stop, and a Ctrl-C or a kill of
	# this script must end the VMs too (the lab stops them on TERM).
	"${cmd[@]}" &
	lab_pid=$!
	local rc
	wait "$lab_pid"
	rc=$?
	if [ -n "$stop" ]; then
		kill -TERM "$lab_pid" 2>/dev/null
		wait "$lab_pid"
		say "stopped"
		return 0
	fi
	return "$rc"
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
	DEMO_TOKEN_A=$(newtoken) DEMO_TOKEN_B=$(newtoken)
	if [ -z "$force_lab" ] && [ -n "$rxe_if" ] && ! host_devices; then
		create_rxe "$rxe_if"
	fi
	if [ -z "$force_lab" ] && host_devices; then
		run_on_host
		return
	fi
	say "no RDMA device on this host${force_lab:+ in use (--lab)}."
	if [ -z "$force_lab" ] && have_rxe; then
		say "its kernel has Soft-RoCE (rdma_rxe): 'scripts/demo.sh --create-rxe IFACE' would create"
		say "a device on IFACE (opening UDP port 4791 there); using the lab VM instead."
	fi
	run_in_lab
}

main
