#!/usr/bin/env python3
"""NetPIPE on nom against NetPIPE in the Linux comparison guest (tools/linuxguest), with the host's
NPtcp as transmitter and the experiment's options (loadgen.apps): ping-pong of 1024-byte
messages (NetPIPE's latency: half the round trip, the minimum of its 3 trials' means; one
figure per session) and both ways at once (-2, the experiment's "many") of 32 KiB messages
(NetPIPE's Mbps, 2**20 bit/s, both ways combined; one figure per session, sessions back to
back). Each guest boots alone, 1 vCPU, on a tap in a network namespace of its own
(tools/netlab). A measurement, not a test: one JSON line per guest and a table at the end.

    python3 apps/netpipe/bench.py --sessions 5 --bidir-seconds 10 --w 0,20 --linux

Figures are under TCG unless the host has real hardware virtualization (the output says which).
"""
import argparse
import json
import os
import statistics
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(os.path.dirname(HERE))

import linuxguest
import netlab
import toolflags
from loadgen import apps, runners
from loadgen.parsers import parse_nptcp_stdout
from nomvm import VM, Nic, make_iso

BUILD = os.environ.get("BUILD", os.path.join(TOP, "build"))
KERNEL = os.path.join(BUILD, "kernel", "nom.elf")
ELF = os.path.join(BUILD, "apps", "netpipe", "NPtcp.elf")
MAC = "52:54:00:12:34:56"


def nom_vm(lab, w, work):
    words = ["NPtcp", f"--ip={netlab.GUEST_IP}/{netlab.PREFIX_LEN}", f"--batching-delay={w}",
             "--repeat", "--quiet", *apps.NETPIPE_PINGPONG_ARGS, "--and", *apps.NETPIPE_BIDIR_ARGS]
    iso = make_iso(KERNEL, [(ELF, " ".join(words))], os.path.join(work, "nom.iso"))
    vm = VM(iso=iso, nics=[Nic(mac=MAC, backend="tap", tap=lab.tap)], memory_mb=128,
            workdir=work, name="netpipe")
    lab.start_vm(vm)
    for receiver in (1, 2):
        vm.wait_for(rf"NPtcp: receiver {receiver}: run 1 listening", 180)
    return vm


def linux_vm(lab, work):
    vm = linuxguest.make_vm(["netpipe"], Nic(mac=MAC, backend="tap", tap=lab.tap), workdir=work)
    lab.start_vm(vm)
    linuxguest.wait_ready(vm)
    return vm


def measure(guest, boot, sessions, bidir_seconds, work):
    """Boots one guest, runs `sessions` ping-pong sessions, then both-ways sessions for
    bidir_seconds."""
    os.makedirs(work, exist_ok=True)
    with netlab.NetLab() as lab:
        vm = boot(lab)
        try:
            usec = [runners.nptcp_pingpong(lab, lab.guest_ip, work)["rows"][0]["usec"]
                    for _ in range(sessions)]
            bidir = runners.nptcp_bidir(lab, lab.guest_ip, bidir_seconds, work)
        except runners.LoadError as e:
            # Whether the guest still answers at all tells a stalled guest from a NetPIPE
            # failure (net/README.md: the open receive stall).
            ping = lab.run(["ping", "-c", "3", "-W", "1", lab.guest_ip], timeout=30)
            return {"guest": guest, "accel": vm.accel, "error": str(e)[-600:],
                    "guest_answers_ping": ping.returncode == 0, "serial": vm.serial_path}
        finally:
            vm.stop()
    with open(bidir["raw"]) as f:
        mbps = [r["mbps"] for r in parse_nptcp_stdout(f.read())]  # one per session
    return {"guest": guest, "accel": vm.accel, "sessions": sessions,
            "latency_1024_us": summary(usec), "bidir_32k_mbps": summary(mbps)}


def summary(values):
    return {"median": statistics.median(values), "min": min(values), "max": max(values),
            "all": values}


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--sessions", type=int, default=5, help="ping-pong sessions per guest")
    p.add_argument("--bidir-seconds", type=float, default=10.0)
    toolflags.add_w_list(p, [0], what="nom's batching delays")
    p.add_argument("--linux", action="store_true", help="measure the Linux guest too")
    p.add_argument("--output", help="JSON lines file (default: a temporary one)")
    a = p.parse_args()
    runners.build()
    work = tempfile.mkdtemp(prefix="netpipe-bench-")
    out = a.output or os.path.join(work, "bench.jsonl")
    cells = [(f"nom W={w}", lambda lab, w=w: nom_vm(lab, w, os.path.join(work, f"w{w}")))
             for w in a.w]
    if a.linux:
        cells.append(("linux", lambda lab: linux_vm(lab, os.path.join(work, "linux"))))
    rows = []
    with open(out, "w") as f:
        for guest, boot in cells:
            row = measure(guest, boot, a.sessions, a.bidir_seconds,
                          os.path.join(work, guest.replace(" ", "_")))
            rows.append(row)
            print(json.dumps(row), flush=True)
            f.write(json.dumps(row) + "\n")
    print("\n| guest | accel | NetPIPE latency, 1024 B (us, median [min-max]) "
          "| both ways, 32 KiB (Mbps both ways, median [min-max]) |\n|---|---|---|---|")
    for r in rows:
        if "error" in r:
            print(f"| {r['guest']} | {r['accel']} | failed (guest answers ping: "
                  f"{r['guest_answers_ping']}; {r['serial']}) | |")
            continue
        lat, mbps = r["latency_1024_us"], r["bidir_32k_mbps"]
        print(f"| {r['guest']} | {r['accel']} | {lat['median']:.1f} [{lat['min']:.1f}-"
              f"{lat['max']:.1f}] | {mbps['median']:.1f} [{mbps['min']:.1f}-{mbps['max']:.1f}] |")
    print(f"\nraw: {out}")


if __name__ == "__main__":
    main()
