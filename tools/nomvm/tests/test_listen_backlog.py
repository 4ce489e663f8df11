"""The library preloaded into a QEMU that forwards host ports (tools/nomvm/listen_backlog):
libslirp listens with a backlog of one, so simultaneous connects to `make run`'s ports waited a
second for a SYN retransmission (memcslap --concurrency=4). With the library, a listener that
asks for a backlog of one and does not accept yet still completes many connects at once."""
import os
import select
import socket
import subprocess
import sys

import pytest

from nomvm import VM, Nic
from nomvm import vm as vm_module
from nomvm.paths import TOP

pytestmark = pytest.mark.unit

SOURCE = os.path.join(TOP, "tools", "nomvm", "listen_backlog")
CONNECTS = 8
# A listener that asks for a backlog of one and never accepts (as libslirp's until QEMU's main
# loop turns); it prints its port and lives until its stdin closes.
LISTENER = ("import socket, sys\n"
            "s = socket.socket(); s.bind(('127.0.0.1', 0)); s.listen(1)\n"
            "print(s.getsockname()[1], flush=True); sys.stdin.read()\n")


@pytest.fixture(scope="module")
def library(tmp_path_factory):
    build = tmp_path_factory.mktemp("build")
    subprocess.run(["make", "-s", "-C", SOURCE, f"BUILD={build}"], check=True)
    return str(build / "nomvm" / "liblistenbacklog.so")


def connected_at_once(preload, wait_s):
    """How many of CONNECTS simultaneous non-blocking connects to a listen(1) listener that
    never accepts complete within wait_s."""
    env = dict(os.environ, LD_PRELOAD=preload) if preload else dict(os.environ)
    listener = subprocess.Popen([sys.executable, "-c", LISTENER], env=env, text=True,
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    socks = []
    try:
        port = int(listener.stdout.readline())
        for _ in range(CONNECTS):
            s = socket.socket()
            s.setblocking(False)
            s.connect_ex(("127.0.0.1", port))
            socks.append(s)
        pending, done = list(socks), 0
        while pending:
            _, writable, _ = select.select([], pending, [], wait_s)
            if not writable:
                break
            for s in writable:
                pending.remove(s)
                done += s.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR) == 0
        return done
    finally:
        for s in socks:
            s.close()
        listener.stdin.close()
        listener.wait()


def test_without_it_a_backlog_of_one_leaves_connects_waiting():
    # The kernel's accept queue holds backlog + 1; the other SYNs are dropped until it drains,
    # which it never does here. (Shows the other test can fail.)
    assert connected_at_once(None, 1.5) < CONNECTS


def test_with_it_every_simultaneous_connect_completes(library):
    assert connected_at_once(library, 30.0) == CONNECTS


def test_qemu_forwarding_host_ports_gets_it_preloaded(tmp_path, monkeypatch, library):
    monkeypatch.setattr(vm_module, "LISTEN_BACKLOG_LIB", library)
    monkeypatch.setenv("LD_PRELOAD", "/other.so")
    forwarding = VM(kernel="/nonexistent", accel="tcg", workdir=str(tmp_path),
                    nics=[Nic(mac="52:54:00:12:34:56", hostfwd=[(8080, 80)])])
    assert forwarding.environment()["LD_PRELOAD"] == f"{library} /other.so"
    tap = VM(kernel="/nonexistent", accel="tcg", workdir=str(tmp_path),
             nics=[Nic(mac="52:54:00:12:34:56", backend="tap", tap="tap0")])
    assert tap.environment()["LD_PRELOAD"] == "/other.so"


def test_a_missing_library_names_the_fix(tmp_path, monkeypatch):
    monkeypatch.setattr(vm_module, "LISTEN_BACKLOG_LIB", str(tmp_path / "absent.so"))
    vm = VM(kernel="/nonexistent", accel="tcg", workdir=str(tmp_path),
            nics=[Nic(mac="52:54:00:12:34:56", hostfwd=[(8080, 80)])])
    with pytest.raises(FileNotFoundError, match="make all"):
        vm.start()
