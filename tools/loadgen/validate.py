"""Validates nomload against the stock tools' throughput on the Linux guest (issue 5).

For each application and load (many, single) it runs the stock tool and nomload against the
same guest inside one netlab namespace, --repeats times alternating which goes first (the
machine's load drifts), and prints the median throughputs, their ratio and the latencies each
tool reports; every figure goes to --output as JSON. Run as root:

    python3 tools/loadgen/validate.py [--seconds 10] [--repeats 3]
"""
import argparse
import json
import os
import tempfile
import linuxguest
import loadgen
import netlab
from loadgen import apps
from nomvm import Nic


def pairs(lab, seconds, work):
    """[(load, stock tool, run stock -> (ops/s, latency), run nomload -> (ops/s, latency))].
    latency: {"mean", "p50", "p99"} in µs where the tool gives it (NPtcp: its minimum-trial
    mean round trip as mean)."""
    ip = lab.guest_ip

    def lat(d):
        return {k: d.get(k) for k in ("mean", "p50", "p99")} if d else None

    def ours(proto, port, conns, extra=()):
        def run():
            n = loadgen.nomload(lab, proto, ip, port, conns, seconds, work, extra=list(extra))
            return n["throughput_rps"], lat(n["latency_us"])
        return run
    rows = []
    for conns, mode in ((loadgen.MANY_CONNS, "many"), (1, "single")):
        def mc(conns=conns):
            s = loadgen.memaslap(lab, ip, apps.MEMCACHED_PORT, conns, seconds, work)
            return s["tps"], lat(s["latency_us"])

        def web(conns=conns):
            s = loadgen.wrk(lab, ip, apps.HTTP_PORT, conns, seconds, work)
            return s["rps"], lat(s["latency_us"])
        rows.append((f"memcached {mode}", "memaslap", mc,
                     ours("memcached", apps.MEMCACHED_PORT, conns)))
        rows.append((f"nginx {mode}", "wrk", web,
                     ours("http", apps.HTTP_PORT, conns, ["--path", apps.INDEX_PATH])))

    def nptcp():
        row = loadgen.nptcp_pingpong(lab, ip, work)["rows"][0]
        rtt = 2 * row["usec"]  # NPtcp's usec is half a round trip
        return 1e6 / rtt, {"mean": rtt, "p50": None, "p99": None}
    rows.append(("netpipe ping-pong 1024 B", "NPtcp", nptcp,
                 ours("netpipe", apps.NETPIPE_PINGPONG_PORT, 1)))
    return rows


def compare(lab, seconds, work, repeats):
    """Runs each pair `repeats` times, alternating which tool goes first (the machine's load
    drifts); returns [{"load", "tool", "stock": [(ops/s, lat)], "nomload": [...]}]."""
    out = []
    for load, tool, stock, nom in pairs(lab, seconds, work):
        row = {"load": load, "tool": tool, "stock": [], "nomload": []}
        for i in range(repeats):
            order = (("stock", stock), ("nomload", nom))
            for key, fn in order if i % 2 == 0 else reversed(order):
                row[key].append(fn())
        out.append(row)
    return out


def _median(values):
    values = sorted(v for v in values if v is not None)
    return values[len(values) // 2] if values else None


def _fmt(v):
    return f"{v:9.1f}" if v is not None else "        -"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=10)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--output", default=os.path.join(loadgen.runners.BUILD, "loadgen",
                                                     "validation.json"))
    a = ap.parse_args()
    loadgen.build()
    work = tempfile.mkdtemp(prefix="loadgen-validate-")
    with netlab.NetLab() as lab:
        nic = Nic(mac="52:54:00:12:34:56", backend="tap", tap=lab.tap)
        vm = linuxguest.make_vm(["memcached", "nginx", "netpipe"], nic, workdir=work)
        lab.start_vm(vm)
        linuxguest.wait_ready(vm)
        rows = compare(lab, a.seconds, work, a.repeats)
        vm.stop()
    print(f"accelerator: {vm.accel} ({vm.accel_reason}); {a.seconds:g} s per run, "
          f"medians of {a.repeats} alternating runs; raw: {work}")
    print(f"{'load':26} {'tool':8} {'ops/s':>9} {'nomload':>9} {'ratio':>6} | latency µs "
          f"tool mean/p50/p99 | nomload mean/p50/p99")
    for r in rows:
        st = _median(x[0] for x in r["stock"])
        no = _median(x[0] for x in r["nomload"])
        sl = [_median((x[1] or {}).get(k) for x in r["stock"]) for k in ("mean", "p50", "p99")]
        nl = [_median(x[1][k] for x in r["nomload"]) for k in ("mean", "p50", "p99")]
        print(f"{r['load']:26} {r['tool']:8} {st:9.1f} {no:9.1f} {no / st:6.2f} | "
              f"{' '.join(_fmt(v) for v in sl)} | {' '.join(_fmt(v) for v in nl)}")
    os.makedirs(os.path.dirname(a.output), exist_ok=True)
    with open(a.output, "w") as f:
        json.dump({"accel": vm.accel, "seconds": a.seconds, "repeats": a.repeats, "rows": rows},
                  f, indent=1)


if __name__ == "__main__":
    main()
