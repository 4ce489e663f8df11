"""Where a guest's instructions went: insn_count's profile file (profile=PATH, insn_count.c)
mapped to the functions of the guest's ELF files.

The plugin writes one line per translation block, "VADDR NINSNS EXECS IDLE" (IDLE: the
executions inside the guest's marked idle polling; files from before it have three columns,
read as IDLE 0); a block counts whole for the function its first instruction lies in.
Symbols come from `nm` of each ELF given (the kernel, the application): nom links them at
distinct addresses, so one table serves all.
"""
import bisect
import re
import subprocess
from collections import Counter

# What runs below the lowest symbol: under nom, the firmware and GRUB (boot only).
BELOW_SYMBOLS = "(below the kernel: firmware, boot loader)"
# nm -n -S --defined-only: "ADDRESS [SIZE] TYPE NAME"; only code (t/T, w/W) marks a function's
# start, and a local one only with a size: a sizeless local is an assembly label inside a
# function (newlib's memcpy has its "loop"), whose instructions are that function's.
_NM_LINE = re.compile(r"^([0-9a-fA-F]+) (?:([0-9a-fA-F]+) )?([tTwW]) (\S+)$")


class Symbols:
    """Function start addresses of some ELF files; name_of(vaddr) is the function holding it.
    prefixes: a string put before the names of each ELF (e.g. "kernel:"), default none."""

    def __init__(self, elfs, prefixes=None):
        starts = {}
        for elf, prefix in zip(elfs, prefixes or [""] * len(elfs)):
            out = subprocess.run(["nm", "-n", "-S", "--defined-only", str(elf)], check=True,
                                 capture_output=True, text=True).stdout
            for line in out.splitlines():
                m = _NM_LINE.match(line)
                if m and (m.group(2) or m.group(3) in "TW"):
                    starts.setdefault(int(m.group(1), 16), prefix + m.group(4))
        self.addrs = sorted(starts)
        self.names = [starts[a] for a in self.addrs]

    def name_of(self, vaddr):
        i = bisect.bisect_right(self.addrs, vaddr) - 1
        return self.names[i] if i >= 0 else BELOW_SYMBOLS


def read_profile(path):
    """parse_profile() of the file at path."""
    with open(path) as f:
        return parse_profile(f.read())


def parse_profile(text):
    """[(vaddr, ninsns, execs, idle_execs)] from the plugin's profile file (ValueError if
    malformed)."""
    rows = []
    for line in text.splitlines():
        words = line.split()
        if not words:
            continue
        if len(words) not in (3, 4):
            raise ValueError(f"malformed profile line: {line!r}")
        idle = int(words[3]) if len(words) == 4 else 0
        rows.append((int(words[0], 16), int(words[1]), int(words[2]), idle))
    return rows


def difference(later, earlier):
    """The rows of the time between two snapshots of one run (later minus earlier), blocks
    keyed by (vaddr, ninsns)."""
    def by_block(rows):
        execs, idle = Counter(), Counter()
        for vaddr, ninsns, n, i in rows:
            execs[(vaddr, ninsns)] += n
            idle[(vaddr, ninsns)] += i
        return execs, idle
    before, before_idle = by_block(earlier)
    after, after_idle = by_block(later)
    return [(v, n, e - before[(v, n)], after_idle[(v, n)] - before_idle[(v, n)])
            for (v, n), e in after.items() if e > before[(v, n)]]


# What by_function counts of each block's executions.
PARTS = {"all": lambda execs, idle: execs,
         "work": lambda execs, idle: execs - idle,
         "idle": lambda execs, idle: idle}


def by_function(rows, symbols, part="all"):
    """Counter: function name -> guest instructions executed in it, all of them or only
    those of the work or of the idle polling (PARTS)."""
    count = PARTS[part]
    totals = Counter()
    for vaddr, ninsns, execs, idle in rows:
        totals[symbols.name_of(vaddr)] += ninsns * count(execs, idle)
    return totals


def share(totals, pattern):
    """(instructions, fraction of all) spent in the functions whose names match pattern."""
    rx = re.compile(pattern)
    part = sum(n for name, n in totals.items() if rx.search(name))
    whole = sum(totals.values())
    return part, (part / whole if whole else 0.0)
