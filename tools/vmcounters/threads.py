"""CPU time of a QEMU's vCPU threads, from /proc/PID/task/*/stat (proc(5): utime, stime).

QEMU names its vCPU threads "CPU N/TCG" or "CPU N/KVM"; their CPU time over wall time is the
share of a host core the guest used (1.0: a vCPU that never idled).
"""
import os
import time

from nomvm.placement import vcpu_index

CLK_TCK = os.sysconf("SC_CLK_TCK")


def read_task_stat(stat_text):
    """(name, utime + stime in ticks) from a /proc/.../stat line; the name may hold spaces."""
    name = stat_text[stat_text.index("(") + 1:stat_text.rindex(")")]
    fields = stat_text[stat_text.rindex(")") + 2:].split()
    # fields[0] is field 3 (state): utime and stime are fields 14 and 15.
    return name, int(fields[11]) + int(fields[12])


def sample_vcpu_threads(pid, proc="/proc"):
    """{"mono_ns": now, "threads": {"CPU 0/TCG": ticks, ...}} for QEMU process pid
    ({} threads if it has ended)."""
    threads = {}
    taskdir = os.path.join(proc, str(pid), "task")
    try:
        tids = os.listdir(taskdir)
    except OSError:
        tids = []
    for tid in tids:
        try:
            with open(os.path.join(taskdir, tid, "stat")) as f:
                name, ticks = read_task_stat(f.read())
        except (OSError, ValueError, IndexError):
            continue
        if vcpu_index(name) is not None:
            threads[name] = ticks
    return {"mono_ns": time.monotonic_ns(), "threads": threads}


def utilization(before, after):
    """{thread name: CPU share between two samples}, 0.0..1.0 per thread."""
    wall_s = (after["mono_ns"] - before["mono_ns"]) / 1e9
    if wall_s <= 0:
        return {}
    return {name: (ticks - before["threads"].get(name, 0)) / CLK_TCK / wall_s
            for name, ticks in after["threads"].items()}
