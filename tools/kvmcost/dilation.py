"""The time dilation factor D of a TCG run: how many times slower the guest runs than the host's
CPU would run it natively (Gupta, Yocum, McNett, Snoeren, Vahdat, Voelker, "To Infinity and
Beyond: Time-Warped Network Emulation", NSDI'06: the TDF, wall time over the guest's perceived
time). The exit-cost QEMU stalls each exit-equivalent for cost x D (README.md), so that guest
work and exits keep a real host's proportions; the KVM-equivalent figures divide by D.

Two estimates, both kept with every result:

- D_mix, calibrate(): a fixed instruction mix (calib/mix.c: a frame copy, the internet
  checksum, a hash, a table update, a pointer chase, branches and indirect calls) is one object
  file linked twice, as a 32-bit Linux program run natively and as a multiboot guest run under
  the given QEMU with TCG; each times its fastest of 7 repetitions in TSC ticks (under TCG
  without icount the guest's RDTSC reads the host's TSC), and D_mix = guest ticks / native
  ticks. It is measured at the start of a run, before the guest under test boots, so that the
  run's QEMU gets it (-kvmcost dilation=D). Tight loops are TCG's best case (its translation
  blocks chain), so D_mix is a lower bound for an OS's request path.
- D_insn, from_instructions(): during a load window, the guest's instructions (tools/vmcounters'
  plugin) over its vCPU thread's busy CPU time give TCG's rate; a native rate of host clock /
  CPI (CPI assumed 1.0, as tools/experiment/kvmmodel.py does; not measurable under TCG) over it
  is D_insn. It describes the code under test, but rests on the CPI assumption.

The host's native rate is this machine's (the TSC clock, /proc/cpuinfo), not the paper's
host's: the dilated guest is "this host's CPU under hardware KVM".
"""
import os
import re
import subprocess
import tempfile
import time

from . import BUILD, HERE, TOP

NATIVE = os.path.join(BUILD, "kvmcost", "calib-native")
GUEST = os.path.join(BUILD, "kvmcost", "calib-guest.elf")
NATIVE_RUNS = 5  # the native program is taken at its fastest of 5 runs (the host is shared)
_LINE = re.compile(r"calib rounds=(\d+) reps=(\d+) min_ticks=(\d+) check=(\d+)")


class CalibrationError(RuntimeError):
    pass


def build():
    """Builds the native program and the guest (make -C tools/kvmcost)."""
    subprocess.run(["make", "-s", "-C", HERE], check=True,
                   env=dict(os.environ, TOP=TOP, BUILD=BUILD))


def parse_line(text):
    """{"rounds", "reps", "min_ticks", "check"} of the mix's report line in text;
    CalibrationError if there is none or the mix was not deterministic (check 0)."""
    m = _LINE.search(text)
    if not m:
        raise CalibrationError(f"no calibration line in {text[-300:]!r}")
    out = dict(zip(("rounds", "reps", "min_ticks", "check"), map(int, m.groups())))
    if out["check"] == 0 or out["min_ticks"] == 0:
        raise CalibrationError(f"the mix's repetitions disagree: {m.group(0)}")
    return out


def run_native(runs=NATIVE_RUNS):
    """The native mix's report with the fewest ticks of `runs` runs."""
    best = None
    for _ in range(runs):
        r = subprocess.run([NATIVE], capture_output=True, text=True, timeout=60)
        if r.returncode != 0:
            raise CalibrationError(f"{NATIVE} exited {r.returncode}: {r.stderr.strip()}")
        line = parse_line(r.stdout)
        if best is None or line["min_ticks"] < best["min_ticks"]:
            best = line
    return best


def run_guest(qemu="qemu-system-x86_64", timeout=120):
    """The guest mix's report under TCG on `qemu` (the stock one or kvmcost's, without costs)."""
    with tempfile.TemporaryDirectory(prefix="nom-calib-") as d:
        serial = os.path.join(d, "serial.log")
        args = [qemu, "-machine", "q35", "-m", "32", "-display", "none", "-no-reboot",
                "-nodefaults", "-serial", f"file:{serial}",
                "-device", "isa-debug-exit,iobase=0xf4,iosize=0x04", "-accel", "tcg",
                "-cpu", "max", "-kernel", GUEST]
        r = subprocess.run(args, capture_output=True, text=True, timeout=timeout,
                           stdin=subprocess.DEVNULL)
        if r.returncode != 1:  # isa-debug-exit with 0: (0 << 1) | 1
            raise CalibrationError(f"the calibration guest ended with {r.returncode}: "
                                   f"{r.stderr.strip()[-300:]}")
        with open(serial, errors="replace") as f:
            return parse_line(f.read())


