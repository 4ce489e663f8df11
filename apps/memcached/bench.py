#!/usr/bin/env python3
"""memcached on nom under memaslap (GET/SET 90/10, 64-byte keys, 32-byte values: the loadgen's
mix, paper 6) for each batching delay W, over a tap device in a network namespace of its own
(tools/netlab; DESIGN.md: benchmark traffic stays in such a namespace). A measurement, not a
test: it prints one JSON line per (W, connections) and writes them all to --output.

    python3 apps/memcached/bench.py --w 0,20 --conns 32,1 --seconds 10

Figures are under TCG unless the host has real hardware virtualization (the output says which).
"""
import argparse
import json
import os
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(os.path.dirname(HERE))

import netlab
import toolflags
from loadgen import runners
from nomvm import VM, Nic, make_iso

BUILD = os.environ.get("BUILD", os.path.join(TOP, "build"))
KERNEL = os.path.join(BUILD, "kernel", "nom.elf")
ELF = os.path.join(BUILD, "apps", "memcached", "memcached.elf")
OPTIONS = "-t 1 -m 64 -p 11211 -U 0"
PORT = 11211


def wait_answering(lab, timeout=120.0):
    """Until memcached answers libmemcached's stats (the stack is up before memcached listens)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        r = lab.run(["memcstat", f"--servers={lab.guest_ip}:{PORT}"], timeout=30)
        if r.returncode == 0 and "version" in r.stdout:
            return
        time.sleep(1)
    raise TimeoutError("memcached on nom does not answer")


def measure_w(w, conns_list, seconds, work):
    """Boots memcached with W = w and runs memaslap once per connection count."""
    cmdline = f"memcached --ip={netlab.GUEST_IP}/{netlab.PREFIX_LEN} --batching-delay={w} {OPTIONS}"
    iso = make_iso(KERNEL, [(ELF, cmdline)], os.path.join(work, f"w{w}.iso"))
    rows = []
    os.makedirs(os.path.join(work, f"vm-w{w}"))
    with netlab.NetLab() as lab:
        vm = VM(iso=iso, nics=[Nic(mac="52:54:00:12:34:56", backend="tap", tap=lab.tap)],
                memory_mb=128, workdir=os.path.join(work, f"vm-w{w}"), name="memcached")
        lab.start_vm(vm)
        try:
            vm.wait_for(rf"net: .* W={w}$", 120)
            wait_answering(lab)
            for conns in conns_list:
                out = runners.memaslap(lab, lab.guest_ip, PORT, conns, seconds,
                                       os.path.join(work, f"w{w}"))
                rows.append({"w_us": w, "conns": conns, "seconds": out["seconds"],
                             "ops": out["ops"], "ops_per_s": out["tps"],
                             "get_misses": out["get_misses"], "accel": vm.accel})
                print(json.dumps(rows[-1]), flush=True)
        finally:
            vm.stop()
    return rows


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    toolflags.add_w_list(p, [0, 20])
    p.add_argument("--conns", type=toolflags.int_list, default=[32, 1], metavar="N[,N...]",
                   help="connections of each load, comma-separated (default 32,1)")
    p.add_argument("--seconds", type=int, default=10)
    p.add_argument("--output", default=os.path.join(BUILD, "apps", "memcached", "bench.json"))
    a = p.parse_args()
    with tempfile.TemporaryDirectory(prefix="memcached-bench-") as work:
        rows = [row for w in a.w for row in measure_w(w, a.conns, a.seconds, work)]
    os.makedirs(os.path.dirname(a.output), exist_ok=True)
    with open(a.output, "w") as f:
        json.dump(rows, f, indent=1)
    print(f"bench: {len(rows)} rows in {a.output}")


if __name__ == "__main__":
    main()
