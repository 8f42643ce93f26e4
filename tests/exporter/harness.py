# SPDX-License-Identifier: MIT
"""Helpers for the exporter's integration and end-to-end tests (stdlib only).

Daemons are started on ephemeral loopback ports with their output in a
temporary directory, waited for by polling (never by sleeping a fixed
time), and always ended, by their own process ids, when the test leaves.
"""
import contextlib
import gzip
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request

# What Prometheus 2.42 sends when it scrapes.
PROMETHEUS_ACCEPT = ("application/openmetrics-text;version=1.0.0,"
                     "application/openmetrics-text;version=0.0.1;q=0.75,"
                     "text/plain;version=0.0.4;q=0.5,*/*;q=0.1")


class Failure(Exception):
    pass


def check(cond, msg):
    if not cond:
        raise Failure(msg)


def free_port():
    """A port that was free a moment ago (for programs that cannot bind 0)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for(what, fn, timeout=60.0, interval=0.1):
    """Poll fn() until it returns a true value; fail after timeout."""
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        try:
            v = fn()
            if v:
                return v
        except (OSError, ValueError, urllib.error.URLError) as e:
            last = e
        time.sleep(interval)
    raise Failure("timed out waiting for %s (last error: %s)" % (what, last))


class Procs:
    """Processes started by a test; stop_all() ends each by its pid."""

    def __init__(self, tmp):
        self.tmp = tmp
        self.procs = []

    def start(self, name, argv, env=None):
        log = open(os.path.join(self.tmp, name + ".log"), "wb")
        p = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT,
                             stdin=subprocess.DEVNULL, env=env)
        p.name = name
        p.logpath = log.name
        log.close()
        self.procs.append(p)
        return p

    def log(self, p):
        with open(p.logpath, "rb") as f:
            return f.read().decode("utf-8", "replace")

    def check_alive(self, p):
        if p.poll() is not None:
            raise Failure("%s exited with %s:\n%s" % (p.name, p.returncode, self.log(p)))

    def stop(self, p):
        if p.poll() is None:
            p.terminate()
            try:
                p.wait(timeout=15)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()

    def stop_clean(self, p):
        """Stop p with SIGTERM; fail unless it exits 0 with no sanitizer report."""
        self.stop(p)
        log = self.log(p)
        for bad in ("runtime error:", "AddressSanitizer", "LeakSanitizer"):
            if bad in log:
                raise Failure("%s: sanitizer report:\n%s" % (p.name, log[-4000:]))
        if p.returncode != 0:
            raise Failure("%s exited with %s on SIGTERM:\n%s" % (p.name, p.returncode, log[-2000:]))

    def stop_all(self):
        for p in reversed(self.procs):
            self.stop(p)

    def dump_logs(self):
        for p in self.procs:
            sys.stderr.write("---- %s log ----\n%s\n" % (p.name, self.log(p)[-4000:]))


@contextlib.contextmanager
def session(prefix):
    """A temporary folder and the processes a test starts in it, as
    (procs, tmp). On the way out every process is stopped and the folder
    removed; when the test failed, the processes' logs are printed first."""
    tmp = tempfile.mkdtemp(prefix=prefix)
    procs = Procs(tmp)
    try:
        yield procs, tmp
    except BaseException:
        procs.dump_logs()
        raise
    finally:
        procs.stop_all()
        shutil.rmtree(tmp, ignore_errors=True)


def missing(*tools):
    """The first of @tools not on PATH (after printing a FAIL line), or
    None when all are there. A missing tool fails the test, never skips
    it: the test command installs them (scripts/install-deps.sh)."""
    for tool in tools:
        if not shutil.which(tool):
            print("FAIL: %s not found: bash scripts/install-deps.sh installs it "
                  "(Debian: apt-get install prometheus)" % tool)
            return tool
    return None


def read_port_file(path, proc, procs):
    def ready():
        procs.check_alive(proc)
        with open(path) as f:
            text = f.read().strip()
        return int(text) if text else None
    return wait_for("port file " + path, ready, timeout=30)


def http(url, headers=None, method="GET", data=None, timeout=30):
    """(status, headers dict (lower-case keys), body bytes); no raise on 4xx/5xx."""
    req = urllib.request.Request(url, headers=headers or {}, method=method, data=data)
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            return r.status, {k.lower(): v for k, v in r.headers.items()}, r.read()
    except urllib.error.HTTPError as e:
        return e.code, {k.lower(): v for k, v in e.headers.items()}, e.read()


