"""The vCPU thread on a host CPU of its own, everything else on the rest (nomvm.placement)."""
import os
import subprocess
import sys

import pytest

from nomvm import VM, placement

TOOLS = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def test_the_last_cpus_go_to_the_vcpus_and_the_rest_keeps_the_others():
    assert placement.plan(1, [0, 1]) == {"vcpu_cpus": [1], "rest_cpus": [0]}
    assert placement.plan(2, [3, 0, 1, 2]) == {"vcpu_cpus": [2, 3], "rest_cpus": [0, 1]}
    assert placement.plan(1, [0, 2, 5]) == {"vcpu_cpus": [5], "rest_cpus": [0, 2]}


def test_a_host_without_a_cpu_to_spare_has_no_plan():
    assert placement.plan(1, [0]) is None
    assert placement.plan(2, [0, 1]) is None
    assert placement.plan(0, [0, 1]) is None


def test_vcpu_threads_are_found_by_qemus_names(tmp_path):
    for tid, name in ((100, "qemu-system-x86"), (101, "CPU 1/TCG"), (102, "CPU 0/TCG"),
                      (103, "worker"), (104, "CPU 7/KVM")):
        os.makedirs(tmp_path / "42" / "task" / str(tid))
        (tmp_path / "42" / "task" / str(tid) / "comm").write_text(name + "\n")
    assert placement.vcpu_threads(42, proc=str(tmp_path)) == {0: 102, 1: 101, 7: 104}
    assert placement.vcpu_threads(43, proc=str(tmp_path)) == {}


def test_single_threaded_tcg_s_one_thread_is_vcpu_0(tmp_path):
    """QEMU's instruction counter (kvmcost clock=insn) runs every vCPU in one thread."""
    for tid, name in ((100, "qemu-system-x86"), (105, "ALL CPUs/TCG")):
        os.makedirs(tmp_path / "42" / "task" / str(tid))
        (tmp_path / "42" / "task" / str(tid) / "comm").write_text(name + "\n")
    assert placement.vcpu_threads(42, proc=str(tmp_path)) == {0: 105}


def allowed(tid):
    with open(f"/proc/{tid}/status") as f:
        line = next(l for l in f if l.startswith("Cpus_allowed_list:"))
    return line.split(":", 1)[1].strip()


@pytest.mark.boot
@pytest.mark.skipif(len(placement.HOST_CPUS) < 2, reason="one host CPU: nothing to split")
def test_a_real_qemus_vcpu_thread_lands_on_its_cpu_and_its_other_threads_stay(tmp_path):
    where = placement.plan(1)
    vm = VM(accel="tcg", workdir=str(tmp_path), name="placement",
            extra_args=["-S", "-name", "placement,debug-threads=on"])
    vm.start()
    try:
        pinned = placement.pin_vcpus(vm.proc.pid, where)
        tid, cpu = pinned[0]
        assert cpu == where["vcpu_cpus"][0]
        assert allowed(tid) == str(cpu)
        assert allowed(vm.proc.pid) != str(cpu)  # QEMU's main loop may still run anywhere
    finally:
        vm.stop()


@pytest.mark.boot
def test_a_qemu_without_thread_names_is_a_clear_error(tmp_path):
    vm = VM(accel="tcg", workdir=str(tmp_path), name="placement", extra_args=["-S"])
    vm.start()
    try:
        with pytest.raises(placement.PlacementError, match="debug-threads=on"):
            placement.pin_vcpus(vm.proc.pid, {"vcpu_cpus": [0], "rest_cpus": []},
                                timeout_s=2)
    finally:
        vm.stop()


# Confining changes the process it runs in, so it runs in a child: a thread started before
# the call is moved too (nomvm.vm forks QEMU from such a thread), and so is a child started
# after it.
CONFINE = """
import os, subprocess, threading
from nomvm import placement
ready, done = threading.Event(), threading.Event()
tids = []
def early():
    tids.append(threading.get_native_id())
    ready.set()
    done.wait()
t = threading.Thread(target=early)
t.start()
ready.wait()
placement.confine_self([0])
with open(f"/proc/self/task/{tids[0]}/status") as f:
    thread = next(l for l in f if l.startswith("Cpus_allowed_list:")).split(":")[1].strip()
child = subprocess.run(["grep", "Cpus_allowed_list", "/proc/self/status"],
                       capture_output=True, text=True).stdout.split(":")[1].strip()
done.set()
print(thread, child)
"""


def test_confining_moves_every_thread_and_what_they_start_later():
    out = subprocess.run([sys.executable, "-c", CONFINE], capture_output=True, text=True,
                         env=dict(os.environ, PYTHONPATH=TOOLS), timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["0", "0"]
