"""Where a guest's QEMU runs on the host: each vCPU thread on a host CPU of its own, everything
else (QEMU's main loop and I/O threads, the load generator, the harness itself) on the others.

Why (issue 11, item 4): a guest's clock keeps running while the host scheduler has its vCPU
thread off the CPU (the guest's TSC follows the host's, dilated or not), so a time slice
given to the load generator or to QEMU's main loop on the vCPU's CPU shows in the guest as a
batch held W + the slice, an idle poll that overshot, a late timer. On the 2-CPU hosts here
the vCPU thread waited for a CPU 7-18 % of a "many" phase, 1.8-5.3K times a second
(tools/bench/holds.py's "waited for a CPU" line, results/holds-2026-11-28-tx-commit-per-rx-
frame). A hardware-KVM host of the paper gives each vCPU a core of its own; this gives the
emulated one the same, for every guest alike.

The split: the last `vcpus` host CPUs take one vCPU thread each (vCPU n on the n-th of them);
the harness and what it starts keep the rest, at least one CPU. With fewer host CPUs than
vCPUs + 1 there is nothing to split, and plan() says so.

QEMU names its vCPU threads ("CPU n/TCG", "CPU n/KVM") only with `-name ...,debug-threads=on`
(tools/vmcounters passes it for every lab guest).
"""
import os
import re
import time

_VCPU = re.compile(r"^CPU (\d+)/(TCG|KVM)$")
# Single-threaded TCG (QEMU's instruction counter needs it: kvmcost clock=insn) runs every
# vCPU in one thread; with the one vCPU the exit-cost model runs, that thread is vCPU 0.
_ALL_VCPUS = "ALL CPUs/TCG"


def vcpu_index(thread_name):
    """The vCPU index of a QEMU thread named thread_name ("CPU 1/TCG": 1; single-threaded
    TCG's "ALL CPUs/TCG": 0), None for QEMU's other threads (the one reading of the names for
    every tool: vmcounters/threads.py, bench/holds.py)."""
    name = thread_name.strip()
    if name == _ALL_VCPUS:
        return 0
    m = _VCPU.match(name)
    return int(m.group(1)) if m else None


# The host CPUs this process could use when it started, before confine_self() narrowed them.
HOST_CPUS = sorted(os.sched_getaffinity(0))


class PlacementError(RuntimeError):
    pass


def plan(vcpus, host_cpus=None):
    """{"vcpu_cpus": [...], "rest_cpus": [...]} for a guest of vcpus vCPUs on host_cpus
    (HOST_CPUS), or None when they cannot each have a CPU and leave one over."""
    host_cpus = sorted(HOST_CPUS if host_cpus is None else host_cpus)
    if vcpus < 1 or len(host_cpus) < vcpus + 1:
        return None
    return {"vcpu_cpus": host_cpus[-vcpus:], "rest_cpus": host_cpus[:-vcpus]}


def confine_self(cpus):
    """Runs this process on cpus: every thread it has (nomvm.vm forks QEMU from a thread of
    its own), so what they start from now on inherits it too."""
    for tid in os.listdir("/proc/self/task"):
        try:
            os.sched_setaffinity(int(tid), cpus)
        except ProcessLookupError:
            continue  # a thread that ended meanwhile


def confine_harness(vcpus):
    """Plans a guest of vcpus vCPUs (plan()) and confines this process to the rest of the CPUs;
    returns the plan. Raises PlacementError, saying why, when the host has no CPU to spare."""
    where = plan(vcpus)
    if where is None:
        raise PlacementError(f"{len(HOST_CPUS)} host CPU(s) cannot give {vcpus} vCPU(s) a CPU "
                             "each and keep one for the rest")
    confine_self(where["rest_cpus"])
    return where


def vcpu_threads(pid, proc="/proc"):
    """{vCPU index: thread id} of QEMU process pid, from its threads' names."""
    found = {}
    taskdir = os.path.join(proc, str(pid), "task")
    try:
        tids = os.listdir(taskdir)
    except OSError:
        return found
    for tid in tids:
        try:
            with open(os.path.join(taskdir, tid, "comm")) as f:
                index = vcpu_index(f.read())
        except OSError:
            continue
        if index is not None:
            found[index] = int(tid)
    return found


def pin_vcpus(pid, placement, timeout_s=30.0):
    """Moves QEMU pid's vCPU threads each onto its CPU of placement (plan()). QEMU makes them
    while it sets the machine up, so this waits until all of them exist. Returns {vCPU index:
    [thread id, host CPU]}; raises PlacementError if QEMU ends or names no such threads."""
    want = len(placement["vcpu_cpus"])
    deadline = time.monotonic() + timeout_s
    while True:
        threads = vcpu_threads(pid)
        if len(threads) >= want:
            break
        if not os.path.exists(f"/proc/{pid}") or time.monotonic() > deadline:
            raise PlacementError(f"QEMU {pid} shows {len(threads)} of {want} vCPU threads "
                                 "(named only with -name ...,debug-threads=on)")
        time.sleep(0.02)
    pinned = {}
    for index, cpu in zip(sorted(threads)[:want], placement["vcpu_cpus"]):
        try:
            os.sched_setaffinity(threads[index], {cpu})
        except OSError as e:
            raise PlacementError(f"vCPU {index} (thread {threads[index]}) onto CPU {cpu}: "
                                 f"{e}") from None
        pinned[index] = [threads[index], cpu]
    return pinned
