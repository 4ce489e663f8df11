#!/usr/bin/env python3
"""rawecho's floor benchmark (a measurement, not a test).

Boots nom with rawecho once and, for each batching delay W (set at run time over rawecho's
control port), measures over QEMU user networking (hostfwd=udp on 127.0.0.1):
  single: the UDP echo round trip, one 64-byte request at a time (median, p99, stddev);
  many:   echoes per second with a window of requests outstanding;
and per request, counted by QEMU (tools/vmcounters): guest instructions (TCG plugin), device
notifications (kicks: virtio_queue_notify) and virtio interrupts, plus the driver's own counters
(deltas of rawecho's "stats"; each delta includes the one stats request itself).
Writes one JSON file naming the accelerator and the machine.

    python3 apps/rawecho/bench.py --w 0,10,20,40 --out build/apps/rawecho/bench.json
"""
import argparse
import json
import os
import platform
import socket
import statistics
import sys
import tempfile
import time
from pathlib import Path

TOP = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(TOP / "tools"))

import vmcounters  # noqa: E402
from nomvm import VM, Nic, make_iso  # noqa: E402

KERNEL = TOP / "build" / "kernel" / "nom.elf"
RAWECHO = TOP / "build" / "apps" / "rawecho" / "rawecho.elf"
DRIVER_KEYS = ("rx_packets", "rx_batches", "tx_packets", "tx_batches", "tx_kicks", "rx_kicks",
               "kicks_suppressed", "interrupts", "polls", "arms", "rx_hold_full", "tx_ring_full")


def free_udp_port():
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Bench:
    def __init__(self, sock, echo_port, ctl_port):
        self.sock, self.echo, self.ctl = sock, echo_port, ctl_port

    def ask(self, port, payload, tries=5):
        for _ in range(tries):
            self.sock.sendto(payload, ("127.0.0.1", port))
            try:
                return self.sock.recvfrom(4096)[0]
            except socket.timeout:
                continue
        raise TimeoutError(f"no answer on port {port}")

    def stats(self, cmd="stats"):
        return json.loads(self.ask(self.ctl, cmd.encode()))

    def single(self, n):
        rtts = []
        payload = bytes(64)
        for _ in range(n):
            t = time.perf_counter_ns()
            if self.ask(self.echo, payload) == payload:
                rtts.append((time.perf_counter_ns() - t) / 1000)
        return rtts

    def many(self, n, window):
        """Keeps `window` requests in flight until n came back (or 1 s passes silently)."""
        payload = bytes(64)
        sent = got = 0
        t = time.perf_counter()
        while sent < min(window, n):
            self.sock.sendto(payload, ("127.0.0.1", self.echo))
            sent += 1
        while got < n:
            try:
                self.sock.recvfrom(4096)
            except socket.timeout:
                break
            got += 1
            if sent < n:
                self.sock.sendto(payload, ("127.0.0.1", self.echo))
                sent += 1
        return got, time.perf_counter() - t, sent - got


def quiet_snapshot(counters):
    time.sleep(0.3)  # the guest idles (blocked) and the instruction sample is fresh
    return counters.snapshot()


def measure(bench, counters, w, n, window):
    assert bench.stats(f"w={w}")["batching_delay_us"] == w
    bench.single(20)  # warm-up
    row = {"batching_delay_us": w}
    for mode in ("single", "many"):
        d0 = bench.stats()
        a = quiet_snapshot(counters)
        if mode == "single":
            rtts = bench.single(n)
            done = len(rtts)
            row["single"] = {"requests": done, "rtt_us_median": statistics.median(rtts),
                             "rtt_us_p99": sorted(rtts)[int(0.99 * (done - 1))],
                             "rtt_us_mean": statistics.fmean(rtts),
                             "rtt_us_stddev": statistics.pstdev(rtts)}
        else:
            done, secs, lost = bench.many(n, window)
            bench.sock.settimeout(5)
            row["many"] = {"requests": done, "window": window, "lost": lost,
                           "echoes_per_s": done / secs}
        b = quiet_snapshot(counters)
        d1 = bench.stats()
        row[mode]["qemu_per_req"] = vmcounters.per_request(a, b, done)
        row[mode]["driver_per_req"] = {k: (d1[k] - d0[k]) / max(done, 1) for k in DRIVER_KEYS}
    return row


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[1])
    ap.add_argument("--w", default="0,5,10,20,40", help="batching delays in µs")
    ap.add_argument("--requests", type=int, default=300)
    ap.add_argument("--window", type=int, default=16)
    ap.add_argument("--accel", default=None, help="tcg or kvm (default: nomvm's choice)")
    ap.add_argument("--out", default=str(TOP / "build" / "apps" / "rawecho" / "bench.json"))
    args = ap.parse_args()
    work = tempfile.mkdtemp(prefix="rawecho-bench-")
    iso = make_iso(str(KERNEL), [(str(RAWECHO), "rawecho")], os.path.join(work, "r.iso"))
    echo_port, ctl_port = free_udp_port(), free_udp_port()
    nic = Nic(mac="52:54:00:12:34:56", udp_hostfwd=[(echo_port, 7), (ctl_port, 7001)])
    vm = VM(iso=iso, nics=[nic], accel=args.accel, workdir=work)
    vmcounters.build()
    counters = vmcounters.RunCounters(os.path.join(work, "counters"), vm.accel)
    vm.args += counters.qemu_args()
    rows = []
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        sock.settimeout(5)
        counters.start()
        vm.start()
        try:
            counters.attach(vm.proc.pid)
            banner = vm.wait_for(r"rawecho: nic .*", 120).group(0)
            bench = Bench(sock, echo_port, ctl_port)
            for w in (int(x) for x in args.w.split(",")):
                rows.append(measure(bench, counters, w, args.requests, args.window))
                s = rows[-1]
                print(f"W={w:3d} us  rtt median {s['single']['rtt_us_median']:7.1f} us  "
                      f"p99 {s['single']['rtt_us_p99']:7.1f}  many {s['many']['echoes_per_s']:8.0f}/s  "
                      f"kicks/req {s['many']['qemu_per_req']['notifies_per_req']:.2f}  "
                      f"irqs/req {s['many']['qemu_per_req']['irqs_per_req']:.2f}  "
                      f"insns/req {s['single']['qemu_per_req']['insns_per_req'] or 0:.0f}",
                      flush=True)
        except Exception:
            print(vm.tail(30), file=sys.stderr)
            raise
        finally:
            vm.stop()
            counters.stop()
    result = {"benchmark": "rawecho UDP echo floor", "accel": vm.accel,
              "accel_reason": vm.accel_reason, "network": "QEMU user networking (hostfwd=udp)",
              "machine": {"host": platform.node(), "cpu": platform.processor() or platform.machine(),
                          "cpus": os.cpu_count()},
              "guest_banner": banner, "rows": rows}
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(result, indent=2))
    print("wrote", args.out)


if __name__ == "__main__":
    main()
