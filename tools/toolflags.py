"""Flags that several host tools share, spelled one way everywhere: a list is one argument
with commas (`--w 0,10,20`), never several words, and W, the batching delay, is in µs."""
import argparse
import sys


def int_list(text):
    """argparse type: "0,10,20" -> [0, 10, 20]; "" -> [] (none); negative or non-integer
    items are a usage error (exit 2)."""
    try:
        values = [int(item) for item in text.split(",") if item.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected integers separated by commas, e.g. 0,10,20, not {text!r}") from None
    if any(v < 0 for v in values):
        raise argparse.ArgumentTypeError(f"negative value in {text!r}")
    return values


def add_dilation(parser):
    """--dilation D: every boot under the exit-cost model runs at this D (tools/kvmcost README,
    "Which D"); without it, at one D calibrated when the run starts (settle_dilation), so that
    boots compared with each other run one cost model either way: a boot's own calibration
    ranged 3.3-8.9 within minutes on a busy 2-core host. Check the parsed value with
    check_dilation."""
    parser.add_argument("--dilation", type=float, metavar="D",
                        help="with --kvmcost: run every boot at this time dilation D instead of "
                             "one calibrated when the run starts (each side's fastest of 5)")


def settle_dilation(args, tool):
    """Without --dilation, under a cost model: sets args.dilation to one D for every boot of
    this run, each side's fastest of tools/experiment/calibration.py's REFERENCE_RUNS
    calibrations taken now (as the experiment fixes a pass's D), and says so on stderr. Each
    boot at its own calibration's D is not one cost model: on the EPYC host it read 3.3 or 5.3
    from one boot to the next, the native mix 1.6x slower at times
    (results/holds-2026-12-03-host-noise/calibrated)."""
    if args.kvmcost == "off" or args.dilation is not None:
        return
    from experiment import calibration
    from kvmcost import dilation
    ref = calibration.measure_reference(args.kvmcost)
    args.dilation = dilation.boot_d(ref)
    print(f"{tool}: every boot at D = {args.dilation:.2f}, each side's fastest of "
          f"{calibration.REFERENCE_RUNS} calibrations now (--dilation D sets it)",
          file=sys.stderr, flush=True)


def add_pin_vcpu(parser):
    """--pin-vcpu: the guest's vCPU thread on a host CPU of its own, the harness, the load and
    QEMU's other threads on the rest (tools/nomvm/placement.py), so that the host's scheduler
    does not take the vCPU's CPU in the middle of a measurement; needs 2 host CPUs or more."""
    parser.add_argument("--pin-vcpu", action="store_true",
                        help="the vCPU thread on a host CPU of its own, the harness, the load and "
                             "QEMU's other threads on the rest (tools/nomvm/placement.py; needs "
                             "2 host CPUs or more)")


def add_guest_clock(parser, choices):
    """--guest-clock dilated|cpu|insn: what the guest's clock counts under the exit-cost model
    (tools/kvmcost README, "The vCPU-time clock", "The instruction clock"): wall time / D, the
    vCPU thread's CPU time / D or the guest's instructions while it runs. Without it, under a
    cost model, kvmcost.DEFAULT_GUEST_CLOCK (the instruction clock; its comment says why):
    check_dilation sets it, and refuses the flag without a cost model."""
    parser.add_argument("--guest-clock", choices=choices,
                        help="with --kvmcost: the guest's clock counts its instructions, one a "
                             "host cycle each, while it runs (insn, the default; "
                             "single-threaded TCG), the vCPU thread's CPU time / D (cpu), or "
                             "wall time / D (dilated)")


def check_dilation(parser, args):
    """A usage error (exit 2) unless --dilation, if given, comes with a cost model and is >= 1
    (TCG is never faster than the host), and --guest-clock, if given, with a cost model; sets
    an absent --guest-clock to kvmcost.DEFAULT_GUEST_CLOCK under a cost model ("wall" without
    one: the stock QEMU's guest clock)."""
    if args.dilation is not None and (args.kvmcost == "off" or args.dilation < 1):
        parser.error("--dilation needs --kvmcost and a D of at least 1")
    if not hasattr(args, "guest_clock"):
        return
    if args.guest_clock is not None and args.kvmcost == "off":
        parser.error(f"--guest-clock {args.guest_clock} needs --kvmcost")
    if args.guest_clock is None:
        import kvmcost
        args.guest_clock = "wall" if args.kvmcost == "off" else kvmcost.DEFAULT_GUEST_CLOCK


def add_w_list(parser, default, what="batching delays W"):
    """--w W[,W...]: the batching delays (µs) a tool runs, one after the other."""
    parser.add_argument("--w", type=int_list, default=list(default), metavar="W[,W...]",
                        help=f"{what}, µs, comma-separated (default {','.join(map(str, default))})")
