"""One phase of the experiment's load on one application (paper section 6), as the experiment
runner's guest drivers want it (tools/experiment/driver.py, "figures").

    many:   memcached and web servers: nomload with 32 connections (as wrk -t2 -c32);
            NetPIPE: NPtcp streaming (our patched build), back to back.
    single: one connection, one request at a time: nomload (memcached GET/SET 90/10, HTTP GET
            of the 175-byte page, NetPIPE ping-pong of 1024-byte messages).
nomload measures every request's latency; the stock tools are for validation (validate.py).
"""
from . import apps
from .runners import MANY_CONNS, nomload, nptcp_stream

WEB_APPS = ("nhttpd", "nginx", "lighttpd")
APPS = ("memcached", "netpipe") + WEB_APPS


def _latency(lat):
    return {k: lat[k] for k in ("mean", "p50", "p99", "stddev")}


def _samples(intervals):
    """nomload's cumulative interval lines -> consecutive intervals of ops."""
    out, before = [], 0
    for i in intervals:
        out.append({"t_s": i["t_s"], "ops": i["requests"] - before,
                    "latency_mean_us": i["mean_us"], "latency_stddev_us": i["stddev_us"]})
        before = i["requests"]
    return out


def preload_memcached(lab, workdir, host=None):
    """Stores every key of nomload's key space in memcached (what each memcached run does
    first unless preload=False): call it before the counters' first snapshot so that the
    phases' per-request figures count only the phases' requests."""
    nomload(lab, "memcached", host or lab.guest_ip, apps.MEMCACHED_PORT, 1, 0, workdir,
            interval_ms=0, name="nomload-memcached-preload.txt")


def run_phase(app, phase, seconds, lab, workdir, host=None, preload=True):
    """Runs app's load for phase ("many" or "single") for seconds inside lab against host
    (default: lab.guest_ip). Returns {"ops", "seconds", "latency_us": {"mean", "p50", "p99",
    "stddev"} or None, "latency_tool", "samples"?, "raw": {name: path}}. memcached stores its
    keys first unless preload is False (see preload_memcached). Raises ValueError for an
    unknown app or phase, runners.LoadError when the tool fails."""
    if app not in APPS or phase not in ("many", "single"):
        raise ValueError(f"unknown app/phase {app}/{phase}")
    host = host or lab.guest_ip
    if app == "netpipe" and phase == "many":
        r = nptcp_stream(lab, host, seconds, workdir)
        return {"ops": r["messages"], "seconds": r["seconds"],
                "latency_us": {"mean": r["usec_per_message"], "p50": None, "p99": None,
                               "stddev": None},
                "latency_tool": "NPtcp -s (mean time per streamed message)",
                "raw": {"nptcp": r["raw"]}}
    conns = MANY_CONNS if phase == "many" else 1
    if app == "memcached":
        proto, port = "memcached", apps.MEMCACHED_PORT
    elif app == "netpipe":
        proto, port = "netpipe", apps.NETPIPE_PINGPONG_PORT
    else:
        proto, port = "http", apps.HTTP_PORT
    extra = ["--path", apps.INDEX_PATH] if proto == "http" else []
    if proto == "memcached" and not preload:
        extra.append("--no-preload")
    r = nomload(lab, proto, host, port, conns, seconds, workdir, extra=extra,
                name=f"nomload-{app}-{phase}.txt")
    return {"ops": r["requests"], "seconds": r["duration_s"],
            "latency_us": _latency(r["latency_us"]), "latency_tool": "nomload",
            "samples": _samples(r["intervals"]), "raw": {"nomload": r["raw"]}}
