"""priced's HTTP client (http_get.c) on the host against servers that misbehave: does each
failure come back as the right kind, with a reason, within the deadline, and does a real
tools/priceprovider answer come through whole?"""
import os
import socket
import subprocess
import threading
import time

import pytest

from nomvm import free_port
from priced_vm import BUILD, FakeProvider, Provider, build_host

pytestmark = pytest.mark.unit

CLIENT = os.path.join(BUILD, "apps", "priced", "tests", "http_get_host")


def http_get(port, timeout_ms=2000, path="/price.txt"):
    r = subprocess.run([CLIENT, f"http://127.0.0.1:{port}{path}", str(timeout_ms)],
                       capture_output=True, text=True, timeout=30)
    return r.returncode, r.stdout


@pytest.fixture(scope="module", autouse=True)
def client():
    build_host()


@pytest.fixture
def fake():
    f = FakeProvider()
    yield f
    f.stop()


def test_real_provider_answer():
    """Does the real provider's price.txt arrive whole?"""
    p = Provider(schedule="0:2.5", hold=False)
    try:
        code, out = http_get(p.port)
    finally:
        p.stop()
    assert code == 0, out
    assert out.startswith("ok 200 ") and "price=2.500000" in out and "sequence=1" in out


def test_nobody_listening_is_unreachable():
    """Is a refused connection 'unreachable'?"""
    code, out = http_get(free_port())
    assert code == 1 and out.startswith("fail unreachable: connect to 127.0.0.1:"), out


@pytest.mark.parametrize("mode,kind,reason", [
    ("garbage", "protocol", "NUL byte"),
    ("huge", "protocol", "larger than 4096"),
    ("error", "status", "503 Service Unavailable"),
])
def test_bad_answers(fake, mode, kind, reason):
    """Is each bad answer a failure of its kind that says why?"""
    fake.mode = mode
    code, out = http_get(fake.port)
    assert code == 1 and out.startswith(f"fail {kind}:") and reason in out, out


def test_html_body_is_passed_up(fake):
    """Is a well-formed 200 with the wrong content left to the price parser (not HTTP's
    business)?"""
    fake.mode = "html"
    code, out = http_get(fake.port)
    assert code == 0 and "Bad Gateway" in out, out


def test_stalled_server_times_out_at_the_deadline(fake):
    """Does a server that accepts but never answers cost one timeout, not a hang?"""
    fake.mode = "stall"
    t0 = time.monotonic()
    code, out = http_get(fake.port, timeout_ms=300)
    assert code == 1 and out.startswith("fail timeout: no complete answer"), out
    assert time.monotonic() - t0 < 20  # bounded (generous: sanitizers, shared machine)


def test_trickling_server_times_out():
    """Does a server sending a byte now and then still hit the one deadline?"""
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(1)

    def trickle():
        conn, _ = srv.accept()
        try:
            for b in b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nprice":
                conn.send(bytes([b]))
                time.sleep(0.05)
        except OSError:
            pass
        conn.close()
    t = threading.Thread(target=trickle, daemon=True)
    t.start()
    code, out = http_get(srv.getsockname()[1], timeout_ms=300)
    srv.close()
    assert code == 1 and out.startswith("fail timeout:"), out


def test_close_delimited_body():
    """Is a body without Content-Length read until the server closes?"""
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(1)

    def answer():
        conn, _ = srv.accept()
        conn.recv(4096)
        conn.sendall(b"HTTP/1.0 200 OK\r\n\r\nresource=bandwidth price=1\n")
        conn.close()
    threading.Thread(target=answer, daemon=True).start()
    code, out = http_get(srv.getsockname()[1])
    srv.close()
    assert code == 0 and out == "ok 200 27\nresource=bandwidth price=1\n", out
