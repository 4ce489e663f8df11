"""Does nom boot as a libvirt domain and serve on the ports `make run` forwards: a web page from
nhttpd and a set/get from memcached? The domain has a name and ports of its own per run, and is
destroyed and undefined even when the test fails."""
import os
import socket
import time
import urllib.request
import uuid

import pytest

from nomvm.ports import free_port_shift
from nomvirt.libvirtd import Libvirt, LibvirtUnavailable
from nomvirt.nomdomain import NomDomain

pytestmark = pytest.mark.boot

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(
    __file__)))))
ISO = os.path.join(TOP, "build", "nom.iso")
NHTTPD_PORT, MEMCACHED_PORT, NETPIPE_PORT = 8080, 11211, 5002  # tools/nomrun.py DEFAULT_NICS


@pytest.fixture
def libvirt():
    try:
        with Libvirt() as lv:
            yield lv
    except LibvirtUnavailable as e:
        pytest.skip(f"libvirt cannot run here: {e}")


def retry(call, seconds):
    """call() until it stops raising OSError (memcached prints no ready line)."""
    deadline = time.monotonic() + seconds
    while True:
        try:
            return call()
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(1)


def memcached_set_get(port, key, value):
    with socket.create_connection(("127.0.0.1", port), timeout=30) as s:
        s.sendall(b"set %s 0 0 %d\r\n%s\r\nget %s\r\n" % (key, len(value), value, key))
        reply = b""
        while not reply.endswith(b"END\r\n"):
            chunk = s.recv(4096)
            assert chunk, f"memcached closed the connection after {reply!r}"
            reply += chunk
    return reply


def test_nom_boots_under_libvirt_and_serves(libvirt):
    assert os.path.isfile(ISO), f"{ISO} not built (make)"
    name = f"nom-test-{uuid.uuid4().hex[:8]}"
    shift = free_port_shift((NHTTPD_PORT, MEMCACHED_PORT, NETPIPE_PORT))
    with NomDomain(libvirt, ISO, name, port_shift=shift) as dom:
        assert name in libvirt.virsh("list", "--name").stdout.split()
        dom.wait_for(r"^nhttpd: listening on", timeout=240)
        with urllib.request.urlopen(f"http://127.0.0.1:{NHTTPD_PORT + shift}/",
                                    timeout=30) as r:
            assert r.status == 200 and b"nhttpd" in r.read()
        reply = retry(lambda: memcached_set_get(MEMCACHED_PORT + shift, b"libvirt",
                                                b"reached"), seconds=120)
        assert reply == b"STORED\r\nVALUE libvirt 0 7\r\nreached\r\nEND\r\n"
    assert name not in libvirt.virsh("list", "--all", "--name").stdout.split()
