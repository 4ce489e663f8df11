"""Fixtures for nhttpd's tests: a running server, whatever it runs on, and a raw HTTP client.

`nhttpd` yields a Server (base_url, host, port, docroot: the tree it serves, idle_timeout) for
each target in NHTTPD_TARGETS (comma-separated, default "linux,nom"):
  linux       build/apps/nhttpd/nhttpd-linux (epoll) on 127.0.0.1
  nom         build/apps/nhttpd/nhttpd.elf in a nom VM (tools/nomvm, TCG unless real KVM) on a
              tap device in a network namespace of its own (tools/netlab); while it runs, the
              test process itself works inside that namespace, so its sockets, threads and
              subprocesses (curl, wrk) reach the guest directly. Not QEMU user networking: its
              port forwarding admits one pending connection at a time (slirp listens with a
              backlog of 1), which stalls the concurrent tests for seconds.
The test functions only talk HTTP to base_url, so they run unchanged on every target.
`linux_server(*options)` starts a private Linux server with its own limits, for the tests that
need them (the nom image's command line is fixed when it is built).
"""
import contextlib
import ctypes
import os
import socket
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
TOP = HERE.parents[2]
BUILD = TOP / "build"
OUT = BUILD / "apps" / "nhttpd"
# The servers' idle timeout in these tests: short, so the timeout tests are quick, but above
# a host TCP's retransmission of a dropped request (200 ms doubling: 4 losses take 3 s). At
# 2 s a make test on a loaded host had nom's nhttpd close 96 of 4,000 concurrent connections
# as idle before their requests came (test_thousands_of_concurrent_connections, 2026-11-25;
# the cause was not captured: its failure message now prints the driver's counters).
IDLE_TIMEOUT_S = 5.0
COMMON_OPTIONS = [f"--idle-timeout={IDLE_TIMEOUT_S}"]
CLONE_NEWNET = 0x40000000
# The nom guest's memory: issue 16's smallest VM, so that every nom test here (thousands of
# connections included) also shows that nhttpd is served by a VM started with -m 64.
NOM_MEMORY_MB = 64


@dataclass
class Response:
    status: int
    reason: str
    headers: dict
    body: bytes


def read_response(f, head_only=False):
    """Reads one response from a socket file; None if the server closed first."""
    line = f.readline()
    if not line:
        return None
    version, status, reason = (line.decode("latin-1").rstrip("\r\n").split(" ", 2) + [""])[:3]
    assert version == "HTTP/1.1", line
    headers = {}
    while True:
        h = f.readline()
        if h in (b"\r\n", b"\n", b""):
            break
        name, _, value = h.decode("latin-1").partition(":")
        headers[name.strip().lower()] = value.strip()
    n = 0 if head_only else int(headers.get("content-length", "0"))
    body = f.read(n) if n else b""
    assert len(body) == n, f"short body: {len(body)} of {n}"
    return Response(int(status), reason, headers, body)


@dataclass
class Server:
    host: str
    port: int
    docroot: Path
    idle_timeout: float = IDLE_TIMEOUT_S
    target: str = "linux"
    proc: object = field(default=None, repr=False)

    @property
    def base_url(self):
        return f"http://{self.host}:{self.port}"

    def connect(self, timeout=30.0):
        s = socket.create_connection((self.host, self.port), timeout=timeout)
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        return s

    def exchange(self, raw, count=1, head_only=(), timeout=30.0):
        """Sends raw bytes on a new connection and reads count responses (None once closed).
        head_only: indexes of responses to HEAD requests (they have no body)."""
        with self.connect(timeout) as s:
            s.sendall(raw)
            f = s.makefile("rb")
            return [read_response(f, i in head_only) for i in range(count)]

    def get(self, path, headers="", method="GET"):
        raw = f"{method} {path} HTTP/1.1\r\nHost: t\r\n{headers}\r\n".encode()
        return self.exchange(raw, head_only=(0,) if method == "HEAD" else ())[0]

    def alive(self):
        """The server still answers correctly: the index, byte for byte."""
        r = self.get("/index.html")
        return r is not None and r.status == 200 and \
            r.body == (self.docroot / "index.html").read_bytes()

    @staticmethod
    def wait_closed(sock, limit):
        """Reads until the peer closes; returns what arrived. Fails if still open after limit s."""
        sock.settimeout(limit)
        data = b""
        end = time.monotonic() + limit
        while time.monotonic() < end:
            try:
                chunk = sock.recv(65536)
            except socket.timeout:
                break
            if not chunk:
                return data
            data += chunk
        raise AssertionError(f"connection still open after {limit}s")


