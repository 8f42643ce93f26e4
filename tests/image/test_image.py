#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The OCI image, run with podman (needs root).

Builds the image with scripts/image.sh (Debian packages only), checks its
user (9470, not root) and size, then runs three containers from it on the
host's loopback the way deploy/kubernetes runs them, with the configs of
deploy/kubernetes/base/config: the collector (uid 9470) with its database
on a volume and the enrolment secret; the probe as the DaemonSet's
container (root with only CAP_IPC_LOCK, read-only root file system, the
sysfs-mlx5 fixture read-only at /host/sys, a state directory) running
`report --once`: it enrols, keeps its token and pushes; the exporter
(uid 9470) reading the same volume: /metrics must show the fixture's host
and ports. A second probe container with the token kept pushes again
without enrolling. Removes its containers and image.

podman runs with runc and with modest --ulimit values (nofile at most
65536, nproc 4096, within this process's hard limits): podman's defaults
(nofile 1048576, nproc 4194304) cannot be set without CAP_SYS_RESOURCE,
which a sandboxed CI machine may lack (here nproc 65536 failed too),
and crun 1.8 refuses hybrid cgroup hierarchies (v1 controllers plus a
cgroup2 mount with a controller) where runc runs.

usage: test_image.py SOURCE_ROOT WORK_DIR FIXTURES_DIR
"""
import os
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request

MAX_IMAGE_BYTES = 120 * 1024 * 1024  # 79 MB measured; perl or systemd creeping in fails
HOST = "imgtest"
SECRET = "image-test-enrol-secret-0123456789"


class Failed(Exception):
    pass


def log(msg):
    print("test_image: " + msg, flush=True)


def run(cmd, check=True, timeout=900):
    """CMD in a session of its own: on timeout its whole process group is
    ended, not only CMD (a timed-out image.sh once left mmdebstrap
    running)."""
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                         text=True, start_new_session=True)
    try:
        out, _ = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        for sig in (signal.SIGTERM, signal.SIGKILL):
            try:
                os.killpg(p.pid, sig)
            except ProcessLookupError:
                break
            try:
                p.wait(timeout=10)
                break
            except subprocess.TimeoutExpired:
                pass
        p.communicate()
        raise Failed("%s: no end after %d s; stopped it and its children"
                     % (" ".join(cmd), timeout))
    p = subprocess.CompletedProcess(cmd, p.returncode, out)
    if check and p.returncode != 0:
        raise Failed("%s exited %d:\n%s" % (" ".join(cmd), p.returncode,
                                            p.stdout[-3000:]))
    return p


def expect(cond, what):
    if not cond:
        raise Failed(what)
    log("ok: " + what)


def podman_flags():
    flags = []
    if shutil.which("runc"):
        flags += ["--runtime", "runc"]
    for name, res, cap in (("nofile", resource.RLIMIT_NOFILE, 65536),
                           ("nproc", resource.RLIMIT_NPROC, 4096)):
        hard = resource.getrlimit(res)[1]
        n = cap if hard == resource.RLIM_INFINITY else min(hard, cap)
        flags += ["--ulimit", "%s=%d:%d" % (name, n, n)]
    return flags + ["--network", "host"]


def wait_file(path, what, ctr):
    for _ in range(300):
        if os.path.exists(path) and open(path).read().strip():
            return int(open(path).read())
        st = run(["podman", "inspect", "-f", "{{.State.Running}}", ctr],
                 check=False).stdout.strip()
        if st == "false":
            raise Failed("%s exited:\n%s" % (what, run(
                ["podman", "logs", ctr], check=False).stdout[-2000:]))
        time.sleep(0.1)
    raise Failed("%s wrote no port file" % what)


def main():
    if len(sys.argv) != 4:
        print(__doc__, file=sys.stderr)
        return 2
    src, work, fixtures = (os.path.abspath(a) for a in sys.argv[1:])
    if os.geteuid() != 0:
        print("test_image: needs root (mmdebstrap, rootful podman)",
              file=sys.stderr)
        return 1
    tag = "localhost/ibpulse-test:%d" % os.getpid()
    names = ["ibpulse-test-%s-%d" % (n, os.getpid())
             for n in ("collector", "probe", "exporter")]
    tmp = tempfile.mkdtemp(prefix="ibpulse-image-")
    os.makedirs(work, exist_ok=True)
    t0 = time.monotonic()
    try:
        run(["bash", os.path.join(src, "scripts", "image.sh"), "--out", work,
             "--tag", tag], timeout=1100)
        log("scripts/image.sh: %.0f s" % (time.monotonic() - t0))
        user = run(["podman", "image", "inspect", "-f", "{{.Config.User}}",
                    tag]).stdout.strip()
        expect(user == "9470:9470", "the image runs as 9470:9470 (%s)" % user)
        size = int(run(["podman", "image", "inspect", "-f", "{{.Size}}",
                        tag]).stdout)
        expect(size < MAX_IMAGE_BYTES, "image size %.1f MB < %d MB"
               % (size / 1e6, MAX_IMAGE_BYTES >> 20))
        flags = podman_flags()
        out = run(["podman", "run", "--rm"] + flags +
                  [tag, "ibpulse-probe", "--version"]).stdout
        expect("0.1.0" in out, "podman runs the image (%s)" % out.strip())

        data = os.path.join(tmp, "data")  # the PVC's stand-in
        state = os.path.join(tmp, "probe-state")  # the node's hostPath
        enrol = os.path.join(tmp, "enrol")  # the ibpulse-enrol Secret
        for d in (data, state, enrol):
            os.mkdir(d)
        os.chown(data, 9470, 9470)
        os.chmod(tmp, 0o755)
        secret = os.path.join(enrol, "secret")
        with open(secret, "w") as f:
            f.write(SECRET + "\n")
        os.chown(secret, 0, 9470)  # defaultMode 0440 with fsGroup 9470
        os.chmod(secret, 0o440)
        os.chmod(enrol, 0o755)
        kconf = os.path.join(src, "deploy", "kubernetes", "base", "config")

        run(["podman", "run", "-d", "--name", names[0]] + flags +
            ["-v", kconf + "/collector.ini:/etc/ibpulse/collector.ini:ro",
             "-v", enrol + ":/etc/ibpulse/enrol:ro",
             "-v", data + ":/var/lib/ibpulse", tag,
             "ibpulse-collector", "serve", "--config",
             "/etc/ibpulse/collector.ini", "--listen", "127.0.0.1",
             "--port", "0", "--port-file", "/var/lib/ibpulse/collector.port"])
        cport = wait_file(os.path.join(data, "collector.port"), "collector",
                          names[0])
        st = os.stat(os.path.join(data, "ibpulse.db"))
        expect(st.st_uid == 9470, "the collector (non-root) created its "
               "database on the volume, port %d" % cport)

        probe = flags + [
            "--user", "0:0", "--cap-drop", "ALL", "--cap-add", "IPC_LOCK",
            "--read-only", "--security-opt", "no-new-privileges",
            "-v", kconf + "/probe.ini:/etc/ibpulse/probe.ini:ro",
            "-v", fixtures + "/sysfs-mlx5:/host/sys:ro",
            "-v", enrol + ":/etc/ibpulse/enrol:ro",
            "-v", state + ":/var/lib/ibpulse-probe", tag,
            "ibpulse-probe", "report", "--once", "--config",
            "/etc/ibpulse/probe.ini", "--host", HOST, "--sysfs-root",
            "/host/sys", "--collector",
            "http://127.0.0.1:%d/api/v1/report" % cport]
        out = run(["podman", "run", "--rm", "--name", names[1]] + probe).stdout
        log("probe: " + out.strip().replace("\n", " | ")[-300:])
        tok = os.path.join(state, "token")
        expect("enrolled " + HOST in out and os.path.exists(tok) and
               (os.stat(tok).st_mode & 0o777) == 0o600,
               "the probe container enrolled and kept its token (0600) in "
               "its state directory")
        with open(os.path.join(data, "enrolled")) as f:
            lines = f.read().split()
        expect(lines[0] == HOST and len(lines) == 2,
               "the collector recorded the enrolment (host and digest)")
        out = run(["podman", "run", "--rm", "--name", names[1]] + probe).stdout
        expect("enrolled" not in out and "pushed" in out,
               "a restarted probe pushes with the kept token")

        run(["podman", "run", "-d", "--name", names[2]] + flags +
            ["-v", kconf + "/exporter.ini:/etc/ibpulse/exporter.ini:ro",
             "-v", data + ":/var/lib/ibpulse", tag,
             "ibpulse-exporter", "--config", "/etc/ibpulse/exporter.ini",
             "--listen", "127.0.0.1", "--port", "0",
             "--port-file", "/var/lib/ibpulse/exporter.port"])
        eport = wait_file(os.path.join(data, "exporter.port"), "exporter",
                          names[2])
        body = urllib.request.urlopen("http://127.0.0.1:%d/metrics" % eport,
                                      timeout=30).read().decode()
        expect('ibpulse_host_up{host="%s"} 1' % HOST in body,
               "the exporter's /metrics has the probe's host up")
        ports = [ln for ln in body.splitlines()
                 if ln.startswith("ibpulse_port_state") and HOST in ln]
        expect(len(ports) >= 1, "and its ports (%d port state series)"
               % len(ports))
        run(["podman", "stop", "-t", "30", names[0], names[2]])
        for n in (names[0], names[2]):
            code = run(["podman", "inspect", "-f", "{{.State.ExitCode}}",
                        n]).stdout.strip()
            expect(code == "0", "%s stops cleanly on SIGTERM" % n)
    except (Failed, subprocess.SubprocessError, OSError) as e:
        print("test_image: FAIL: %s" % e, file=sys.stderr)
        return 1
    finally:
        run(["podman", "rm", "-f"] + names, check=False)
        run(["podman", "rmi", "-f", tag], check=False)
        shutil.rmtree(tmp, ignore_errors=True)
        log("%.0f s" % (time.monotonic() - t0))
    print("test_image: all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
