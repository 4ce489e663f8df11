#!/usr/bin/env python3
"""The network stack's instructions per round trip, counted on the host by valgrind's
callgrind: net/bench/pingpong.c's server, one connection, REQ bytes in and RESP bytes out per
round trip (default 1 KiB each way: issue 16's NetPIPE ping-pong).

    python3 tools/bench/stack_count.py                         # 1 KiB each way, 2000 round trips
    python3 tools/bench/stack_count.py --req 80 --resp 700 --output /tmp/s
    python3 tools/bench/stack_count.py --req 32768 --resp 0 --rounds 300   # a stream received

What it counts: lwIP, the layers of net/ above it (netif, driving loop, socket layer, the port)
and the copies they ask of the C library, in the same sources the guest runs, built by the
host gcc at -O2 as the guest builds them, under a fake driver and a fake libnom
(net/tests/fake), which are counted apart and left out of the stack's figure. Not the guest's
figure, which tools/bench/per_request.py and insn_profile.py count under TCG with the driver,
libnom and newlib's memcpy (glibc's here); what this adds is a count that the machine's speed
and load barely move, taken in seconds: a change to net/ is measured before and after at any
time, beside an experiment too (run it under `chrt --idle 0` there). lwIP's and the copies'
counts do not move at all; the driving loop's, the socket layer's and the fakes' do, as their
idle path runs once more whenever the client's next request has not arrived yet: with three
busy loops beside it the stack's figure per round trip read 3,008-3,141 against 3,181-3,202 on
the idle host (2026-12-03), so compare figures taken under the same load.

Writes OUTPUT/stack-count.json (per round trip: the stack's instructions, each group's, the
top functions) and prints them. Needs valgrind (tools/bootstrap.sh installs it).
"""
import argparse
import json
import os
import re
import shutil
import socket
import subprocess
import sys

from experiment.machine import describe, stamped_output

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD = os.path.join(TOP, "build")
PINGPONG = os.path.join(BUILD, "net-count", "pingpong")
COUNTED = "serve_rounds"  # pingpong.c: the function callgrind collects in

# Groups by source file (callgrind names each function's file, relative to where it was
# compiled) or, for the C library's copies, by function; in order, the first match wins. The
# stack is the first four; the fakes stand in for the guest's driver and libnom.
COPIES = "copies the stack asks of the C library (memcpy, memmove, memset)"
STACK_GROUPS = ("lwIP", "net/: socket layer", "net/: netif, driving loop, port", COPIES)
GROUPS = (
    ("lwIP", r"(^|/)src/lwip/", None),
    ("net/: socket layer", r"(^|/)net/sock[^/]*\.c$", None),
    ("net/: netif, driving loop, port", r"(^|/)net/[^/]+\.c$", None),
    (COPIES, None, r"^_*(memcpy|memmove|memset)"),
    ("fake driver (net/tests/fake, not the guest's)", r"(^|/)fake_vnet\.c$", None),
    ("fake libnom (net/tests/fake, not the guest's)", r"(^|/)fake_libnom\.c$", None),
    ("other (the harness, the C library's rest)", r"", None),
)
# callgrind_annotate --tree=caller: each function's line, "  123,456 ( 1.23%)  *  file:function
# [object]", follows its callers' lines, "  1,000 ( 0.02%)  < file:caller (10x) [object]".
LINE = re.compile(r"^\s*([\d,]+) \(\s*[\d.]+%\)\s+\*\s+(.*):([^:\s]+) \[(.*)\]$")
CALLER = re.compile(r"^\s*([\d,]+) \(\s*[\d.]+%\)\s+<\s+(.*:[^:\s]+) \([\d,]+x\) \[.*\]$")
COPY = r"^_*(memcpy|memmove|memset)"


def build():
    subprocess.run(["make", "-s", "-C", os.path.join(TOP, "net", "bench"), f"BUILD={BUILD}"],
                   check=True)


def count(rounds, warmup, req, resp, out_file, timeout_s=600):
    """Runs the server under callgrind and the client beside it on a socketpair; returns the
    total instructions collected in serve_rounds (callgrind's summary line)."""
    if shutil.which("valgrind") is None:
        sys.exit("stack_count: valgrind is not installed (apt-get install valgrind, or "
                 "tools/bootstrap.sh)")
    server_end, client_end = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    args = [str(rounds), str(warmup), str(req), str(resp)]
    with server_end, client_end:
        server = subprocess.Popen(
            ["valgrind", "-q", "--tool=callgrind", f"--callgrind-out-file={out_file}",
             "--collect-atstart=no", f"--toggle-collect={COUNTED}",
             PINGPONG, "server", str(server_end.fileno())] + args,
            pass_fds=[server_end.fileno()], stdout=subprocess.DEVNULL)
        client = subprocess.Popen([PINGPONG, "client", str(client_end.fileno())] + args,
                                  pass_fds=[client_end.fileno()], stdout=subprocess.DEVNULL)
    try:
        codes = server.wait(timeout_s), client.wait(timeout_s)
    finally:
        for p in (server, client):
            if p.poll() is None:
                p.kill()
    if codes != (0, 0):
        sys.exit(f"stack_count: pingpong failed (server exit {codes[0]}, client {codes[1]})")
    return functions(out_file)


