"""Fixtures for memcached's tests: memcached.elf booted on nom in QEMU (tools/nomvm, TCG unless
real KVM), its port 11211 forwarded to 127.0.0.1 by QEMU user networking, as net/'s tests do.

`memcached` (session scope: one boot serves every test; each test uses keys of its own) yields
a Memcached with host, port, vm, client() (a pymemcache client with generous timeouts) and
stats(); `boot_memcached` gives booted(workdir, extra), which boots a private one with more
options.
The image runs memcached with the options it runs with on nom (-t 1 -m 64 -p 11211 -U 0) in a
128 MiB VM. The fixture waits for the answer to `version` (QEMU accepts forwarded connections
before the guest listens, so a connect alone proves nothing).
"""
import contextlib
import os
import socket
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from nomvm import VM, Guest

HERE = Path(__file__).resolve().parent
TOP = HERE.parents[2]
BUILD = Path(os.environ.get("BUILD", TOP / "build"))
KERNEL = BUILD / "kernel" / "nom.elf"
ELF = BUILD / "apps" / "memcached" / "memcached.elf"
OPTIONS = "-t 1 -m 64 -p 11211 -U 0"
MEMORY_MB = 128


def ask(host, port, request, until=b"\r\n", timeout=10.0):
    """Sends one text-protocol request on a fresh connection; returns the answer once it ends
    with `until` (or what came before the server closed)."""
    with socket.create_connection((host, port), timeout=timeout) as s:
        s.sendall(request)
        got = b""
        while not got.endswith(until):
            chunk = s.recv(65536)
            if not chunk:
                break
            got += chunk
        return got


@dataclass
class Memcached:
    host: str
    port: int
    vm: VM

    def client(self, **kw):
        from pymemcache.client.base import Client
        return Client((self.host, self.port), connect_timeout=30, timeout=60, **kw)

    def stats(self):
        text = ask(self.host, self.port, b"stats\r\n", until=b"END\r\n").decode()
        return {k: v for _, k, v in (line.split(" ", 2) for line in text.splitlines()
                                     if line.startswith("STAT "))}

    def wait_ready(self, timeout=120.0):
        deadline = time.monotonic() + timeout
        while True:
            try:
                if ask(self.host, self.port, b"version\r\n", timeout=5).startswith(b"VERSION "):
                    return
            except OSError:
                pass
            if self.vm.proc.poll() is not None or time.monotonic() > deadline:
                raise TimeoutError("memcached did not answer `version`:\n" + self.vm.tail())
            time.sleep(0.5)


@contextlib.contextmanager
def booted(workdir, extra="", memory_mb=MEMORY_MB):
    """Boots memcached on nom with OPTIONS plus extra (net/'s options too, e.g.
    --batching-delay=20) in a VM of memory_mb MiB; yields a Memcached answering `version`; at the end, checks that
    nothing faulted."""
    missing = [str(p) for p in (KERNEL, ELF) if not p.exists()]
    if missing:
        pytest.skip(f"not built: {missing}")
    cmdline = f"memcached {OPTIONS} {extra}".strip()
    guest = Guest([(ELF, cmdline)], workdir, tcp=[11211], kernel=KERNEL, memory_mb=memory_mb,
                  name="memcached")
    guest.start(timeout=120)
    try:
        server = Memcached("127.0.0.1", guest.host_port(11211), guest.vm)
        server.wait_ready()
        yield server
        assert "nom: fault:" not in guest.vm.log(), guest.vm.tail()
    finally:
        guest.stop()


@pytest.fixture(scope="session")
def memcached(tmp_path_factory):
    with booted(tmp_path_factory.mktemp("memcached-vm")) as server:
        yield server
        assert "app memcached exited" not in server.vm.log(), server.vm.tail()


@pytest.fixture
def boot_memcached():
    """booted() for tests that need a memcached of their own (test modules cannot import
    conftest under --import-mode=importlib)."""
    return booted
