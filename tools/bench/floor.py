"""rawecho's UDP round trip, the floor every stack's latency is read against (issue 4).

The measuring code is apps/rawecho/bench.py's own (imported, not copied): one boot of nom with
rawecho on a tap in a namespace of its own, W set at run time over rawecho's control port, per
W the single round trip and the many echo rate with QEMU's per-request counters.
"""
import argparse
import importlib.util
import os

import netlab
import vmcounters
from nomvm import VM, Nic, make_iso

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
RAWECHO_BENCH = os.path.join(TOP, "apps", "rawecho", "bench.py")
MAC = "52:54:00:12:34:56"


def _rawecho_bench():
    """apps/rawecho/bench.py as a module (it is a script beside its app, not a package)."""
    spec = importlib.util.spec_from_file_location("rawecho_bench", RAWECHO_BENCH)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def measure(w_values, requests, window, accel, workdir):
    """{"guest_banner", "rows": rawecho bench.py's rows, one per W}. Raises RuntimeError,
    TimeoutError or netlab.NetLabError when rawecho cannot be measured."""
    rb = _rawecho_bench()
    args = argparse.Namespace(w=list(w_values), requests=requests, window=window)
    os.makedirs(workdir, exist_ok=True)
    iso = os.path.join(workdir, "rawecho.iso")  # 12 MB: removed whatever happens
    try:
        with netlab.NetLab() as lab:
            make_iso(str(rb.KERNEL), [(str(rb.RAWECHO), f"rawecho --ip={lab.guest_ip}")], iso)
            vm = VM(iso=iso, nics=[Nic(mac=MAC, backend="tap", tap=lab.tap)], accel=accel,
                    workdir=workdir, name="rawecho")
            counters = vmcounters.RunCounters(os.path.join(workdir, "counters"), vm.accel)
            vm.args += counters.qemu_args()
            target = rb.Target(lab.guest_ip, 7, 7001, lab)
            banner, rows = rb.run(args, vm, counters, target, lab.start_vm)
    finally:
        if os.path.exists(iso):
            os.unlink(iso)
    return {"guest_banner": banner, "requests": requests, "window": window, "rows": rows}
