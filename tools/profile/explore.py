"""Explores two data-path knobs jointly, offline, in the way of Wayfinder (Unikraft's
configuration-space explorer): the batching delay W and the idle core's poll-versus-interrupt
threshold (net/'s --idle-poll-us, nom/net.h: how long an idle core polls the NIC before it
re-enables the interrupt and blocks). One boot per (W, poll) point, each loaded "many" then
"single" as sweep.py does (the experiment's own lab, load and warm-up); the result is every
point's throughput, latency, jitter and exits per request, and per load class the Pareto
frontier over (throughput max, latency min, exits min), written as JSON and drawn as a PNG.

    python3 tools/profile/explore.py --app memcached --w 0,20,40 --idle-poll 0,50,200 \\
        --seconds 8 --kvmcost skylake --output tools/profile/results/explore-memcached.json

The threshold is a time constant of the economics like W: under the exit-cost model it is
given undilated and converted to the guest's clock as W is (LabDriver.guest_us). Both knobs
are runtime knobs on nom (nom_net_set_batching_delay_us, nom_sched_set_idle_poll_us); here each
point is a fresh boot so that points do not inherit each other's state.
"""
import argparse
import datetime
import json
import os
import shlex
import sys
import tempfile

from experiment import machine, nom_driver
import kvmcost
from nomvm import choose_accel
from pareto import frontier
from profile_data import CLASSES
from sweep import median_point, point_of
import toolflags

DEFAULT_W = (0, 20, 40)
DEFAULT_POLL = (0, 50, 200)


class KnobDriver(nom_driver.NomDriver):
    """nom's experiment driver with the poll threshold of the variant on the application's
    command line. NomDriver builds that command line from its APPS table and has no hook for
    another guest option, so the table's entry is swapped for the one boot and put back."""

    def make_vm(self, app, variant, workdir, nic, extra_args):
        saved = nom_driver.APPS[app]
        elf, args, port, probe = saved
        poll = f"--idle-poll-us={self.guest_us(variant['idle_poll_us']):g}"
        nom_driver.APPS[app] = (elf, args + [poll], port, probe)
        try:
            return super().make_vm(app, variant, workdir, nic, extra_args)
        finally:
            nom_driver.APPS[app] = saved


def measure(driver, app, w_us, poll_us, seconds, workdir):
    """{class: point} of one boot at (W, poll)."""
    variant = {"name": f"w={w_us:g},poll={poll_us:g}", "w_us": w_us, "idle_poll_us": poll_us}
    os.makedirs(workdir, exist_ok=True)
    driver.start(app, variant, workdir)
    try:
        return {cls: dict(point_of(w_us, driver.load(cls, seconds)), idle_poll_us=poll_us)
                for cls in CLASSES}
    finally:
        driver.stop()


def explore(app, grid, seconds, workdir, repeat, cost_model, log=print):
    """Rounds over the grid (interleaved, as sweep.py); per point the median of its rounds;
    per class the frontier's indices into its points."""
    accel, reason = choose_accel()
    nom_driver.prepare()
    driver = KnobDriver(accel, 0)
    driver.kvmcost_name = cost_model
    runs = {(cls, knobs): [] for cls in CLASSES for knobs in grid}
    load = [os.getloadavg()[0]]
    for r in range(repeat):
        for w, poll in grid:
            pts = measure(driver, app, w, poll, seconds,
                          os.path.join(workdir, f"r{r}-w{w}-poll{poll}"))
            for cls in CLASSES:
                runs[cls, (w, poll)].append(pts[cls])
                p = pts[cls]
                log(f"explore: {app} round {r + 1}/{repeat} W={w} poll={poll} {cls}: "
                    f"{p['ops_per_s']:.0f} ops/s, latency {p['latency_us']:.0f} us, "
                    f"exits/req {p.get('exits_per_req', float('nan')):.3f}")
    load.append(os.getloadavg()[0])
    classes = {}
    for cls in CLASSES:
        pts = [dict(median_point(runs[cls, k]), idle_poll_us=k[1]) for k in grid]
        classes[cls] = {"points": pts, "pareto": frontier(pts)}
    return {"app": app, "accel": accel, "accel_reason": reason,
            "machine": machine.describe(accel, reason), "kvmcost": cost_model,
            "date_utc": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            "host_load_average_start_end": load, "seconds_per_point": seconds,
            "rounds": repeat, "knobs": {"w_us": sorted({k[0] for k in grid}),
                                        "idle_poll_us": sorted({k[1] for k in grid})},
            "objectives": "t_gbps max, latency_us min, exits_per_req min",
            "classes": classes,
            "all_rounds": {cls: [runs[cls, k] for k in grid] for cls in CLASSES}}


