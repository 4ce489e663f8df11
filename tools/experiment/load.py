"""The load of each application and phase (paper 6.1), through nomload, our closed-loop client
with per-request latency (tools/loadgen/nomload.c), run inside the guest's NetLab.

many: 32 connections each with one request outstanding (memcached GET/SET 90/10 over 1,000
keys of 1,024-byte values, memaslap's default value size; nomload stores every key before it
starts the clock, which under TCG takes about a second per thousand keys; HTTP GET of the
175-byte page; wrk -t2 -c32 in spirit); single: one connection, one request at a time;
NetPIPE single: NPtcp's ping-pong of 1024-byte messages. NetPIPE many (streaming) needs
NPtcp's own transmitter, not wired here yet: that phase raises GuestError.
The stock tools' throughput (memaslap, wrk) is what tools/loadgen validates nomload against.
"""
import json
import os

from loadgen import apps

from .driver import GuestError

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
NOMLOAD = os.path.join(os.environ.get("BUILD", os.path.join(TOP, "build")), "loadgen",
                       "nomload")
MANY_CONNS = 32


def nomload_args(app, phase, host, seconds):
    """nomload's command line for app/phase against host, measuring for `seconds`."""
    conns = MANY_CONNS if phase == "many" else 1
    common = ["--host", host, "--duration", f"{seconds:g}", "--conns", str(conns),
              "--warmup", "0", "--interval-ms", "1000"]
    if app == "memcached":
        return [NOMLOAD, "--proto", "memcached", "--port", str(apps.MEMCACHED_PORT),
                "--get-permille", "900", "--keys", "1000", "--value-size", "1024"] + common
    if app == "nhttpd":
        return [NOMLOAD, "--proto", "http", "--port", str(apps.HTTP_PORT), "--path",
                apps.INDEX_PATH] + common
    if app == "netpipe" and phase == "single":
        return [NOMLOAD, "--proto", "netpipe", "--port", str(apps.NETPIPE_PINGPONG_PORT),
                "--size", "1024"] + common
    raise GuestError(f"no load for {app} {phase} yet (NetPIPE streaming needs NPtcp's "
                     "transmitter wrapper from tools/loadgen)")


def parse_nomload(text):
    """nomload's JSON result (its last line; 'interval' lines come before)."""
    for line in reversed(text.strip().splitlines()):
        if line.startswith("{"):
            return json.loads(line)
    raise ValueError("no JSON result in nomload's output")


def run_load(app, phase, seconds, lab, workdir, tag=None):
    """Runs the phase's load inside lab against lab.guest_ip; returns driver figures. Its
    output is kept as nomload-TAG.txt (tag: the phase, or "warmup-PHASE": a warm-up may
    complete no request at all)."""
    tag = tag or phase
    if not os.access(NOMLOAD, os.X_OK):
        raise GuestError(f"{NOMLOAD} not built (make -C tools/loadgen)")
    argv = nomload_args(app, phase, lab.guest_ip, seconds)
    r = lab.run(argv, timeout=seconds + 120)
    raw = os.path.join(workdir, f"nomload-{tag}.txt")
    with open(raw, "w") as f:
        f.write(" ".join(argv) + "\n" + r.stdout + r.stderr)
    if r.returncode != 0:
        raise GuestError(f"nomload {tag} failed ({r.returncode}): {r.stderr.strip()[-500:]}")
    try:
        res = parse_nomload(r.stdout)
    except ValueError as e:
        raise GuestError(f"nomload {tag}: {e}") from None
    if not res.get("requests") and not tag.startswith("warmup"):
        raise GuestError(f"nomload {tag}: no request completed ({res.get('errors')} errors)")
    return {"ops": res["requests"], "seconds": res["duration_s"],
            "latency_us": {k: res["latency_us"][k] for k in ("mean", "p50", "p99", "stddev")},
            "latency_tool": "nomload", "errors": res.get("errors"), "raw": {"nomload": raw}}
