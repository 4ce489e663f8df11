"""Where a guest's instructions went: insn_count's profile file (profile=PATH, insn_count.c)
mapped to the functions of the guest's ELF files.

The plugin writes one line per translation block, "VADDR NINSNS EXECS"; a block counts whole
for the function its first instruction lies in. Symbols come from `nm` of each ELF given (the
kernel, the application): nom links them at distinct addresses, so one table serves all.
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
    """[(vaddr, ninsns, execs)] from the plugin's profile file (ValueError if malformed)."""
    rows = []
    for line in text.splitlines():
        words = line.split()
        if not words:
            continue
        if len(words) != 3:
            raise ValueError(f"malformed profile line: {line!r}")
        rows.append((int(words[0], 16), int(words[1]), int(words[2])))
    return rows


def difference(later, earlier):
    """The rows of the time between two snapshots of one run (later minus earlier), blocks
    keyed by (vaddr, ninsns)."""
    def by_block(rows):
        execs = Counter()
        for vaddr, ninsns, n in rows:
            execs[(vaddr, ninsns)] += n
        return execs
    before = by_block(earlier)
    return [(v, n, e - before[(v, n)]) for (v, n), e in by_block(later).items()
            if e > before[(v, n)]]


def by_function(rows, symbols):
    """Counter: function name -> guest instructions executed in it."""
    totals = Counter()
    for vaddr, ninsns, execs in rows:
        totals[symbols.name_of(vaddr)] += ninsns * execs
    return totals


def share(totals, pattern):
    """(instructions, fraction of all) spent in the functions whose names match pattern."""
    rx = re.compile(pattern)
    part = sum(n for name, n in totals.items() if rx.search(name))
    whole = sum(totals.values())
    return part, (part / whole if whole else 0.0)
