#!/usr/bin/env python3
"""rawecho's floor benchmark (a measurement, not a test).

Boots nom with rawecho once and, for each batching delay W (set at run time over rawecho's
control port), measures:
  single: the UDP echo round trip, one 64-byte request at a time (median, p99, mean, stddev);
  many:   echoes per second with a window of requests in flight;
and per request, counted by QEMU (tools/vmcounters): guest instructions (TCG plugin), device
notifications (kicks: virtio_queue_notify) and virtio interrupts, plus the driver's own counters
(deltas of rawecho's "stats"; each delta includes one stats request).
--net tap (default) runs QEMU and the client in a network namespace of its own (tools/netlab);
--net user uses QEMU user networking on 127.0.0.1. Writes one JSON file naming the
accelerator, the network and the machine.

    python3 apps/rawecho/bench.py --w 0,10,20,40 --output build/apps/rawecho/bench.json
"""
import argparse
import json
import os
import platform
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
TOP = HERE.parents[1]

import netlab
import toolflags
import vmcounters
from nomvm import VM, Nic, free_port, make_iso

KERNEL = TOP / "build" / "kernel" / "nom.elf"
RAWECHO = TOP / "build" / "apps" / "rawecho" / "rawecho.elf"
CLIENT = [sys.executable, str(HERE / "echo_client.py")]
DRIVER_KEYS = ("rx_packets", "rx_batches", "tx_packets", "tx_batches", "tx_kicks", "rx_kicks",
               "kicks_suppressed", "interrupts", "polls", "arms", "rx_hold_full", "rx_drained",
               "tx_ring_full")


class Target:
    """Where the client runs and what it talks to: echo and control (host, port)."""

    def __init__(self, host, echo_port, ctl_port, lab=None):
        self.host, self.echo_port, self.ctl_port, self.lab = host, echo_port, ctl_port, lab

    def client(self, port, *args):
        cmd = CLIENT + [self.host, str(port), *map(str, args)]
        if self.lab:
            r = self.lab.run(cmd, timeout=600)
        else:
            r = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
        if r.returncode != 0:
            raise RuntimeError(f"client failed: {r.stderr}")
        return json.loads(r.stdout)

    def stats(self, cmd="stats"):
        reply = self.client(self.ctl_port, "ask", cmd)["reply"]
        if reply is None:
            raise TimeoutError("rawecho's control port does not answer")
        return json.loads(reply)


def quiet_snapshot(counters):
    time.sleep(0.3)  # the guest idles (blocked) and the instruction sample is fresh
    return counters.snapshot()


def measure(target, counters, w, n, window):
    assert target.stats(f"w={w}")["batching_delay_us"] == w
    target.client(target.echo_port, "single", 20)  # warm-up
    row = {"batching_delay_us": w}
    for mode in ("single", "many"):
        d0 = target.stats()
        a = quiet_snapshot(counters)
        if mode == "single":
            rtts = target.client(target.echo_port, "single", n)["rtts_us"]
            done = len(rtts)
            row["single"] = {"requests": done, "rtt_us_median": statistics.median(rtts),
                             "rtt_us_p99": sorted(rtts)[int(0.99 * (done - 1))],
                             "rtt_us_mean": statistics.fmean(rtts),
                             "rtt_us_stddev": statistics.pstdev(rtts)}
        else:
            m = target.client(target.echo_port, "many", n, window)
            done = m["done"]
            row["many"] = {"requests": done, "window": window, "lost": m["lost"],
                           "echoes_per_s": done / m["seconds"]}
        b = quiet_snapshot(counters)
        d1 = target.stats()
        row[mode]["qemu_per_req"] = vmcounters.per_request(a, b, done)
        row[mode]["driver_per_req"] = {k: (d1[k] - d0[k]) / max(done, 1) for k in DRIVER_KEYS}
    return row


def show(row):
    s, m = row["single"], row["many"]
    print(f"W={row['batching_delay_us']:3d} us  rtt median {s['rtt_us_median']:7.1f} us  "
          f"p99 {s['rtt_us_p99']:7.1f}  insns/req {s['qemu_per_req']['insns_per_req'] or 0:6.0f}  "
          f"kicks/req {s['qemu_per_req']['notifies_per_req']:.2f}  "
          f"irqs/req {s['qemu_per_req']['irqs_per_req']:.2f} | many {m['echoes_per_s']:7.0f}/s  "
          f"kicks/req {m['qemu_per_req']['notifies_per_req']:.2f}  "
          f"irqs/req {m['qemu_per_req']['irqs_per_req']:.2f}", flush=True)


def run(args, vm, counters, target, start_vm):
    counters.start()
    start_vm(vm)
    try:
        counters.attach(vm.proc.pid)
        banner = vm.wait_for(r"rawecho: nic .*", 120).group(0)
        rows = []
        for w in args.w:
            rows.append(measure(target, counters, w, args.requests, args.window))
            show(rows[-1])
        return banner, rows
    except Exception:
        print(vm.tail(30), file=sys.stderr)
        raise
    finally:
        vm.stop()
        counters.stop()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[1])
    toolflags.add_w_list(ap, [0, 5, 10, 20, 40])
    ap.add_argument("--requests", type=int, default=500)
    ap.add_argument("--window", type=int, default=16)
    ap.add_argument("--net", choices=("tap", "user"), default="tap")
    ap.add_argument("--accel", default=None, help="tcg or kvm (default: nomvm's choice)")
    ap.add_argument("--output", default=str(TOP / "build" / "apps" / "rawecho" / "bench.json"))
    args = ap.parse_args()
    work = tempfile.mkdtemp(prefix="rawecho-bench-")
    vmcounters.build()
    mac = "52:54:00:12:34:56"
    if args.net == "tap":
        with netlab.NetLab() as lab:
            iso = make_iso(str(KERNEL), [(str(RAWECHO), f"rawecho --ip={lab.guest_ip}")],
                           os.path.join(work, "r.iso"))
            vm = VM(iso=iso, nics=[Nic(mac=mac, backend="tap", tap=lab.tap)],
                    accel=args.accel, workdir=work)
            counters = vmcounters.RunCounters(os.path.join(work, "counters"), vm.accel)
            vm.args += counters.qemu_args()
            target = Target(lab.guest_ip, 7, 7001, lab)
            banner, rows = run(args, vm, counters, target, lab.start_vm)
    else:
        iso = make_iso(str(KERNEL), [(str(RAWECHO), "rawecho")], os.path.join(work, "r.iso"))
        echo_port, ctl_port = free_port(socket.SOCK_DGRAM), free_port(socket.SOCK_DGRAM)
        nic = Nic(mac=mac, udp_hostfwd=[(echo_port, 7), (ctl_port, 7001)])
        vm = VM(iso=iso, nics=[nic], accel=args.accel, workdir=work)
        counters = vmcounters.RunCounters(os.path.join(work, "counters"), vm.accel)
        vm.args += counters.qemu_args()
        target = Target("127.0.0.1", echo_port, ctl_port)
        banner, rows = run(args, vm, counters, target, lambda v: v.start())
    result = {"benchmark": "rawecho UDP echo floor", "accel": vm.accel,
              "accel_reason": vm.accel_reason, "network": args.net,
              "machine": {"host": platform.node(), "cpu": platform.processor() or platform.machine(),
                          "cpus": os.cpu_count(), "load_avg": os.getloadavg()},
              "guest_banner": banner, "rows": rows}
    Path(args.output).parent.mkdir(parents=True, exist_ok=True)
    Path(args.output).write_text(json.dumps(result, indent=2))
    print("wrote", args.output)


if __name__ == "__main__":
    main()
