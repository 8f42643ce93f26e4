#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The man pages, as `meson install` puts them.

Installs the build into a scratch DESTDIR (`meson install --destdir`) and
checks that ibpulse-probe(8), ibpulse-collector(8) and ibpulse-exporter(8)
land in PREFIX/MANDIR/man8 and ibpulse-probe.ini(5),
ibpulse-collector.ini(5) and ibpulse-exporter.ini(5) in .../man5, and that
`man -l` renders each with its title, a NAME line naming the page and a
SYNOPSIS naming the program or the configuration file, plus what the
page is for: the program's commands and options, the file's settings
(keys the annotated sample etc/PROG.ini sets too). Fails when man is
missing (scripts/install-deps.sh installs man-db).

usage: test_manpages.py SOURCE_ROOT BUILD_DIR
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

PROGS = ("probe", "collector", "exporter")
# Per page: strings its rendered text must hold besides NAME and SYNOPSIS.
BODY = {
    "ibpulse-probe.8": ["DESCRIPTION", "COMMANDS", "ibpulse-probe daemon"],
    "ibpulse-collector.8": ["DESCRIPTION", "OPTIONS", "ibpulse-collector retire"],
    "ibpulse-exporter.8": ["DESCRIPTION", "OPTIONS", "ENDPOINTS"],
    "ibpulse-probe.ini.5": ["collector_url", "[daemon]", "[profile NAME]"],
    "ibpulse-collector.ini.5": ["listen, port", "schema_dir"],
    "ibpulse-exporter.ini.5": ["stale_after", "db"],
}


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def option(build, name):
    opts = json.loads(subprocess.run(
        ["meson", "introspect", "--buildoptions", build], check=True,
        stdout=subprocess.PIPE, text=True).stdout)
    return next(o["value"] for o in opts if o["name"] == name)


def render(path):
    env = dict(os.environ, MANWIDTH="80", LC_ALL="C.UTF-8", MAN_KEEP_FORMATTING="")
    p = subprocess.run(["man", "-l", path], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True, env=env)
    if p.returncode != 0:
        fail("man -l %s exited %d: %s" % (path, p.returncode, p.stderr))
    # man may still draw with backspaces when it thinks it has a terminal
    return re.sub(".\b", "", p.stdout)


def check_page(path, page, src):
    name, sec = re.match(r"(.*)\.(\d)$", page).groups()
    text = render(path)
    head = text.lstrip().splitlines()[0] if text.strip() else ""
    if "%s(%s)" % (name, sec) not in head:
        fail("%s: title line is %r, not %s(%s)" % (page, head, name, sec))
    m = re.search(r"^NAME\n\s+(\S+)\s+-\s+\S", text, re.M)
    if not m or m.group(1) != name:
        fail("%s: no NAME line '%s - ...' in:\n%s" % (page, name, text[:800]))
    m = re.search(r"^SYNOPSIS\n(.*?)\n\S", text, re.M | re.S)
    want = ("/etc/ibpulse/%s.ini" % name.split("-", 1)[1][:-4] if sec == "5"
            else name)
    if not m or want not in m.group(1):
        fail("%s: SYNOPSIS does not name %s:\n%s" % (page, want, text[:1200]))
    for s in BODY[page]:
        if s not in text:
            fail("%s: no '%s' in the rendered page" % (page, s))
    if sec == "5":
        # Settings the annotated sample sets are documented on the page.
        prog = name.split("-", 1)[1][:-4]
        with open(os.path.join(src, "etc", prog + ".ini")) as f:
            keys = re.findall(r"^[;#]?\s*([a-z_]+)\s*=", f.read(), re.M)
        missing = [k for k in set(keys) if k not in text]
        if len(keys) < 3 or len(missing) > len(set(keys)) // 2:
            fail("%s: %d of the %d keys of etc/%s.ini are not on the page: %s"
                 % (page, len(missing), len(set(keys)), prog, sorted(missing)))
    print("ok: %s renders: %s, NAME, SYNOPSIS naming %s" % (page, head.split()[0], want))


def main():
    if len(sys.argv) != 3:
        fail(__doc__.strip().splitlines()[-1])
    src, build = sys.argv[1], sys.argv[2]
    if not shutil.which("man"):
        fail("man is missing (scripts/install-deps.sh installs man-db)")
    prefix, mandir = option(build, "prefix"), option(build, "mandir")
    with tempfile.TemporaryDirectory() as dest:
        p = subprocess.run(["meson", "install", "-C", build, "--no-rebuild",
                            "--destdir", dest, "--quiet"],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        if p.returncode != 0:
            fail("meson install exited %d:\n%s" % (p.returncode, p.stdout[-3000:]))
        root = os.path.join(dest, prefix.lstrip("/"), mandir)
        pages = []
        for prog in PROGS:
            pages += [("man8", "ibpulse-%s.8" % prog), ("man5", "ibpulse-%s.ini.5" % prog)]
        found = sorted(os.path.relpath(os.path.join(d, f), dest)
                       for d, _, fs in os.walk(dest) for f in fs
                       if re.match(r"ibpulse.*\.[0-9]$", f))
        for sub, page in pages:
            path = os.path.join(root, sub, page)
            if not os.path.isfile(path):
                fail("meson install put no %s at %s; man pages installed: %s"
                     % (page, os.path.join(prefix, mandir, sub), found))
            check_page(path, page, src)
        if len(found) != len(pages):
            fail("unexpected man pages installed: %s" % found)
    print("%d man pages installed under %s and rendered" % (len(pages), os.path.join(prefix, mandir)))


if __name__ == "__main__":
    main()
