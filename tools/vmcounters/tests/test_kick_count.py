"""Does the trace counter count every notification a guest makes, and nothing else? The kick
guest (kick_guest.c) notifies virtio-net exactly 1000 times and takes no interrupt."""
import os
import subprocess

import pytest

import vmcounters

pytestmark = pytest.mark.boot

KICKS = 1000  # kick_guest.c
GUEST = os.path.join(os.path.dirname(vmcounters.PLUGIN), "kick-guest.elf")


def test_every_kick_is_one_notification_and_no_interrupt(tmp_path):
    vmcounters.build()
    counters = vmcounters.RunCounters(str(tmp_path), "tcg")
    args = ["qemu-system-x86_64", "-machine", "q35", "-accel", "tcg", "-cpu", "max", "-m", "32",
            "-display", "none", "-nodefaults", "-no-reboot",
            "-device", "isa-debug-exit,iobase=0xf4,iosize=0x04",
            "-device", "virtio-net-pci,disable-legacy=on,disable-modern=off,romfile=",
            "-kernel", GUEST] + counters.qemu_args()
    counters.start()
    try:
        result = subprocess.run(args, capture_output=True, text=True, timeout=120)
    finally:
        snap = counters.stop()
    assert result.returncode == 1, result.stderr  # the guest's own exit, code 0
    assert vmcounters.notifications(snap) == KICKS
    assert vmcounters.interrupts(snap) == 0
    assert counters.insns.samples()[-1].final
