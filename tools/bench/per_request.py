#!/usr/bin/env python3
"""Issue 16's per-request cost: guest instructions per request, work and idle polling apart,
with kicks and interrupts, for memcached (1 KiB values, GET/SET 90/10), nhttpd and NetPIPE's
1 KiB ping-pong, one connection each, and NetPIPE both ways (the experiment's "many" phase,
NPtcp -2: a request is one round, 32 KiB each way; no target, the row OSv is compared on),
W = 0, medians of --runs boots (insn_profile.py each).

    python3 tools/bench/per_request.py                   # 3 boots x 10 s per application
    python3 tools/bench/per_request.py --runs 1 --seconds 2 --output /tmp/p

Writes OUTPUT/per-request.json (every application's insn_profile result, the machine) and
OUTPUT/per-request.md (the table beside the issue's targets), and each application's own
folder. TCG only (the counting plugin)."""
import argparse
import json
import os
import sys

import kvmcost
import toolflags

from bench import insn_profile
from experiment.machine import describe, stamped_output

# Row, its insn_profile arguments (--conns 1: one connection; NetPIPE with more: its "many"
# phase, both ways), and issue 16's target for work per request (None: none set).
CASES = (("memcached", ["--app", "memcached", "--value-size", "1024", "--conns", "1"], 11000),
         ("nhttpd", ["--app", "nhttpd", "--conns", "1"], 6000),
         ("netpipe", ["--app", "netpipe", "--conns", "1"], 4000),
         ("netpipe-bidir", ["--app", "netpipe", "--conns", "32"], None))


def parse_args(argv):
    ap = argparse.ArgumentParser(prog="per_request.py", description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=3, help="boots per application (default 3)")
    ap.add_argument("--seconds", type=int, default=10, help="load window (default 10)")
    ap.add_argument("--kvmcost", choices=kvmcost.CHOICES, default="off",
                    help="run on tools/kvmcost's exit-cost QEMU (dilated guest clock) and add "
                         "the ledger's exits per request (default off)")
    toolflags.add_dilation(ap)
    ap.add_argument("--output", help="results folder (default results/per-request-DATE-COMMIT)")
    args = ap.parse_args(argv)
    if args.runs < 1 or args.seconds < 1:
        ap.error("--runs and --seconds must be >= 1")
    toolflags.check_dilation(ap, args)
    return args




def _fmt(value, digits=0):
    return "-" if value is None else f"{value:,.{digits}f}"


def _load(result):
    """The 1-minute load averages at the start and the end, "a -> b"."""
    load = result.get("host_load_avg", {})
    return " -> ".join(f"{load[k][0]:.1f}" for k in ("start", "end") if k in load)


def markdown(result):
    m = result["machine"]
    lines = [f"# nom's cost per request, {m['accel'].upper()} (issue 16)", "",
             f"{m['date_utc']}, commit {m['commit']}{' (dirty)' if m['dirty'] else ''}, "
             f"{m['cpu_model']}, {m['cpus']} CPUs, {m['qemu']}; one connection (netpipe-bidir: "
             f"NetPIPE both ways, a request is a round), W = 0, "
             f"{result['settings']['seconds']} s windows, medians of "
             f"{result['settings']['runs']} boots (tools/bench/per_request.py); host load "
             f"{_load(result)}; exit-cost model {result['settings'].get('kvmcost', 'off')}.", "",
             "| application | instructions/req | work | idle polling | idle turns | target work "
             "| kicks/req | irqs/req | exits/req (ledger) | req/s |", "|" + "---|" * 10]
    for name, _, target in CASES:
        r = result["apps"][name]
        if "error" in r:
            lines.append(f"| {name} | failed: {r['error'][:100]} |")
            continue
        md = r["medians"]
        lines.append("| " + " | ".join([
            name, _fmt(md["insns_per_req"]), _fmt(md["work_insns_per_req"]),
            _fmt(md["idle_insns_per_req"]), _fmt(md["idle_spins_per_req"], 1), _fmt(target),
            _fmt(md["notifies_per_req"], 2), _fmt(md["irqs_per_req"], 2),
            _fmt(md.get("ledger_exits_per_req"), 2), _fmt(r.get("requests_per_s"))]) + " |")
    lines += ["", "Instructions are the guest's, counted by the TCG plugin (tools/vmcounters), "
              "not timed. Still, the work per request is not wholly independent of how fast "
              "the host runs the guest: work driven by time (memcached's LRU maintainer and "
              "clock, timers, interrupts after idling) is spread over fewer requests when the "
              "guest serves fewer per second (same build, memcached: 10.7K at 6.4-7.0K req/s, "
              "11.3-11.5K at 3.8-4.8K req/s, 2026-11-26). Compare runs at similar req/s (the "
              "last column, the median run's) or alternate them. Idle polling is "
              "libnom's empty idle turns, marked for the plugin; work is the rest. Exits come "
              "from the exit-cost QEMU's ledger (--kvmcost), every kind. Each boot keeps one "
              "raw profile, its load window's (APP/runN/raw/profile-window.txt.gz).", ""]
    return "\n".join(lines)


def main(argv=None):
    args = parse_args(argv)
    toolflags.settle_dilation(args, "per_request")
    out = os.path.abspath(args.output or stamped_output("per-request"))
    os.makedirs(out, exist_ok=True)
    result = {"benchmark": "nom per-request cost (issue 16)", "machine": describe("tcg", "plugin"),
              "settings": {"runs": args.runs, "seconds": args.seconds, "w_us": 0,
                           "kvmcost": args.kvmcost, "dilation": args.dilation},
              "apps": {}, "host_load_avg": {"start": list(os.getloadavg())}}
    failed = False
    for name, extra, target in CASES:
        folder = os.path.join(out, name)
        argv = extra + ["--w", "0", "--runs", str(args.runs),
                        "--seconds", str(args.seconds), "--kvmcost", args.kvmcost,
                        "--output", folder]
        if args.dilation is not None:
            argv += ["--dilation", str(args.dilation)]
        try:
            insn_profile.main(argv)
            with open(os.path.join(folder, "insn-profile.json")) as f:
                result["apps"][name] = dict(json.load(f), target_work_insns_per_req=target)
        except Exception as e:  # noqa: BLE001 -- one failed application must not lose the others
            result["apps"][name] = {"error": f"{type(e).__name__}: {e}"}
            failed = True
    result["host_load_avg"]["end"] = list(os.getloadavg())
    with open(os.path.join(out, "per-request.json"), "w") as f:
        json.dump(result, f, indent=1)
    with open(os.path.join(out, "per-request.md"), "w") as f:
        f.write(markdown(result))
    print(markdown(result))
    print("wrote", out)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
