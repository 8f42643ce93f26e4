#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The Kubernetes manifests, checked offline.

- deploy/kubernetes/generate.py --check: the configs, the PrometheusRule
  and the dashboards ConfigMap match etc/*.ini and grafana/;
- `kubectl kustomize` renders every overlay (Debian's kubectl 1.20 or a
  newer one: whichever is installed);
- deploy/kubernetes/validate/validate.mjs (node, pinned kubernetes-models
  from package-lock.json, installed with `npm ci` into WORK_DIR) validates
  every rendered object against its API schema and asserts what breaks a
  deployment: IPC_LOCK, the overlay's RDMA resource, /sys read-only, the
  host name from the node, the collector and exporter on one PVC;
- the rendered PrometheusRule passes `promtool check rules` and the alert
  unit tests of tests/grafana (alerts_test.yml run against it);
- the probe's RBAC is exactly the calls it makes (validate/probe-api-calls.json;
  the taint's only in the overlay that turns it on);
- the checks can fail: a rendering without IPC_LOCK, with /sys writable,
  with a string port or without the RDMA resource is rejected.

usage: test_kubernetes.py SOURCE_ROOT WORK_DIR
"""
import filecmp
import os
import re
import shutil
import subprocess
import sys

import yaml

OVERLAYS = {  # overlay: the RDMA resource its probe must request
    "aks-shared-device": "rdma/rdma_shared_device_a",
    "sriov": "rdma/ib",
    "roce-hostnetwork": "rdma/rdma_shared_device_a",
    "aks-shared-device-taint": "rdma/rdma_shared_device_a",
}
TAINT = {"aks-shared-device-taint"}  # overlays that grant the taint


class Failed(Exception):
    pass


def log(msg):
    print("test_kubernetes: " + msg, flush=True)


def run(cmd, check=True, cwd=None):
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       text=True, cwd=cwd)
    if check and p.returncode != 0:
        raise Failed("%s exited %d:\n%s%s" % (" ".join(cmd), p.returncode,
                                              p.stdout[-3000:], p.stderr[-3000:]))
    return p


def npm_ci(src, work):
    vdir = os.path.join(src, "deploy", "kubernetes", "validate")
    os.makedirs(work, exist_ok=True)
    lock = os.path.join(work, "package-lock.json")
    fresh = os.path.isdir(os.path.join(work, "node_modules")) and \
        os.path.exists(lock) and \
        filecmp.cmp(lock, os.path.join(vdir, "package-lock.json"), shallow=False)
    for f in ("package.json", "package-lock.json", "validate.mjs"):
        shutil.copyfile(os.path.join(vdir, f), os.path.join(work, f))
    if not fresh:
        run(["npm", "ci", "--no-audit", "--no-fund", "--loglevel=error"],
            cwd=work)
        log("npm ci: pinned validator installed in " + work)
    return os.path.join(work, "validate.mjs")


def render(src, overlay, out):
    p = run(["kubectl", "kustomize",
             os.path.join(src, "deploy", "kubernetes", "overlays", overlay)])
    with open(out, "w") as f:
        f.write(p.stdout)
    log("kubectl kustomize overlays/%s: %d objects" %
        (overlay, sum(1 for d in yaml.safe_load_all(p.stdout) if d)))


def promtool(src, work, rules, overlay):
    run(["promtool", "check", "rules", rules])
    with open(os.path.join(src, "tests", "grafana", "alerts_test.yml")) as f:
        test = f.read()
    test, n = re.subn(r"(?m)^rule_files:\n  - .*$",
                      "rule_files:\n  - %s" % rules, test)
    if n != 1:
        raise Failed("alerts_test.yml: no rule_files entry to point at %s" % rules)
    path = os.path.join(work, "alerts_test-%s.yml" % overlay)
    with open(path, "w") as f:
        f.write(test)
    run(["promtool", "test", "rules", path], cwd=work)
    log("ok: overlays/%s: PrometheusRule passes promtool check and "
        "tests/grafana/alerts_test.yml" % overlay)


def mutate(rendered, out, change):
    docs = [d for d in yaml.safe_load_all(open(rendered)) if d]
    for d in docs:
        if d["kind"] == "DaemonSet":
            change(d["spec"]["template"]["spec"]["containers"][0])
    with open(out, "w") as f:
        yaml.safe_dump_all(docs, f)


def negative(validator, work, rendered):
    def no_ipc(c):
        c["securityContext"]["capabilities"]["add"] = ["NET_RAW"]

    def sys_rw(c):
        for m in c["volumeMounts"]:
            if m["mountPath"] == "/host/sys":
                m["readOnly"] = False

    def str_port(c):
        c["ports"][0]["containerPort"] = "18515"

    def no_rdma(c):
        for k in list(c["resources"]["limits"]):
            if k.startswith("rdma/"):
                del c["resources"]["limits"][k]

    def pod_host(c):
        for e in c["env"]:
            if e["name"] == "NODE_NAME":
                e["valueFrom"]["fieldRef"]["fieldPath"] = "metadata.name"

    for name, change in (("without IPC_LOCK", no_ipc), ("with /sys writable", sys_rw),
                         ("with a string containerPort", str_port),
                         ("without the RDMA resource", no_rdma),
                         ("naming itself after the pod", pod_host)):
        bad = os.path.join(work, "bad.yaml")
        mutate(rendered, bad, change)
        p = run(["node", validator, bad], check=False)
        if p.returncode == 0:
            raise Failed("validate.mjs accepted a probe " + name)
        log("ok: a probe with %s is rejected (%s)" %
            (name, p.stderr.strip().splitlines()[-1][:120]))


def negative_rbac(validator, src, work, rendered):
    """RBAC beyond the probe's calls, or the taint's without --taint, is
    rejected."""
    calls = os.path.join(src, "deploy", "kubernetes", "validate",
                         "probe-api-calls.json")
    for what, verb, res in (("list nodes", "list", "nodes"),
                            ("patch nodes without the taint", "patch", "nodes")):
        docs = [d for d in yaml.safe_load_all(open(rendered)) if d]
        for d in docs:
            if d["kind"] == "ClusterRole" and d["metadata"]["name"] == \
                    "ibpulse-probe-node-condition":
                d["rules"].append({"apiGroups": [""], "resources": [res],
                                   "verbs": [verb]})
        bad = os.path.join(work, "bad-rbac.yaml")
        with open(bad, "w") as f:
            yaml.safe_dump_all(docs, f)
        p = run(["node", validator, "--rbac", calls, bad], check=False)
        if p.returncode == 0:
            raise Failed("validate.mjs accepted RBAC with " + what)
        log("ok: RBAC with %s is rejected (%s)" %
            (what, p.stderr.strip().splitlines()[-1][:120]))


def main():
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    src, work = (os.path.abspath(a) for a in sys.argv[1:])
    try:
        for tool in ("kubectl", "node", "npm", "promtool"):
            if not shutil.which(tool):
                raise Failed("%s is missing: bash scripts/install-deps.sh" % tool)
        log(run(["kubectl", "version", "--client"]).stdout.strip().splitlines()[0])
        run([sys.executable, os.path.join(src, "deploy", "kubernetes",
                                          "generate.py"), "--check"])
        log("ok: generated files match etc/*.ini and grafana/")
        validator = npm_ci(src, work)
        for overlay, rdma in OVERLAYS.items():
            rendered = os.path.join(work, overlay + ".yaml")
            rules = os.path.join(work, overlay + ".rules.yml")
            render(src, overlay, rendered)
            calls = os.path.join(src, "deploy", "kubernetes", "validate",
                                 "probe-api-calls.json")
            p = run(["node", validator, "--rdma", rdma, "--rules-out", rules,
                     "--rbac", calls] + (["--taint"] if overlay in TAINT else [])
                    + [rendered])
            log("ok: overlays/%s: %d checks" % (overlay, p.stdout.count("ok:")))
            ds = [d for d in yaml.safe_load_all(open(rendered))
                  if d and d["kind"] == "DaemonSet"][0]["spec"]["template"]["spec"]
            want = overlay == "roce-hostnetwork"
            env = {e["name"]: e.get("value") for e in ds["containers"][0]["env"]}
            if env.get("IBPULSE_KUBE_TAINT") != ("true" if overlay in TAINT else "false"):
                raise Failed("overlays/%s: IBPULSE_KUBE_TAINT is %s" %
                             (overlay, env.get("IBPULSE_KUBE_TAINT")))
            if bool(ds.get("hostNetwork")) != want:
                raise Failed("overlays/%s: hostNetwork should be %s" % (overlay, want))
            log("ok: overlays/%s: hostNetwork %s" % (overlay, want))
            promtool(src, work, rules, overlay)
        negative(validator, work, os.path.join(work, "aks-shared-device.yaml"))
        negative_rbac(validator, src, work, os.path.join(work, "aks-shared-device.yaml"))
    except (Failed, OSError, yaml.YAMLError) as e:
        print("test_kubernetes: FAIL: %s" % e, file=sys.stderr)
        return 1
    print("test_kubernetes: all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
