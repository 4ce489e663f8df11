#!/usr/bin/env python3
"""How long nom's virtio-net driver really holds a batch, per W (issue 11, item 4).

    python3 tools/bench/holds.py --w 0,10,40 --seconds 5             # memcached under "many"
    python3 tools/bench/holds.py --w 10 --phase single --kvmcost skylake --output /tmp/h.json

Boots nom with memcached alone at each W (tools/bench/guests.py's image), loads it with the
experiment's load of the phase (tools/loadgen, memcaslap), and reads memcached's `stats` before
and after: the driver's lateness histograms (drivers/virtio-net/virtio_net.h: batches by how
much longer than W their oldest frame waited, in the guest's clock) and its kicks and
interrupts, and the host's view of the vCPU thread over the phase (how long it waited for a
host CPU, how often it was preempted: /proc's schedstat). Prints, per W, ops/s, the lateness percentiles of rx and tx batches (the upper
bound of the bucket holding the percentile) and the share of batches 5 us or more late, i.e.
held W + 5 us or longer, all in the guest's clock. Under --kvmcost that clock is dilated
(tools/kvmcost patches/0003: the guest's TSC and timers run at 1/D of wall time), so W and the
lateness are undilated (KVM-equivalent) microseconds as they are. Without the cost model (the
stock QEMU) the guest's clock is wall time while its work runs D times slower than natively
and exits cost nothing: there "W + 5 us" is wall time, with no KVM host behind it.
"""
import argparse
import os
import sys
import tempfile
import time
import kvmcost
import loadgen
import toolflags
import vmcounters
from bench.guests import NomBenchDriver
from bench.report import write_rows
from experiment.labdriver import prepare
from experiment.machine import describe
from kvmcost import hostnoise
from loadgen import apps
from nomvm import choose_accel, placement

APP = "memcached"


def memcached_stats(lab):
    """memcached's `stats` as {name: text} (from inside the lab)."""
    script = (f"exec 3<>/dev/tcp/{lab.guest_ip}/{apps.MEMCACHED_PORT}; printf 'stats\\r\\n' >&3;"
              " while read -r line <&3; do echo \"$line\"; [ \"${line%$'\\r'}\" = END ] && break;"
              " done")
    r = lab.run(["timeout", "20", "bash", "-c", script], timeout=60)
    out = {}
    for line in r.stdout.splitlines():
        words = line.strip().split(" ", 2)
        if len(words) == 3 and words[0] == "STAT":
            out[words[1]] = words[2]
    if "net_rx_late_hist" not in out:
        raise RuntimeError(f"memcached's stats have no lateness histogram: {r.stdout[-300:]!r}")
    return out


