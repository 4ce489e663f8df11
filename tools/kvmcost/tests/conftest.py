"""The exit-cost QEMU (skipping, with the fix named, the tests that need it when it is not
built), the exit guest (exit_guest.c), built once for the tests that boot it, and a runner that
boots it on the patched QEMU and plays its handshake (test_ledger.py, test_clock.py,
test_barriers.py)."""
import mmap
import os
import subprocess
import time

import pytest

import kvmcost
import nomvm

READY = 0x52454459  # exit_guest.c's handshake words: the guest's, then the host's two
WORDS = {"GO": 0x474F2121, "CLOCK": 0x434C4F4B}
MEMORY_MB = 32


@pytest.fixture(scope="session")
def kvmcost_qemu():
    """The exit-cost QEMU's path; the test skips when it is not built."""
    if not os.access(kvmcost.QEMU, os.X_OK):
        pytest.skip(f"{kvmcost.QEMU} not built (make qemu-kvmcost)")
    return kvmcost.QEMU


@pytest.fixture(scope="session")
def guest(kvmcost_qemu):
    """The exit guest's ELF; only the exit-cost QEMU runs it."""
    subprocess.run(["make", "-s", "-C", kvmcost.HERE], check=True,
                   env=dict(os.environ, TOP=kvmcost.TOP, BUILD=kvmcost.BUILD))
    return os.path.join(kvmcost.BUILD, "kvmcost", "exit-guest.elf")


def symbol_address(elf, name):
    out = subprocess.run(["nm", elf], check=True, capture_output=True, text=True).stdout
    for line in out.splitlines():
        words = line.split()
        if words[-1] == name:
            return int(words[0], 16)
    raise LookupError(f"{name} not in {elf}")


def wait_for_word(ram, offset, value, vm, timeout=60.0):
    """Polls the guest's RAM (a shared file) until the 32-bit word at offset reads value."""
    deadline = time.monotonic() + timeout
    while int.from_bytes(ram[offset:offset + 4], "little") != value:
        if vm.proc.poll() is not None:
            raise AssertionError(f"QEMU exited ({vm.proc.returncode}) before the guest was ready")
        if time.monotonic() > deadline:
            raise TimeoutError("the exit guest never reported READY")
        time.sleep(0.01)


class ExitGuestRun:
    """One boot of the exit guest: `status` (QEMU's), `before` (the ledger when the guest said
    READY, before the host's word), `after` (the final ledger), `ram` (the guest's memory at
    the end), `symbol(name)` (a guest variable's bytes there), `stderr`."""

    def __init__(self, guest, status, before, after, ram, stderr):
        self.guest, self.status, self.before, self.after = guest, status, before, after
        self.ram, self.stderr = ram, stderr

    def symbol(self, name, size):
        at = symbol_address(self.guest, name)  # guest-physical = file offset (no paging)
        return self.ram[at:at + size]


@pytest.fixture
def run_exit_guest(guest, tmp_path):
    """run_exit_guest(word, cost_file, extra=(), before_word=None, **args_for's keywords):
    boots the exit guest with a modern virtio-net device, shared RAM and `extra` QEMU
    arguments, takes a ledger snapshot at READY, calls before_word(t) if given (t: the
    time.monotonic() at which the host saw READY), writes word
    (a name of WORDS: "GO" or "CLOCK") and waits for the guest to end."""
    def run(word, cost_file=kvmcost.SKYLAKE, extra=(), before_word=None, **kvmcost_args):
        ledger = str(tmp_path / "ledger.json")
        ram_path = tmp_path / "guest-ram"
        ram_path.write_bytes(b"\0" * (MEMORY_MB << 20))
        handshake = symbol_address(guest, "handshake")
        args = kvmcost.args_for(cost_file, ledger, interval_ms=20, **kvmcost_args) + [*extra,
            "-object", f"memory-backend-file,id=ram,size={MEMORY_MB}M,mem-path={ram_path},"
                       "share=on",
            "-machine", "memory-backend=ram",
            "-device", "virtio-net-pci,disable-legacy=on,disable-modern=off,romfile="]
        vm = nomvm.VM(kernel=guest, memory_mb=MEMORY_MB, accel="tcg", extra_args=args,
                      workdir=str(tmp_path), name="kvmcost", qemu=kvmcost.qemu_binary())
        with vm, open(ram_path, "r+b") as f, mmap.mmap(f.fileno(), 0) as ram:
            wait_for_word(ram, handshake, READY, vm)
            ready_seen = time.monotonic()
            before = kvmcost.snapshot(ledger, str(tmp_path / "before.json"))
            if before_word:
                before_word(ready_seen)
            ram[handshake + 4:handshake + 8] = WORDS[word].to_bytes(4, "little")
            status = vm.wait_exit(timeout=120)
            memory = bytes(ram)
        stderr = open(os.path.join(vm.workdir, "qemu.stderr")).read()
        return ExitGuestRun(guest, status, before, kvmcost.read_ledger(ledger), memory, stderr)
    return run
