// SPDX-License-Identifier: MIT
/*
 * Checks what `kubectl kustomize OVERLAY` rendered, offline: every object
 * validates against its API schema (kubernetes-models for the Kubernetes
 * API, @kubernetes-models/prometheus-operator for ServiceMonitor and
 * PrometheusRule; versions pinned in package-lock.json), and the things
 * that break an ibpulse deployment hold: the probe has CAP_IPC_LOCK, asks
 * for the RDMA resource, mounts the host's /sys read-only and reads it
 * there, and takes its host name from the node (downward API); the
 * collector and exporter share one PVC in one single-replica pod.
 *
 * The probe's RBAC is exactly the API calls it makes (--rbac FILE, the
 * list in probe-api-calls.json: its "condition" calls, and its "taint"
 * calls with --taint), bound to its own ServiceAccount and no other.
 *
 * usage: node validate.mjs [--rdma RESOURCE] [--rules-out FILE]
 *                          [--rbac CALLS.json [--taint]] RENDERED.yaml
 *        node validate.mjs --objects FILE.json
 *   --rdma       the resource the probe must request (default: any rdma/*)
 *   --rules-out  write the PrometheusRule's spec (a Prometheus rules file)
 *   --objects    only validate each object of a JSON array against its
 *                API schema (the Node bodies the probe's calls produce)
 * Prints one "ok:" line per check; exits 1 on the first failure.
 */
import fs from "node:fs";
import yaml from "js-yaml";

const MODELS = {
  "v1": "kubernetes-models/v1/",
  "apps/v1": "kubernetes-models/apps/v1/",
  "rbac.authorization.k8s.io/v1": "kubernetes-models/rbac.authorization.k8s.io/v1/",
  "monitoring.coreos.com/v1": "@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1/",
};

function fail(msg) {
  console.error("validate: FAIL: " + msg);
  process.exit(1);
}

function ok(cond, msg) {
  if (!cond)
    fail(msg);
  console.log("ok: " + msg);
}

async function validate(obj) {
  const prefix = MODELS[obj.apiVersion];
  if (!prefix)
    fail(`${obj.kind} ${obj.metadata.name}: no schema for apiVersion ${obj.apiVersion}`);
  const mod = await import(prefix + obj.kind);
  const Model = mod[obj.kind] || mod.default;
  try {
    new Model(obj).validate();
  } catch (e) {
    fail(`${obj.kind} ${obj.metadata.name}: ${e.message}`);
  }
}

function find(docs, kind, name) {
  const o = docs.find((d) => d.kind === kind && d.metadata.name === name);
  if (!o)
    fail(`no ${kind} ${name}`);
  return o;
}

function checkProbe(docs, rdma) {
  const ds = find(docs, "DaemonSet", "ibpulse-probe");
  const pod = ds.spec.template.spec;
  const c = pod.containers.find((x) => x.name === "probe");
  if (!c)
    fail("DaemonSet ibpulse-probe has no container named probe");
  const caps = (c.securityContext || {}).capabilities || {};
  ok((caps.add || []).includes("IPC_LOCK"), "probe: capability IPC_LOCK added");
  const lim = (c.resources || {}).limits || {};
  const want = rdma ? [rdma] : Object.keys(lim).filter((k) => k.startsWith("rdma/"));
  ok(want.length === 1 && String(lim[want[0]]) === "1",
     `probe: RDMA resource ${want[0] || "rdma/*"} requested (limits: ${JSON.stringify(lim)})`);
  const sys = (pod.volumes || []).find((v) => v.hostPath && v.hostPath.path === "/sys");
  const mnt = sys && (c.volumeMounts || []).find((m) => m.name === sys.name);
  ok(mnt && mnt.readOnly === true, `probe: the host's /sys mounted read-only (${mnt && mnt.mountPath})`);
  const args = (c.command || []).concat(c.args || []);
  const at = args.indexOf("--sysfs-root");
  ok(at >= 0 && args[at + 1] === mnt.mountPath, "probe: --sysfs-root is that mount");
  const env = (c.env || []).find((e) => e.name === "NODE_NAME");
  ok(env && env.valueFrom && env.valueFrom.fieldRef &&
     env.valueFrom.fieldRef.fieldPath === "spec.nodeName",
     "probe: NODE_NAME from the downward API (spec.nodeName)");
  const h = args.indexOf("--host");
  ok(h >= 0 && args[h + 1] === "$(NODE_NAME)", "probe: --host $(NODE_NAME)");
  const ports = (c.ports || []).map((p) => p.containerPort);
  ok(ports.includes(18515), "probe: responder port 18515 declared");
  const live = c.livenessProbe && c.livenessProbe.httpGet;
  ok(live && live.path === "/metrics", "probe: liveness on its /metrics");
  ok((pod.tolerations || []).some((t) => t.key === "nvidia.com/gpu"),
     "probe: tolerates GPU nodes' nvidia.com/gpu taint");
  return pod;
}