# How much slower than a reference calibration of the same machine either side may be before
# the host counts as busy while it ran. From the 60 runs of results/2026-11-26-b77589b: the
# native mix's fastest of 5 stayed within 0.3% of its median and the TCG guest's within -3.2%
# .. +1.3%; six outliers were +5% .. +72% slower (another process held a core for the whole
# calibration), giving D = 3.7 .. 8.0 against 4.66, and their runs a different cost model.
# A disturbance only adds time, so only the slower side is tested.
NATIVE_TOLERANCE = 0.02
TCG_TOLERANCE = 0.04
SIDES = ("native_ticks", "tcg_ticks")  # what a calibration measures, each the fastest seen
ATTEMPTS = 3          # calibrations at most before a run gives up on a busy host
RETRY_PAUSE_S = 15.0  # between them: a burst of another process usually passes by then


def d_of(calibration):
    """D_mix of a calibration or reference ({"native_ticks", "tcg_ticks"}): TCG over native."""
    return calibration["tcg_ticks"] / calibration["native_ticks"]


def boot_d(calibration):
    """The D a boot runs at by a calibration or reference: its D_mix, never below 1 (where
    TCG ran the mix as fast as the host, the guest's time still does not run ahead of it)."""
    return max(1.0, d_of(calibration))


def slower_than(calibration, reference):
    """Why `calibration` looks disturbed against `reference` (both with "native_ticks" and
    "tcg_ticks"), or None when both sides are within their tolerance."""
    why = []
    for side, tol in (("native", NATIVE_TOLERANCE), ("tcg", TCG_TOLERANCE)):
        ratio = calibration[f"{side}_ticks"] / reference[f"{side}_ticks"]
        if ratio > 1 + tol:
            why.append(f"the {side} mix took {ratio - 1:+.0%} against the reference "
                       f"(tolerance {tol:.0%})")
    return "; ".join(why) or None


def _measure_once(qemu):
    native, guest = run_native(), run_guest(qemu)
    if native["check"] != guest["check"] or native["rounds"] != guest["rounds"]:
        raise CalibrationError(f"native and guest mixes differ: {native} vs {guest}")
    return {"native_ticks": native["min_ticks"], "tcg_ticks": guest["min_ticks"],
            "check": native["check"]}


def calibrate(qemu="qemu-system-x86_64", reference=None, attempts=ATTEMPTS,
              pause_s=RETRY_PAUSE_S, sleep=time.sleep):
    """Measures D_mix now: {"d_mix", "native_ticks", "tcg_ticks", "check", "method"}.
    With a reference (the experiment's usual calibration, tools/experiment/calibration.py) a
    measurement slower than it (slower_than) is repeated after pause_s, up to `attempts` in
    all, each side keeping its fastest; then "attempts" lists them and "disturbed" says why
    the best is still off (None: it is not). CalibrationError if either side fails or they
    computed different results."""
    build()
    tries = []
    while True:
        tries.append(_measure_once(qemu))
        best = {side: min(t[side] for t in tries) for side in SIDES}
        why = slower_than(best, reference) if reference else None
        if why is None or len(tries) >= attempts:
            break
        sleep(pause_s)
    out = {"d_mix": d_of(best), **best,
           "check": tries[0]["check"], "method": "calib/mix.c, native vs TCG, TSC ticks"}
    if reference:
        out.update(attempts=tries, disturbed=why,
                   reference={k: reference[k] for k in SIDES})
    return out


def host_clock_hz(cpuinfo="/proc/cpuinfo"):
    """The host CPU's clock in Hz (the first "cpu MHz" line); None if unknown."""
    try:
        with open(cpuinfo) as f:
            m = re.search(r"^cpu MHz\s*:\s*([\d.]+)", f.read(), re.M)
    except OSError:
        return None
    return float(m.group(1)) * 1e6 if m else None


def from_instructions(insns, vcpu_busy_s, clock_hz, cpi=1.0):
    """D_insn: (clock_hz / cpi) native instructions/s over the guest's insns / vcpu_busy_s under
    TCG; None if any figure is missing or zero."""
    if not insns or not vcpu_busy_s or not clock_hz:
        return None
    return (clock_hz / cpi) / (insns / vcpu_busy_s)
