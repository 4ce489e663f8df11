"""The host's own stalls on a vCPU's CPU, and the lateness they alone give a dilated guest.

A vCPU thread on a CPU of its own (tools/nomvm/placement.py) still loses that CPU to the host
kernel: its timer tick and other interrupts, and, on a nested host, the hypervisor beneath it.
The guest's clock runs through such a stall (wall time with clock=dilated; the thread's CPU
time with clock=cpu, which a kernel without IRQ time accounting bills the interrupts to) while
no guest instruction runs, so a stall of g ns shows in the guest as g / D ns in which nothing
happened. A batch whose release falls inside it is released late by up to that much.

probe() measures the stalls with calib/hostnoise.c pinned on the CPU while no guest runs (the
CPU is the vCPU's while one does; holds.py probes before each boot and after each stop). late_share() turns them into the share of
releases a guest at dilation D would see late by at least `late_us` from the host's stalls
alone, with no lateness of its own: a release due at a moment uniformly spread over the source
clock's time is late by >= late_us if a stall of g ns covers that moment and more than
late_us x D ns of the stall follow it, a window of g - late_us x D ns per stall; the share is
the sum of those windows over the probe's time. holds.py prints it beside what the guest
measured, so a reader sees how much of a run's lateness the host accounts for.

On the 2-CPU AMD EPYC host (a nested VM, HZ=250, no IRQ time accounting) on 2026-12-03:
the timer tick took 20-70 us every 4 ms, and a thread alone on the CPU lost it 400-480 times a
second for 10 us or more. At D = 5 a 4 s probe predicts 0.15-1.2 % of releases 5 us or more
late (the few stalls over 100 us decide where in that range), against 0.6-2.0 % measured by
holds.py at W = 10-40; at D = 10, 0.04-0.7 % against 0.1-0.8 %
(results/holds-2026-12-03-host-noise). A native host's tick costs 1-2 us of a vCPU's time;
here each costs the guest 4-14 us of its own time at D = 5.
"""
import os
import subprocess

from kvmcost import BUILD, dilation  # absolute: this file also runs as a script

PROBE = os.path.join(BUILD, "kvmcost", "hostnoise")
MIN_GAP_NS = 2000  # the loop's own turn is 20-400 ns (a vDSO or a system call clock read)
SOURCE_CLOCKS = {"dilated": "wall", "wall": "wall", "cpu": "cpu"}  # -kvmcost clock= to probe's


class ProbeError(RuntimeError):
    pass


def parse(text):
    """{"clock", "seconds", "reads", "gaps_ns"} of the probe's output; ProbeError if it is not
    the probe's or lost gaps (more than it keeps)."""
    lines = text.splitlines()
    if not lines or not lines[0].startswith("hostnoise "):
        raise ProbeError(f"not the host-noise probe's output: {text[:200]!r}")
    head = dict(word.split("=", 1) for word in lines[0].split()[1:])
    gaps = [int(line.split()[1]) for line in lines[1:] if line.startswith("gap ")]
    if len(gaps) != int(head["gaps"]):
        raise ProbeError(f"the probe kept {len(gaps)} of {head['gaps']} gaps")
    return {"clock": head["clock"], "seconds": float(head["seconds"]),
            "reads": int(head["reads"]), "gaps_ns": gaps}


def probe(cpu, seconds=2.0, guest_clock="dilated", min_gap_ns=MIN_GAP_NS):
    """Runs the probe for `seconds` on host CPU `cpu` against the source clock of guest_clock
    (a -kvmcost clock= value); returns parse()'s record with "cpu" added."""
    dilation.build()  # make -C tools/kvmcost: the probe is one of its programs
    clock = SOURCE_CLOCKS[guest_clock]
    r = subprocess.run([PROBE, f"{seconds}", clock, str(min_gap_ns)], capture_output=True,
                       text=True, timeout=seconds + 60,
                       preexec_fn=lambda: os.sched_setaffinity(0, {cpu}))
    if r.returncode != 0:
        raise ProbeError(f"{PROBE} exited {r.returncode}: {r.stderr.strip()}")
    return dict(parse(r.stdout), cpu=cpu)


def combine(*records):
    """One record of several probes of the same CPU and clock (their gaps over their summed
    time); None if none is given (Nones are skipped)."""
    records = [r for r in records if r]
    if not records:
        return None
    out = dict(records[0], gaps_ns=[g for r in records for g in r["gaps_ns"]])
    out["seconds"] = sum(r["seconds"] for r in records)
    out["reads"] = sum(r["reads"] for r in records)
    return out


def late_share(record, d, late_us=5.0):
    """The share of releases at dilation d that the probe's stalls alone make late_us or more
    late in the guest's time (the module's docstring has the model)."""
    reach_ns = late_us * 1000 * d
    return sum(g - reach_ns for g in record["gaps_ns"] if g > reach_ns) / (record["seconds"] * 1e9)


def summary(record, d, late_us=5.0):
    """What holds.py keeps of a probe: stalls per second by length and the predicted share."""
    per_s = record["seconds"]
    out = {"cpu": record["cpu"], "clock": record["clock"], "seconds": per_s, "d": d,
           "stalled_share": sum(record["gaps_ns"]) / (per_s * 1e9)}
    for us in (10, 25, 50, 100):
        out[f"stalls_ge_{us}us_per_s"] = sum(1 for g in record["gaps_ns"] if g >= us * 1000) / per_s
    out[f"predicted_share_late_ge_{late_us:g}us"] = late_share(record, d, late_us)
    return out


def main(argv=None):
    import argparse
    import json
    ap = argparse.ArgumentParser(description="The host's stalls on one CPU and the share of a "
                                 "dilated guest's releases they alone make late.")
    ap.add_argument("--cpu", type=int, required=True, help="the host CPU to probe (a vCPU's)")
    ap.add_argument("--seconds", type=float, default=5.0)
    ap.add_argument("--guest-clock", choices=sorted(SOURCE_CLOCKS), default="dilated",
                    help="the -kvmcost clock= whose source to probe (dilated/wall: wall time; "
                         "cpu: the thread's CPU time)")
    ap.add_argument("--dilation", type=float, default=5.0, help="D of the guest to predict for")
    ap.add_argument("--late-us", type=float, default=5.0)
    args = ap.parse_args(argv)
    if args.cpu not in os.sched_getaffinity(0):
        ap.error(f"CPU {args.cpu} is not one this process may use "
                 f"({sorted(os.sched_getaffinity(0))})")
    if not 0 < args.seconds <= 600 or args.dilation < 1:
        ap.error("--seconds takes 0-600 and --dilation at least 1")
    print(json.dumps(summary(probe(args.cpu, args.seconds, args.guest_clock), args.dilation,
                             args.late_us), indent=1))
    return 0


if __name__ == "__main__":
    import sys
    sys.exit(main())