def plot(result, path):
    """Latency against throughput per class, each point labelled W/poll, coloured by exits
    per request, the frontier ringed."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, axes = plt.subplots(1, len(CLASSES), figsize=(11, 4.5))
    for ax, cls in zip(axes, CLASSES):
        pts, front = result["classes"][cls]["points"], result["classes"][cls]["pareto"]
        xs = [p["t_gbps"] * 1e3 for p in pts]
        ys = [p["latency_us"] for p in pts]
        cs = [p.get("exits_per_req", 0.0) for p in pts]
        sc = ax.scatter(xs, ys, c=cs, cmap="viridis", s=36, zorder=2)
        ax.scatter([xs[i] for i in front], [ys[i] for i in front], s=140, facecolors="none",
                   edgecolors="red", label="Pareto frontier", zorder=3)
        for p, x, y in zip(pts, xs, ys):
            ax.annotate(f"{p['w_us']:g}/{p['idle_poll_us']:g}", (x, y), fontsize=7,
                        xytext=(3, 3), textcoords="offset points")
        ax.set_title(f"{result['app']} {cls} ({result['accel']}, kvmcost {result['kvmcost']})")
        ax.set_xlabel("throughput out, Mbit/s")
        ax.set_ylabel("mean latency, us")
        ax.legend(fontsize=7)
        fig.colorbar(sc, ax=ax, label="exits per request")
    fig.text(0.01, 0.01, "labels: W us / idle-poll us", fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--app", required=True, choices=("memcached", "nhttpd"))
    toolflags.add_w_list(ap, DEFAULT_W)
    ap.add_argument("--idle-poll", type=toolflags.int_list, default=list(DEFAULT_POLL),
                    metavar="US[,US...]", help="poll thresholds, us (undilated), "
                    f"comma-separated (default {','.join(map(str, DEFAULT_POLL))})")
    ap.add_argument("--seconds", type=float, default=8.0, help="per class and point (8)")
    ap.add_argument("--repeat", type=int, default=1, help="rounds; points are medians (1)")
    ap.add_argument("--kvmcost", choices=kvmcost.CHOICES, default="off")
    ap.add_argument("--output", required=True, help="the JSON to write; the plot beside it")
    ap.add_argument("--workdir", help="raw outputs (default: a temporary folder)")
    args = ap.parse_args(argv)
    grid = [(w, p) for w in sorted(set(args.w)) for p in sorted(set(args.idle_poll))]
    workdir = args.workdir or tempfile.mkdtemp(prefix="nomexplore-")
    result = explore(args.app, grid, args.seconds, workdir, args.repeat, args.kvmcost)
    result["command"] = " ".join(shlex.quote(a) for a in ["python3", "tools/profile/explore.py"]
                                 + (sys.argv[1:] if argv is None else list(argv)))
    os.makedirs(os.path.dirname(os.path.abspath(args.output)), exist_ok=True)
    with open(args.output, "w") as f:
        json.dump(result, f, indent=1, sort_keys=True)
        f.write("\n")
    plot(result, os.path.splitext(args.output)[0] + ".png")
    print(f"explore: wrote {args.output} and its .png (raw outputs in {workdir})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
