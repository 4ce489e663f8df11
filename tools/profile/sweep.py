"""Measures a nom application's profile: for each W, one boot with the batching delay fixed at
W (the application's --batching-delay=W), then the load classes "many" and "single" one after
the other, each after a warm-up; throughput T is the guest's outbound traffic counted on its
tap (what the provider bills, tools/profit's unit), latency and jitter are the load client's
per-request mean and standard deviation. NetPIPE's loads are the experiment's: "many" sends
32 KiB messages both ways (NPtcp -2; latency: NPtcp's time per round), "single" is ping-pong
of 1 KiB messages (latency: the best trial's round trip); NPtcp gives no jitter, written as 0. The
guest, the lab and the load are the experiment's own (tools/experiment NomDriver: the same
namespace, tap, the paper's load tools memcaslap, wrk and NPtcp (loadgen.phase), and
warm-up, and a price provider for priced to poll, as in a run: without one priced's polls fail
at once, and the guest then serves another way, nhttpd 8 % faster at W = 10 than with the
provider answering; README.md "The price daemon in the profiles"), so a profile describes
exactly what the experiment will measure.

    python3 tools/profile/sweep.py --app nhttpd --w 0,10,20,30,40 --seconds 10 \\
        --output apps/nhttpd/profile/profile.json
"""
import argparse
import datetime
import os
import shlex
import statistics
import sys
import tempfile

from experiment import machine
from experiment.nom_driver import APPS, make_driver
from experiment.runner import start_guest, stop_provider
import kvmcost
import toolflags
from priceprovider import DEFAULT_PORT
from nomvm import choose_accel
from profile_data import CLASSES, check_profile, write_profile

DEFAULT_W = (0, 10, 20, 30, 40)
# The price the provider quotes throughout (the experiment's low price, $/Gbit). At a fixed W
# the application does nothing with it; what matters is that priced's polls are answered.
PRICE_SCHEDULE = "0:1"


def point_of(w_us, fig):
    """One profile point from the experiment's figures of a phase (labdriver.load)."""
    seconds = fig["seconds"]
    lat = fig.get("latency_us") or {}
    if not fig.get("ops") or lat.get("mean") is None:
        raise RuntimeError(f"W={w_us}: no request completed ({fig.get('note', '')})")
    point = {"w_us": w_us,
             "t_gbps": fig["bytes_out"] * 8 / 1e9 / seconds,
             "ops_per_s": fig["ops"] / seconds,
             "latency_us": lat["mean"],
             "jitter_us": lat["stddev"] or 0.0}
    # What the exit-cost model counted (kept beside the profile's figures, not read by cgen):
    # exits (kicks, MMIO/PIO, LAPIC accesses, HLTs) and interrupts per request from the
    # ledger, the guest's instructions per request and its vCPU's busy share (with the exits'
    # ns, where a request's guest time goes: tools/kvmcost/results/README.md, "What W can buy
    # here at most"), and the run's dilation D (D_mix of the boot, D_insn of the window, and
    # d_window: the window's wall time over its guest time, the D of a point on the
    # instruction clock).
    counters = fig.get("counters") or {}
    extra = {"exits_per_req": counters.get("ledger_exits_per_req"),
             "irqs_per_req": counters.get("ledger_irqs_per_req"),
             "exit_ns_per_req": counters.get("exit_ns_per_req"),
             "insns_per_req": counters.get("insns_per_req"),
             "cpu_util": counters.get("vcpu_util"),
             "d_mix": (fig.get("kvmcost") or {}).get("dilation"),
             "d_insn": counters.get("d_insn"),
             "d_window": counters.get("d_window")}
    point.update({k: v for k, v in extra.items() if isinstance(v, (int, float))})
    return point


def measure_w(driver, app, w_us, seconds, workdir):
    """{class: point} for one boot with W fixed at w_us."""
    variant = {"name": f"w={w_us:g}", "w_us": w_us}
    os.makedirs(workdir, exist_ok=True)
    provider = None
    try:
        _, provider = start_guest(driver, app, variant, workdir, driver.price_port,
                                  PRICE_SCHEDULE, hold=False)
        return {cls: point_of(w_us, driver.load(cls, seconds)) for cls in CLASSES}
    finally:
        try:
            driver.stop()
        finally:
            stop_provider(provider)


def median_point(points):
    """The median of each figure over repeated measurements of one W (a shared machine slows
    TCG guests now and then: the median keeps one slow boot from deciding the profile)."""
    med = {f: statistics.median(p[f] for p in points) for f in points[0]
           if f != "w_us" and all(f in p for p in points)}
    return dict(w_us=points[0]["w_us"], **med)


