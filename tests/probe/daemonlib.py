# SPDX-License-Identifier: MIT
"""What the daemon's integration tests share: a free loopback port, and a
unittest mixin that polls for a condition against a running
`ibpulse-probe daemon` (failing with its log when it exits or time runs
out) and speaks to its control socket.
The test sets self.proc, self.log (a w+ file of its stderr) and self.sock.
"""
import json
import socket
import subprocess
import time

PROBE = None  # the binary, set by the test's main


def free_port():
    """A TCP port on loopback that was free a moment ago."""
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


class DaemonMixin:
    def stop_daemon(self):
        """For tearDown: kill the daemon if it still runs, close its log."""
        if getattr(self, "proc", None) and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        if getattr(self, "log", None):
            self.log.close()

    def daemon_log(self):
        self.log.flush()
        self.log.seek(0)
        return self.log.read()

    def wait_for(self, cond, what, timeout=60):
        deadline = time.monotonic() + timeout
        while not cond():
            if self.proc.poll() is not None:
                self.fail("daemon exited waiting for %s:\n%s"
                          % (what, self.daemon_log()))
            if time.monotonic() > deadline:
                self.fail("timed out waiting for %s:\n%s"
                          % (what, self.daemon_log()))
            time.sleep(0.05)

    def wait_control(self):
        """Until the daemon accepts on its control socket: the file exists
        from bind(), a moment before listen(), and a command sent in that
        moment is refused."""
        def accepts():
            s = socket.socket(socket.AF_UNIX)
            try:
                s.connect(self.sock)
                return True
            except OSError:
                return False
            finally:
                s.close()
        self.wait_for(accepts, "the control socket")

    def ctl(self, cmd):
        out = subprocess.run([PROBE, cmd, "--socket", self.sock],
                             capture_output=True, text=True, timeout=30)
        self.assertEqual(out.returncode, 0, out.stderr)
        return json.loads(out.stdout)
