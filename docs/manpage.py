#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Man pages from the manuals in docs/ (written as man pages in Markdown).

A program's page, section 8, is its manual as it is: docs/probe.md becomes
ibpulse-probe(8). A configuration file's page, section 5, is the
CONFIGURATION section of its program's manual with a NAME and a SYNOPSIS
of its own: ibpulse-probe.ini(5) describes /etc/ibpulse/probe.ini. So each
setting is documented once, in the manual, and the pages follow it.
go-md2man does the conversion; this script sets the .TH line (go-md2man
copies the Markdown title into it) and escapes text lines that roff would
take for requests.

usage: manpage.py [--go-md2man PATH] --version V (--program | --ini) DOC OUT
  --program  OUT is DOC's program page (section 8)
  --ini      OUT is the page (section 5) of DOC's program's configuration file
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

SYSCONF = "/etc/ibpulse"


def title(md):
    """'ibpulse-probe', 8 from the manual's first line, '# ibpulse-probe(8)'."""
    m = re.match(r"# ([a-z][a-z0-9.-]*)\((\d)\)\n", md)
    if not m:
        sys.exit("manpage.py: the manual does not start with '# NAME(SECTION)'")
    return m.group(1), int(m.group(2))


def section(md, name):
    """The body of '## NAME' (up to the next '## '), without its heading."""
    m = re.search(r"^## %s\n(.*?)(?=^## |\Z)" % re.escape(name), md, re.M | re.S)
    if not m:
        sys.exit("manpage.py: the manual has no '## %s' section" % name)
    return m.group(1).strip() + "\n"


def ini_page(md, prog):
    """The Markdown of PROG.ini(5): the manual's CONFIGURATION section."""
    short = prog.split("-", 1)[1]
    body = section(md, "CONFIGURATION")
    # Its '### [section]' headings become the page's own sections.
    body = re.sub(r"^### ", "## ", body, flags=re.M)
    return """# {prog}.ini(5)

## NAME

{prog}.ini - configuration file of {prog}(8)

## SYNOPSIS

    {sysconf}/{short}.ini

## DESCRIPTION

{body}
## SEE ALSO

{prog}(8)
""".format(prog=prog, short=short, sysconf=SYSCONF, body=body)


def to_roff(md, name, sec, version, md2man):
    with tempfile.TemporaryDirectory() as tmp:
        src = os.path.join(tmp, "page.md")
        out = os.path.join(tmp, "page.roff")
        with open(src, "w") as f:
            f.write(md)
        subprocess.run([md2man, "-in", src, "-out", out], check=True)
        with open(out) as f:
            roff = f.read()
    th = '.TH %s %d "" "ibpulse %s" "ibpulse"' % (name, sec, version)
    roff, n = re.subn(r"^\.TH .*$", lambda _: th, roff, count=1, flags=re.M)
    if n != 1:
        sys.exit("manpage.py: go-md2man wrote no .TH line for " + name)
    # A text line starting with '.' or "'" would be read as a request.
    return re.sub(r"^(?=\.\.|')", r"\\&", roff, flags=re.M)


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--go-md2man", default="go-md2man")
    p.add_argument("--version", required=True)
    kind = p.add_mutually_exclusive_group(required=True)
    kind.add_argument("--program", action="store_true")
    kind.add_argument("--ini", action="store_true")
    p.add_argument("doc")
    p.add_argument("out")
    a = p.parse_args(argv)
    with open(a.doc) as f:
        md = f.read()
    name, sec = title(md)
    if a.ini:
        md, name, sec = ini_page(md, name), name + ".ini", 5
    roff = to_roff(md, name, sec, a.version, a.go_md2man)
    with open(a.out + ".tmp", "w") as f:
        f.write(roff)
    os.replace(a.out + ".tmp", a.out)


if __name__ == "__main__":
    main(sys.argv[1:])
