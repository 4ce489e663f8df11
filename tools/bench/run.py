#!/usr/bin/env python3
"""`make bench`: nhttpd on nom per W and on Linux, rawecho's round trip and memcached's beside
it (README.md here).

    python3 tools/bench/run.py                     # W = 0,5,10,20,40; 10 s per tool and phase
    python3 tools/bench/run.py --quick             # about a minute: W = 0,20, 1 s, fewer echoes
    python3 tools/bench/run.py --w 0,40 --seconds 5 --no-linux --output /tmp/b
"""
import argparse
import os
import signal
import sys
import traceback
from bench import floor, guests, phases, report
from experiment.machine import describe, stamped_output
from nomvm import choose_accel
import kvmcost
import toolflags

QUICK = {"w": [0, 20], "seconds": 1, "echoes": 100}
FULL = {"w": [0, 5, 10, 20, 40], "seconds": 10, "echoes": 500}


def parse_args(argv):
    ap = argparse.ArgumentParser(prog="run.py", description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true",
                    help=f"a one-minute check: W={','.join(map(str, QUICK['w']))}, {QUICK['seconds']} s, "
                    f"{QUICK['echoes']} echoes (explicit flags override)")
    ap.add_argument("--w", type=toolflags.int_list, metavar="W[,W...]",
                    help=f"batching delays, µs, comma-separated "
                    f"(default {','.join(map(str, FULL['w']))})")
    ap.add_argument("--seconds", type=int, help="of wrk, and of nomload, per phase "
                    f"(default {FULL['seconds']})")
    ap.add_argument("--echoes", type=int, help="rawecho requests per W and mode "
                    f"(default {FULL['echoes']})")
    ap.add_argument("--no-linux", action="store_true", help="skip the Linux comparison row")
    ap.add_argument("--no-rawecho", action="store_true",
                    help="skip the rawecho floor (and memcached's round trip beside it)")
    ap.add_argument("--accel", choices=("tcg", "kvm"), help="default: nomvm's choice")
    ap.add_argument("--kvmcost", choices=kvmcost.CHOICES, default="off",
                    help="run the guests under the patched QEMU charging hardware-KVM exit "
                    "costs (tools/kvmcost), D measured per boot (default off: stock QEMU)")
    ap.add_argument("--output", help="results folder (default results/bench-DATE-COMMIT)")
    args = ap.parse_args(argv)
    defaults = QUICK if args.quick else FULL
    for key, value in defaults.items():
        if getattr(args, key) is None:
            setattr(args, key, value)
    args.w_values = args.w
    return args




def _error(e):
    """A failure as the record keeps it: type, message and, for a bug, where."""
    text = f"{type(e).__name__}: {e}"
    if not isinstance(e, (guests.GuestError, RuntimeError, TimeoutError, OSError)):
        text += "\n" + "".join(traceback.format_tb(e.__traceback__)[-3:])
    return text


def _relative_raw(figures, out):
    for name, path in figures.get("raw", {}).items():
        figures["raw"][name] = os.path.relpath(path, out)


def web_row(guest, w_us, args, accel, out):
    """One boot of guest (nom at w_us, or linux): both phases, or the error."""
    label = guest if w_us is None else f"{guest}-w{w_us}"
    workdir = os.path.join(out, "raw", label)
    row = {"guest": guest, "w_us": w_us}
    try:
        driver = guests.start_guest(guest, accel, workdir, w_us, args.kvmcost)
    except Exception as e:
        row["error"] = _error(e)
        print(f"{label}: {row['error']}", flush=True)
        return row
    try:
        row["image"] = driver.info.get("image")
        if driver.info.get("kvmcost"):
            row["kvmcost"] = driver.info["kvmcost"]
        for phase in ("many", "single"):
            try:
                row[phase] = phases.measure(driver, phase, args.seconds, workdir)
                _relative_raw(row[phase], out)
                show(label, phase, row[phase])
            except Exception as e:
                row[phase] = {"error": _error(e)}
                print(f"{label} {phase}: {row[phase]['error']}", flush=True)
                if driver.vm.proc.poll() is not None:
                    break
    finally:
        driver.stop()
    return row