def _children(pid):
    """pid and its descendants (QEMU may run under a wrapper of the lab's)."""
    kids = {}
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open(f"/proc/{d}/stat") as f:
                ppid = int(f.read().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        kids.setdefault(ppid, []).append(int(d))
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        todo.extend(kids.get(p, []))
    return out


def vcpu_sched(pid):
    """The host's view of the vCPU threads ("CPU n/TCG" or "/KVM") under pid: involuntary
    context switches and nanoseconds spent runnable but waiting for a host CPU
    (/proc/.../schedstat), summed; None where /proc does not say. Host descheduling shows as
    guest time passing with no guest instruction run (the guest clock follows the host's)."""
    switches = wait_ns = 0
    found = False
    for p in _children(pid):
        try:
            tasks = os.listdir(f"/proc/{p}/task")
        except OSError:
            continue
        for t in tasks:
            base = f"/proc/{p}/task/{t}"
            try:
                with open(f"{base}/comm") as f:
                    if placement.vcpu_index(f.read()) is None:
                        continue
                with open(f"{base}/schedstat") as f:
                    wait_ns += int(f.read().split()[1])
                with open(f"{base}/status") as f:
                    switches += int(next(l for l in f if l.startswith("nonvoluntary_ctxt"))
                                    .split()[1])
                found = True
            except (OSError, ValueError, IndexError, StopIteration):
                continue
    return {"involuntary_switches": switches, "runqueue_wait_ns": wait_ns} if found else None


def histogram(stats, name):
    return [int(x) for x in stats[name].split(",")]


def percentile_bound(counts, bounds, q):
    """The upper bound (us) of the bucket holding the q-quantile of counts; None if empty,
    float("inf") for the open last bucket."""
    total = sum(counts)
    if not total:
        return None
    seen = 0
    for i, n in enumerate(counts):
        seen += n
        if seen >= q * total:
            return bounds[i] if i < len(bounds) else float("inf")
    return float("inf")


def share_at_least(counts, bounds, us):
    """The share of batches in buckets whose lower bound is >= us (held at least us)."""
    total = sum(counts)
    if not total:
        return None
    lows = [0] + list(bounds)
    return sum(n for low, n in zip(lows, counts) if low >= us) / total


def summary(before, after):
    """Lateness (hold beyond W) percentiles of the batches between two stats, in the guest's
    clock (the histogram's bucket bounds), and the share of batches held at least W + 5 us,
    i.e. late by 5 us or more (bucket lower bounds)."""
    bounds = [int(x) for x in after["net_late_hist_bounds_us"].split(",")]
    out = {"bounds_us": bounds}
    for side in ("rx", "tx"):
        counts = [b - a for a, b in zip(histogram(before, f"net_{side}_late_hist"),
                                        histogram(after, f"net_{side}_late_hist"))]
        out[side] = {"counts": counts, "batches": sum(counts),
                     "p50_us_le": percentile_bound(counts, bounds, 0.5),
                     "p99_us_le": percentile_bound(counts, bounds, 0.99),
                     "share_ge_w_plus_5": share_at_least(counts, bounds, 5)}
    for k in ("net_tx_kicks", "net_rx_kicks", "net_interrupts", "net_arms"):
        out[k] = int(after[k]) - int(before[k])
    return out


def measure(w_us, phase, seconds, accel, workdir, cost_model, pin_vcpu=False, dilation=None,
            guest_clock=kvmcost.DEFAULT_GUEST_CLOCK):
    prepare()
    driver = NomBenchDriver(accel)
    driver.kvmcost_name = cost_model
    driver.pin_vcpu = pin_vcpu
    driver.dilation = dilation
    driver.guest_clock = guest_clock
    variant = {"name": f"w={w_us}", "w_us": w_us}
    source_clock = guest_clock if cost_model != "off" else "wall"
    noise_before = host_noise(driver, source_clock)
    try:
        info = driver.start(APP, variant, workdir)
        loadgen.run_phase(APP, phase, 1.0, driver.lab, os.path.join(workdir, "warmup"))
        s0 = memcached_stats(driver.lab)
        c0 = driver.counters.snapshot()
        h0, t0 = vcpu_sched(driver.vm.proc.pid), time.monotonic()
        fig = loadgen.run_phase(APP, phase, seconds, driver.lab, workdir)
        h1, t1 = vcpu_sched(driver.vm.proc.pid), time.monotonic()
        c1 = driver.counters.snapshot()
        s1 = memcached_stats(driver.lab)
    finally:
        driver.stop()
    noise = hostnoise.combine(noise_before, host_noise(driver, source_clock))
    row = {"w_us": w_us, "phase": phase, "ops_s": fig["ops"] / fig.get("seconds", seconds),
           "guest_clock": info["kvmcost"]["clock"] if info.get("kvmcost") else "wall",
           "latency_us": fig.get("latency_us"), "holds": summary(s0, s1),
           "counters": vmcounters.per_request(c0, c1, fig["ops"]),
           "placement": info.get("placement")}
    if h0 and h1:
        row["vcpu_host"] = {"wall_s": t1 - t0,
                            "involuntary_switches": h1["involuntary_switches"]
                            - h0["involuntary_switches"],
                            "runqueue_wait_s": (h1["runqueue_wait_ns"] - h0["runqueue_wait_ns"]) / 1e9}
    if info.get("kvmcost"):
        row["kvmcost"] = info["kvmcost"]
    if noise:
        # The stock QEMU's guest clock is wall time: a host stall counts in full (D = 1).
        row["host_noise"] = hostnoise.summary(noise, (row.get("kvmcost") or {}).get("dilation", 1.0))
    return row


def host_noise(driver, source_clock, seconds=2.0):
    """The host's stalls on the CPU the vCPU is pinned to (kvmcost/hostnoise.py), probed while
    no guest runs (measure() probes before the boot and after the guest stopped, since the host's
    noise drifts within minutes); None when the vCPU is not pinned (it has no CPU of its own) or
    the guest clock counts instructions (clock=insn: no host stall passes in guest time while
    the guest runs)."""
    where = placement.plan(driver.VCPUS) if driver.pin_vcpu else None
    if where is None or source_clock == "insn":  # the instruction clock skips the host's stalls
        return None
    return hostnoise.probe(where["vcpu_cpus"][0], seconds, source_clock)


def show(row):
    h = row["holds"]
    d = (row.get("kvmcost") or {}).get("dilation")
    sides = "  ".join(
        f"{side} batches {h[side]['batches']:7d} late p50<={h[side]['p50_us_le']} "
        f"p99<={h[side]['p99_us_le']} >=W+5: {100 * (h[side]['share_ge_w_plus_5'] or 0):5.1f}%"
        for side in ("rx", "tx"))
    pinned = " vCPU pinned" if row.get("placement") else ""
    print(f"W={row['w_us']:>2} ({row['guest_clock']} clock{pinned}) {row['phase']:6s} "
          f"{row['ops_s']:8.0f} ops/s  {sides}" + (f"  D={d:.2f}" if d else ""), flush=True)
    host = row.get("vcpu_host")
    if host:
        print(f"      vCPU thread on the host: waited for a CPU {host['runqueue_wait_s']:.2f} s of "
              f"{host['wall_s']:.2f} s ({100 * host['runqueue_wait_s'] / host['wall_s']:.0f}%), "
              f"{host['involuntary_switches'] / host['wall_s']:.0f} preemptions/s", flush=True)
    noise = row.get("host_noise")
    if noise:
        print(f"      host stalls on CPU {noise['cpu']} before and after ({noise['clock']} clock): "
              f"{noise['stalls_ge_10us_per_s']:.0f}/s >= 10 us, {noise['stalls_ge_50us_per_s']:.0f}/s "
              f">= 50 us; alone they make {100 * noise['predicted_share_late_ge_5us']:.1f}% of "
              f"releases >= 5 us late at D={noise['d']:.2f}", flush=True)
    led = row["counters"].get("kvmcost")
    if led:
        print("      per op: " + ", ".join(f"{k} {v['per_req']:.3f}"
                                          for k, v in led["by_kind"].items() if v["count"]),
              flush=True)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    toolflags.add_w_list(ap, [0, 10, 40])
    ap.add_argument("--phase", choices=("many", "single"), default="many")
    ap.add_argument("--seconds", type=float, default=5.0)
    ap.add_argument("--kvmcost", choices=kvmcost.CHOICES, default="off")
    toolflags.add_pin_vcpu(ap)
    toolflags.add_dilation(ap)
    toolflags.add_guest_clock(ap, kvmcost.GUEST_CLOCKS)
    ap.add_argument("--output", help="JSON of every row")
    args = ap.parse_args(argv)
    toolflags.check_dilation(ap, args)
    toolflags.settle_dilation(args, "holds")
    accel, reason = choose_accel()
    workdir = tempfile.mkdtemp(prefix="nomholds-")
    rows = []
    for w in args.w:
        rows.append(measure(w, args.phase, args.seconds, accel,
                            os.path.join(workdir, f"w{w}"), args.kvmcost, args.pin_vcpu,
                            args.dilation, args.guest_clock))
        show(rows[-1])
    if args.output:
        write_rows(args.output, "tools/bench/holds.py", argv if argv is not None else sys.argv[1:],
                   describe(accel, reason), rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