def functions(out_file):
    """[(instructions, file, function, group)] of every function callgrind saw, self cost only.
    The C library's copies are split by caller: those the stack asks for are the copies group,
    those of a fake (the fake driver copies frames) its group."""
    text = subprocess.run(["callgrind_annotate", "--inclusive=no", "--tree=caller",
                           "--threshold=100", out_file],
                          check=True, capture_output=True, text=True).stdout
    out, callers = [], []
    for line in text.splitlines():
        caller, own = CALLER.match(line), LINE.match(line)
        if caller:
            callers.append((int(caller.group(1).replace(",", "")), caller.group(2)))
            continue
        if own:
            n, path, fn = int(own.group(1).replace(",", "")), own.group(2), own.group(3)
            if re.search(COPY, fn) and callers and sum(c for c, _ in callers) == n:
                for c, where in callers:
                    g = group_of(where.rsplit(":", 1)[0], "")
                    out.append((c, path, f"{fn} <- {where.rsplit(':', 1)[1]}",
                                COPIES if g in STACK_GROUPS else g))
            else:
                out.append((n, path, fn, group_of(path, fn)))
        callers = []
    if not out:
        sys.exit(f"stack_count: no function costs in {out_file}")
    return out


def group_of(path, function):
    for name, file_pattern, function_pattern in GROUPS:
        if (file_pattern is not None and re.search(file_pattern, path)) or \
                (function_pattern is not None and re.search(function_pattern, function)):
            return name
    return GROUPS[-1][0]


def summarize(funcs, rounds):
    groups = {name: 0 for name, _, _ in GROUPS}
    for n, _, _, group in funcs:
        groups[group] += n
    per = {k: v / rounds for k, v in groups.items()}
    return {
        "total": sum(f[0] for f in funcs) / rounds,
        "stack": sum(per[g] for g in STACK_GROUPS),
        "groups": per,
        "top_functions": [{"function": fn, "file": os.path.relpath(path, TOP)
                           if path.startswith(TOP) else path, "group": group,
                           "per_round_trip": n / rounds}
                          for n, path, fn, group in sorted(funcs, reverse=True)[:40]],
    }


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=2000, help="round trips counted")
    ap.add_argument("--warmup", type=int, default=200, help="round trips before counting")
    ap.add_argument("--req", type=int, default=1024, help="bytes in per round trip")
    ap.add_argument("--resp", type=int, default=1024,
                    help="bytes out per round trip; 0: a stream of REQ-byte messages "
                         "(NetPIPE's streaming test), nothing sent back")
    ap.add_argument("--output", help="folder (default: results/stack-count-DATE-COMMIT)")
    args = ap.parse_args(argv)
    for name, low, high in (("rounds", 1, 10_000_000), ("req", 1, 65536), ("resp", 0, 65536)):
        if not low <= getattr(args, name) <= high:
            ap.error(f"--{name} out of range ({low}-{high})")
    if args.warmup < 0:
        ap.error("--warmup must be >= 0")
    build()
    out = args.output or stamped_output("stack-count", TOP)
    os.makedirs(out, exist_ok=True)
    funcs = count(args.rounds, args.warmup, args.req, args.resp,
                  os.path.join(out, "callgrind.out"))
    result = {"benchmark": "the network stack's instructions per round trip, on the host "
                           "(tools/bench/stack_count.py, net/bench/pingpong.c)",
              "command": "python3 tools/bench/stack_count.py " + " ".join(argv or sys.argv[1:]),
              "machine": describe("none", "a host process under callgrind, no VM"),
              "settings": {"rounds": args.rounds, "warmup": args.warmup, "req": args.req,
                           "resp": args.resp, "cc": "host gcc -O2, as the guest",
                           "counter": "valgrind callgrind, Ir, in serve_rounds only"},
              "per_round_trip": summarize(funcs, args.rounds)}
    with open(os.path.join(out, "stack-count.json"), "w") as f:
        json.dump(result, f, indent=1)
    per = result["per_round_trip"]
    print(f"{args.req} B in, {args.resp} B out, {args.rounds} round trips: the stack "
          f"{per['stack']:,.0f} instructions per round trip (all counted: {per['total']:,.0f})")
    for name, v in per["groups"].items():
        print(f"  {v:9,.0f}  {name}")
    for f in per["top_functions"][:20]:
        print(f"  {f['per_round_trip']:9,.0f}  {f['function']}  ({f['group']})")
    print(f"written: {out}/stack-count.json")
    return 0


if __name__ == "__main__":
    sys.exit(main())
