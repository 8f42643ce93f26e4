#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Collector ingest benchmark: the real collector on a loopback port, fed by
# ingest-load (many simulated hosts, 9 ports x 70 counters each), and in the
# same run the plain SQLite insert loop as the anchor. Builds nothing.
#
#   bash bench/ingest/run.sh BUILD_DIR
#   HOSTS=2000 SECONDS_RUN=20 COLLECTOR_THREADS=2 bash bench/ingest/run.sh BUILD_DIR
set -euo pipefail
build=$(realpath "${1:?usage: run.sh BUILD_DIR}")
top=$(cd "$(dirname "$0")/../.." && pwd)
collector=$build/collector/ibpulse-collector
load=$build/bench/ingest/ingest-load
hosts=${HOSTS:-2000}
secs=${SECONDS_RUN:-20}
cthreads=${COLLECTOR_THREADS:-2}
lthreads=${LOAD_THREADS:-2}
conns=${CONNS:-32}
[ -x "$collector" ] && [ -x "$load" ] || { echo "build $build first (ninja -C $build)"; exit 1; }

tmp=$(mktemp -d /var/tmp/ibpulse-ingest.XXXXXX)
pid=
cleanup() { [ -n "$pid" ] && kill -9 "$pid" 2>/dev/null; rm -rf "$tmp"; }
trap cleanup EXIT

"$load" tokens --hosts "$hosts" >"$tmp/tokens"
cat >"$tmp/collector.ini" <<INI
[collector]
listen = 127.0.0.1
port = 0
db = $tmp/ibpulse.db
schema_dir = $top/schema
threads = $cthreads
per_ip_connection_limit = 0
tokens_file = $tmp/tokens
log_level = warn
INI
"$collector" serve --config "$tmp/collector.ini" --port-file "$tmp/port" 2>"$tmp/collector.log" &
pid=$!
for _ in $(seq 600); do [ -s "$tmp/port" ] && break; sleep 0.1; done
[ -s "$tmp/port" ] || { cat "$tmp/collector.log"; exit 1; }

coll=$("$load" load --port "$(cat "$tmp/port")" --hosts "$hosts" --seconds "$secs" \
	--threads "$lthreads" --conns "$conns")
kill -TERM "$pid"; wait "$pid" || true; pid=
raw=$("$load" raw --db "$tmp/raw.db" --hosts "$hosts" --seconds "$secs")

val() { sed -n "s/.*\b$1=\([0-9.]*\).*/\1/p" <<<"$2"; }
cs=$(val collector_samples_per_s "$coll")
rr=$(val raw_rows_per_s "$raw")
echo "# $(date -u +%FT%TZ) $(nproc) cores, load $(cut -d" " -f1-3 /proc/loadavg), $hosts hosts x 9 ports x 70 counters, ${secs}s each"
echo "# collector: $coll"
echo "# raw:       $raw"
printf '%-28s %14s\n' "measure" "per second"
printf '%-28s %14s\n' "collector samples stored" "$cs"
printf '%-28s %14s\n' "raw SQLite rows (1000/commit)" "$rr"
printf '%-28s %14s\n' "ratio collector/raw" "$(awk -v a="$cs" -v b="$rr" 'BEGIN{printf "%.2f", a/b}')"
