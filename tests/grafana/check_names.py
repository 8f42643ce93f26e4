# SPDX-License-Identifier: MIT
"""Every metric the dashboards and alert rules use is one the exporter
documents in docs/metrics.md (whose list the exporter's own tests hold to
what /metrics really serves), and the dashboard JSON is well-formed
Grafana: unique panel ids, a datasource and a query on every panel.

usage: check_names.py METRICS_MD RULES_YML DASHBOARD_JSON...
"""
import json
import re
import sys

NAME = re.compile(r"\bibpulse_[a-z0-9_]+\b")


def documented(path):
    names = set(NAME.findall(open(path).read()))
    # A counter family documented as foo_total also serves foo_total only;
    # nothing else is derived, so the set is used as it is.
    return names


def main():
    md, rules, dashboards = sys.argv[1], sys.argv[2], sys.argv[3:]
    known = documented(md)
    errors = []
    used = {}
    for n in NAME.findall(open(rules).read()):
        used.setdefault(n, rules)
    for path in dashboards:
        d = json.load(open(path))
        ids = [p.get("id") for p in d.get("panels", [])]
        if len(ids) != len(set(ids)) or None in ids:
            errors.append("%s: panel ids missing or repeated: %s" % (path, ids))
        if not d.get("uid") or not d.get("title"):
            errors.append("%s: dashboard needs a uid and a title" % path)
        for p in d.get("panels", []):
            if not p.get("targets") or not p.get("datasource"):
                errors.append("%s: panel %r has no datasource or query"
                              % (path, p.get("title")))
            for t in p.get("targets", []):
                for n in NAME.findall(t.get("expr", "")):
                    used.setdefault(n, "%s (%s)" % (path, p.get("title")))
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