def show(label, phase, f):
    lat, per = f["latency_us"], f["per_request"]
    print(f"{label:9s} {phase:6s} {f['requests_per_s']:8.0f} req/s  latency mean "
          f"{lat['mean']:8.1f} p50 {lat['p50']:8.1f} p99 {lat['p99']:8.1f} sd {lat['stddev']:8.1f} "
          f"us  insns/req {per['insns_per_req'] or 0:8.0f}  kicks/req "
          f"{per['notifies_per_req'] or 0:5.2f}  irqs/req {per['irqs_per_req']:5.2f}", flush=True)


def failures(result):
    """How many rows, phases or the floor recorded an error."""
    n = int("error" in result["rawecho"]) + int("error" in result.get("memcached_rtt", {}))
    for row in result["nhttpd"]:
        n += int("error" in row) + sum("error" in row.get(p, {}) for p in ("many", "single"))
    return n


def measure_all(args, accel, result, out):
    for w in args.w_values:
        result["nhttpd"].append(web_row("nom", w, args, accel, out))
    if not args.no_linux:
        result["nhttpd"].append(web_row("linux", None, args, accel, out))
    if args.no_rawecho:
        result["rawecho"] = {"error": "not run (--no-rawecho)"}
        return
    try:
        result["rawecho"] = floor.measure(args.w_values, args.echoes, 16, accel,
                                          os.path.join(out, "raw", "rawecho"))
    except Exception as e:
        result["rawecho"] = {"error": _error(e)}
        print(f"rawecho: {result['rawecho']['error']}", flush=True)
    # memcached's single round trip against that floor, same NIC kind, W = 0 and QEMU (the
    # stock one, as rawecho's: floor.measure has no exit-cost model) (issue 16).
    try:
        result["memcached_rtt"] = floor.measure_memcached(
            args.echoes, accel, os.path.join(out, "raw", "memcached-rtt"))
        result["memcached_rtt"]["floor_ratio"] = floor.floor_ratio(result["memcached_rtt"],
                                                                   result["rawecho"])
    except Exception as e:
        result["memcached_rtt"] = {"error": _error(e)}
        print(f"memcached rtt: {result['memcached_rtt']['error']}", flush=True)


def main(argv=None):
    args = parse_args(argv)
    accel, reason = (args.accel, "--accel") if args.accel else choose_accel()
    out = os.path.abspath(args.output or stamped_output("bench"))
    result = {"benchmark": "nom data path (issue 4)", "schema": 1,
              "machine": describe(accel, reason),
              "settings": {"w_us": args.w_values, "seconds": args.seconds, "quick": args.quick,
                           "many": {"wrk": "-t2 -c32", "nomload": "--conns 32"},
                           "single": {"wrk": "-t1 -c1", "nomload": "--conns 1"},
                           "rawecho_echoes": args.echoes, "rawecho_window": 16,
                           "kvmcost": args.kvmcost},
              "nhttpd": [], "rawecho": {"error": "not run"}, "interrupted": False,
              "host_load_avg": {"start": os.getloadavg()}}
    # SIGTERM/SIGHUP end the run like Ctrl-C: the guests stop, what was measured is written.
    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, lambda signum, frame: (_ for _ in ()).throw(
            KeyboardInterrupt(f"signal {signum}")))
    try:
        measure_all(args, accel, result, out)
    except KeyboardInterrupt:
        result["interrupted"] = True
    # Other work on the host's cores slows TCG's guests: the load says how busy it was.
    result["host_load_avg"]["end"] = os.getloadavg()
    result["failures"] = failures(result)
    paths = report.write(result, out)
    print("wrote", *paths)
    return 130 if result["interrupted"] else int(result["failures"] > 0)


if __name__ == "__main__":
    sys.exit(main())
