"""A burst of connections right after a fresh boot: nom with memcached alone (make run's command
line, QEMU user networking), and as soon as it is up, memcslap with 4 concurrent connections
(its first run of a boot). Prints the run's wall time per boot. A connection whose SYN-ACK nom
dropped completes only when QEMU's user-mode TCP sends its SYN again, after its initial RTO of
3 s: a run of about 3 s instead of a fraction of one.

    python3 first_burst.py TREE BOOTS
"""
import os
import subprocess
import sys
import tempfile
import time

tree, boots = sys.argv[1], int(sys.argv[2])
os.environ["BUILD"] = os.path.join(tree, "build")
sys.path[:0] = [os.path.join(tree, "tools")]
from nomvm import Guest  # noqa: E402  (the tree's own)

ELF = os.path.join(tree, "build", "apps", "memcached", "memcached.elf")
for b in range(boots):
    with tempfile.TemporaryDirectory() as d:
        g = Guest([(ELF, "memcached -t 1 -m 64 -p 11211 -U 0")], d, tcp=[11211])
        g.start()
        try:
            port = g.host_port(11211)
            t = time.monotonic()
            r = subprocess.run(["memcslap", f"--servers=127.0.0.1:{port}", "--concurrency=4",
                                "--execute-number=100"], capture_output=True, text=True,
                               timeout=60)
            print(f"boot {b}: memcslap {time.monotonic() - t:.2f} s rc {r.returncode}",
                  flush=True)
        finally:
            g.stop()
