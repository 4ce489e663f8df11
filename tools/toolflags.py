"""Flags that several host tools share, spelled one way everywhere: a list is one argument
with commas (`--w 0,10,20`), never several words, and W, the batching delay, is in µs."""
import argparse


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
    """--dilation D: every boot under the exit-cost model runs at this D instead of its own
    calibration's (tools/kvmcost README, "Which D"), so that boots compared with each other
    run one cost model: a boot's own calibration ranged 3.3-8.9 within minutes on a busy
    2-core host. Check the parsed value with check_dilation."""
    parser.add_argument("--dilation", type=float, metavar="D",
                        help="with --kvmcost: run every boot at this time dilation D instead of "
                             "its own calibration's")


def add_pin_vcpu(parser):
    """--pin-vcpu: the guest's vCPU thread on a host CPU of its own, the harness, the load and
    QEMU's other threads on the rest (tools/nomvm/placement.py), so that the host's scheduler
    does not take the vCPU's CPU in the middle of a measurement; needs 2 host CPUs or more."""
    parser.add_argument("--pin-vcpu", action="store_true",
                        help="the vCPU thread on a host CPU of its own, the harness, the load and "
                             "QEMU's other threads on the rest (tools/nomvm/placement.py; needs "
                             "2 host CPUs or more)")


def add_guest_clock(parser, choices):
    """--guest-clock dilated|cpu|insn: what the dilated guest clock counts under the exit-cost
    model (tools/kvmcost README, "The vCPU-time clock", "The instruction clock"): wall time (the
    default), the vCPU thread's CPU time while it runs, or the guest's instructions while it
    runs. Checked by check_dilation."""
    parser.add_argument("--guest-clock", choices=choices, default="dilated",
                        help="with --kvmcost: the guest clock counts wall time / D (dilated, the "
                             "default), the vCPU thread's CPU time / D while it runs (cpu), or "
                             "the guest's instructions, 1 ns each, while it runs (insn; "
                             "single-threaded TCG)")


def check_dilation(parser, args):
    """A usage error (exit 2) unless --dilation, if given, comes with a cost model and is >= 1
    (TCG is never faster than the host), and --guest-clock cpu, if given, with a cost model."""
    if args.dilation is not None and (args.kvmcost == "off" or args.dilation < 1):
        parser.error("--dilation needs --kvmcost and a D of at least 1")
    if getattr(args, "guest_clock", "dilated") != "dilated" and args.kvmcost == "off":
        parser.error(f"--guest-clock {args.guest_clock} needs --kvmcost")


def add_w_list(parser, default, what="batching delays W"):
    """--w W[,W...]: the batching delays (µs) a tool runs, one after the other."""
    parser.add_argument("--w", type=int_list, default=list(default), metavar="W[,W...]",
                        help=f"{what}, µs, comma-separated (default {','.join(map(str, default))})")
