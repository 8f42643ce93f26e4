#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Keep-alive clients of the collector and the exporter under a connection
# flood (2,000 idle + 200 slowloris connections from 300 loopback
# addresses, reopened as the server closes them): the share of requests
# answered, for each build given. Prints a Markdown table (flood.py).
#
#   bash bench/flood/run.sh NAME=BUILD_DIR[,SCHEMA_DIR] [NAME=BUILD_DIR...]
#   IDLE=2000 SLOW=200 ADDRS=300 SECONDS=30 RATE=2000 bash bench/flood/run.sh ...
#
# e.g. before=/tmp/old-build,/tmp/old-src/schema after=build: each
# BUILD_DIR needs collector/ibpulse-collector and exporter/ibpulse-exporter;
# SCHEMA_DIR is the schema that build's collector needs (default: this
# tree's).
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
[ $# -ge 1 ] || { echo "usage: $0 NAME=BUILD_DIR..." >&2; exit 2; }
for a in "$@"; do
	b=${a#*=}
	b=${b%%,*}
	for exe in collector/ibpulse-collector exporter/ibpulse-exporter; do
		[ -x "$b/$exe" ] || { echo "no $b/$exe: build it first" >&2; exit 1; }
	done
done
exec python3 "$top/bench/flood/flood.py" "$top/schema" "$@"
