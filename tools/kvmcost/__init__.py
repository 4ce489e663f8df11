"""The exit-cost QEMU (README.md): build it, find it, configure a VM for it, read its ledger.

    kvmcost.build()                                   # make qemu-kvmcost; skipped when cached
    vm = nomvm.VM(..., qemu=kvmcost.qemu_binary(),
                  extra_args=kvmcost.args_for(kvmcost.SKYLAKE, ledger))
    a = kvmcost.snapshot(ledger, workdir + "/a.json"); ...; b = kvmcost.snapshot(...)
    kvmcost.difference(a, b)["kick"]["count"]         # kicks between the two snapshots

The ledger (written by QEMU, softmmu/kvmcost.c in the patch) is JSON:
{"mono_ns", "guest_ns", "final", "dilation", "clock", "insn_ps", "cost_file", "kinds": {KIND:
{"count", "ns", "stall_ns", "cost_ns"}}} where ns is count x cost_ns (undilated) and stall_ns what
the vCPU was stalled (ns x dilation); mono_ns is the host's CLOCK_MONOTONIC and guest_ns the
guest's clock (QEMU_CLOCK_VIRTUAL, patches/0011) when it was written; clock is the guest clock's
source (GUEST_CLOCKS, README "Time dilation"), "wall" when it was not dilated.
"""
import json
import os
import subprocess
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(os.path.dirname(HERE))
BUILD = os.environ.get("BUILD", os.path.join(TOP, "build"))
QEMU = os.path.join(BUILD, "kvmcost", "qemu-system-x86_64")
SKYLAKE = os.path.join(HERE, "costs", "kvm-skylake.conf")
APICV = os.path.join(HERE, "costs", "kvm-apicv.conf")
ZERO = os.path.join(HERE, "costs", "zero.conf")  # no exit costs: the dilated clock alone

# Every kind of the ledger, in QEMU's order (include/sysemu/kvmcost.h in the patch).
# COST_KINDS are those a cost file prices (each needs its line); "hpet" and "pause" are counted
# and never charged (patches/0004: an HPET read stands for a kvm-clock read, which exits
# nowhere; 0006: a KVM guest's PAUSE runs in the guest).
COST_KINDS = ("mmio", "kick", "pio", "lapic_eoi", "lapic_timer", "lapic_icr", "lapic_other",
              "irq_device", "irq_timer", "irq_ipi", "irq_other", "hlt")
KINDS = COST_KINDS + ("hpet", "pause")


def build():
    """Builds (or copies from the cache) the patched QEMU; returns its path. Raises
    subprocess.CalledProcessError if build.sh fails (it says why on stderr)."""
    subprocess.run([os.path.join(HERE, "build.sh")], check=True,
                   env=dict(os.environ, TOP=TOP, BUILD=BUILD))
    return QEMU


def qemu_binary():
    """The patched QEMU's path; FileNotFoundError naming the fix if it is not built."""
    if not os.access(QEMU, os.X_OK):
        raise FileNotFoundError(f"{QEMU} is not built: run `make qemu-kvmcost`")
    return QEMU


def args_for(cost_file, ledger_path, interval_ms=100, dilation=None, clock=None, insn_ps=None):
    """QEMU arguments that charge cost_file's costs and write the ledger to ledger_path every
    interval_ms (0: only at exit) and at exit; dilation (D >= 1) overrides the file's factor
    and, unless clock="wall", also dilates the guest's clock (QEMU's default: clock="dilated");
    clock="insn" adds QEMU's instruction counter (ICOUNT_ARGS), which it needs, and insn_ps
    (with it) sets the guest time of one instruction in ps (QEMU's default 1000)."""
    for path in (cost_file, ledger_path):
        if "," in path:
            raise ValueError(f"kvmcost: a comma in {path!r} (QEMU splits -kvmcost at commas)")
    value = f"costs={os.path.abspath(cost_file)},ledger={os.path.abspath(ledger_path)}"
    value += f",interval_ms={int(interval_ms)}"
    if dilation is not None:
        value += f",dilation={float(dilation)!r}"
    if clock is not None:
        value += f",clock={clock}"
    if insn_ps is not None:
        value += f",insn_ps={int(insn_ps)}"
    return ["-kvmcost", value] + (ICOUNT_ARGS if clock == "insn" else [])


def read_ledger(path):
    """The ledger at path as a dict (see the top); ValueError if it is not a whole ledger."""
    with open(path) as f:
        ledger = json.load(f)
    kinds = ledger.get("kinds", {})
    if set(kinds) != set(KINDS):
        raise ValueError(f"{path}: kinds {sorted(kinds)}, expected {sorted(KINDS)}")
    return ledger


def snapshot(ledger_path, out_path, timeout=10.0):
    """Asks the running QEMU for a ledger now (the mark file ledger_path.mark, looked at every
    interval_ms) and returns it once written to out_path. TimeoutError if QEMU does not answer
    (not running, or interval_ms=0)."""
    if os.path.exists(out_path):
        os.unlink(out_path)
    mark = ledger_path + ".mark"
    with open(mark + ".part", "w") as f:
        f.write(os.path.abspath(out_path) + "\n")
    os.rename(mark + ".part", mark)  # QEMU reads the mark whole
    deadline = time.monotonic() + timeout
    while not os.path.exists(out_path):
        if time.monotonic() > deadline:
            raise TimeoutError(f"no ledger snapshot in {out_path} after {timeout} s")
        time.sleep(0.01)
    return read_ledger(out_path)


