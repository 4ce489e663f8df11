#!/usr/bin/env python3
"""Builds and runs nom's libFuzzer harnesses (tools/fuzz/README.md); `make fuzz` calls it.

Each harness sits in a fuzz/ folder beside the code it fuzzes, with a Makefile (including
tools/fuzz/fuzz.mk) and a seeds/ corpus. A run fuzzes for a given time, keeping what it finds
in build/fuzz/corpus/NAME (so runs build on each other; the committed seeds are only read) and
crash reproducers in build/fuzz/crashes/NAME, and prints per harness: executions, libFuzzer's
coverage (cov: edges, ft: features), corpus size and crashes.

    tools/fuzz/run.py [--seconds N] [NAME ...]                fuzz each for N s (default 60)
    tools/fuzz/run.py --smoke                                 the deterministic short run of
                                                              `make test` (seed 1, bounded runs)
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

TOP = Path(__file__).resolve().parents[2]
BUILD = Path(os.environ.get("BUILD", TOP / "build"))
OUT = BUILD / "fuzz"


@dataclass
class Harness:
    name: str
    folder: str          # the fuzz/ folder, from the top
    max_len: int = 4096  # libFuzzer's -max_len
    smoke_runs: int = 20000  # -runs of the `make test` smoke run (a few seconds each)
    args: tuple = ()         # more libFuzzer flags

    @property
    def binary(self):
        return OUT / self.name

    @property
    def seeds(self):
        return TOP / self.folder / "seeds"


HARNESSES = [
    Harness("nhttpd_http", "apps/nhttpd/fuzz", max_len=9000, smoke_runs=200000),
    Harness("priced_parse", "apps/priced/fuzz", smoke_runs=100000),
    Harness("vnet_rings", "drivers/fuzz", max_len=2048, smoke_runs=4000),
    Harness("net_rx", "net/fuzz", max_len=8192, smoke_runs=30000),
    Harness("kernel_elf", "kernel/fuzz", max_len=4096, smoke_runs=200000),
    # 8 query bytes and a whole board (13,648 bytes in ABI 1); seeds end where their zeros start.
    Harness("libnom_bb", "libnom/fuzz", max_len=16384, smoke_runs=20000),
    # The server keeps connections and items in caches it never frees (no leak check), and its
    # verbose modes print on stdout and stderr (closed; libFuzzer keeps its own).
    Harness("memcached_text", "apps/memcached/fuzz", max_len=4096, smoke_runs=5000,
            args=("-detect_leaks=0", "-close_fd_mask=3")),
]


@dataclass
class Result:
    name: str
    executions: int = 0
    cov: int = 0
    ft: int = 0
    corpus: int = 0
    seconds: int = 0
    crashes: int = 0
    returncode: int = 0
    crash_file: str = ""
    log: str = ""


def clang_available():
    return shutil.which(os.environ.get("FUZZ_CC", "clang")) is not None


def build(h):
    env = dict(os.environ, TOP=str(TOP), BUILD=str(BUILD))
    r = subprocess.run(["make", "-s", "-j2", "-C", str(TOP / h.folder)], env=env,
                       capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"building {h.name} failed:\n{r.stdout}{r.stderr}")
    return h.binary


def parse_log(name, log, returncode):
    """libFuzzer's figures: the last status line's cov/ft/corp, -print_final_stats' counts."""
    res = Result(name, returncode=returncode, log=log)
    for m in re.finditer(r"^#(\d+)\s+\w+\s+cov: (\d+) ft: (\d+) corp: (\d+)/", log, re.M):
        res.executions, res.cov, res.ft, res.corpus = map(int, m.groups())
    m = re.search(r"stat::number_of_executed_units: (\d+)", log)
    if m:
        res.executions = int(m.group(1))
    m = re.search(r"Done \d+ runs in (\d+) second", log)
    if m:
        res.seconds = int(m.group(1))
    m = re.search(r"Test unit written to (\S+)", log)
    if m or returncode != 0:
        res.crashes = 1
        res.crash_file = m.group(1) if m else ""
    return res


def fuzz(h, seconds=None, runs=None, seed=None, corpus=None, nice=10):
    """Runs one harness over corpus (written to) and its seeds (read). Stops at the first crash."""
    binary = build(h)
    crashes = OUT / "crashes" / h.name
    crashes.mkdir(parents=True, exist_ok=True)
    corpus = Path(corpus or OUT / "corpus" / h.name)
    corpus.mkdir(parents=True, exist_ok=True)
    cmd = ["nice", "-n", str(nice), str(binary), f"-max_len={h.max_len}",
           "-print_final_stats=1", f"-artifact_prefix={crashes}/", "-rss_limit_mb=2048",
           *h.args]
    if seconds is not None:
        cmd.append(f"-max_total_time={seconds}")
    if runs is not None:
        cmd.append(f"-runs={runs}")
    if seed is not None:
        cmd.append(f"-seed={seed}")
    cmd += [str(corpus), str(h.seeds)]
    timeout = (seconds or 0) + 120 if runs is None else 600
    r = subprocess.run(cmd, capture_output=True, text=True, errors="replace", timeout=timeout)
    return parse_log(h.name, r.stdout + r.stderr, r.returncode)


def smoke(h):
    """The `make test` run: seed 1, a bounded number of runs, a fresh corpus: deterministic."""
    with tempfile.TemporaryDirectory(prefix=f"fuzz-{h.name}-") as tmp:
        return fuzz(h, runs=h.smoke_runs, seed=1, corpus=tmp, nice=0)


def table(results):
    lines = ["harness              executions   cov     ft  corpus  secs  crashes",
             "-------------------  ----------  -----  -----  ------  ----  -------"]
    for r in results:
        crash = f"{r.crashes} {r.crash_file}" if r.crashes else "0"
        lines.append(f"{r.name:<19}  {r.executions:>10}  {r.cov:>5}  {r.ft:>5}  {r.corpus:>6}  "
                     f"{r.seconds:>4}  {crash}")
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seconds", type=int, default=60)
    ap.add_argument("--smoke", action="store_true")
    ap.add_argument("names", nargs="*", help="harnesses to run (default: all): "
                    + ", ".join(h.name for h in HARNESSES))
    args = ap.parse_args()
    if not clang_available():
        sys.exit("fuzz: clang not found (Debian: clang, libclang-rt-14-dev; tools/bootstrap.sh)")
    chosen = [h for h in HARNESSES if not args.names or h.name in args.names]
    unknown = set(args.names) - {h.name for h in HARNESSES}
    if unknown:
        sys.exit(f"fuzz: no harness {', '.join(sorted(unknown))}")
    results = []
    for h in chosen:
        print(f"fuzz: {h.name} ({h.folder}) for "
              f"{f'{h.smoke_runs} runs' if args.smoke else f'{args.seconds} s'}", flush=True)
        r = smoke(h) if args.smoke else fuzz(h, seconds=args.seconds)
        if r.crashes:
            print("\n".join(r.log.splitlines()[-60:]))
        print(table([r]).splitlines()[-1], flush=True)
        results.append(r)
    print(table(results))
    sys.exit(1 if any(r.crashes for r in results) else 0)


if __name__ == "__main__":
    main()
