# SPDX-License-Identifier: MIT
"""HTTP/1.1 over a pool of keep-alive connections, for the fleet driver.

Thousands of simulated probes share a few dozen connections to the
collector, as many as its per-address limit allows from each loopback
source address (127.0.0.1, 127.0.0.2, ...: every 127/8 address is this
host), each request with its own host's bearer token. asyncio streams, no
third-party client: bench scripts use the standard library only. Every
request's wall time (from the first byte sent to the last byte read, the
wait for a free connection excluded) and its wait for a connection are
kept per kind, so the driver can print p50/p99 and show whether it, not
the collector, was the bottleneck.
"""
import asyncio
import json
import math
import time


class HttpError(Exception):
    """A request that got no usable answer after its retries."""


class _Conn:
    def __init__(self, src):
        self.src = src
        self.reader = None
        self.writer = None

    def close(self):
        if self.writer:
            self.writer.close()
        self.reader = self.writer = None


def percentile(values, q):
    """The q-quantile (0..1) of @values by the nearest rank; None if empty."""
    if not values:
        return None
    s = sorted(values)
    return s[max(0, min(len(s) - 1, math.ceil(q * len(s)) - 1))]


class Pool:
    """@conns keep-alive connections to 127.0.0.1:@port, at most
    @per_addr from each source address."""

    def __init__(self, port, conns=32, per_addr=16, host="127.0.0.1",
                 timeout=120.0, first_addr=1):
        self.host, self.port, self.timeout = host, port, timeout
        self.free = asyncio.Queue()
        for i in range(conns):
            self.free.put_nowait(_Conn("127.0.0.%d" % (first_addr +
                                                       i // per_addr)))
        self.conns = conns
        self.times = {}     # kind -> [seconds]
        self.waits = {}     # kind -> [seconds waited for a connection]
        self.errors = {}    # "kind: reason" -> count
        self.retries = 0

    def _count(self, kind, why):
        key = "%s: %s" % (kind, why)
        self.errors[key] = self.errors.get(key, 0) + 1

    async def _open(self, c):
        c.reader, c.writer = await asyncio.wait_for(asyncio.open_connection(
            self.host, self.port, local_addr=(c.src, 0), limit=1 << 20),
            self.timeout)

    async def _read_answer(self, c):
        line = await c.reader.readline()
        if not line:
            raise ConnectionError("closed before the answer")
        parts = line.split(None, 2)
        if len(parts) < 2 or not parts[0].startswith(b"HTTP/1."):
            raise ConnectionError("not an HTTP answer: %r" % line[:80])
        status, headers = int(parts[1]), {}
        while True:
            h = await c.reader.readline()
            if h in (b"\r\n", b"\n", b""):
                break
            k, _, v = h.decode("latin-1").partition(":")
            headers[k.strip().lower()] = v.strip()
        if "content-length" in headers:
            body = await c.reader.readexactly(int(headers["content-length"]))
        elif headers.get("transfer-encoding", "").lower() == "chunked":
            body = await self._read_chunked(c)
        else:
            body = await c.reader.read()
            headers["connection"] = "close"
        return status, headers, body

    @staticmethod
    async def _read_chunked(c):
        out = bytearray()
        while True:
            n = int((await c.reader.readline()).split(b";")[0], 16)
            if n == 0:
                while (await c.reader.readline()) not in (b"\r\n", b"\n", b""):
                    pass
                return bytes(out)
            out += await c.reader.readexactly(n)
            await c.reader.readexactly(2)

    async def request(self, method, path, body=None, token=None, kind=None,
                      tries=4):
        """(status, parsed JSON or None). Connection errors and 503 are
        retried (every request the driver makes is idempotent: results
        are stored once per id); HttpError when no answer came."""
        kind = kind or path
        data = b"" if body is None else (
            body if isinstance(body, bytes) else json.dumps(body).encode())
        head = ["%s %s HTTP/1.1" % (method, path), "Host: %s" % self.host]
        if token:
            head.append("Authorization: Bearer " + token)
        if body is not None:
            head += ["Content-Type: application/json",
                     "Content-Length: %d" % len(data)]
        wire = ("\r\n".join(head) + "\r\n\r\n").encode() + data
        last = None
        for attempt in range(tries):
            if attempt:
                self.retries += 1
                await asyncio.sleep(min(2.0, 0.2 * attempt))
            t0 = time.monotonic()
            c = await self.free.get()
            t1 = time.monotonic()
            try:
                if c.writer is None:
                    await self._open(c)
                c.writer.write(wire)
                status, headers, raw = await asyncio.wait_for(
                    self._read_answer(c), self.timeout)
                t2 = time.monotonic()
                if headers.get("connection", "").lower() == "close":
                    c.close()
            except (OSError, ConnectionError, asyncio.IncompleteReadError,
                    asyncio.TimeoutError, ValueError) as e:
                c.close()
                self._count(kind, type(e).__name__)
                last = "%s: %s" % (type(e).__name__, e)
                continue
            finally:
                self.free.put_nowait(c)
            if status == 503:
                self._count(kind, "503")
                last = "503 " + raw[:200].decode("utf-8", "replace")
                continue
            self.times.setdefault(kind, []).append(t2 - t1)
            self.waits.setdefault(kind, []).append(t1 - t0)
            try:
                parsed = json.loads(raw) if raw else None
            except ValueError:
                parsed = None
            if status != 200:
                self._count(kind, str(status))
            return status, parsed
        raise HttpError("%s %s: no answer after %d tries (%s)"
                        % (method, path, tries, last))

    def stats(self, kind):
        """{"n", "p50_ms", "p99_ms", "max_ms", "wait_p99_ms"} of @kind."""
        t = self.times.get(kind, [])
        w = self.waits.get(kind, [])

        def ms(v):
            return None if v is None else round(v * 1e3, 2)
        return {"n": len(t), "p50_ms": ms(percentile(t, 0.5)),
                "p99_ms": ms(percentile(t, 0.99)),
                "max_ms": ms(max(t) if t else None),
                "wait_p99_ms": ms(percentile(w, 0.99))}

    async def close(self):
        while not self.free.empty():
            self.free.get_nowait().close()
