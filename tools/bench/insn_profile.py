#!/usr/bin/env python3
"""Where nom's instructions per request go: one application alone at W under load, profiled by
function with the TCG plugin, and the share of a few groups. nhttpd gets the benchmark's wrk,
memcached and NetPIPE the experiment's load (tools/loadgen: memaslap's mix through nomload,
NPtcp ping-pong). The checksum group answers issue 4's question whether checksum offload
would pay.

    python3 tools/bench/insn_profile.py                        # nhttpd, W=0, wrk -t2 -c32, 20 s
    python3 tools/bench/insn_profile.py --w 40 --conns 1 --seconds 10 --output /tmp/p
    python3 tools/bench/insn_profile.py --app memcached --seconds 10
    python3 tools/bench/insn_profile.py --app memcached --conns 1 --value-size 1024 --runs 3
    python3 tools/bench/insn_profile.py --conns 1 --idle-conns 500 --seconds 10 --runs 3

Writes OUTPUT/insn-profile.json and prints the groups and the top functions. The profile is
of the load window alone: the difference of two snapshots the plugin takes at its start and
end (boot, warm-up and shutdown are not in it). TCG only: a plugin cannot see a KVM guest.
Instructions per request are reported whole and split into idle polling (libnom's empty idle
turns, which the guest marks for the plugin: insn_count.c) and work (the rest), with kicks and
interrupts per request; with --runs N (N boots) the top-level figures are the medians and the
groups and functions are the median run's. --idle-conns N holds N more connections open and
silent through warm-up and window, as a server's idle keep-alive clients are: what a request
costs then shows whether waiting for readiness grows with the connections a server holds.
"""
import argparse
import gzip
import json
import os
import statistics
import subprocess
import sys
import loadgen
import kvmcost
import toolflags
import vmcounters
from bench import phases
from bench.guests import NomBenchDriver
from experiment.labdriver import prepare
from experiment.machine import describe, stamped_output
from experiment.nom_driver import APPS, BUILD, KERNEL
from loadgen import apps
from vmcounters import guestprofile

# Function groups (regular expressions on symbol names), each a question about the cost.
GROUPS = {
    "checksum (lwIP's, all of it: offload's most)": r"chksum|cksum",
    "copies (memcpy/memmove/memset)": r"^(memcpy|memmove|memset)$",
    "lwIP TCP": r"^tcp_",
    "lwIP IP, ethernet, pbufs, memory pools": r"^(ip4?_|etharp_|ethernet_|pbuf_|mem_|memp_)",
    "virtio-net driver": r"^(vnet_|virtq_)",
    "socket layer": r"^(nomsock_|tcpsock_|udpsock_|sock_)",
    "libnom (scheduler, descriptors, poll, epoll)": r"^(nom_|sched_|fd_|poll$|select$|hooks_|"
                                                     r"epoll_|epset_)",
    "nom's kernel": r"^kernel:",
}
# ... and each application's own code.
APP_GROUPS = {
    "nhttpd": {"nhttpd": r"^(conn_|server_|http_|stats_|docstore_|bufpool_|poller_|json_)"},
    "memcached": {"libevent": r"^(event_|evmap_|evthread|evutil_|poll_dispatch|poll_add|poll_del|"
                              r"epoll_dispatch|epoll_apply|epoll_nochangelist)",
                  "memcached": r"^(process_|conn_|item_|do_item|assoc_|slabs_|drive_machine|"
                               r"try_read|transmit|complete_nread|add_iov|add_msghdr|out_string|"
                               r"dispatch_|event_handler|resp_|hash$|MurmurHash)"},
    "netpipe": {"NetPIPE": r"^(Send|Recv|Sync|PrepareToReceive|SendTime|RecvTime|SendRepeat|"
                           r"RecvRepeat|When|np_)"},
}