def metrics(base, accept=None, gzip_ok=False, query=""):
    headers = {}
    if accept:
        headers["Accept"] = accept
    if gzip_ok:
        headers["Accept-Encoding"] = "gzip"
    status, hdrs, body = http(base + "/metrics" + query, headers)
    if hdrs.get("content-encoding") == "gzip":
        body = gzip.decompress(body)
    return status, hdrs, body.decode("utf-8")


def parse_samples(text):
    """{(name, frozenset(labels.items())): value} from exposition text."""
    out = {}
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        name, labels, value = _parse_line(line)
        out[(name, frozenset(labels.items()))] = value
    return out


def _parse_line(line):
    i = 0
    while i < len(line) and line[i] not in "{ ":
        i += 1
    name = line[:i]
    labels = {}
    if i < len(line) and line[i] == "{":
        i += 1
        while line[i] != "}":
            eq = line.index("=", i)
            key = line[i:eq]
            i = eq + 2  # past ="
            val = []
            while line[i] != '"':
                if line[i] == "\\":
                    nxt = line[i + 1]
                    val.append({"n": "\n", "\\": "\\", '"': '"'}[nxt])
                    i += 2
                else:
                    val.append(line[i])
                    i += 1
            labels[key] = "".join(val)
            i += 1
            if line[i] == ",":
                i += 1
        i += 1
    value = float(line[i:].strip().split(" ")[0])
    return name, labels, value


def find(samples, name, **labels):
    """Values of samples called name whose labels include labels."""
    want = set(labels.items())
    return [v for (n, ls), v in samples.items() if n == name and want <= set(ls)]


def promtool_check(promtool, text):
    """(ok, output) of `promtool check metrics` on text."""
    r = subprocess.run([promtool, "check", "metrics"], input=text.encode(),
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=60)
    return r.returncode == 0 and not r.stdout.strip(), r.stdout.decode()


def start_prometheus(procs, prometheus, tmp, jobs):
    """Start Prometheus scraping jobs [(name, "127.0.0.1:port", params)]
    every second; returns its base URL once it is ready."""
    port = free_port()
    lines = ["global:", "  scrape_interval: 1s", "  scrape_timeout: 1s",
             "scrape_configs:"]
    for name, target, params in jobs:
        lines += ["  - job_name: %s" % json.dumps(name),
                  "    static_configs:",
                  "      - targets: [%s]" % json.dumps(target)]
        if params:
            lines.append("    params:")
            for k, v in params.items():
                lines.append("      %s: [%s]" % (k, json.dumps(str(v))))
    cfg = os.path.join(tmp, "prometheus.yml")
    with open(cfg, "w") as f:
        f.write("\n".join(lines) + "\n")
    p = procs.start("prometheus", [
        prometheus, "--config.file=" + cfg,
        "--storage.tsdb.path=" + os.path.join(tmp, "tsdb"),
        "--web.listen-address=127.0.0.1:%d" % port,
        "--log.level=warn"])
    base = "http://127.0.0.1:%d" % port

    def ready():
        procs.check_alive(p)
        return http(base + "/-/ready", timeout=5)[0] == 200
    wait_for("prometheus ready", ready, timeout=90)
    return base


def prom_query(base, expr):
    """The result vector of an instant query."""
    url = base + "/api/v1/query?" + urllib.parse.urlencode({"query": expr})
    status, _, body = http(url, timeout=10)
    if status != 200:
        raise ValueError("query %s: HTTP %d %s" % (expr, status, body[:200]))
    return json.loads(body)["data"]["result"]


def prom_wait_value(base, expr, want, timeout=60):
    """Poll until expr returns exactly one series with value want."""
    def ok():
        r = prom_query(base, expr)
        return r if len(r) == 1 and float(r[0]["value"][1]) == want else None
    return wait_for("prometheus: %s == %s" % (expr, want), ok, timeout=timeout, interval=0.5)


def run(main):
    """Run main() and turn Failure into exit 1."""
    try:
        rc = main()
    except Failure as e:
        sys.stderr.write("FAIL: %s\n" % e)
        rc = 1
    sys.exit(rc or 0)


# ---- hostile clients (tests/*/test_hostile.py) ----

