#!/bin/sh
# SPDX-License-Identifier: MIT
# Run one libFuzzer harness for a bounded time: new inputs go to a
# temporary corpus (libFuzzer writes into its first corpus directory), the
# seed directories are only read. Findings are written to the temp dir
# and their path printed; a crash fails the test.
#   run_fuzzer.sh FUZZER SECONDS SEED_DIR...
set -eu
fuzzer=$1 secs=$2
shift 2
work=$(mktemp -d "${TMPDIR:-/tmp}/ibpulse-fuzz.XXXXXX")
trap 'rm -rf "$work"' EXIT
mkdir "$work/corpus"
status=0
"$fuzzer" -max_total_time="$secs" -runs=5000000 -timeout=10 -rss_limit_mb=1024 \
	-max_len=65536 -artifact_prefix="$work/" -print_final_stats=1 \
	"$work/corpus" "$@" || status=$?
if [ "$status" -ne 0 ]; then
	for f in "$work"/crash-* "$work"/leak-* "$work"/timeout-* "$work"/oom-*; do
		[ -e "$f" ] || continue
		echo "finding: $f"; od -c "$f" | head -20
	done
fi
exit "$status"