def window_dilation(a, b):
    """Wall time over guest time between ledgers a and b (b later): the dilation the guest
    actually ran at in that window, D on the dilated clock, and on the instruction clock what
    its instructions, charges and halts made of it (README "The instruction clock"). None when
    a ledger predates guest_ns (patches/0011) or the guest's clock did not advance."""
    if a.get("guest_ns") is None or b.get("guest_ns") is None:
        return None
    guest = b["guest_ns"] - a["guest_ns"]
    return (b["mono_ns"] - a["mono_ns"]) / guest if guest > 0 else None


def difference(a, b):
    """{kind: {"count", "ns", "stall_ns"}} charged between ledgers a and b (b later)."""
    return {k: {f: b["kinds"][k][f] - a["kinds"][k][f] for f in ("count", "ns", "stall_ns")}
            for k in KINDS}


# The cost models a driver can name (--kvmcost NAME); "off" runs the stock QEMU, "zero" the
# patched one with the dilated clock and every charge 0 (costs/zero.conf).
COST_FILES = {"skylake": SKYLAKE, "apicv": APICV, "zero": ZERO}
CHOICES = ("off",) + tuple(COST_FILES)
# What the dilated guest clock counts (QEMU's -kvmcost clock=, README "The vCPU-time clock" and
# "The instruction clock"): wall time, the vCPU thread's CPU time while it runs, or the guest's
# instructions while it runs (QEMU's icount, insn_ps() each); wall time / D while it halts.
GUEST_CLOCKS = ("dilated", "cpu", "insn")
# The clock the tools run guests on unless told otherwise (--guest-clock): the instruction
# clock, where W holds to within 2 us at its p99 and no host stall passes in guest time
# (results/holds-2026-12-03-insn-clock), and where each guest's time is its own instructions at
# one host cycle each, whatever TCG's speed on its code: on the dilated clock a guest whose code
# TCG runs slowly (Linux's D_insn 16-22 against nom's 5-7, results/2026-12-03-insn-clock-pilot)
# is also slow in its own time, which no KVM host would make it. Experiment folders from before
# it ran "dilated" (their plan.json says, or says nothing).
DEFAULT_GUEST_CLOCK = "insn"
# clock=insn's instruction counter: no alignment to wall time, and the clock warped over the
# halted vCPU's (dilated) wall time instead of stopping (the shift is unused: insn_ps rules).
ICOUNT_ARGS = ["-icount", "shift=0,align=off,sleep=on"]


def insn_ps(clock_hz=None):
    """clock=insn's guest time per instruction, ps: one instruction a cycle of the host CPU's
    clock (the CPI of 1 that D_insn assumes, dilation.from_instructions), so the guest runs as
    fast in its own time as the host would run it natively at that CPI; 1000 (1 ns) when the
    clock rate is unknown."""
    if clock_hz is None:
        from . import dilation as dil
        clock_hz = dil.host_clock_hz()
    return max(1, round(1e12 / clock_hz)) if clock_hz else 1000


def model(name, dilation=None, reference=None, clock=DEFAULT_GUEST_CLOCK):
    """The setting of a run under cost model `name` ("off": None): {"name", "cost_file",
    "dilation", "calibration", "clock"[, "insn_ps" with clock "insn": insn_ps()]}; clock is
    the guest clock's source (GUEST_CLOCKS, KeyError for another). D is measured now
    (dilation.calibrate on the patched QEMU: D_mix, README "Which D") unless given; with
    `reference` (an experiment's) D is the reference's, and the calibration taken now only
    checks the host (one slower than the reference is repeated, and "disturbed" in it says
    whether the host stayed busy); D drives both the stalls and the guest's clock, so it is at
    least 1 (TCG is never faster than the host; QEMU refuses less).
    FileNotFoundError if the patched QEMU is not built; KeyError for an unknown name;
    dilation.CalibrationError if the calibration fails."""
    if name in (None, "off"):
        return None
    cost_file = COST_FILES[name]
    if clock not in GUEST_CLOCKS:  # before a calibration is spent on it
        raise KeyError(f"guest clock {clock!r}: one of {', '.join(GUEST_CLOCKS)}")
    qemu = qemu_binary()
    calibration = None
    if dilation is None:
        from . import dilation as dil
        calibration = dil.calibrate(qemu, reference=reference)
        # With a reference the run runs at its D, the same for every run of an experiment's
        # pass; its own calibration only tells a busy host (tools/experiment/calibration.py).
        dilation = dil.boot_d(reference or calibration)
    setting = {"name": name, "cost_file": cost_file, "dilation": float(dilation),
               "calibration": calibration, "qemu": qemu, "clock": clock}
    if clock == "insn":
        setting["insn_ps"] = insn_ps()
    return setting