def parse_args(argv):
    ap = argparse.ArgumentParser(prog="insn_profile.py", description=__doc__.splitlines()[0])
    ap.add_argument("--app", choices=sorted(APP_GROUPS), default="nhttpd")
    ap.add_argument("--w", type=int, default=0, help="batching delay, us (default 0)")
    ap.add_argument("--conns", type=int, default=loadgen.MANY_CONNS,
                    help=f"connections (default {loadgen.MANY_CONNS}: the many phase; 1: single)")
    ap.add_argument("--seconds", type=int, default=20, help="of wrk (default 20)")
    ap.add_argument("--top", type=int, default=25, help="functions listed (default 25)")
    ap.add_argument("--runs", type=int, default=1, help="boots, medians reported (default 1)")
    ap.add_argument("--value-size", type=int,
                    help="memcached: nomload's value size in bytes (default: the experiment's "
                         "load, 32; issue 16 asks 1024)")
    ap.add_argument("--idle-poll-us", type=int,
                    help="the guest's idle poll budget in its microseconds (net's "
                         "--idle-poll-us; default: the guest's own)")
    ap.add_argument("--kvmcost", choices=kvmcost.CHOICES, default="off",
                    help="run on tools/kvmcost's exit-cost QEMU with the guest clock dilated by "
                         "the run's D, and add the ledger's exits per request (default off)")
    toolflags.add_dilation(ap)
    ap.add_argument("--idle-conns", type=int, default=0,
                    help="connections held open and silent beside the load (memcached, nhttpd; "
                         "default 0)")
    ap.add_argument("--output", help="results folder (default results/insn-profile-DATE-COMMIT)")
    args = ap.parse_args(argv)
    if args.w < 0 or args.conns < 1 or args.seconds < 1 or args.top < 1 or args.runs < 1:
        ap.error("--w must be >= 0, --conns, --seconds, --top and --runs >= 1")
    if args.value_size is not None and (args.app != "memcached" or args.value_size < 1):
        ap.error("--value-size is memcached's, >= 1")
    if args.idle_poll_us is not None and args.idle_poll_us < 0:
        ap.error("--idle-poll-us must be >= 0")
    toolflags.check_dilation(ap, args)
    if args.idle_conns < 0 or (args.idle_conns and args.app not in IDLE_PORTS):
        ap.error("--idle-conns must be >= 0, and is for memcached and nhttpd (NPtcp serves one "
                 "connection)")
    return args


# Where --idle-conns connect, and the program (run inside the lab's namespace) that holds them:
# it connects them all, says so, and keeps them silent until its stdin closes.
IDLE_PORTS = {"memcached": apps.MEMCACHED_PORT, "nhttpd": apps.HTTP_PORT}
HOLD_IDLE = """import socket, sys
conns = [socket.create_connection((sys.argv[1], int(sys.argv[2])), timeout=60)
         for _ in range(int(sys.argv[3]))]
print("holding", len(conns), flush=True)
sys.stdin.read()
"""


