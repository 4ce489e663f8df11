"""rawecho's UDP round trip, the floor every stack's latency is read against (issue 4), and
memcached's single-request round trip beside it (issue 16: within 1.3x the floor at W = 0).

The measuring code is apps/rawecho/bench.py's own (imported, not copied): one boot of nom with
rawecho on a tap in a namespace of its own, W set at run time over rawecho's control port, per
W the single round trip and the many echo rate with QEMU's per-request counters.
"""
import argparse
import importlib.util
import json
import os
import statistics
import sys

import netlab
import vmcounters
from bench import guests
from loadgen import apps
from nomvm import VM, Nic, make_iso

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
RAWECHO_BENCH = os.path.join(TOP, "apps", "rawecho", "bench.py")
MEMCACHED_CLIENT = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "memcached_rtt_client.py")
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


def rtt_summary(rtts):
    """Median, p99, mean and standard deviation of round trips (µs), as rawecho's rows."""
    if not rtts:
        raise RuntimeError("no round trip was measured")
    return {"requests": len(rtts), "rtt_us_median": statistics.median(rtts),
            "rtt_us_p99": sorted(rtts)[int(0.99 * (len(rtts) - 1))],
            "rtt_us_mean": statistics.fmean(rtts), "rtt_us_stddev": statistics.pstdev(rtts)}


def measure_memcached(requests, accel, workdir):
    """memcached alone on nom at W = 0, on a tap in a lab of its own like rawecho's and on the
    same (stock) QEMU: the round trip of one `get` of a 64-byte value at a time
    (memcached_rtt_client.py, timed as rawecho's client times an echo). Raises
    guests.GuestError, RuntimeError or TimeoutError when it cannot be measured."""
    driver = guests.start_guest("nom", accel, workdir, w_us=0, app="memcached")
    try:
        r = driver.lab.run([sys.executable, MEMCACHED_CLIENT, driver.lab.guest_ip,
                            str(apps.MEMCACHED_PORT), str(requests)], timeout=600)
        if r.returncode != 0:
            raise RuntimeError(f"memcached_rtt_client failed: {r.stderr.strip()}")
        return {"w_us": 0, "value_bytes": 64, **rtt_summary(json.loads(r.stdout)["rtts_us"])}
    finally:
        driver.stop()


def floor_ratio(memcached, rawecho):
    """memcached's median round trip over rawecho's at W = 0 (None if either is missing)."""
    rows = [r for r in rawecho.get("rows", []) if r["batching_delay_us"] == 0]
    if "error" in memcached or not rows:
        return None
    return memcached["rtt_us_median"] / rows[0]["single"]["rtt_us_median"]