def program_name(app):
    """The name the application's controller knows itself by (its argv[0], the ELF's name
    without .elf: NetPIPE's is NPtcp): nom_learn_seed_profile seeds the online learner only
    from a profile whose "app" is that name."""
    return os.path.basename(APPS[app][0]).removesuffix(".elf")


def sweep(app, w_values, seconds, workdir, repeat=1, log=print, cost_model="off", dilation=None,
          pin_vcpu=False, guest_clock=kvmcost.DEFAULT_GUEST_CLOCK):
    """Rounds of every W in turn (interleaved, so a drift of the machine spreads over every W
    alike); each point is the median of its rounds. cost_model: the exit-cost model
    (tools/kvmcost; "off" for the stock QEMU); dilation: every boot's D under it (None: each
    boot's own calibration); pin_vcpu: the vCPU thread on a host CPU of its own; guest_clock:
    what the guest's clock counts under the cost model (kvmcost.GUEST_CLOCKS)."""
    accel, reason = choose_accel()
    driver = make_driver(accel, None, DEFAULT_PORT)
    driver.kvmcost_name = cost_model
    driver.dilation = dilation
    driver.pin_vcpu = pin_vcpu
    driver.guest_clock = guest_clock
    runs = {(cls, w): [] for cls in CLASSES for w in w_values}
    load = [os.getloadavg()[0]]
    for r in range(repeat):
        for w in w_values:
            points = measure_w(driver, app, w, seconds, os.path.join(workdir, f"r{r}-w{w}"))
            for cls in CLASSES:
                runs[cls, w].append(points[cls])
                p = points[cls]
                log(f"profile: {app} round {r + 1}/{repeat} W={w} {cls}: "
                    f"{p['ops_per_s']:.0f} ops/s {p['t_gbps'] * 1e3:.3f} Mbit/s, "
                    f"latency {p['latency_us']:.0f} us jitter {p['jitter_us']:.0f} us")
    load.append(os.getloadavg()[0])
    return {"app": program_name(app), "accel": accel, "accel_reason": reason,
            "machine": machine.describe(accel, reason),
            "date_utc": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            "host_load_average_start_end": load,
            "seconds_per_point": seconds, "rounds": repeat, "kvmcost": cost_model,
            "dilation_fixed": dilation, "pin_vcpu": pin_vcpu,
            "guest_clock": guest_clock if cost_model != "off" else "wall",
            "classes": {cls: [median_point(runs[cls, w]) for w in w_values] for cls in CLASSES},
            "all_rounds": {cls: [runs[cls, w] for w in w_values] for cls in CLASSES}}


def parse_args(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--app", required=True, choices=sorted(APPS))
    toolflags.add_w_list(ap, DEFAULT_W)
    ap.add_argument("--seconds", type=float, default=10.0, help="per class and W (10)")
    ap.add_argument("--repeat", type=int, default=1, help="rounds over every W; points are "
                    "the medians (1)")
    ap.add_argument("--output", required=True, help="the profile JSON to write")
    ap.add_argument("--workdir", help="raw outputs (default: a temporary folder)")
    ap.add_argument("--kvmcost", choices=kvmcost.CHOICES, default="off",
                    help="charge hardware-KVM exit costs (tools/kvmcost; default off)")
    toolflags.add_dilation(ap)
    toolflags.add_guest_clock(ap, kvmcost.GUEST_CLOCKS)
    toolflags.add_pin_vcpu(ap)
    args = ap.parse_args(argv)
    toolflags.check_dilation(ap, args)
    return args


def main(argv=None):
    args = parse_args(argv)
    toolflags.settle_dilation(args, "sweep")
    w_values = sorted(set(args.w))
    workdir = args.workdir or tempfile.mkdtemp(prefix="nomprofile-")
    profile = sweep(args.app, w_values, args.seconds, workdir, args.repeat,
                    cost_model=args.kvmcost, dilation=args.dilation, pin_vcpu=args.pin_vcpu,
                    guest_clock=args.guest_clock)
    profile["command"] = " ".join(shlex.quote(a) for a in ["python3", "tools/profile/sweep.py"]
                                  + (sys.argv[1:] if argv is None else list(argv)))
    check_profile(profile)
    write_profile(profile, args.output)
    print(f"profile: wrote {args.output} (raw outputs in {workdir})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