def hold_idle(lab, app, n):
    """Starts the holder of n idle connections to app in the lab; returns it once all are open
    (its stdin: close it to let them go)."""
    proc = lab.popen([sys.executable, "-c", HOLD_IDLE, lab.guest_ip, str(IDLE_PORTS[app]), str(n)],
                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    line = proc.stdout.readline()
    if line.strip() != f"holding {n}":
        proc.kill()
        raise RuntimeError(f"could not hold {n} idle connections to {app}: "
                           f"{line.strip() or 'no answer'}")
    return proc




def load(app, lab, conns, seconds, workdir, value_size=None, preload=True):
    """One load window; returns (requests, requests/s, errors). value_size: memcached's values
    through nomload directly (GET/SET 90/10), whose keys are stored first only with preload."""
    if app == "memcached" and value_size:
        extra = ["--value-size", str(value_size)] + ([] if preload else ["--no-preload"])
        r = loadgen.nomload(lab, "memcached", lab.guest_ip, apps.MEMCACHED_PORT, conns, seconds,
                            workdir, extra=extra)
        return r["requests"], r["throughput_rps"], 0  # a failed tool raises LoadError
    if app == "nhttpd":
        w = loadgen.wrk(lab, lab.guest_ip, apps.HTTP_PORT, conns, seconds, workdir)
        return w["requests"], w["rps"], w["errors"]
    phase = "single" if conns == 1 else "many"
    r = loadgen.run_phase(app, phase, seconds, lab, workdir)
    return r["ops"], r["ops"] / max(r["seconds"], 1e-9), 0  # a failed tool raises LoadError


def run_guest(args, out):
    """Boots the application at W with the profile on and loads it, with a profile snapshot
    before and after the window. Returns (requests, requests/s, errors, the window's counters
    per request (vmcounters.per_request: instructions whole, idle and work, kicks, interrupts),
    window instructions, the window's profile rows (keep_window_profile))."""
    prepare()
    driver = NomBenchDriver("tcg")
    driver.profile_insns = True
    driver.kvmcost_name = args.kvmcost
    driver.dilation = args.dilation
    if args.idle_poll_us is not None:
        driver.guest_args = (f"--idle-poll-us={args.idle_poll_us}",)
    variant = {"name": f"w={args.w}", "w_us": args.w}
    holder = None
    try:
        driver.start(args.app, variant, os.path.join(out, "raw"))
        lab, counters = driver.lab, driver.counters
        if args.idle_conns:
            holder = hold_idle(lab, args.app, args.idle_conns)
        # the warm-up stores the keys (with --value-size): the window then only reads and sets
        load(args.app, lab, args.conns, 1, os.path.join(out, "raw", "warmup"), args.value_size)
        before = phases.settled_snapshot(counters)
        first = counters.insns.profile_snapshot(os.path.join(out, "raw", "profile-before.txt"))
        requests, rps, errors = load(args.app, lab, args.conns, args.seconds,
                                     os.path.join(out, "raw"), args.value_size, preload=False)
        after = phases.settled_snapshot(counters)
        last = counters.insns.profile_snapshot(os.path.join(out, "raw", "profile-after.txt"))
    finally:
        if holder:
            holder.stdin.close()
            holder.wait(timeout=30)
        driver.stop()
    per_req = vmcounters.per_request(before, after, requests)
    rows = keep_window_profile(os.path.join(out, "raw"), first, last)
    return requests, rps, errors, per_req, after["insns"] - before["insns"], rows


# The one raw profile a run keeps: the load window's blocks, "VADDR NINSNS EXECS IDLE" as the
# plugin writes them (guestprofile.parse_profile reads it), gzip-compressed.
WINDOW_PROFILE = "profile-window.txt.gz"


def keep_window_profile(raw, first, last):
    """Replaces the plugin's three whole-run profiles (the snapshots before and after the
    window and its dump at exit, each ~160 KB and the last two nearly equal) by the window's
    difference, the one the analysis reads, in raw/WINDOW_PROFILE. Returns its rows."""
    rows = guestprofile.difference(*(guestprofile.read_profile(p) for p in (last, first)))
    with gzip.open(os.path.join(raw, WINDOW_PROFILE), "wt") as f:
        f.writelines(f"{vaddr:x} {ninsns} {execs} {idle}\n" for vaddr, ninsns, execs, idle in rows)
    for path in (first, last, os.path.join(raw, "counters", "insn-profile.txt")):
        if os.path.exists(path):
            os.remove(path)
    return rows


def analyse(app, rows, window_insns, requests, top):
    """The window's profile (rows: the difference of the two snapshots) by function and
    group: of all its instructions (groups, top_functions) and of the work alone, the idle
    polling left out (work_groups, work_top_functions: issue 16's targets are work)."""
    elfs = [KERNEL, os.path.join(BUILD, APPS[app][0])]
    symbols = guestprofile.Symbols(elfs, ["kernel:", ""])
    totals = guestprofile.by_function(rows, symbols)
    work = guestprofile.by_function(rows, symbols, "work")
    whole = sum(totals.values())
    result = {"profile_insns": whole, "window_insns": window_insns,
              "profile_idle_insns": whole - sum(work.values()),
              "insns_per_req": whole / max(requests, 1)}
    for prefix, part in (("", totals), ("work_", work)):
        result[prefix + "groups"], result[prefix + "top_functions"] = \
            by_group_and_function(app, part, requests, top)
    # The snapshots and the counter's dumps are not taken at the same instant: the two totals
    # differ by what ran in between (settling, a few ms of idle), which says how exact it is.
    return result


def by_group_and_function(app, totals, requests, top):
    """The groups' and the top functions' shares of totals and instructions per request."""
    whole = max(sum(totals.values()), 1)
    groups = {}
    for name, pattern in {**GROUPS, **APP_GROUPS[app]}.items():
        part, frac = guestprofile.share(totals, pattern)
        groups[name] = {"pattern": pattern, "share": frac,
                        "insns_per_req_est": part / max(requests, 1)}
    functions = [{"function": fn, "share": n / whole, "insns_per_req_est": n / max(requests, 1)}
                 for fn, n in totals.most_common(top)]
    return groups, functions


# The figures of a run that --runs reports the median of.
MEDIAN_KEYS = ("insns_per_req", "work_insns_per_req", "idle_insns_per_req", "idle_spins_per_req",
               "notifies_per_req", "irqs_per_req", "exit_equiv_per_req",
               "ledger_exits_per_req", "ledger_irqs_per_req")


def one_run(args, out):
    """One boot's result: its requests, counters per request and profile analysis."""
    os.makedirs(out, exist_ok=True)
    requests, rps, errors, per_req, window, rows = run_guest(args, out)
    result = {"requests": requests, "requests_per_s": rps, "errors": errors,
              "per_request": {k: per_req.get(k) for k in MEDIAN_KEYS}}
    result.update(analyse(args.app, rows, window, requests, args.top))
    return result


def summarize(runs):
    """The medians of MEDIAN_KEYS over the runs (None where a run has none), and the index of
    the median run by work instructions (whose groups and functions are reported)."""
    medians = {}
    for key in MEDIAN_KEYS:
        values = [r["per_request"][key] for r in runs if r["per_request"][key] is not None]
        medians[key] = statistics.median(values) if values else None
    order = sorted(range(len(runs)), key=lambda i: runs[i]["per_request"]["work_insns_per_req"] or 0)
    return medians, order[len(order) // 2]


def report(result):
    m = result["medians"]
    print(f"{len(result['runs'])} run(s), median per request: {m['insns_per_req']:.0f} guest "
          f"instructions = {m['work_insns_per_req']:.0f} work + {m['idle_insns_per_req']:.0f} idle "
          f"polling ({m['idle_spins_per_req']:.1f} empty turns); kicks {m['notifies_per_req']:.2f}, "
          f"interrupts {m['irqs_per_req']:.2f}")
    if m["ledger_exits_per_req"] is not None:
        print(f"exit-cost ledger per request: {m['ledger_exits_per_req']:.2f} exits, "
              f"{m['ledger_irqs_per_req']:.2f} interrupts (every kind)")
    print(f"median run: {result['requests']} requests, {result['insns_per_req']:.0f} instructions "
          f"per request by the profile, which holds "
          f"{result['profile_insns'] / max(result['window_insns'], 1):.1%} of the window's")
    for prefix, title in (("", "all instructions"), ("work_", "work (idle polling left out)")):
        print(f"{title}, groups:")
        for name, g in result[prefix + "groups"].items():
            print(f"  {g['share']:6.1%}  {g['insns_per_req_est']:7.0f}/req  {name}")
        print(f"{title}, top functions:")
        for fn in result[prefix + "top_functions"]:
            print(f"  {fn['share']:6.1%}  {fn['insns_per_req_est']:7.0f}/req  {fn['function']}")


def main(argv=None):
    args = parse_args(argv)
    toolflags.settle_dilation(args, "insn_profile")
    out = os.path.abspath(args.output or stamped_output("insn-profile"))
    os.makedirs(out, exist_ok=True)
    runs = [one_run(args, out if args.runs == 1 else os.path.join(out, f"run{i + 1}"))
            for i in range(args.runs)]
    medians, median_run = summarize(runs)
    result = {"benchmark": "nom instruction profile (issues 4, 16)",
              "machine": describe("tcg", "plugin"),
              "settings": {"app": args.app, "w_us": args.w, "conns": args.conns,
                           "seconds": args.seconds, "runs": args.runs,
                           "value_size": args.value_size, "idle_poll_us": args.idle_poll_us,
                           "idle_conns": args.idle_conns, "kvmcost": args.kvmcost,
                           "dilation": args.dilation},
              "medians": medians, "median_run": median_run,
              "runs": [{k: r[k] for k in ("requests", "requests_per_s", "errors", "per_request")}
                       for r in runs]}
    result.update(runs[median_run])
    path = os.path.join(out, "insn-profile.json")
    with open(path, "w") as f:
        json.dump(result, f, indent=1)
    report(result)
    print("wrote", path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
