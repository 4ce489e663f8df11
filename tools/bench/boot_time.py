"""From QEMU's start to nom's first TCP answer, by phase (issue 16).

Boots nhttpd alone from a GRUB ISO (tools/nomvm's Guest, QEMU user networking, port 80
forwarded to the host) N times and, per boot, records when each console milestone was first
seen on the host (polled every 5 ms, so each phase is +-5 ms) and when the first HTTP answer
arrived: QEMU start -> "nom: booting" (firmware, GRUB, module load), -> "app nhttpd started"
(kernel init: memory, CPUs, PCI, app load), -> "net: ... W=" (NIC and lwIP up), ->
"nhttpd: listening", -> first answer. Prints each boot and the medians. Wall-clock figures:
noisy on a shared host, print `uptime` beside them.
"""
import argparse
import os
import re
import socket
import statistics
import sys
import tempfile
import time

from nomvm import Guest

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD = os.environ.get("BUILD", os.path.join(TOP, "build"))
ELF = os.path.join(BUILD, "apps", "nhttpd", "nhttpd.elf")
KERNEL = os.path.join(BUILD, "kernel", "nom.elf")
MILESTONES = [("kernel", r"nom: booting"), ("app", r"nom: app nhttpd started"),
              ("net", r"net: .* W="), ("listen", r"nhttpd: listening")]


def answered(port):
    """True when an HTTP GET on 127.0.0.1:port gets a status line back."""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5) as s:
            s.sendall(b"GET / HTTP/1.0\r\n\r\n")
            return s.recv(16).startswith(b"HTTP/")
    except OSError:
        return False


def one_boot(workdir, memory_mb, timeout):
    """{milestone: seconds since QEMU's start, ..., "answer": ...}."""
    guest = Guest([(ELF, "nhttpd --port=80")], workdir, tcp=[80], kernel=KERNEL,
                  memory_mb=memory_mb, name="boot")
    seen = {}
    t0 = time.monotonic()
    guest.vm.start()
    try:
        port = guest.host_port(80)
        while time.monotonic() - t0 < timeout:
            log = guest.vm.log()
            now = time.monotonic() - t0
            for name, pattern in MILESTONES:
                if name not in seen and re.search(pattern, log):
                    seen[name] = now
            if "listen" in seen and answered(port):
                seen["answer"] = time.monotonic() - t0
                return seen
            time.sleep(0.005)
        raise TimeoutError(f"no answer in {timeout} s:\n" + guest.vm.tail())
    finally:
        guest.stop()


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--boots", type=int, default=5)
    ap.add_argument("--memory-mb", type=int, default=128)
    ap.add_argument("--timeout", type=float, default=120.0)
    args = ap.parse_args(argv)
    names = [n for n, _ in MILESTONES] + ["answer"]
    rows = []
    with tempfile.TemporaryDirectory(prefix="nom-boot-") as tmp:
        for i in range(args.boots):
            rows.append(one_boot(os.path.join(tmp, str(i)), args.memory_mb, args.timeout))
            print("boot", i, " ".join(f"{n}={rows[-1].get(n, float('nan')):.3f}" for n in names))
    print("median", " ".join(f"{n}={statistics.median(r.get(n, float('nan')) for r in rows):.3f}"
                             for n in names))
    print("uptime", os.getloadavg())
    return 0


if __name__ == "__main__":
    sys.exit(main())
