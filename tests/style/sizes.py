#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""sizes.py SOURCE_ROOT: no C function over 80 lines, no C file over 1,000
(docs/STYLE: a function fits a screen, a file is one job). A function is
counted from the first line of its signature to its closing brace, as
clang-format lays them out (braces of functions in column 0). Lists every
offender and exits 1, or prints the largest of each and exits 0."""
import subprocess
import sys

MAX_FUNC, MAX_FILE = 80, 1000


def functions(lines):
    """(name line, length) of each function of a clang-formatted file."""
    start = None
    for i, line in enumerate(lines):
        if line == "{" and start is None:
            j = i - 1
            while j > 0 and lines[j] and not lines[j][0].isalpha():
                j -= 1
            start = j
        elif line == "}" and start is not None:
            yield start, i - start + 1
            start = None


def main():
    root = sys.argv[1]
    files = subprocess.run(["git", "-C", root, "ls-files", "*.c", "*.h"],
                           capture_output=True, text=True, check=True)
    bad, top_fn, top_file = [], (0, ""), (0, "")
    for path in files.stdout.split():
        with open("%s/%s" % (root, path), encoding="utf-8") as f:
            lines = f.read().split("\n")
        top_file = max(top_file, (len(lines) - 1, path))
        if len(lines) - 1 > MAX_FILE:
            bad.append("%s: %d lines (at most %d)" % (path, len(lines) - 1, MAX_FILE))
        for at, n in functions(lines):
            top_fn = max(top_fn, (n, "%s:%d" % (path, at + 1)))
            if n > MAX_FUNC:
                bad.append("%s:%d: %s: %d lines (at most %d)"
                           % (path, at + 1, lines[at].strip(), n, MAX_FUNC))
    for b in bad:
        print(b)
    print("largest function %d lines (%s), largest file %d lines (%s)"
          % (top_fn[0], top_fn[1], top_file[0], top_file[1]))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
