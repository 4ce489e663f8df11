#!/usr/bin/env python3
"""Whole-guest stalls under the web load: how often nom answers none of its 32 connections for
milliseconds, and the QEMU soft-TLB flushes that were behind them.

    python3 tools/bench/stalls.py --w 0,10,20 --seconds 15
    python3 tools/bench/stalls.py --w 10 --kvmcost skylake --output /tmp/stalls.json

Boots nom with nhttpd alone at each W (tools/bench/guests.py's image, the experiment's lab),
loads it with wrk (the experiment's "many": -t2 -c32) and then with nomload (32 connections,
every request's latency kept in completion order), and asks QEMU's monitor for `info jit`
before and after the nomload phase.

A stall is what a packet capture on the tap showed (kernel/README.md, "Lazy idle address
space"): every connection's request reached the guest and none was answered for milliseconds,
then all were at once. In nomload's samples that is a run of requests, completed close
together, each slower than --stall-ms: runs closer than a connection count apart are one stall.
The row gives their number and the longest ones, wrk's latency (mean, p50, p99, stddev, max) and
the soft-TLB flushes QEMU made meanwhile (full + partial: each empties, and may re-size, the
vCPU's TLB table; under this nested host one cost up to 75 ms).
"""
import argparse
import os
import socket
import sys
import tempfile
import time

import kvmcost
import loadgen
import toolflags
from bench.guests import NomBenchDriver
from bench.report import write_rows
from experiment.labdriver import prepare
from experiment.machine import describe
from loadgen import apps
from loadgen.runners import MANY_CONNS, nomload
from nomvm import choose_accel

APP = "nhttpd"


class MonitoredDriver(NomBenchDriver):
    """NomBenchDriver whose QEMU also serves its human monitor (HMP) on a Unix socket."""

    monitor = None

    def make_vm(self, app, variant, workdir, nic, extra_args):
        self.monitor = os.path.join(workdir, "hmp.sock")
        return super().make_vm(app, variant, workdir, nic,
                               list(extra_args) + ["-monitor", f"unix:{self.monitor},server,nowait"])


def hmp(path, command, timeout=10.0):
    """The monitor's answer to one command (the text between the command and its next prompt)."""
    with socket.socket(socket.AF_UNIX) as s:
        s.settimeout(timeout)
        s.connect(path)
        out = b""
        while not out.endswith(b"(qemu) "):
            out += s.recv(65536)
        s.sendall(command.encode() + b"\n")
        out = b""
        while not out.endswith(b"(qemu) "):
            chunk = s.recv(65536)
            if not chunk:
                break
            out += chunk
    return out.decode(errors="replace").replace("\r", "")


def tlb_flushes(info_jit):
    """{"full", "partial", "elided"} from `info jit`'s statistics."""
    out = {}
    for line in info_jit.splitlines():
        for key, name in (("full", "TLB full flushes"), ("partial", "TLB partial flushes"),
                          ("elided", "TLB elided flushes")):
            if line.strip().startswith(name):
                out[key] = int(line.split()[-1])
    if len(out) != 3:
        raise ValueError(f"no TLB flush counts in `info jit`: {info_jit[-300:]!r}")
    return out


def stalls(latencies_us, threshold_us, conns):
    """The stalls in latencies (completion order): runs of requests slower than threshold_us,
    runs less than conns requests apart counted as one. Returns [(first index, count, longest
    latency)]."""
    out = []
    for i, lat in enumerate(latencies_us):
        if lat < threshold_us:
            continue
        if out and i - out[-1][3] <= conns:
            first, n, worst, _ = out[-1]
            out[-1] = (first, n + 1, max(worst, lat), i)
        else:
            out.append((i, 1, lat, i))
    return [(first, n, worst) for first, n, worst, _ in out]


def read_samples(path):
    """nomload's --samples file: one latency in ns per line -> microseconds."""
    with open(path) as f:
        return [int(line.split()[0]) / 1000 for line in f if line.strip()]


def measure(w_us, seconds, accel, workdir, cost_model, stall_us):
    prepare()
    driver = MonitoredDriver(accel)
    driver.kvmcost_name = cost_model
    try:
        info = driver.start(APP, {"name": f"w={w_us}", "w_us": w_us}, workdir)
        loadgen.run_phase(APP, "many", 2, driver.lab, os.path.join(workdir, "warmup"),
                          client="paper")
        fig = loadgen.run_phase(APP, "many", seconds, driver.lab, os.path.join(workdir, "wrk"),
                                client="paper")
        flushes0 = tlb_flushes(hmp(driver.monitor, "info jit"))
        samples = os.path.join(workdir, "nomload-samples.txt")
        t0 = time.monotonic()
        r = nomload(driver.lab, "http", driver.lab.guest_ip, apps.HTTP_PORT, MANY_CONNS, seconds,
                    workdir, extra=["--path", apps.INDEX_PATH, "--samples", samples])
        wall = time.monotonic() - t0
        flushes1 = tlb_flushes(hmp(driver.monitor, "info jit"))
    finally:
        driver.stop()
    lat = read_samples(samples)
    found = stalls(lat, stall_us, MANY_CONNS)
    row = {"w_us": w_us, "wrk": {"requests_per_s": fig["ops"] / fig["seconds"],
                                 "latency_us": fig["latency_us"]},
           "nomload": {"requests_per_s": r["throughput_rps"], "latency_us": r["latency_us"],
                       "stall_ms": stall_us / 1000, "stalls": len(found),
                       "longest_stalls_ms": sorted(round(s[2] / 1000, 1) for s in found)[-8:]},
           "soft_tlb_flushes_per_s": {k: (flushes1[k] - flushes0[k]) / wall for k in flushes0},
           "guest_clock": "dilated" if info.get("kvmcost") else "wall"}
    if info.get("kvmcost"):
        row["kvmcost"] = info["kvmcost"]
    return row


def show(row):
    w, n, f = row["wrk"], row["nomload"], row["soft_tlb_flushes_per_s"]
    lat = w["latency_us"]
    print(f"W={row['w_us']:>2} ({row['guest_clock']} clock) wrk {w['requests_per_s']:7.0f} req/s "
          f"p50 {lat['p50']:.0f} p99 {lat['p99']:.0f} stddev {lat['stddev']:.0f} us | nomload "
          f"{n['requests_per_s']:7.0f} req/s max {n['latency_us']['max'] / 1000:.1f} ms, "
          f"{n['stalls']} stalls >= {n['stall_ms']} ms, longest {n['longest_stalls_ms']} | "
          f"soft-TLB flushes/s {f['full'] + f['partial']:.1f}", flush=True)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    toolflags.add_w_list(ap, [0, 10, 20])
    ap.add_argument("--seconds", type=float, default=15.0)
    ap.add_argument("--stall-ms", type=float, default=2.5,
                    help="a request slower than this is part of a stall (default 2.5)")
    ap.add_argument("--kvmcost", choices=kvmcost.CHOICES, default="off")
    ap.add_argument("--output", help="JSON of every row")
    args = ap.parse_args(argv)
    if args.seconds <= 0 or args.stall_ms <= 0:
        ap.error("--seconds and --stall-ms must be positive")
    accel, reason = choose_accel()
    workdir = tempfile.mkdtemp(prefix="nomstalls-")
    rows = []
    for w in args.w:
        rows.append(measure(w, args.seconds, accel, os.path.join(workdir, f"w{w}"),
                            args.kvmcost, args.stall_ms * 1000))
        show(rows[-1])
    if args.output:
        write_rows(args.output, "tools/bench/stalls.py", argv if argv is not None else sys.argv[1:],
                   describe(accel, reason), rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
