#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# Integration test of `ibpulse-probe serve`'s control channel, spoken from
# Python on loopback (no RDMA device needed: everything here happens before
# the responder opens one). An unknown protocol version, a wrong MAC and a
# request over the limits are each refused with a reason; a correct MAC
# within the limits gets past authentication and the limits (the refusal
# is then about the missing device); a client that goes silent is dropped
# after --timeout; a client over --max-concurrent is refused as busy; and
# the responder keeps serving through all of it.
#   test_serve_proto.py PROBE
import hashlib
import hmac
import os
import socket
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ctrlwire import (CHALLENGE, HELLO, REFUSE, REQUEST, msg,  # noqa: E402
                      refusal, request)
from ctrlwire import recv_msg as recv_msg_v  # noqa: E402

SECRET = b"correct horse battery staple"
LABEL = b"ibpulse-verbs-v1 request"


def recv_msg(s):
    version, mtype, payload = recv_msg_v(s)
    assert version == 1, version
    return mtype, payload


def connect(port):
    s = socket.create_connection(("127.0.0.1", port), timeout=20)
    s.settimeout(20)
    return s


def greet(port):
    # The previous client's thread may not have released its slot yet
    # (--max-concurrent 1): retry "busy" for a while.
    deadline = time.monotonic() + 20
    while True:
        s = connect(port)
        nonce_c = os.urandom(16)
        s.sendall(msg(HELLO, nonce_c))
        mtype, p = recv_msg(s)
        if mtype == CHALLENGE:
            break
        s.close()
        assert mtype == REFUSE and "busy" in refusal(p)[1], (mtype, p)
        assert time.monotonic() < deadline, "responder stays busy"
        time.sleep(0.05)
    assert len(p) == 17 and p[16] == 1, "auth_required must be set"
    return s, nonce_c, p[:16]


def send_request(port, body, key):
    s, nonce_c, nonce_s = greet(port)
    mac = hmac.new(key, LABEL + nonce_s + nonce_c + body,
                   hashlib.sha256).digest()
    s.sendall(msg(REQUEST, body + mac))
    mtype, p = recv_msg(s)
    s.close()
    assert mtype == REFUSE, "expected REFUSE, got %d" % mtype
    return refusal(p)


def expect(cond, what, detail=""):
    if not cond:
        print("FAIL:", what, detail, file=sys.stderr)
        sys.exit(1)
    print("ok:", what)


def start(probe, tmp):
    secret = os.path.join(tmp, "secret")
    with open(secret, "wb") as f:
        f.write(SECRET + b"\n")
    os.chmod(secret, 0o600)
    proc = subprocess.Popen(
        [probe, "serve", "-p", "0", "--bind", "127.0.0.1", "--secret-file",
         secret, "--max-size", "1048576", "--max-concurrent", "1",
         "--timeout", "1"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    line = proc.stdout.readline()
    if not line.startswith("listening on port "):
        proc.kill()
        print("FAIL: serve did not start:", line, proc.stderr.read(),
              file=sys.stderr)
        sys.exit(1)
    return proc, int(line.split()[-1])


def checks(port):
    s = connect(port)
    s.sendall(msg(HELLO, os.urandom(16), version=7))
    mtype, p = recv_msg(s)
    s.close()
    code, why = refusal(p)
    expect(mtype == REFUSE and "version 7" in why, "unknown version refused: " + why)

    code, why = send_request(port, request(), b"not the secret at all....")
    expect(why == "authentication failed", "wrong MAC refused: " + why)

    code, why = send_request(port, request(size=8 << 20), SECRET)
    expect("message size" in why and "1048576" in why,
           "over-limit size refused before any device work: " + why)

    code, why = send_request(port, request(qps=60), SECRET)
    expect("QPs" in why, "over-limit QPs refused: " + why)

    code, why = send_request(port, request(), SECRET)
    expect("device" in why, "good MAC within limits passes to the device step: " + why)

    # A client that goes quiet after HELLO is dropped after --timeout; a
    # second one meanwhile is refused as busy.
    silent, _, _ = greet(port)  # holds the only slot, then says nothing
    s = connect(port)
    mtype, p = recv_msg(s)
    s.close()
    expect(mtype == REFUSE and "busy" in refusal(p)[1], "second client refused as busy")
    t0 = time.monotonic()
    try:
        silent.recv(100)
    except (ConnectionError, socket.timeout):
        pass
    took = time.monotonic() - t0
    silent.close()
    expect(took < 10, "silent client dropped after %.1f s" % took)

    code, why = send_request(port, request(), SECRET)
    expect("device" in why, "still serving afterwards")


def main():
    probe = sys.argv[1]
    with tempfile.TemporaryDirectory() as tmp:
        proc, port = start(probe, tmp)
        try:
            checks(port)
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
        expect(proc.returncode == 0, "serve exits 0 on SIGTERM",
               "status %s: %s" % (proc.returncode, proc.stderr.read()[-3000:]))


main()
