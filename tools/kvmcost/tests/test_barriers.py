"""Does a guest's full barrier stay a barrier on every guest clock (patches/0012)?

The instruction clock runs the vCPU under single-threaded TCG, which in stock QEMU 7.2 drops a
guest's barriers and turns a locked read-modify-write into a plain load and store. QEMU's
device code still runs beside the vCPU, in other threads, on the guest's virtio rings, so a
driver's fence between its store of avail->idx and its load of avail_event was none there:
the host CPU let the load pass the store, the driver skipped the notification the device was
waiting for, and nom's NIC never received again (tools/kvmcost/README.md, "Barriers under
single-threaded TCG"). The exit guest fences before each kick of its clock check, with
`lock or $0,(%esp)` and MFENCE (exit_guest.c, full_fences); QEMU's log of the TCG ops of the
guest's own code (-d op, -dfilter on its text) must hold the barrier ops ("mb") they became."""
import re

import pytest

pytestmark = pytest.mark.boot

GUEST_TEXT = "0x100000+0x10000"  # exit-guest.elf's -Ttext (tools/kvmcost/Makefile) and size


def barrier_ops(run_exit_guest, tmp_path, clock):
    log = tmp_path / "ops.log"
    run = run_exit_guest("CLOCK", dilation=2.0, clock=clock,
                         extra=["-d", "op", "-D", str(log), "-dfilter", GUEST_TEXT])
    assert run.status == 1, f"guest exit code {run.status >> 1} (exit_guest.c)\n{run.stderr}"
    ops = log.read_text()
    assert "mov_i32" in ops, "QEMU logged no TCG op of the guest's code"
    return len(re.findall(r"^\s*mb\s", ops, re.M))


def test_on_the_instruction_clock_both_fences_are_host_barriers(run_exit_guest, tmp_path):
    # Without CF_PARALLEL the locked OR is a load and a store with a barrier on either side,
    # and MFENCE one barrier: three. Stock 7.2 emitted none.
    assert barrier_ops(run_exit_guest, tmp_path, "insn") >= 3


def test_on_the_dilated_clock_the_fences_were_barriers_already(run_exit_guest, tmp_path):
    # Multi-threaded TCG: MFENCE is a barrier op, the locked OR a host atomic operation.
    assert barrier_ops(run_exit_guest, tmp_path, "dilated") >= 1