def raw(port, data, host="127.0.0.1", src=None, timeout=3.0):
    """Send @data on a new connection and read until the peer closes or
    @timeout passes: (bytes read, closed by the peer, seconds)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    s = socket.socket(family, socket.SOCK_STREAM)
    s.settimeout(timeout)
    if src:
        s.bind((src, 0))
    t0 = time.monotonic()
    got, closed = b"", False
    try:
        s.connect((host, port))
        s.sendall(data)
        while time.monotonic() - t0 < timeout:
            chunk = s.recv(65536)
            if not chunk:
                closed = True
                break
            got += chunk
    except (socket.timeout, TimeoutError):
        pass
    except (ConnectionResetError, BrokenPipeError):
        closed = True
    finally:
        s.close()
    return got, closed, time.monotonic() - t0


def statuses(answer):
    """The status codes of every HTTP response in @answer, in order."""
    out = []
    for line in answer.split(b"\r\n"):
        if line.startswith(b"HTTP/1."):
            parts = line.split(b" ")
            if len(parts) > 1 and parts[1].isdigit():
                out.append(int(parts[1]))
    return out


def gate_cases(method, path, headers=b"", body=b""):
    """Requests the shared request gate must answer 400 and close, as
    (name, bytes): RFC 9112's framing ambiguities, HTTP/1.1 without Host,
    NUL bytes in header values. @headers (CRLF-terminated lines) go into
    each; the smuggled second request is a GET of /nope."""
    start = b"%s %s HTTP/1.1\r\n" % (method, path)
    host = b"Host: test\r\n"
    smuggled = b"GET /nope HTTP/1.1\r\nHost: test\r\n\r\n"
    n = len(body)
    return [
        ("duplicate Content-Length", start + host + headers +
         b"Content-Length: %d\r\nContent-Length: %d\r\n\r\n" % (n, n + len(smuggled)) +
         body + smuggled),
        ("Content-Length with chunked", start + host + headers +
         b"Content-Length: %d\r\nTransfer-Encoding: chunked\r\n\r\n" % (n + 5) +
         b"%x\r\n" % n + body + b"\r\n0\r\n\r\n" if n else
         start + host + headers +
         b"Content-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n"),
        ("unknown Transfer-Encoding", start + host + headers +
         b"Transfer-Encoding: gzip\r\n\r\n" + body),
        ("HTTP/1.1 without Host", start + headers +
         b"Content-Length: %d\r\n\r\n" % n + body),
        ("two Host headers", start + host + b"Host: other\r\n" + headers +
         b"Content-Length: %d\r\n\r\n" % n + body),
        ("NUL in a header value", start + host + b"X-Note: a\x00b\r\n" + headers +
         b"Content-Length: %d\r\n\r\n" % n + body),
        ("NUL in the last header value", start + host + headers +
         b"Content-Length: %d\r\nX-Note: a\x00bc\r\n\r\n" % n + body),
    ]


def check_gate(port, method, path, good_status, headers=b"", body=b""):
    """Each of gate_cases() gets exactly one answer, 400, and the
    connection closed, within 3 s; a well-formed request on the same path
    gets @good_status (so the cases are refused for their framing)."""
    ok = (b"%s %s HTTP/1.1\r\nHost: test\r\n" % (method, path) + headers +
          b"Content-Length: %d\r\nConnection: close\r\n\r\n" % len(body) + body)
    got, closed, _ = raw(port, ok)
    check(statuses(got) == [good_status], "well-formed request: %r" % got[:300])
    for name, data in gate_cases(method, path, headers, body):
        got, closed, took = raw(port, data)
        check(statuses(got) == [400] and closed,
              "%s: want one 400 and a close within 3 s, got %s (closed %s, %.1f s): %r"
              % (name, statuses(got), closed, took, got[:300]))


class SlowClients:
    """Connections that send a partial request head and stall, spread over
    loopback addresses 127.0.0.(@first..) @per_addr at a time (all of
    127/8 reaches lo). close() ends them."""

    def __init__(self, port, n, per_addr=16, first=2, head=None):
        self.socks = []
        head = head or b"GET /metrics HTTP/1.1\r\nHost: test\r\n"
        for i in range(n):
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            s.bind(("127.0.0.%d" % (first + i // per_addr), 0))
            s.settimeout(5)
            try:
                s.connect(("127.0.0.1", port))
                s.sendall(head)
            except OSError:
                pass
            self.socks.append(s)

    def closed_by_peer(self):
        """How many of them the server has closed."""
        n = 0
        for s in self.socks:
            s.setblocking(False)
            try:
                if s.recv(65536) == b"":
                    n += 1
            except BlockingIOError:
                pass
            except OSError:
                n += 1
        return n

    def close(self):
        for s in self.socks:
            s.close()
        self.socks = []


class Flood:
    """A connection flood that keeps @idle silent connections and @slow
    slowloris ones (a byte of a never-ending request head every half
    second) open to 127.0.0.1:@port, spread over @addrs loopback addresses
    127.0.0.(@first..), reopening each one the server closes, at most
    @rate reopenings a second (a flood reconnects as fast as it can; the
    cap keeps a shared CI machine usable). One thread, bounded by
    @max_seconds; stop() ends it and closes every socket."""

    def __init__(self, port, idle, slow, addrs, first=2, rate=1000,
                 max_seconds=600):
        import selectors
        import threading
        self.port, self.rate = port, rate
        self.slots = [("127.0.0.%d" % (first + i % addrs), i >= idle)
                      for i in range(idle + slow)]
        self.sel = selectors.DefaultSelector()
        self.socks = {}  # slot -> socket
        self.opened = self.closed = 0
        self.stop_at = time.monotonic() + max_seconds
        self.done = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        for i in range(len(self.slots)):
            self._open(i)
        self.thread.start()

    def _open(self, i):
        src, slow = self.slots[i]
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.settimeout(1.0)
        try:
            s.bind((src, 0))
            s.connect(("127.0.0.1", self.port))
            if slow:
                s.sendall(b"GET /healthz HTTP/1.1\r\nHost: flood\r\nX-Slow: ")
        except OSError:
            s.close()
            return False
        s.setblocking(False)
        self.socks[i] = s
        self.sel.register(s, 1, i)  # EVENT_READ
        self.opened += 1
        return True

    def _drop(self, i):
        s = self.socks.pop(i)
        self.sel.unregister(s)
        s.close()
        self.closed += 1

    def _run(self):
        down = []  # slots the server closed, to reopen
        budget, last, trickle = 0.0, time.monotonic(), time.monotonic()
        while not self.done.is_set() and time.monotonic() < self.stop_at:
            for key, _ in self.sel.select(timeout=0.05):
                try:
                    gone = key.fileobj.recv(4096) == b""
                except BlockingIOError:
                    gone = False
                except OSError:
                    gone = True
                if gone:
                    self._drop(key.data)
                    down.append(key.data)
            now = time.monotonic()
            budget = min(self.rate, budget + (now - last) * self.rate)
            last = now
            while down and budget >= 1:
                budget -= 1
                i = down.pop(0)
                if not self._open(i):
                    down.append(i)
                    break
            if now - trickle >= 0.5:
                trickle = now
                for i, s in list(self.socks.items()):
                    if self.slots[i][1]:
                        try:
                            s.send(b"a")
                        except OSError:
                            pass

    def stop(self):
        self.done.set()
        self.thread.join()
        for i in list(self.socks):
            self._drop(i)
        self.sel.close()


class KeepAlive:
    """A client on one keep-alive connection from @src that sends
    @request (bytes; HTTP/1.1, no Connection: close) every @interval s for
    @seconds s and counts the answers with status @want: a request that
    fails (connection closed, reset, no answer in 5 s) counts as a failure
    and the next one opens a new connection. run() returns (ok, total)."""

    def __init__(self, port, request, want=200, src="127.0.0.250",
                 interval=0.5):
        self.port, self.request, self.want = port, request, want
        self.src, self.interval = src, interval
        self.sock = None
        self.ok = self.total = self.reconnects = 0
        self.failures = []

    def _answer(self):
        """The status of one response read from self.sock (its body too)."""
        buf = b""
        while b"\r\n\r\n" not in buf:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise ConnectionError("closed before an answer")
            buf += chunk
        head, body = buf.split(b"\r\n\r\n", 1)
        st = statuses(head.split(b"\r\n", 1)[0])
        m = [ln for ln in head.split(b"\r\n")
             if ln.lower().startswith(b"content-length:")]
        n = int(m[0].split(b":", 1)[1]) if m else 0
        while len(body) < n:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise ConnectionError("closed in the body")
            body += chunk
        return st[0] if st else None

    def one(self):
        self.total += 1
        try:
            if self.sock is None:
                self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
                self.sock.settimeout(5)
                self.sock.bind((self.src, 0))
                self.sock.connect(("127.0.0.1", self.port))
                self.reconnects += 1
            self.sock.sendall(self.request)
            st = self._answer()
            if st == self.want:
                self.ok += 1
                return
            self.failures.append("status %s" % st)
        except OSError as e:
            self.failures.append(repr(e))
        if self.sock:
            self.sock.close()
        self.sock = None

    def run(self, seconds):
        end = time.monotonic() + seconds
        nxt = time.monotonic()
        while time.monotonic() < end:
            self.one()
            nxt += self.interval
            time.sleep(max(0.0, nxt - time.monotonic()))
        if self.sock:
            self.sock.close()
        return self.ok, self.total


def framing_cases(method, path, headers=b"", body=b""):
    """Requests libmicrohttpd 0.9.75 answers itself (HTML pages; a
    Content-Length that is not a number got the status line and headers
    twice) or let through, as (name, bytes, status the server must give).
    @headers (CRLF-terminated) authorise the request, so a body is read."""
    start = b"%s %s HTTP/1.1\r\nHost: test\r\n" % (method, path)
    n = len(body)
    cases = [("Content-Length %s" % v.decode(), start + headers +
              b"Content-Length: %s\r\n\r\n" % v + body, 400)
             for v in (b"-1", b"abc", b"+571", b"5 5", b"")]
    return cases + [
        ("Content-Length too large", start + headers +
         b"Content-Length: 99999999999999999999999\r\n\r\n", 413),
        ("bad chunk size", start + headers +
         b"Transfer-Encoding: chunked\r\n\r\nzz\r\n" + body + b"\r\n0\r\n\r\n", 400),
        ("chunk without its line end", start + headers +
         b"Transfer-Encoding: chunked\r\n\r\n%x\r\n" % n + body + b"XY0\r\n\r\n", 400),
        ("request line too long (414)", b"%s %s?%s HTTP/1.1\r\nHost: test\r\n\r\n"
         % (method, path, b"a" * 70000), 414),
        ("head too large (431)", start + headers + b"X-Big: " + b"b" * 70000 +
         b"\r\nContent-Length: %d\r\n\r\n" % n + body, 431),
        ("HTTP/2.5 (505)", b"%s %s HTTP/2.5\r\nHost: test\r\n\r\n" % (method, path), 505),
        ("bare CR in a header value", start + headers + b"X-A: a\rb\r\n"
         b"Content-Length: %d\r\n\r\n" % n + body, 400),
        ("two Authorization headers", start + headers +
         b"Authorization: Bearer other\r\nAuthorization: Bearer more\r\n"
         b"Content-Length: %d\r\n\r\n" % n + body, 400),
        ("a header line without a colon", start + headers + b"NoColon\r\n"
         b"Content-Length: %d\r\n\r\n" % n + body, 400),
        ("not a request line", b"\x01\x02 garbage\r\n\r\n", 400),
    ]


def check_framing(port, method, path, json_errors, headers=b"", body=b""):
    """Each of framing_cases() gets exactly one answer, its status, in the
    server's own error format (JSON {"error": reason} or text/plain),
    never HTML, and the connection closed."""
    import json as _json
    for name, data, want in framing_cases(method, path, headers, body):
        got, closed, took = raw(port, data)
        head, _, rest = got.partition(b"\r\n\r\n")
        ctype = [ln.split(b":", 1)[1].strip() for ln in head.split(b"\r\n")
                 if ln.lower().startswith(b"content-type:")]
        ok = statuses(got) == [want] and closed and b"<html" not in got.lower()
        if ok and json_errors:
            try:
                ok = ctype == [b"application/json"] and _json.loads(rest)["error"]
            except (ValueError, KeyError):
                ok = False
        elif ok:
            ok = ctype and ctype[0].startswith(b"text/plain") and rest.strip()
        check(ok, "%s: want one %d in %s and a close within 3 s, got %s "
              "(closed %s, %.1f s): %r" % (name, want, "JSON" if json_errors else
                                           "text", statuses(got), closed, took,
                                           got[:400]))


def responses(data):
    """The responses in @data, in order, as (status, {header: value}
    (lower-case names), body), each body Content-Length long (every answer
    of these servers has one); whatever cannot be parsed ends the list
    with (None, {}, rest)."""
    out = []
    while data:
        head, sep, rest = data.partition(b"\r\n\r\n")
        lines = head.split(b"\r\n")
        parts = lines[0].split(b" ")
        if not sep or len(parts) < 2 or not parts[1].isdigit():
            out.append((None, {}, data))
            break
        hdrs = {}
        for ln in lines[1:]:
            k, _, v = ln.partition(b":")
            hdrs[k.strip().lower().decode()] = v.strip().decode()
        n = int(hdrs.get("content-length", "0"))
        out.append((int(parts[1]), hdrs, rest[:n]))
        data = rest[n:]
    return out
