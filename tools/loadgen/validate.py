"""Validates nomload against the stock tools' throughput on the Linux guest (issue 5).

For each application and load (many, single) it runs the stock tool, then nomload, one after
the other against the same guest inside one netlab namespace, and prints both throughputs and
their ratio; the JSON of every figure goes to --out. Run as root:

    python3 tools/loadgen/validate.py [--seconds 10] [--out build/loadgen/validation.json]
"""
import argparse
import json
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import linuxguest  # noqa: E402
import loadgen  # noqa: E402
import netlab  # noqa: E402
from loadgen import apps  # noqa: E402
from nomvm import Nic  # noqa: E402


def compare(lab, seconds, work):
    """[(what, stock tool, stock ops/s, nomload ops/s)] for every app and load."""
    ip, rows = lab.guest_ip, []
    for conns, mode in ((loadgen.MANY_CONNS, "many"), (1, "single")):
        s = loadgen.memaslap(lab, ip, apps.MEMCACHED_PORT, conns, seconds, work)
        n = loadgen.nomload(lab, "memcached", ip, apps.MEMCACHED_PORT, conns, seconds, work)
        rows.append((f"memcached {mode}", "memaslap", s["tps"], n["throughput_rps"], s, n))
        s = loadgen.wrk(lab, ip, apps.HTTP_PORT, conns, seconds, work)
        n = loadgen.nomload(lab, "http", ip, apps.HTTP_PORT, conns, seconds, work,
                            extra=["--path", apps.INDEX_PATH])
        rows.append((f"nginx {mode}", "wrk", s["rps"], n["throughput_rps"], s, n))
    s = loadgen.nptcp_pingpong(lab, ip, work)["rows"][0]
    n = loadgen.nomload(lab, "netpipe", ip, apps.NETPIPE_PINGPONG_PORT, 1, seconds, work)
    # NPtcp's usec is half a round trip; one round trip is one request of nomload.
    rows.append(("netpipe ping-pong 1024 B", "NPtcp", 1e6 / (2 * s["usec"]),
                 n["throughput_rps"], s, n))
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=10)
    ap.add_argument("--out", default=os.path.join(loadgen.runners.BUILD, "loadgen",
                                                  "validation.json"))
    a = ap.parse_args()
    loadgen.build()
    work = tempfile.mkdtemp(prefix="loadgen-validate-")
    with netlab.NetLab() as lab:
        nic = Nic(mac="52:54:00:12:34:56", backend="tap", tap=lab.tap)
        vm = linuxguest.make_vm(["memcached", "nginx", "netpipe"], nic, workdir=work)
        lab.start_vm(vm)
        linuxguest.wait_ready(vm)
        rows = compare(lab, a.seconds, work)
        vm.stop()
    print(f"accelerator: {vm.accel} ({vm.accel_reason}); {a.seconds:g} s per tool; raw: {work}")
    print(f"{'load':28} {'stock tool':10} {'stock ops/s':>12} {'nomload ops/s':>14} {'ratio':>6}")
    for what, tool, stock, ours, _, _ in rows:
        print(f"{what:28} {tool:10} {stock:12.1f} {ours:14.1f} {ours / stock:6.2f}")
    os.makedirs(os.path.dirname(a.out), exist_ok=True)
    with open(a.out, "w") as f:
        json.dump({"accel": vm.accel, "seconds": a.seconds,
                   "rows": [{"load": w, "tool": t, "stock_ops_s": s, "nomload_ops_s": o,
                             "stock": sr, "nomload": nr} for w, t, s, o, sr, nr in rows]},
                  f, indent=1)


if __name__ == "__main__":
    main()
