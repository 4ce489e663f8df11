"""From QEMU's start to the first TCP answer, by phase, nom beside the Linux guest (issue 16).

Boots nhttpd alone N times in each guest (QEMU user networking, port 80 forwarded to the
host) and, per boot, records when each console milestone was first seen on the host (polled
every millisecond, so each phase is +-1 ms) and when the first HTTP answer arrived.
nom, from a GRUB ISO (tools/nomvm's Guest): QEMU start -> "nom: booting" (firmware, GRUB,
module load), -> "app nhttpd started" (kernel init: memory, CPUs, PCI, app load), -> "net:
... W=" (NIC and lwIP up), -> "nhttpd: listening", -> first answer. Its address is given
statically, as the Linux guest's is (SLIRP_GUEST_IP), so that both start the same way.
nom-dhcp: nom as `make run` starts it, its address from QEMU's DHCP server (nom_net_start's
default): two round trips more, about 15 ms under TCG
(results/boot-time-2026-11-29-lazy-pools).
nom-debian-grub: nom the same way from an ISO made with Debian's GRUB, without tools/grub's
patches (tools/grub/README.md), for their before/after in one run.
Linux (tools/linuxguest: Debian's kernel and initramfs, the same nhttpd built for Linux, booted
by QEMU's -kernel, so no GRUB): -> its first console output, -> "linuxguest: ready"
(init: every application listens), -> first answer.
The guests take turns, boot by boot, so that a host's slow minute falls on all of them.
Prints each boot and the medians and writes them, with the machine, to boot-time.json in the
output folder (`make bench`). Wall-clock figures: noisy on a shared host; the load average is
kept beside them.
"""
import argparse
import os
import re
import socket
import statistics
import sys
import tempfile
import time

import json

import linuxguest
from experiment.machine import describe, stamped_output
from nomvm import Guest, Nic, free_port
from nomvm.image import DEBIAN_GRUB_PC_DIR

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD = os.environ.get("BUILD", os.path.join(TOP, "build"))
ELF = os.path.join(BUILD, "apps", "nhttpd", "nhttpd.elf")
KERNEL = os.path.join(BUILD, "kernel", "nom.elf")
NOM_MILESTONES = [("kernel", r"nom: booting"), ("app", r"nom: app nhttpd started"),
                  ("net", r"net: .* W="), ("listen", r"nhttpd: listening")]
MILESTONES = {
    "nom": NOM_MILESTONES,
    "nom-dhcp": NOM_MILESTONES,
    "nom-debian-grub": NOM_MILESTONES,
    # loglevel=4 (linuxguest) keeps the kernel's banner off the console: its first output is
    # the first milestone
    "linux": [("console", r"\S"), ("listen", linuxguest.READY)],
}
# The address QEMU's user networking forwards to (its DHCP's first lease), given statically to
# the Linux guest and to nom (but nom-dhcp), and its gateway.
SLIRP_GUEST_IP = "10.0.2.15/24"
SLIRP_GATEWAY = "10.0.2.2"


def answered(port):
    """True when an HTTP GET on 127.0.0.1:port gets a status line back."""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5) as s:
            s.sendall(b"GET / HTTP/1.0\r\n\r\n")
            return s.recv(16).startswith(b"HTTP/")
    except OSError:
        return False


def start_nom(workdir, memory_mb, grub_dir=None, dhcp=False):
    """(vm, forwarded host port, stop) of nom serving nhttpd, not started."""
    sized = {"memory_mb": memory_mb} if memory_mb else {}
    address = "" if dhcp else f" --ip={SLIRP_GUEST_IP} --gw={SLIRP_GATEWAY}"
    guest = Guest([(ELF, "nhttpd --port=80" + address)], workdir, tcp=[80], kernel=KERNEL,
                  grub_dir=grub_dir, name="boot", **sized)
    return guest.vm, guest.host_port(80), guest.stop


def start_linux(workdir, memory_mb):
    """(vm, forwarded host port, stop) of the Linux guest serving nhttpd, not started."""
    port = free_port()
    os.makedirs(workdir, exist_ok=True)
    vm = linuxguest.make_vm(["nhttpd"], Nic(mac="52:54:00:12:34:56", hostfwd=[(port, 80)]),
                            ip=SLIRP_GUEST_IP, workdir=workdir,
                            memory_mb=memory_mb or linuxguest.MEMORY_MB)
    return vm, port, vm.stop


def one_boot(guest, workdir, memory_mb, timeout):
    """{milestone: seconds since QEMU's start, ..., "answer": ...} of one boot of guest."""
    if guest == "linux":
        vm, port, stop = start_linux(workdir, memory_mb)
    else:
        grub = DEBIAN_GRUB_PC_DIR if guest == "nom-debian-grub" else None
        vm, port, stop = start_nom(workdir, memory_mb, grub, dhcp=guest == "nom-dhcp")
    seen = {}
    t0 = time.monotonic()
    vm.start()
    try:
        while time.monotonic() - t0 < timeout:
            log = vm.log()
            now = time.monotonic() - t0
            for name, pattern in MILESTONES[guest]:
                if name not in seen and re.search(pattern, log):
                    seen[name] = now
            if "listen" in seen and answered(port):
                seen["answer"] = time.monotonic() - t0
                return seen
            time.sleep(0.001)
        raise TimeoutError(f"{guest}: no answer in {timeout} s:\n" + vm.tail())
    finally:
        stop()


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--boots", type=int, default=5, help="boots per guest (default 5)")
    ap.add_argument("--guests", default="nom,nom-dhcp,linux",
                    help="comma-separated: nom, nom-dhcp, nom-debian-grub, linux")
    ap.add_argument("--memory-mb", type=int,
                    help="guest memory (default: each guest's own, nom 128, Linux 256 MiB)")
    ap.add_argument("--timeout", type=float, default=120.0)
    ap.add_argument("--output", help="results folder (default results/boot-time-DATE-COMMIT)")
    args = ap.parse_args(argv)
    guests = [g.strip() for g in args.guests.split(",") if g.strip()]
    if not guests or any(g not in MILESTONES for g in guests) or args.boots < 1:
        ap.error(f"--guests takes {', '.join(MILESTONES)}; --boots at least 1")
    result = {"benchmark": "QEMU start to the first HTTP answer (issue 16)",
              "machine": describe("tcg", "tests and benches run under TCG here"),
              "memory_mb": args.memory_mb, "loadavg_start": os.getloadavg(), "guests": {}}
    names = {g: [n for n, _ in MILESTONES[g]] + ["answer"] for g in guests}
    rows = {g: [] for g in guests}
    with tempfile.TemporaryDirectory(prefix="nom-boot-") as tmp:
        for i in range(args.boots):
            for guest in guests:
                row = one_boot(guest, os.path.join(tmp, f"{guest}{i}"), args.memory_mb,
                               args.timeout)
                rows[guest].append(row)
                print(guest, "boot", i, " ".join(f"{n}={row.get(n, float('nan')):.3f}"
                                                 for n in names[guest]))
        for guest in guests:
            medians = {n: statistics.median(r.get(n, float("nan")) for r in rows[guest])
                       for n in names[guest]}
            print(guest, "median", " ".join(f"{n}={v:.3f}" for n, v in medians.items()))
            result["guests"][guest] = {"boots": rows[guest], "median_s": medians}
    result["loadavg_end"] = os.getloadavg()
    out = os.path.abspath(args.output or stamped_output("boot-time"))
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "boot-time.json"), "w") as f:
        json.dump(result, f, indent=1)
    print("load average", result["loadavg_start"], "->", result["loadavg_end"],
          "; written", os.path.join(out, "boot-time.json"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
