"""Does the kernel survive garbage system calls from both vCPUs of one application, and does a
neighbour application keep running meanwhile? A short run of tools/fuzz/syscalls.py (the 1M-call
run is manual: tools/fuzz/README.md)."""
import pytest

from fuzz import syscalls

pytestmark = pytest.mark.boot


def test_garbage_system_calls_from_two_vcpus_leave_the_kernel_and_the_neighbour_running():
    b = syscalls.run(calls=10000, seed=7, witness_rounds=10, timeout=600)
    assert not b.panicked, b.log[-4000:]
    assert b.calls == 20000 and b.cpus == "0,1", b.log[-4000:]
    assert b.fuzz_exit == "0", b.log[-4000:]
    assert b.witness_ok, b.log[-4000:]