@pytest.fixture(scope="session")
def built():
    env = dict(os.environ, TOP=str(TOP), BUILD=str(BUILD))
    r = subprocess.run(["make", "-s", "-C", str(TOP / "apps" / "nhttpd"), "linux"], env=env,
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    return OUT


def start_linux(binary, options):
    """Starts a Linux build on a free port; returns (proc, port) once it listens."""
    proc = subprocess.Popen([str(binary), "--bind=127.0.0.1", "--port=0",
                             f"--root={OUT / 'www'}", *options],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    line = proc.stdout.readline()
    if not line.startswith("nhttpd: listening on "):
        proc.kill()
        raise RuntimeError(f"nhttpd did not start: {line}{proc.stderr.read()}")
    return proc, int(line.rsplit(":", 1)[1])


def stop_linux(proc):
    """Stops a server started by start_linux; fails the test if it had died on its own."""
    died = proc.poll()
    proc.kill()
    proc.wait()
    assert died is None, f"nhttpd exited with {died}: {proc.stderr.read()}"


def enter_netns(name):
    """Moves the calling thread, and the threads and processes it starts from now on, into
    network namespace name (setns(2)); returns the function that moves it back."""
    libc = ctypes.CDLL(None, use_errno=True)
    back = os.open("/proc/thread-self/ns/net", os.O_RDONLY)
    target = os.open(f"/run/netns/{name}", os.O_RDONLY)
    try:
        if libc.setns(target, CLONE_NEWNET) != 0:
            raise OSError(ctypes.get_errno(), f"setns into {name}")
    finally:
        os.close(target)

    def leave():
        try:
            if libc.setns(back, CLONE_NEWNET) != 0:
                raise OSError(ctypes.get_errno(), "setns back")
        finally:
            os.close(back)
    return leave


@contextlib.contextmanager
def nom_server(options):
    """Boots nom with nhttpd.elf on a tap in a fresh namespace and yields its Server while
    this process works inside that namespace."""
    kernel, elf = BUILD / "kernel" / "nom.elf", OUT / "nhttpd.elf"
    if not (kernel.exists() and elf.exists()):
        pytest.skip("the nom target needs build/kernel/nom.elf and build/apps/nhttpd/nhttpd.elf")
    from netlab import NetLab, NetLabError
    from nomvm import VM, Nic, make_iso
    with contextlib.ExitStack() as stack:
        try:
            lab = stack.enter_context(NetLab())
        except NetLabError as e:
            pytest.skip(f"the nom target needs a network namespace, and none can be made: {e}")
        cmdline = ["nhttpd", *options, f"--ip={lab.guest_ip}/{lab.prefix_len}"]
        workdir = tempfile.mkdtemp(prefix="nhttpd-test-vm-")  # private: runs may overlap
        iso = make_iso(str(kernel), [(str(elf), " ".join(cmdline))], f"{workdir}/nhttpd.iso")
        vm = VM(iso=iso, nics=[Nic(mac="52:54:00:12:34:01", backend="tap", tap=lab.tap)],
                memory_mb=NOM_MEMORY_MB, workdir=workdir)
        lab.start_vm(vm)
        vm.wait_for(r"nhttpd: listening on", timeout=300)
        leave = enter_netns(lab.ns)
        try:
            yield Server(lab.guest_ip, 80, OUT / "www", target="nom", proc=vm)
        finally:
            leave()
            vm.stop()
            os.remove(iso)


def targets():
    names = os.environ.get("NHTTPD_TARGETS", "linux,nom")
    return [t.strip() for t in names.split(",") if t.strip()]


@pytest.fixture(scope="module", params=targets())
def nhttpd(request, built):
    target = request.param
    if target == "nom":
        with nom_server(COMMON_OPTIONS) as server:
            yield server
        return
    proc, port = start_linux(built / "nhttpd-linux", COMMON_OPTIONS)
    yield Server("127.0.0.1", port, OUT / "www", target=target, proc=proc)
    stop_linux(proc)


@pytest.fixture
def linux_server(built):
    """Starts private Linux servers with extra options; stops them after the test."""
    procs = []

    def start(*options, binary="nhttpd-linux"):
        proc, port = start_linux(built / binary, [*COMMON_OPTIONS, *options])
        procs.append(proc)
        return Server("127.0.0.1", port, OUT / "www", proc=proc)

    yield start
    for p in procs:
        stop_linux(p)


@pytest.fixture
def nom_server_with():
    """Boots a private nom server with extra options (one at a time: each switches this
    process into its namespace); skipped unless NHTTPD_TARGETS names nom."""
    if "nom" not in targets():
        pytest.skip("nom is not among NHTTPD_TARGETS")
    with contextlib.ExitStack() as stack:
        yield lambda *options: stack.enter_context(nom_server([*COMMON_OPTIONS, *options]))
