#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Runs shellcheck on the project's shell scripts: every *.sh file and every
# file with a sh, bash or busybox-sh #! line under scripts/, tests/,
# bench/, .ci/ and debian/ (the lab's tool and guest init included), at
# severity warning (errors and warnings; its style notes are advice).
# Fails, with shellcheck's findings, otherwise, and when shellcheck is
# missing (scripts/install-deps.sh installs it).
# Usage: shellcheck.sh SOURCE_ROOT
set -uo pipefail
top=${1:?usage: shellcheck.sh SOURCE_ROOT}
command -v shellcheck >/dev/null ||
	{ echo "shellcheck is missing (scripts/install-deps.sh installs it)"; exit 1; }
cd "$top" || exit 1
# Every *.sh file, and every file whose #! line names a shell (one python
# process: a head(1) per file took a minute on a loaded machine).
mapfile -t files < <(python3 - <<'PY'
import os, re
shebang = re.compile(rb"^#! ?/(usr/)?bin/(env )?(ba|da)?sh( |$)|^#!/bin/busybox sh")
skip = ("node_modules", ".debhelper", "tmp", "fixtures")
for top in ("scripts", "tests", "bench", ".ci", "debian"):
    for root, dirs, files in os.walk(top):
        dirs[:] = sorted(d for d in dirs if d not in skip and not
                         (root == "debian" and d.startswith("ibpulse-")))
        for f in sorted(files):
            p = os.path.join(root, f)
            with open(p, "rb") as fh:
                first = fh.readline()
            if f.endswith(".sh") or shebang.match(first):
                print(p)
PY
)
[ ${#files[@]} -gt 0 ] || { echo "no shell script under $top"; exit 1; }
shellcheck --severity=warning --external-sources --format=gcc "${files[@]}"
rc=$?
echo "shellcheck $(shellcheck --version | awk '/^version:/ {print $2}'): ${#files[@]} files"
exit "$rc"
