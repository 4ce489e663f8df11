"""Records the load detector's signals in a running memcached (nom/adapt.h "Load class"), one
line per 500 ms sample, labelled with the load the host was running, for the detector's trace
tests (libnom/tests/profit/traces/, test_load_traces.py).

memcached boots with --adapt-trace (its controller prints "adapt-load: conns=.. in_flight=..
snapshots=.. concurrency=.. class=.." every sample) behind QEMU user networking; the host runs,
one after another, the phases below with memcached users written here (set + get, one request
at a time per user), and labels each sample line with the phase running when it was read.

  many      32 users, one connection each (the experiment's "many")
  single    one user on one connection (the experiment's "single")
  idle8     one busy user while 8 more connections stay open and silent
  reconnect one user opening a new connection for every request
  idle      no user at all

Output lines: `PHASE conns in_flight snapshots concurrency class_seen`, after a header of '#'
lines saying when, where and how they were recorded."""
import argparse
import datetime
import os
import re
import socket
import sys
import tempfile
import threading
import time

from nomvm import BUILD, Guest, choose_accel

MEMCACHED = os.path.join(BUILD, "apps", "memcached", "memcached.elf")
LINE = re.compile(r"adapt-load: conns=(\d+) in_flight=([\d.]+) snapshots=(\d+) "
                  r"concurrency=(\d+) class=(\w+)")
PHASES = (("many", 32, "keep"), ("single", 1, "keep"), ("idle8", 1, "idle8"),
          ("reconnect", 1, "reconnect"), ("idle", 0, "keep"), ("many", 32, "keep"),
          ("single", 1, "keep"))


def connect(port, deadline):
    while True:
        try:
            return socket.create_connection(("127.0.0.1", port), timeout=10)
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.2)


def exchange(s):
    """One user's request: set then get, the answer read whole before the next."""
    s.sendall(b"set k 0 0 5\r\nhello\r\nget k\r\n")
    buf = b""
    while b"END\r\n" not in buf:
        chunk = s.recv(65536)
        if not chunk:
            raise ConnectionError("memcached closed the connection")
        buf += chunk


def user(port, mode, stop):
    """One user until stop: on one connection, or a new connection per request."""
    deadline = time.monotonic() + 60
    if mode == "reconnect":
        while not stop.is_set():
            with connect(port, deadline) as s:
                exchange(s)
        return
    with connect(port, deadline) as s:
        while not stop.is_set():
            exchange(s)


def run_phase(port, users, mode, seconds, on_tick):
    stop = threading.Event()
    idle = [connect(port, time.monotonic() + 60) for _ in range(8 if mode == "idle8" else 0)]
    threads = [threading.Thread(target=user, args=(port, mode, stop), daemon=True)
               for _ in range(users)]
    for t in threads:
        t.start()
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        on_tick()
        time.sleep(0.1)
    stop.set()
    for t in threads:
        t.join(30)
    for s in idle:
        s.close()


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seconds", type=float, default=8.0, help="per phase")
    ap.add_argument("--w", type=int, help="a fixed batching delay W, us (default: adaptive)")
    ap.add_argument("--output", required=True, help="the trace file to write")
    args = ap.parse_args(argv)
    if not os.path.exists(MEMCACHED):
        sys.exit(f"loadtrace: {MEMCACHED} is not built (make)")
    fixed = f" --batching-delay={args.w}" if args.w is not None else ""
    modules = [(MEMCACHED, f"memcached -t 1 -m 16 -p 11211 -U 0 --adapt-trace{fixed}")]
    rows, seen = [], [0]
    accel = choose_accel()[0]
    with tempfile.TemporaryDirectory() as tmp, Guest(modules, tmp, tcp=[11211]) as guest:
        guest.vm.wait_for(r"adapt: W=\d+ us \(start", 120)
        port = guest.host_port(11211)
        for name, users, mode in PHASES:
            def tick(name=name):
                lines = LINE.findall(guest.vm.log())
                rows.extend((name,) + m for m in lines[seen[0]:])
                seen[0] = len(lines)
            print(f"loadtrace: {name} ({users} users, {mode}) {args.seconds:g} s", flush=True)
            run_phase(port, users, mode, args.seconds, tick)
        load = os.getloadavg()
    with open(args.output, "w") as f:
        flags = f"--seconds {args.seconds:g}" + (f" --w {args.w}" if args.w is not None else "")
        f.write(f"# {os.path.basename(__file__)} {flags}: memcached, "
                f"{accel}, QEMU user networking, "
                f"{datetime.datetime.now(datetime.timezone.utc):%Y-%m-%dT%H:%MZ}, host load "
                f"{load[0]:.1f}\n# phase conns in_flight snapshots concurrency class_seen\n")
        for r in rows:
            f.write(" ".join(r) + "\n")
    print(f"loadtrace: {len(rows)} samples in {args.output}")


if __name__ == "__main__":
    main()
