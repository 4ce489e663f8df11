"""Does the dashboard read real servers end to end, without a VM: Linux nhttpd (the same
source as nom's, /nom/stats and /nom/board) and the host's memcached (`stats`)? Rates appear
after traffic between two polls, and the server answers the page, the state, the plots."""
import json
import os
import shutil
import socket
import subprocess
import threading
import time
import urllib.error
import urllib.request
import xml.etree.ElementTree as ET

import pytest

from dashboard.collector import Collector
from dashboard.server import make_server
from nomvm.ports import free_port

pytestmark = pytest.mark.unit

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(
    __file__)))))
NHTTPD = os.path.join(TOP, "build", "apps", "nhttpd", "nhttpd-linux")
WWW = os.path.join(TOP, "build", "apps", "nhttpd", "www")


def serve(argv, port):
    """argv started and waited for until 127.0.0.1:port accepts; the caller stops it by PID."""
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 30
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return proc
        except OSError:
            if proc.poll() is not None or time.monotonic() > deadline:
                proc.kill()
                raise AssertionError(f"{argv} did not start listening")
            time.sleep(0.1)


@pytest.fixture
def servers():
    assert os.path.isfile(NHTTPD), f"{NHTTPD} not built (make -C apps/nhttpd linux)"
    memcached = shutil.which("memcached")
    assert memcached, "memcached (Debian) is not installed: tools/bootstrap.sh installs it"
    web, cache = free_port(), free_port()
    procs = [serve([NHTTPD, f"--port={web}", "--bind=127.0.0.1", f"--root={WWW}"], web)]
    try:
        procs.append(serve([memcached, "-l", "127.0.0.1", "-p", str(cache), "-U", "0",
                            "-u", "nobody"], cache))
        yield web, cache
    finally:
        for p in procs:
            p.terminate()
            p.wait(10)


def traffic(web, cache, requests=20):
    for _ in range(requests):
        urllib.request.urlopen(f"http://127.0.0.1:{web}/index.html", timeout=5).read()
    with socket.create_connection(("127.0.0.1", cache), timeout=5) as s:
        s.sendall(b"set k 0 0 1\r\nv\r\n" * 5)
        got = b""
        while got.count(b"STORED") < 5:
            got += s.recv(4096)


def test_rates_follow_real_traffic(servers):
    web, cache = servers
    c = Collector("127.0.0.1", web, cache)
    first = c.poll()
    assert first["errors"] == {}
    assert first["apps"]["nhttpd"]["throughput"] is None  # no rate from one poll
    traffic(web, cache)
    time.sleep(0.2)
    second = c.poll()
    nhttpd, memcached = second["apps"]["nhttpd"], second["apps"]["memcached"]
    assert nhttpd["throughput"] > 0 and nhttpd["latency_us"] > 0
    assert memcached["throughput"] > 0
    assert second["price"] is None  # a Linux nhttpd has no bulletin board
    assert [v for _, v in c.series("throughput")["nhttpd"]][-1] == nhttpd["throughput"]


def test_server_answers_page_state_and_plots(servers):
    web, cache = servers
    c = Collector("127.0.0.1", web, cache)
    c.poll()
    srv = make_server(c, 0)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{srv.server_address[1]}"
    try:
        page = urllib.request.urlopen(base + "/", timeout=5).read().decode()
        assert "<title>nom dashboard</title>" in page and "http" not in page.split("<script>")[1]
        state = json.loads(urllib.request.urlopen(base + "/api/state", timeout=5).read())
        assert set(state["apps"]) == {"nhttpd", "memcached"}
        svg = urllib.request.urlopen(base + "/plot/throughput.svg", timeout=5)
        assert svg.headers["Content-Type"] == "image/svg+xml"
        ET.fromstring(svg.read())
        with pytest.raises(urllib.error.HTTPError) as e:
            urllib.request.urlopen(base + "/plot/nothing.svg", timeout=5)
        assert e.value.code == 404
    finally:
        srv.shutdown()
        srv.server_close()
