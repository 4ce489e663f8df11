"""A QEMU started by nomvm.VM dies with the Python process that started it (a killed pytest
leaves no QEMU behind), also when the thread that called start() has long ended."""
import os
import select
import signal
import subprocess
import sys
import time

import pytest

pytestmark = pytest.mark.boot

# The child: starts a VM (paused with -S: no guest needed) from its main thread or from a
# thread that ends at once, prints QEMU's PID, then waits to be killed.
CHILD = """
import sys, threading, time
from nomvm import VM
def start():
    vm = VM(accel="tcg", workdir=sys.argv[1], extra_args=["-S"], name="orphan")
    vm.start()
    print(vm.proc.pid, flush=True)
if sys.argv[2] == "thread":
    t = threading.Thread(target=start)
    t.start()
    t.join()
else:
    start()
time.sleep(600)
"""


def alive(pid):
    """Whether pid runs (a zombie has ended: it only waits for its reaper)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def qemu_of_child(child, timeout=60):
    ready, _, _ = select.select([child.stdout], [], [], timeout)
    assert ready, "the child printed no QEMU PID"
    pid = int(child.stdout.readline())
    with open(f"/proc/{pid}/cmdline", "rb") as f:
        assert b"qemu-system-x86_64" in f.read()
    return pid


@pytest.mark.parametrize("started_from", ["main", "thread"])
def test_qemu_dies_when_its_python_is_killed(tmp_path, started_from):
    """Is QEMU gone (by its PID) after the Python that started it got SIGKILL?"""
    child = subprocess.Popen([sys.executable, "-c", CHILD, str(tmp_path), started_from],
                             stdout=subprocess.PIPE, text=True)
    pid = None
    try:
        pid = qemu_of_child(child)
        time.sleep(1.0)  # the starting thread has ended by now; QEMU must still run
        assert alive(pid), "QEMU died with the thread that started it, not with its process"
        child.kill()
        child.wait(30)
        deadline = time.monotonic() + 10
        while alive(pid) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not alive(pid), f"QEMU {pid} outlived the Python that started it"
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
        if pid and alive(pid):
            os.kill(pid, signal.SIGKILL)
