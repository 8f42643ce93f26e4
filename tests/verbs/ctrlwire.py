# SPDX-License-Identifier: MIT
"""The verbs control channel's wire format (probe/verbs/ctrl.h), spoken by
the integration tests that talk to a responder from Python: message
framing, REFUSE payloads and a REQUEST in protocol version 1 or 2."""
import struct

MAGIC = 0x49425056
HELLO, CHALLENGE, REQUEST, ACCEPT, REFUSE = 1, 2, 3, 4, 5


def msg(mtype, payload, version=1):
    return struct.pack(">IHHI", MAGIC, version, mtype, len(payload)) + payload


def recv_exact(s, n):
    data = b""
    while len(data) < n:
        chunk = s.recv(n - len(data))
        if not chunk:
            raise EOFError("connection closed after %d bytes" % len(data))
        data += chunk
    return data


def recv_msg(s):
    """One message: (version, type, payload)."""
    magic, version, mtype, length = struct.unpack(">IHHI", recv_exact(s, 12))
    assert magic == MAGIC, magic
    return version, mtype, recv_exact(s, length)


def refusal(payload):
    code, n = struct.unpack(">iH", payload[:6])
    return code, payload[6:6 + n].decode()


def request(size=65536, qps=1, iters=100, version=1, device="", port=0):
    """A write_bw REQUEST without its MAC; v2 names the responder's port."""
    ep = struct.pack(">H16sBBBHHBBBIQQH", 0, bytes(10) + b"\xff\xff" +
                     bytes([10, 0, 2, 15]), 2, 2, 1, 0xffff, 0, 3, 0, 16,
                     0, 0, 0, 0)
    body = struct.pack(">HHHIIIIIBB", 1, 0, qps, size, 128, iters, 0, 0, 0,
                       0) + ep
    if version >= 2:
        name = device.encode()
        body += struct.pack(">H", len(name)) + name + bytes([port])
    return body
