"""The serial console of one boot of nom serving nhttpd, each line with the time it was first
seen on the host (seconds from QEMU's start, polled every millisecond), up to the first HTTP
answer: where the time between the kernel's first line and the answer goes.

    python3 timeline.py TREE
"""
import os
import sys
import tempfile
import time

tree = sys.argv[1]
os.environ["BUILD"] = os.path.join(tree, "build")
sys.path[:0] = [os.path.join(tree, "tools", "bench"), os.path.join(tree, "tools")]
import boot_time  # noqa: E402  (after the path: the tree's own)

with tempfile.TemporaryDirectory() as d:
    vm, port, stop = boot_time.start_nom(d, None)
    t0 = time.monotonic()
    vm.start()
    seen, out = 0, []
    try:
        while time.monotonic() - t0 < 60:
            log = vm.log()
            now = time.monotonic() - t0
            if len(log) > seen:
                complete = log[seen:].rsplit("\n", 1)[0] if "\n" in log[seen:] else ""
                for line in complete.splitlines():
                    out.append((now, line))
                seen += len(complete) + (1 if complete else 0)
            if "nhttpd: listening" in log and boot_time.answered(port):
                out.append((time.monotonic() - t0, "<< first HTTP answer >>"))
                break
            time.sleep(0.001)
    finally:
        stop()
for t, line in out:
    print(f"{t:.4f} {line[:110]}")
