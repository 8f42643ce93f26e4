#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Unit test of the lab suite's retry helpers (lib.sh), no VM: a client that
# fails once with an error document and then succeeds (a perftest or probe
# client started before its responder listened) leaves exactly the good
# document in lab_retry_out's file, the failed attempt in FILE.tries; and
# no lab test wraps a redirect around lab_retry itself (issue 12, item 12:
# the failed attempt's document stayed in the file, the retry appended a
# second, and the check read "Extra data").
#   test-lib.sh TESTS_DIR
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
tests=${1:-$here/..}
. "$here/lib.sh"

w=$(mktemp -d) || exit 1
trap 'rm -rf "$w"' EXIT

# A client that is refused on its first call, as the cross-VM one was.
flaky() {
	if [ ! -e "$w/called" ]; then
		: >"$w/called"
		echo '{"status": "error", "error": "connection refused"}'
		echo "attempt 1 refused" >&2
		return 1
	fi
	echo '{"status": "ok"}'
}
one_doc() { python3 -c 'import json,sys; assert json.load(open(sys.argv[1]))["status"] == "ok"' "$1"; }

lab_retry_out 3 "$w/out.json" "$w/out.err" flaky 2>"$w/said" || lab_fail "lab_retry_out gave up"
one_doc "$w/out.json" || lab_fail "not one ok document: $(cat "$w/out.json")"
grep -q 'attempt 1 refused' "$w/out.err.tries" || lab_fail "the failed attempt is not in .tries"
grep -q 'connection refused' "$w/out.err.tries" || lab_fail "the failed attempt's output is not in .tries"
grep -q 'succeeded at attempt 2 of 3' "$w/said" || lab_fail "no word of the retry: $(cat "$w/said")"
lab_ok "lab_retry_out keeps the last attempt's document only"

rm -f "$w/called"
lab_retry_out 2 "$w/both" "$w/both" flaky || lab_fail "lab_retry_out (one file) gave up"
[ "$(cat "$w/both")" = '{"status": "ok"}' ] || lab_fail "one file: $(cat "$w/both")"
lab_ok "lab_retry_out with stdout and stderr in one file"

lab_retry_out 2 "$w/never" "$w/never.err" false && lab_fail "false succeeded"
[ "$(grep -c '^--- attempt' "$w/never.err.tries")" = 2 ] || lab_fail "two failed attempts, not recorded"
lab_ok "a command that never succeeds fails after its tries, each recorded"

# The pattern that broke verbs-lab-verbs-2vm: lab_retry inside a redirect
# (continuation lines joined). Function bodies that redirect inside are fine.
bad=$(python3 - "$tests" <<'PY'
import glob, os, re, sys
top = sys.argv[1]
files = set()
for pat in ("*/test-lab-*.sh", "lab/*.sh", "e2e/*.sh"):
    files.update(glob.glob(os.path.join(top, pat)))
for f in sorted(files):
    lines = open(f).read().replace("\\\n", " ").splitlines()
    for n, line in enumerate(lines, 1):
        code = line.split(" #", 1)[0]
        if re.search(r"(^|[\s(;&|])lab_retry\s", code) and \
                re.search(r"[0-9&]?>>?\s*[\"$/\w]", code.replace("2>&1", "")):
            print("%s: %s" % (os.path.relpath(f, top), line.strip()))
PY
)
[ -z "$bad" ] || lab_fail "a redirect around lab_retry (use lab_retry_out): $bad"
lab_ok "no lab test redirects around lab_retry"