/* The rules bound to the probe's ServiceAccount, as "verb resource". */
function checkRbac(docs, pod, callsFile, taint) {
  const calls = JSON.parse(fs.readFileSync(callsFile, "utf8"));
  const want = calls.condition.concat(taint ? calls.taint : [])
    .map(([verb, res]) => `${verb} ${res}`).sort();
  const sa = pod.serviceAccountName;
  ok(sa && find(docs, "ServiceAccount", sa) && pod.automountServiceAccountToken === true,
     `probe: its own ServiceAccount ${sa}, token mounted`);
  const bound = docs.filter((d) => d.kind === "ClusterRoleBinding" || d.kind === "RoleBinding")
    .filter((b) => (b.subjects || []).some((s) => s.kind === "ServiceAccount" && s.name === sa));
  const got = new Set();
  for (const b of bound) {
    ok(b.subjects.length === 1 && b.subjects[0].namespace === "ibpulse",
       `${b.kind} ${b.metadata.name}: binds ${sa} of namespace ibpulse only`);
    const role = find(docs, b.roleRef.kind, b.roleRef.name);
    for (const r of role.rules || []) {
      if ((r.apiGroups || []).some((g) => g !== "") || r.nonResourceURLs)
        fail(`${role.kind} ${role.metadata.name}: grants beyond the core API group`);
      for (const res of r.resources || [])
        for (const verb of r.verbs || [])
          got.add(`${verb} ${res}`);
    }
  }
  const have = [...got].sort();
  ok(JSON.stringify(have) === JSON.stringify(want),
     `probe: RBAC grants exactly the calls it makes (${want.join(", ")}; granted: ${have.join(", ")})`);
}

function checkCollector(docs) {
  const dep = find(docs, "Deployment", "ibpulse-collector");
  ok(dep.spec.replicas === 1 && dep.spec.strategy.type === "Recreate",
     "collector: one replica, Recreate (one writer per database)");
  const pod = dep.spec.template.spec;
  const pvc = pod.volumes.find((v) => v.persistentVolumeClaim);
  ok(pvc, "collector: a PersistentVolumeClaim volume");
  const users = pod.containers.filter((c) =>
    (c.volumeMounts || []).some((m) => m.name === pvc.name));
  ok(users.map((c) => c.name).sort().join(",") === "collector,exporter",
     "collector and exporter share the PVC in one pod (SQLite WAL: one host)");
  ok(pod.securityContext.runAsNonRoot === true && pod.securityContext.runAsUser === 9470,
     "collector pod: non-root (9470)");
}

async function main() {
  const argv = process.argv.slice(2);
  let rdma = null, rulesOut = null, file = null, rbac = null, taint = false,
    objects = null;
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === "--rdma")
      rdma = argv[++i];
    else if (argv[i] === "--rules-out")
      rulesOut = argv[++i];
    else if (argv[i] === "--rbac")
      rbac = argv[++i];
    else if (argv[i] === "--taint")
      taint = true;
    else if (argv[i] === "--objects")
      objects = argv[++i];
    else if (!file)
      file = argv[i];
    else
      fail("unexpected argument " + argv[i]);
  }
  if (objects) {
    const list = JSON.parse(fs.readFileSync(objects, "utf8"));
    for (const d of list)
      await validate(d);
    ok(list.length > 0, `${list.length} objects valid against their API schemas`);
    return;
  }
  if (!file)
    fail("usage: node validate.mjs [--rdma RESOURCE] [--rules-out FILE] [--rbac FILE [--taint]] RENDERED.yaml");
  const docs = yaml.loadAll(fs.readFileSync(file, "utf8")).filter((d) => d);
  for (const d of docs)
    await validate(d);
  ok(true, `${docs.length} objects valid against their API schemas`);
  const pod = checkProbe(docs, rdma);
  if (rbac)
    checkRbac(docs, pod, rbac, taint);
  checkCollector(docs);
  const cm = docs.find((d) => d.kind === "ConfigMap" &&
                       (d.metadata.labels || {}).grafana_dashboard === "1");
  ok(cm && Object.keys(cm.data).length >= 2, "a dashboards ConfigMap for Grafana's sidecar");
  const rule = find(docs, "PrometheusRule", "ibpulse");
  ok(rule.spec.groups.length > 0, "a PrometheusRule with the alert rules");
  if (rulesOut)
    fs.writeFileSync(rulesOut, yaml.dump({ groups: rule.spec.groups }));
  void pod;
}

main().catch((e) => fail(e.stack || String(e)));
