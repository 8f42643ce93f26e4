# SPDX-License-Identifier: MIT
"""The verbs control channel's wire format (probe/verbs/ctrl.h), spoken by
the integration tests that talk to a responder from Python: message
framing, REFUSE payloads, a REQUEST in protocol version 1, 2 or 3 (with a
ticket's claims), the HMAC of REQUEST, and test tickets minted as the
collector mints them (common/ticket.h), to forge or replay one."""
import hashlib
import hmac
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


def _str(s):
    b = s.encode()
    return struct.pack(">H", len(b)) + b


def ticket_block(plan_id, host, device, port, period, not_before_ms,
                 deadline_ms):
    """v3: the claims after the responder's port (struct ctrl_ticket)."""
    return (_str(plan_id) + _str(host) + _str(device) + bytes([port]) +
            struct.pack(">QQQ", period, not_before_ms, deadline_ms))


def responder_key(master, host, period):
    """What the collector gives @host for @period (ticket_responder_key)."""
    return hmac.new(master, _str("ibpulse-responder-key-v1") + _str(host) +
                    struct.pack(">Q", period), hashlib.sha256).digest()


def mint(key, plan_id, host, device, port, rdevice, rport, period,
         not_before_ms, deadline_ms):
    """A ticket (ticket_mint): the MAC key of a planned test's REQUEST."""
    msg = (_str("ibpulse-ticket-v1") + _str(plan_id) + _str(host) +
           _str(device) + bytes([port]) + _str(rdevice) + bytes([rport]) +
           struct.pack(">QQQ", period, not_before_ms, deadline_ms))
    return hmac.new(key, msg, hashlib.sha256).digest()


LABEL_REQ = b"ibpulse-verbs-v1 request"


def request_mac(key, nonce_s, nonce_c, body):
    """The MAC a REQUEST ends with: HMAC(key, label | nonce_s | nonce_c |
    body without the MAC)."""
    return hmac.new(key, LABEL_REQ + nonce_s + nonce_c + body,
                    hashlib.sha256).digest()


def request(size=65536, qps=1, iters=100, version=1, device="", port=0,
            ticket=b""):
    """A write_bw REQUEST without its MAC; v2 names the responder's port,
    v3 adds @ticket (ticket_block())."""
    ep = struct.pack(">H16sBBBHHBBBIQQH", 0, bytes(10) + b"\xff\xff" +
                     bytes([10, 0, 2, 15]), 2, 2, 1, 0xffff, 0, 3, 0, 16,
                     0, 0, 0, 0)
    body = struct.pack(">HHHIIIIIBB", 1, 0, qps, size, 128, iters, 0, 0, 0,
                       0) + ep
    if version >= 2:
        name = device.encode()
        body += struct.pack(">H", len(name)) + name + bytes([port])
    if version >= 3:
        body += ticket
    return body
