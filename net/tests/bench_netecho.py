#!/usr/bin/env python3
"""bench_netecho.py: a measurement, not a test. Boots netecho (tests/guest/netecho.c) once per
batching delay W, over QEMU user networking (hostfwd on 127.0.0.1), and measures through the
whole path (host TCP -> slirp -> virtio-net -> driver -> lwIP -> sockets -> poll loop):
  rtt_us      TCP ping-pong of 1-byte messages (median and p99 over --rounds)
  echo_MBps   a 4 MiB TCP echo, bytes moved both ways per second
plus the stack's counters. Prints one JSON line per W, stating the accelerator (TCG or KVM).
    python3 net/tests/bench_netecho.py --w 0,10,20,40
Needs build/kernel/nom.elf, libnom, the driver and `make -C net guest-tests`."""
import argparse
import json
import socket
import statistics
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent

from test_net_qemu import Netecho, echo_bytes, pattern
import toolflags
from nomvm import accel


def ping_pong(e, rounds):
    with e.connect() as c:
        c.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        times = []
        for _ in range(rounds):
            t0 = time.perf_counter()
            c.sendall(b"x")
            assert c.recv(1) == b"x"
            times.append((time.perf_counter() - t0) * 1e6)
    times.sort()
    return statistics.median(times), times[int(len(times) * 0.99) - 1]


def measure(w, rounds):
    with tempfile.TemporaryDirectory(prefix="netecho-bench-") as tmp:
        with Netecho(Path(tmp), f"--batching-delay={w}") as e:
            ping_pong(e, 50)  # warm-up: ARP, first connections
            med, p99 = ping_pong(e, rounds)
            data = pattern(4 << 20)
            with e.connect() as c:
                t0 = time.perf_counter()
                assert echo_bytes(c, data) == data
                took = time.perf_counter() - t0
            return {"w_us": w, "rtt_median_us": round(med, 1), "rtt_p99_us": round(p99, 1),
                    "echo_MBps": round(2 * len(data) / took / 1e6, 2), "stats": e.control("stats")}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    toolflags.add_w_list(ap, [0, 20])
    ap.add_argument("--rounds", type=int, default=1000)
    args = ap.parse_args()
    how, why = accel.choose_accel()
    for w in args.w:
        print(json.dumps(dict(measure(w, args.rounds), accel=how, accel_reason=why)), flush=True)


if __name__ == "__main__":
    main()
