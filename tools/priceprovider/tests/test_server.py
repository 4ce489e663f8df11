"""The price service over real HTTP on 127.0.0.1: quotes, the clock, bad requests."""
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request

import pytest

from priceprovider import PriceClock, PriceServer, Schedule

pytestmark = pytest.mark.unit

TOOLS = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


class FakeTime:
    def __init__(self, t):
        self.t = t

    def __call__(self):
        return self.t


@pytest.fixture
def served():
    """A server on a free port whose clock the test moves by hand."""
    now = FakeTime(1000.0)
    clock = PriceClock(Schedule.parse("0:1, 60:10"), clock=now)
    server = PriceServer(("127.0.0.1", 0), clock)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}", now, clock
    server.shutdown()
    server.server_close()


def get(url):
    with urllib.request.urlopen(url, timeout=10) as r:
        return r.status, r.headers["Content-Type"], r.read().decode()


def get_error(url, method="GET"):
    req = urllib.request.Request(url, method=method)
    with pytest.raises(urllib.error.HTTPError) as e:
        urllib.request.urlopen(req, timeout=10)
    return e.value.code, json.loads(e.value.read().decode())


def test_price_follows_the_schedule(served):
    url, now, _ = served
    status, ctype, body = get(url + "/price")
    q = json.loads(body)
    assert (status, ctype) == (200, "application/json")
    assert q == {"resource": "bandwidth", "unit": "$/Gbit", "price": 1.0, "timestamp": 1000.0,
                 "sequence": 1, "next_change": 1060.0, "running": True}
    now.t = 1061.0
    q = json.loads(get(url + "/price")[2])
    assert (q["price"], q["timestamp"], q["sequence"], q["next_change"]) == (10.0, 1060.0, 2, None)


def test_restarting_the_clock_returns_to_the_first_price_with_a_new_sequence(served):
    url, now, clock = served
    now.t = 1070.0
    clock.start()
    now.t = 1071.0
    q = json.loads(get(url + "/price")[2])
    assert (q["price"], q["timestamp"], q["sequence"]) == (1.0, 1070.0, 3)


def test_advancing_jumps_to_the_next_step_now(served):
    url, now, clock = served
    now.t = 1010.0
    clock.advance()
    q = json.loads(get(url + "/price")[2])
    assert (q["price"], q["timestamp"], q["sequence"], q["next_change"]) == (10.0, 1010.0, 2, None)
    clock.advance()  # at the last step: nothing to advance to
    assert json.loads(get(url + "/price")[2])["price"] == 10.0


def test_text_form_and_schedule(served):
    url, _, _ = served
    assert get(url + "/price.txt?x=1")[2] == (
        "resource=bandwidth unit=$/Gbit price=1.000000 timestamp=1000.000000 sequence=1\n")
    sched = json.loads(get(url + "/schedule")[2])
    assert sched["steps"] == [{"start_s": 0.0, "price": 1.0}, {"start_s": 60.0, "price": 10.0}]


def test_unknown_path_and_method_are_json_errors(served):
    url, _, _ = served
    assert get_error(url + "/nothing")[0] == 404
    code, body = get_error(url + "/price", method="POST")
    assert code == 405 and "POST" in body["error"]


def test_garbage_and_stalled_clients_do_not_hurt_the_server(served):
    url, _, _ = served
    host, port = url[len("http://"):].split(":")
    with socket.create_connection((host, int(port)), timeout=10) as s:
        s.sendall(b"\x00\xffNOT HTTP AT ALL\r\n\r\n")
        reply = s.recv(4096).decode(errors="replace")
    assert reply.startswith("HTTP/1.0 400") or reply.startswith("HTTP/1.1 400")
    stalled = socket.create_connection((host, int(port)), timeout=10)  # sends nothing
    try:
        assert get(url + "/price")[0] == 200
    finally:
        stalled.close()
    huge = "/" + "a" * 70000
    with socket.create_connection((host, int(port)), timeout=10) as s:
        s.sendall(f"GET {huge} HTTP/1.0\r\n\r\n".encode())
        assert s.recv(4096).startswith(b"HTTP/1.0 414")


def test_held_process_starts_its_clock_on_sigusr1():
    proc = subprocess.Popen([sys.executable, "-m", "priceprovider", "--port", "0", "--hold",
                             "--schedule", "0:3, 3600:7"], cwd=TOOLS, stdout=subprocess.PIPE,
                            text=True)
    try:
        line = proc.stdout.readline()
        assert "listening on 127.0.0.1:" in line and "(held)" in line
        url = "http://127.0.0.1:" + line.split("127.0.0.1:")[1].split()[0]
        q = json.loads(get(url + "/price")[2])
        assert (q["price"], q["running"], q["next_change"], q["sequence"]) == (3.0, False, None, 1)
        before = time.time()
        proc.send_signal(signal.SIGUSR1)
        deadline = time.monotonic() + 30
        while not q["running"] and time.monotonic() < deadline:
            time.sleep(0.05)
            q = json.loads(get(url + "/price")[2])
        assert q["running"] and q["sequence"] == 3
        assert q["next_change"] == pytest.approx(q["timestamp"] + 3600)
        assert q["timestamp"] >= before - 1
        proc.send_signal(signal.SIGUSR2)
        while q["price"] != 7.0 and time.monotonic() < deadline:
            time.sleep(0.05)
            q = json.loads(get(url + "/price")[2])
        assert (q["price"], q["sequence"], q["next_change"]) == (7.0, 4, None)
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(30) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
