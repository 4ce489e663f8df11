"""Where the vCPU is between the kernel's first line and the first HTTP answer: its instruction
pointer sampled over QMP (`info registers`, as fast as the monitor answers, about every
millisecond), symbolized against the kernel and nhttpd. One boot of the tree's image with
QEMU's user networking; prints the samples per function and a timeline of phases.

    python3 rip_after_kernel.py TREE [BOOTS]
"""
import bisect
import collections
import json
import os
import re
import socket
import subprocess
import sys
import tempfile
import time

tree = sys.argv[1]
boots = int(sys.argv[2]) if len(sys.argv) > 2 else 1
build = os.path.join(tree, "build")
os.environ["BUILD"] = build
sys.path[:0] = [os.path.join(tree, "tools", "bench"), os.path.join(tree, "tools")]
from boot_time import answered  # noqa: E402  (the tree's own)
from nomvm import free_port  # noqa: E402
from nomvm.image import make_iso  # noqa: E402

KERNEL = os.path.join(build, "kernel", "nom.elf")
APP = os.path.join(build, "apps", "nhttpd", "nhttpd.elf")


def symbols(elf):
    out = []
    for line in subprocess.run(["nm", "-n", elf], capture_output=True, text=True).stdout.splitlines():
        a = line.split()
        if len(a) == 3 and a[1] in "tTwW":
            out.append((int(a[0], 16), a[2]))
    return out


ksyms, asyms = symbols(KERNEL), symbols(APP)
kaddr, aaddr = [a for a, _ in ksyms], [a for a, _ in asyms]


def name_of(rip):
    for addrs, syms, tag in ((aaddr, asyms, "app"), (kaddr, ksyms, "kernel")):
        i = bisect.bisect_right(addrs, rip) - 1
        if i >= 0 and rip - addrs[i] < 0x10000 and (tag == "app") == (rip < 0x100000000 and rip >= 0x400000):
            return f"{tag}:{syms[i][1]}"
    return f"? {rip:#x}"


total = collections.Counter()
for b in range(boots):
    d = tempfile.mkdtemp()
    iso = make_iso(KERNEL, [(APP, "nhttpd --port=80")], os.path.join(d, "nom.iso"))
    ser, qmp, port = os.path.join(d, "s.log"), os.path.join(d, "qmp.sock"), free_port()
    open(ser, "w").close()
    args = ["qemu-system-x86_64", "-machine", "q35", "-m", "128", "-smp", "1", "-display", "none",
            "-no-reboot", "-nodefaults", "-serial", f"file:{ser}", "-accel", "tcg", "-cpu", "max",
            "-cdrom", iso, "-boot", "d", "-qmp", f"unix:{qmp},server=on,wait=off",
            "-netdev", f"user,id=n0,hostfwd=tcp:127.0.0.1:{port}-:80",
            "-device", "virtio-net-pci,netdev=n0,disable-legacy=on,disable-modern=off,romfile="]
    t0 = time.monotonic()
    p = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    while not os.path.exists(qmp):
        time.sleep(0.001)
    s = socket.socket(socket.AF_UNIX)
    s.connect(qmp)
    f = s.makefile("rw")
    f.readline()
    f.write(json.dumps({"execute": "qmp_capabilities"}) + "\n")
    f.flush()
    f.readline()
    samples, marks, started = [], [], False
    while time.monotonic() - t0 < 20:
        log = open(ser, errors="replace").read()
        if not started:
            started = "nom: booting" in log
            if not started:
                time.sleep(0.002)
                continue
            marks.append((time.monotonic() - t0, "kernel's first line"))
        for pat in ("app nhttpd started", "checksum offload", "W=", "listening"):
            if pat in log and all(m[1] != pat for m in marks):
                marks.append((time.monotonic() - t0, pat))
        f.write(json.dumps({"execute": "human-monitor-command",
                            "arguments": {"command-line": "info registers"}}) + "\n")
        f.flush()
        r = json.loads(f.readline())["return"]
        m = re.search(r"RIP=([0-9a-f]+)", r)
        halted = "HLT=1" in r
        samples.append((time.monotonic() - t0, int(m.group(1), 16), halted))
        if "listening" in log and answered(port):
            marks.append((time.monotonic() - t0, "answer"))
            break
    p.kill()
    p.wait()
    print(f"boot {b}: {len(samples)} samples;", ", ".join(f"{n} {t:.4f}" for t, n in marks))
    bounds = [t for t, _ in marks]
    for lo, hi, name in zip(bounds, bounds[1:], [n for _, n in marks[1:]]):
        c = collections.Counter("HALTED" if h else name_of(rip) + (f"@{rip:#x}" if os.environ.get("RIPS") else "") for t, rip, h in samples if lo <= t < hi)
        print(f"  to {name} ({(hi - lo) * 1000:.1f} ms, {sum(c.values())} samples):",
              ", ".join(f"{k} {v}" for k, v in c.most_common(8)))
        total.update(c)
