"""One load phase on a booted guest: wrk for requests/s and the per-request QEMU counters,
then nomload for the latency distribution (issue 4, Tests, last bullet).

many:   wrk -t2 -c32, nomload --conns 32;  single: wrk -t1 -c1, nomload --conns 1.
wrk counts completed requests exactly, so its count divides the counters; its latency
figures are rounded to two decimals of ms or us and its percentiles are corrected for
coordinated omission, so the latency reported is nomload's (every request timed from its
first byte written to its reply's last byte, CLOCK_MONOTONIC). wrk's own latency is kept
beside it. The two tools run one after the other, never together.
"""
import json
import os
import time

import loadgen
import vmcounters
from loadgen import apps

CONNS = {"many": loadgen.MANY_CONNS, "single": 1}
WARMUP_S = 1  # wrk's -d is whole seconds: connections, the guest's TCG cache, ARP
SETTLE_S = 0.3  # before a snapshot: the plugin's 100 ms instruction dump is fresh, load over


def settled_snapshot(counters):
    """A snapshot once the plugin's 100 ms instruction dump is fresh and the load is over."""
    time.sleep(SETTLE_S)
    return counters.snapshot()


def _per_request(a, b, requests):
    """vmcounters.per_request() plus every APIC interrupt apart: the kvmcost ledger's (timers
    and IPIs too) when it ran, else the MSI-routed ones of the trace."""
    out = vmcounters.per_request(a, b, requests)
    if "all_irqs_per_req" not in out:
        apic = b["trace"].get("apic_deliver_irq", 0) - a["trace"].get("apic_deliver_irq", 0)
        out["all_irqs_per_req"] = apic / max(requests, 1)
    return out


def server_stats(lab):
    """nhttpd's GET /nom/stats (each query starts a new "interval"), or {"error": ...}."""
    url = f"http://{lab.guest_ip}:{apps.HTTP_PORT}/nom/stats"
    r = lab.run(["curl", "-s", "--max-time", "20", url], timeout=60)
    if r.returncode != 0:
        return {"error": f"curl {url}: exit {r.returncode}"}
    try:
        return json.loads(r.stdout)
    except ValueError:
        return {"error": "GET /nom/stats is not JSON"}


def _server_view(before, after, requests):
    """What nhttpd says of the wrk window: its W, its own latency, its driver's counters per
    request (nom only; the stats query itself is one request of the window)."""
    if "error" in before or "error" in after:
        return {"error": before.get("error") or after.get("error")}
    view = {"batching_delay_us": after.get("batching_delay_us"),
            "latency_us": after.get("interval", {}).get("latency_us")}
    d0, d1 = before.get("driver"), after.get("driver")
    if isinstance(d0, dict) and isinstance(d1, dict):
        view["driver_per_req"] = {k: (v - d0.get(k, 0)) / max(requests, 1)
                                  for k, v in d1.items() if isinstance(v, (int, float))}
    return view


def measure(driver, phase, seconds, workdir):
    """Runs `phase` ("many" or "single") for `seconds` (whole seconds, >= 1) of wrk and as
    many of nomload against the guest of a started lab driver. Returns the figures (README.md
    lists them). Raises loadgen.LoadError when a tool fails."""
    lab, counters, host, conns = driver.lab, driver.counters, driver.lab.guest_ip, CONNS[phase]
    port, seconds = apps.HTTP_PORT, max(1, int(seconds))
    workdir = os.path.join(workdir, phase)
    loadgen.wrk(lab, host, port, conns, WARMUP_S, os.path.join(workdir, "warmup"))
    s0 = server_stats(lab)
    a = settled_snapshot(counters)
    w = loadgen.wrk(lab, host, port, conns, seconds, workdir)
    b = settled_snapshot(counters)
    s1 = server_stats(lab)
    n = loadgen.nomload(lab, "http", host, port, conns, seconds, workdir, interval_ms=0,
                        extra=["--path", apps.INDEX_PATH], name=f"nomload-{phase}.txt")
    return {"conns": conns, "wrk_threads": 2 if conns > 1 else 1, "seconds": w["seconds"],
            "requests": w["requests"], "requests_per_s": w["rps"], "errors": w["errors"],
            "latency_us": {k: n["latency_us"][k] for k in ("mean", "p50", "p99", "stddev")},
            "latency_tool": "nomload",
            "nomload": {"requests": n["requests"], "requests_per_s": n["throughput_rps"],
                        "seconds": n["duration_s"], "errors": n["errors"]},
            "wrk_latency_us": w["latency_us"],
            "per_request": _per_request(a, b, w["requests"]),
            "server": _server_view(s0, s1, w["requests"]),
            "raw": {"wrk": w["raw"], "nomload": n["raw"]}}
