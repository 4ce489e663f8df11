#!/usr/bin/env python3
"""Where QEMU's threads wait for its locks while nom's memcached is under "many" (issue 11
item 4, a diagnostic kept with its results): QEMU's own lock profiler (-enable-sync-profile,
util/qsp.c), read over QMP with HMP's `info sync-profile` after a warm-up and after the phase,
the difference per call site printed. Same boot as tools/bench/holds.py.

    python3 results/holds-2026-11-28-vcpu-pinned/bql_profile.py --w 10 --kvmcost skylake --pin-vcpu
"""
import argparse
import os
import signal
import subprocess
import sys
import tempfile

TOOLS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tools")
sys.path.insert(0, os.path.abspath(TOOLS))

import loadgen  # noqa: E402
from bench.guests import NomBenchDriver  # noqa: E402
from bench.holds import memcached_stats, summary, vcpu_sched  # noqa: E402
from experiment.labdriver import prepare  # noqa: E402
from nomvm import choose_accel, placement  # noqa: E402
from vmcounters.kvmstats import Qmp  # noqa: E402


class ProfiledDriver(NomBenchDriver):
    """holds.py's guest, with QEMU's lock profiler on and a QMP socket to read it."""

    def make_vm(self, app, variant, workdir, nic, extra_args):
        self.qmp_path = os.path.join(workdir, "qmp.sock")
        extra = list(extra_args) + ["-enable-sync-profile",
                                    "-qmp", f"unix:{self.qmp_path},server=on,wait=off"]
        return super().make_vm(app, variant, workdir, nic, extra)


def profile(qmp):
    """{(lock type, call site): [wait_s, count]} summed over objects. `info sync-profile -n`
    lines (util/qsp.c): type (may hold a space: "BQL mutex"), object, call site, wait time in s,
    count, average in us."""
    out = {}
    text = qmp.execute("human-monitor-command", **{"command-line": "info sync-profile -n 1000"})
    for line in text.splitlines():
        f = line.split()
        if len(f) < 6 or ":" not in f[-4]:
            continue
        try:
            wait, count = float(f[-3]), int(f[-2])
        except ValueError:
            continue
        w = out.setdefault((" ".join(f[:-5]), f[-4]), [0.0, 0])
        w[0] += wait
        w[1] += count
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--w", type=float, default=10)
    ap.add_argument("--seconds", type=float, default=5)
    ap.add_argument("--kvmcost", default="skylake")
    ap.add_argument("--pin-vcpu", action="store_true")
    ap.add_argument("--perf", metavar="FILE", help="also sample the vCPU thread over the phase "
                    "(perf record -e cpu-clock, call graphs) into FILE, and count its switches "
                    "off the CPU (sched:sched_switch)")
    args = ap.parse_args()
    accel, _ = choose_accel()
    prepare()
    driver = ProfiledDriver(accel)
    driver.kvmcost_name, driver.pin_vcpu = args.kvmcost, args.pin_vcpu
    workdir = tempfile.mkdtemp(prefix="nombql-")
    try:
        driver.start("memcached", {"name": f"w={args.w:g}", "w_us": args.w}, workdir)
        qmp = Qmp(driver.qmp_path)
        loadgen.run_phase("memcached", "many", 1.0, driver.lab, os.path.join(workdir, "warm"))
        s0, p0, h0 = memcached_stats(driver.lab), profile(qmp), vcpu_sched(driver.vm.proc.pid)
        perf = None
        if args.perf:
            tid = placement.vcpu_threads(driver.vm.proc.pid)[0]
            perf = subprocess.Popen(["perf", "record", "-q", "-e", "cpu-clock", "-F", "10000",
                                     "-e", "sched:sched_switch", "-g", "-t", str(tid),
                                     "-o", args.perf], stdout=subprocess.DEVNULL)
        fig = loadgen.run_phase("memcached", "many", args.seconds, driver.lab, workdir)
        if perf:
            perf.send_signal(signal.SIGINT)
            perf.wait(60)
        s1, p1, h1 = memcached_stats(driver.lab), profile(qmp), vcpu_sched(driver.vm.proc.pid)
    finally:
        driver.stop()
    h = summary(s0, s1)
    print(f"W={args.w:g} {args.kvmcost} pinned={args.pin_vcpu} ops/s "
          f"{fig['ops'] / fig.get('seconds', args.seconds):.0f}; rx >= W+5 "
          f"{100 * h['rx']['share_ge_w_plus_5']:.1f} %, tx {100 * h['tx']['share_ge_w_plus_5']:.1f} %;"
          f" vCPU runqueue wait {(h1['runqueue_wait_ns'] - h0['runqueue_wait_ns']) / 1e9:.2f} s")
    rows = []
    for key, (wait, count) in p1.items():
        w0, c0 = p0.get(key, [0.0, 0])
        if count - c0:
            rows.append((wait - w0, count - c0, key))
    print(f"{'wait s':>8} {'waits':>9} {'avg us':>8}  lock / call site (phase: {args.seconds:g} s)")
    for wait, count, (kind, site) in sorted(rows, reverse=True)[:15]:
        print(f"{wait:8.3f} {count:9d} {1e6 * wait / count:8.2f}  {kind} {site}")


if __name__ == "__main__":
    main()
