"""One phase of the experiment's load on one application (paper section 6), as the experiment
runner's guest drivers want it (tools/experiment/driver.py, "figures").

Two clients, the same loads ("many": 32 connections, NetPIPE both ways; "single": one
connection, one request at a time):

    client="paper" (the experiment's): the paper's own tools.
        memcached  memcaslap (Debian's memaslap), GET/SET 90/10, -S 1s for latency mean and
                   standard deviation (no percentiles) per second, -T2 -c32 / -T1 -c1;
        web        wrk --latency, -t2 -c32 / -t1 -c1, the 175-byte page;
        NetPIPE    NPtcp: both ways at once (-2) of 32 KiB messages / ping-pong of 1024-byte
                   messages, sessions back to back (latency: its best trial's round; for
                   both ways the time of a round, for ping-pong the round trip).
    client="nomload": our nomload for every load but NetPIPE's both-ways: every request timed
        (p50, p99, per-second samples), which the paper's tools do not give.
The two agree on requests completed (tests/test_crosscheck.py).
"""
from . import apps
from .runners import MANY_CONNS, LoadError, memaslap, nomload, nptcp_pingpong_for, nptcp_bidir, wrk

WEB_APPS = ("nhttpd", "nginx", "lighttpd")
APPS = ("memcached", "netpipe") + WEB_APPS
CLIENTS = ("paper", "nomload")


def _latency(lat):
    return {k: lat[k] for k in ("mean", "p50", "p99", "stddev")}


def _memaslap_samples(intervals):
    """memaslap's statistics periods -> the same samples as _samples'."""
    return [{"t_s": i["t_s"], "ops": i["ops"], "latency_mean_us": i["mean_us"],
             "latency_stddev_us": i["stddev_us"]} for i in intervals]


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


def run_phase(app, phase, seconds, lab, workdir, host=None, preload=True, client="nomload"):
    """Runs app's load for phase ("many" or "single") for seconds inside lab against host
    (default: lab.guest_ip) with client ("paper" or "nomload", above). Returns {"ops",
    "seconds", "latency_us": {"mean", "p50", "p99", "stddev"} (None where the tool does not
    give one) or None, "latency_tool", "samples"?, "raw": {name: path}}. With nomload,
    memcached stores its keys first unless preload is False (see preload_memcached). Raises
    ValueError for an unknown app, phase or client, runners.LoadError when the tool fails."""
    if app not in APPS or phase not in ("many", "single") or client not in CLIENTS:
        raise ValueError(f"unknown app/phase/client {app}/{phase}/{client}")
    host = host or lab.guest_ip
    if app == "netpipe" and phase == "many":
        r = nptcp_bidir(lab, host, seconds, workdir)
        return {"ops": r["messages"], "seconds": r["seconds"],
                "latency_us": {"mean": r["usec_per_message"], "p50": None, "p99": None,
                               "stddev": None},
                "latency_tool": "NPtcp -2 (a round's time: 32 KiB each way; best trial's)",
                "raw": {"nptcp": r["raw"]}}
    conns = MANY_CONNS if phase == "many" else 1
    if client == "paper":
        return _paper_tool(app, conns, seconds, lab, workdir, host)
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


def _paper_tool(app, conns, seconds, lab, workdir, host):
    """The paper's tool for app with conns connections (NetPIPE: ping-pong): run_phase's
    figures."""
    if app == "memcached":
        r = memaslap(lab, host, apps.MEMCACHED_PORT, conns, seconds, workdir, stats=True)
        lat = r["latency_us"] or {}
        return {"ops": r["ops"], "seconds": r["seconds"],
                "latency_us": {"mean": lat.get("mean"), "p50": None, "p99": None,
                               "stddev": lat.get("stddev")},
                "latency_tool": "memcaslap -S", "get_misses": r["get_misses"],
                "samples": _memaslap_samples(r["intervals"]), "raw": {"memaslap": r["raw"]}}
    if app == "netpipe":
        r = nptcp_pingpong_for(lab, host, seconds, workdir)
        return {"ops": r["round_trips"], "seconds": r["seconds"],
                "latency_us": {"mean": r["rtt_us"], "p50": None, "p99": None, "stddev": None},
                "latency_tool": "NPtcp ping-pong (best trial's round trip per session)",
                "raw": {"nptcp": r["raw"]}}
    r = wrk(lab, host, apps.HTTP_PORT, conns, seconds, workdir)
    if r["errors"]:
        raise LoadError(f"wrk: {r['errors']} errors against {app}; see {r['raw']}")
    return {"ops": r["requests"], "seconds": r["seconds"],
            "latency_us": {k: r["latency_us"].get(k) for k in ("mean", "p50", "p99", "stddev")},
            "latency_tool": "wrk --latency", "raw": {"wrk": r["raw"]}}
