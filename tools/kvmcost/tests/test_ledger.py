"""Does the patched QEMU charge each exit-equivalent once, under its kind, at its cost?

The exit guest (exit_guest.c) drives ROUNDS kicks, port writes, self-IPIs and LAPIC-timer
interrupts woken from HLT, after a handshake through shared guest RAM that lets the test take a
ledger snapshot once the firmware and the guest's set-up are done. No timing is asserted."""
import mmap
import os
import subprocess
import time

import pytest

import kvmcost
import nomvm

pytestmark = pytest.mark.boot

ROUNDS = 100  # exit_guest.c
READY, GO = 0x52454459, 0x474F2121
MEMORY_MB = 32

needs_qemu = pytest.mark.skipif(not os.access(kvmcost.QEMU, os.X_OK),
                                reason=f"{kvmcost.QEMU} not built (make qemu-kvmcost)")

# What the guest drives per round, kind by kind (exit_guest.c, guest_main); every other kind 0.
EXPECTED = {
    "kick": ROUNDS,            # a doorbell write each
    "pio": ROUNDS,             # an outb to 0x80 each (the exit write to 0xf4 ends QEMU first)
    "lapic_icr": ROUNDS,       # a self-IPI each
    "irq_ipi": ROUNDS,
    "lapic_timer": 2 * ROUNDS,  # LVT timer and initial count, per timer round
    "irq_timer": ROUNDS,
    "hlt": ROUNDS,             # one HLT per timer round, woken by the timer
    "lapic_eoi": 2 * ROUNDS,   # one per IPI and one per timer interrupt
}


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


@needs_qemu
def test_every_exit_the_guest_drives_is_charged_once_at_its_cost(guest, tmp_path):
    ledger = str(tmp_path / "ledger.json")
    ram_path = tmp_path / "guest-ram"
    ram_path.write_bytes(b"\0" * (MEMORY_MB << 20))
    handshake = symbol_address(guest, "handshake")  # guest-physical = file offset (no paging)
    extra = kvmcost.args_for(kvmcost.SKYLAKE, ledger, interval_ms=20) + [
        "-object", f"memory-backend-file,id=ram,size={MEMORY_MB}M,mem-path={ram_path},share=on",
        "-machine", "memory-backend=ram",
        "-device", "virtio-net-pci,disable-legacy=on,disable-modern=off,romfile="]
    vm = nomvm.VM(kernel=guest, memory_mb=MEMORY_MB, accel="tcg", extra_args=extra,
                  workdir=str(tmp_path), name="kvmcost", qemu=kvmcost.qemu_binary())
    with vm, open(ram_path, "r+b") as f, mmap.mmap(f.fileno(), 0) as ram:
        wait_for_word(ram, handshake, READY, vm)
        before = kvmcost.snapshot(ledger, str(tmp_path / "before.json"))
        ram[handshake + 4:handshake + 8] = GO.to_bytes(4, "little")
        status = vm.wait_exit(timeout=120)
    assert status == 1, f"guest exit code {status >> 1} (exit_guest.c)\n" + open(
        os.path.join(vm.workdir, "qemu.stderr")).read()
    after = kvmcost.read_ledger(ledger)
    assert after["final"] and after["dilation"] == 1
    charged = kvmcost.difference(before, after)
    for kind in kvmcost.KINDS:
        cost = after["kinds"][kind]["cost_ns"]
        n = EXPECTED.get(kind, 0)
        assert charged[kind] == {"count": n, "ns": n * cost, "stall_ns": n * cost}, kind
