"""Guest instructions executed, read from the insn_count TCG plugin's output file (insn_count.c).

The plugin appends "MONO_NS TOTAL NVCPUS C0 C1 ... IDLE SPINS" every interval_ms and a
"final ..." line when QEMU exits; MONO_NS is CLOCK_MONOTONIC, the clock of Python's
time.monotonic_ns(); IDLE and SPINS are the instructions and turns of the guest's marked idle
polling (insn_count.c), absent from older plugins' lines (then 0).
"""
import os
import subprocess
import time
from dataclasses import dataclass

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(os.path.dirname(HERE))
BUILD = os.environ.get("BUILD", os.path.join(TOP, "build"))
PLUGIN = os.path.join(BUILD, "vmcounters", "libinsncount.so")


def build():
    """Builds the plugin and the test guests (make -C tools/vmcounters); returns PLUGIN's path.
    Raises subprocess.CalledProcessError if the build fails."""
    subprocess.run(["make", "-s", "-C", HERE], check=True,
                   env=dict(os.environ, TOP=TOP, BUILD=BUILD))
    return PLUGIN


@dataclass
class InsnSample:
    """One dump of the counters: when (CLOCK_MONOTONIC ns), total, per vCPU, and of the total
    the instructions of idle polling and its empty turns (spins)."""
    mono_ns: int
    total: int
    per_vcpu: list
    final: bool = False
    idle: int = 0
    spins: int = 0


def parse_insn_file(text):
    """Parses the plugin's output; returns [InsnSample] in file order (ValueError if malformed)."""
    samples = []
    for line in text.splitlines():
        words = line.split()
        if not words:
            continue
        final = words[0] == "final"
        if final:
            words = words[1:]
        mono_ns, total, n = int(words[0]), int(words[1]), int(words[2])
        per_vcpu = [int(w) for w in words[3:3 + n]]
        idle_words = [int(w) for w in words[3 + n:]]
        if len(per_vcpu) != n or sum(per_vcpu) != total or len(idle_words) not in (0, 2):
            raise ValueError(f"malformed insn_count line: {line!r}")
        idle, spins = idle_words or (0, 0)
        samples.append(InsnSample(mono_ns, total, per_vcpu, final, idle, spins))
    return samples


class InsnCounter:
    """Counts a QEMU's guest instructions: pass qemu_args() to the VM, then read samples().
    interval_ms is how often the plugin dumps (0: only when QEMU exits). profile: also write
    where they went (profile_path, when QEMU exits; guestprofile.py reads it)."""

    def __init__(self, workdir, interval_ms=100, plugin=PLUGIN, profile=False):
        self.path = os.path.join(workdir, "insns.txt")
        self.profile_path = os.path.join(workdir, "insn-profile.txt") if profile else None
        self.interval_ms = interval_ms
        self.plugin = plugin

    def qemu_args(self):
        if not os.path.isfile(self.plugin):
            raise FileNotFoundError(f"{self.plugin} not built (make -C tools/vmcounters)")
        arg = f"{self.plugin},out={self.path},interval_ms={self.interval_ms}"
        if self.profile_path:
            arg += f",profile={self.profile_path}"
        return ["-plugin", arg]

    def profile_snapshot(self, path, timeout_s=30):
        """Has the running plugin write the profile so far to path (insn_count.c: a mark file
        it looks for at each periodic dump); returns path once written. Needs profile=True and
        interval_ms > 0. Raises TimeoutError if the plugin does not answer."""
        if not self.profile_path or not self.interval_ms:
            raise ValueError("profile snapshots need profile=True and periodic dumps")
        mark = self.profile_path + ".mark"
        with open(mark + ".tmp", "w") as f:
            f.write(os.path.abspath(path) + "\n")
        os.rename(mark + ".tmp", mark)  # the plugin never sees half a name
        deadline = time.monotonic() + timeout_s
        while os.path.exists(mark) or not os.path.exists(path):
            if time.monotonic() > deadline:
                raise TimeoutError(f"no profile snapshot at {path} after {timeout_s} s")
            time.sleep(0.05)
        return path

    def samples(self):
        """Every dump so far ([] before the first); a partly written last line is skipped."""
        try:
            with open(self.path) as f:
                text = f.read()
        except FileNotFoundError:
            return []
        if text and not text.endswith("\n"):
            text = text[:text.rfind("\n") + 1]
        return parse_insn_file(text)

    def latest(self):
        """The newest dump, or None."""
        samples = self.samples()
        return samples[-1] if samples else None

    def at(self, mono_ns):
        """The last dump taken at or before mono_ns (a time.monotonic_ns() value), or None."""
        best = None
        for s in self.samples():
            if s.mono_ns <= mono_ns:
                best = s
        return best
