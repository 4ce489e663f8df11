#!/usr/bin/env python3
"""The system-call fuzzer at scale (issue 14): boots nom with apps/tests/kernel/fuzz.c on both
vCPUs of one application (its second context on the other vCPU, so calls race on one address
space) beside a witness application that must keep waking and finish, once per seed, and says
per boot how many calls ran, whether the kernel panicked and whether the neighbour answered.

    tools/fuzz/syscalls.py --calls 100000 --seeds 1,2,3,4,5      # 1,000,000 calls in all

Each boot gives fuzz CALLS calls per vCPU; the witness, on fuzz's first vCPU, sleeps and wakes
in 100 ms rounds while fuzz runs (--witness-rounds). Exit status 0 only if every boot shows the
fuzzer's 'survived' line, no PANIC, fuzz's exit status 0 and the witness's last line.
"""
import argparse
import re
import sys
from dataclasses import dataclass
from pathlib import Path

import toolflags
from nomvm import boot_apps

TOP = Path(__file__).resolve().parents[2]
APPS = TOP / "build" / "apps" / "tests" / "kernel"


@dataclass
class Boot:
    seed: int
    calls: int = 0
    errors: int = 0
    cpus: str = ""
    panicked: bool = False
    witness_ok: bool = False
    fuzz_exit: str = ""
    log: str = ""

    @property
    def ok(self):
        return self.calls > 0 and not self.panicked and self.witness_ok and self.fuzz_exit == "0"


def fuzz_modules(calls, seed, witness_rounds):
    # Both start on vCPU 0 (the witness time-sliced with fuzz there) so that vCPU 1 is free
    # for fuzz's second context.
    return [(str(APPS / "fuzz.elf"), f"nom.cpu=0 fuzz {calls} {seed} 2"),
            (str(APPS / "witness.elf"), f"nom.cpu=0 witness {witness_rounds}")]


def parse(seed, log):
    b = Boot(seed=seed, log=log, panicked="PANIC" in log)
    m = re.search(r"^fuzz: (\d+) calls on cpu (\d+) and cpu (\d+), seed \d+, (\d+) errors, survived$",
                  log, re.M)
    if m:
        b.calls, b.errors, b.cpus = int(m.group(1)), int(m.group(4)), f"{m.group(2)},{m.group(3)}"
    e = re.search(r"^nom: app fuzz (exited|killed)(?::? ?(-?\d+|.*))", log, re.M)
    if e:
        b.fuzz_exit = e.group(2) if e.group(1) == "exited" else "killed: " + e.group(2)
    # Garbage console writes may leave a line unfinished: the witness's line is not anchored.
    b.witness_ok = bool(re.search(r"witness: still alive after \d+ rounds$", log, re.M)
                        and re.search(r"^nom: app witness exited 0\b", log, re.M))
    return b


def run(calls, seed, witness_rounds, timeout):
    r = boot_apps(fuzz_modules(calls, seed, witness_rounds), smp=2, timeout=timeout)
    return parse(seed, r.log)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--calls", type=int, default=100000, help="calls per vCPU per boot")
    ap.add_argument("--seeds", type=toolflags.int_list, default=[1, 2, 3, 4, 5],
                    metavar="N[,N...]", help="one boot per seed (default 1,2,3,4,5)")
    ap.add_argument("--witness-rounds", type=int,
                    help="100 ms rounds (default: about as long as fuzz runs under TCG)")
    ap.add_argument("--timeout", type=int, default=3600, help="seconds per boot")
    ap.add_argument("--keep-logs", type=Path, help="folder for each boot's console log")
    a = ap.parse_args()
    total, failed = 0, 0
    print("seed  calls  errors  cpus  panic  witness  fuzz exit", flush=True)
    for seed in a.seeds:
        b = run(a.calls, seed, a.witness_rounds or max(10, a.calls // 400), a.timeout)
        total += b.calls
        failed += not b.ok
        print(f"{seed}  {b.calls}  {b.errors}  {b.cpus or '-'}  {'PANIC' if b.panicked else 'no'}  "
              f"{'ok' if b.witness_ok else 'FAILED'}  {b.fuzz_exit or '?'}", flush=True)
        if a.keep_logs:
            a.keep_logs.mkdir(parents=True, exist_ok=True)
            (a.keep_logs / f"syscalls-seed{seed}.log").write_text(b.log)
    print(f"total {total} calls, {failed} failed boots", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
