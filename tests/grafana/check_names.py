# SPDX-License-Identifier: MIT
"""Every metric the dashboards and alert rules use is one the exporter
documents in docs/metrics.md (whose list the exporter's own tests hold to
what /metrics really serves), and the dashboard JSON is well-formed
Grafana: unique panel ids, a datasource and a query on every panel, every
dashboard of the folder checked. What Grafana would silently ignore is
checked too: an override must name a series or column the panel has (a
misspelt name loses the baseline band), and a link to another dashboard
must name one that exists and only variables it has.

usage: check_names.py METRICS_MD RULES_YML DASHBOARD_JSON...
"""
import json
import os
import re
import sys
import urllib.parse

NAME = re.compile(r"\bibpulse_[a-z0-9_]+\b")
DASH_LINK = re.compile(r"^/d/([^/?]+)")


def documented(path):
    names = set(NAME.findall(open(path).read()))
    # A counter family documented as foo_total also serves foo_total only;
    # nothing else is derived, so the set is used as it is.
    return names


def series_names(p):
    """The names a panel's series or columns can have: legends without
    {{label}} parts, and the columns its transformations rename."""
    names = {t["legendFormat"] for t in p.get("targets", [])
             if "legendFormat" in t and "{{" not in t["legendFormat"]}
    for tr in p.get("transformations", []):
        names |= set(tr.get("options", {}).get("renameByName", {}).values())
    return names


def check_overrides(path, p, errors):
    names = series_names(p)
    for o in p.get("fieldConfig", {}).get("overrides", []):
        m = o.get("matcher", {})
        if m.get("id") == "byName" and m.get("options") not in names:
            errors.append("%s: panel %r overrides %r, which it does not have"
                          % (path, p.get("title"), m.get("options")))
        for prop in o.get("properties", []):
            if prop.get("id") == "custom.fillBelowTo" and \
                    prop.get("value") not in names:
                errors.append("%s: panel %r fills below to %r, no such series"
                              % (path, p.get("title"), prop.get("value")))


def panel_links(p):
    d = p.get("fieldConfig", {}).get("defaults", {})
    return [lk.get("url", "") for lk in d.get("links", []) + p.get("links", [])]


def check_links(path, p, boards, errors):
    for url in panel_links(p):
        m = DASH_LINK.match(url)
        if not m:
            continue
        target = boards.get(m.group(1))
        if target is None:
            errors.append("%s: panel %r links to dashboard %s, which is not "
                          "one of ours" % (path, p.get("title"), m.group(1)))
            continue
        have = {v["name"] for v in target.get("templating", {}).get("list", [])}
        query = urllib.parse.urlsplit(url).query
        for part in query.split("&"):
            if part.startswith("var-"):
                name = part[4:].split("=", 1)[0]
                if name not in have:
                    errors.append("%s: panel %r sets var-%s, which %s lacks"
                                  % (path, p.get("title"), name, m.group(1)))


def main():
    md, rules, dashboards = sys.argv[1], sys.argv[2], sys.argv[3:]
    known = documented(md)
    errors = []
    used = {}
    for n in NAME.findall(open(rules).read()):
        used.setdefault(n, rules)
    boards = {}
    folders = {os.path.dirname(os.path.abspath(p)) for p in dashboards}
    given = {os.path.abspath(p) for p in dashboards}
    for folder in folders:
        for name in sorted(os.listdir(folder)):
            full = os.path.join(folder, name)
            if name.endswith(".json") and full not in given:
                errors.append("%s is not checked: add it to "
                              "tests/grafana/meson.build" % full)
    for path in dashboards:
        d = json.load(open(path))
        boards[d.get("uid")] = d
    for path in dashboards:
        d = json.load(open(path))
        ids = [p.get("id") for p in d.get("panels", [])]
        if len(ids) != len(set(ids)) or None in ids:
            errors.append("%s: panel ids missing or repeated: %s" % (path, ids))
        titles = [p.get("title") for p in d.get("panels", [])]
        if len(titles) != len(set(titles)):
            errors.append("%s: panel titles repeated: %s" % (path, titles))
        if not d.get("uid") or not d.get("title"):
            errors.append("%s: dashboard needs a uid and a title" % path)
        for p in d.get("panels", []):
            if not p.get("targets") or not p.get("datasource"):
                errors.append("%s: panel %r has no datasource or query"
                              % (path, p.get("title")))
            for t in p.get("targets", []):
                for n in NAME.findall(t.get("expr", "")):
                    used.setdefault(n, "%s (%s)" % (path, p.get("title")))
            check_overrides(path, p, errors)
            check_links(path, p, boards, errors)
        for v in d.get("templating", {}).get("list", []):
            for n in NAME.findall(str(v.get("query", ""))):
                used.setdefault(n, path)
    if not used:
        errors.append("no ibpulse metric found in the rules or dashboards")
    for n, where in sorted(used.items()):
        if n not in known:
            errors.append("%s uses %s, which docs/metrics.md does not list"
                          % (where, n))
    for e in errors:
        print("FAIL:", e)
    print("%d metric names checked, %d problems" % (len(used), len(errors)))
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
