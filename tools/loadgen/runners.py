"""Runs the load tools inside a netlab.NetLab and parses what they print.

Each runner takes the lab, the guest's address and a duration, keeps the tool's raw output in
workdir (returned under "raw") and returns the parsed figures (parsers.py). A tool that fails
raises LoadError with its output.
"""
import os
import shlex
import subprocess
import time

from . import apps
from .parsers import parse_memaslap, parse_nomload, parse_nptcp_stdout, parse_wrk, ParseError

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(os.path.dirname(HERE))
BUILD = os.environ.get("BUILD", os.path.join(TOP, "build"))
NOMLOAD = os.path.join(BUILD, "loadgen", "nomload")
NPTCP = os.path.join(BUILD, "loadgen", "NPtcp")
MANY_CONNS = 32  # wrk -c32 (issue 5); memcached "many" uses as many connections


class LoadError(RuntimeError):
    """A load tool failed; the message holds its command and output."""


def build():
    """Builds nomload and the patched NPtcp (make -C tools/loadgen); raises
    subprocess.CalledProcessError on failure."""
    subprocess.run(["make", "-s", "-C", HERE], check=True,
                   env=dict(os.environ, TOP=TOP, BUILD=BUILD))


def _run_tool(lab, args, seconds, workdir, name):
    """Runs args in the lab with a generous timeout; saves stdout+stderr to workdir/name, also
    what a tool that did not end printed until it was killed."""
    os.makedirs(workdir, exist_ok=True)
    raw = os.path.join(workdir, name)
    try:
        r = lab.run(args, timeout=seconds * 3 + 60)
    except subprocess.TimeoutExpired as e:
        printed = (e.output or "") + (e.stderr or "")
        with open(raw, "w") as f:
            f.write(printed)
        raise LoadError(f"{shlex.join(args)} did not end in {seconds * 3 + 60} s; its last "
                        f"output ({raw}):\n{printed[-600:]}") from None
    with open(raw, "w") as f:
        f.write(r.stdout + r.stderr)
    if r.returncode != 0:
        raise LoadError(f"{shlex.join(args)} exited {r.returncode}:\n{(r.stdout + r.stderr)[-2000:]}")
    return r.stdout + r.stderr, raw


def _parsed(parser, text, args):
    try:
        return parser(text)
    except ParseError as e:
        raise LoadError(f"{shlex.join(args)}: {e}:\n{text[-2000:]}") from None


def nomload(lab, proto, host, port, conns, seconds, workdir, interval_ms=1000, warmup_s=0.0,
            extra=(), name=None):
    """Our client (nomload.c): {"requests", "throughput_rps", "latency_us": {...}, "intervals",
    "raw"}. proto: memcached, http or netpipe (one connection)."""
    args = [NOMLOAD, "--proto", proto, "--host", host, "--port", str(port), "--conns",
            str(conns), "--duration", str(seconds), "--warmup", str(warmup_s),
            "--interval-ms", str(interval_ms), *extra]
    text, raw = _run_tool(lab, args, seconds + warmup_s, workdir,
                          name or f"nomload-{proto}-{conns}.txt")
    out = _parsed(parse_nomload, text, args)
    out["raw"] = raw
    return out


def memaslap_config(workdir):
    """memaslap's config: 64-byte keys, 32-byte values, SET 10 % / GET 90 % (paper 6)."""
    path = os.path.join(workdir, "memaslap.cfg")
    with open(path, "w") as f:
        f.write("key\n64 64 1\nvalue\n32 32 1\ncmd\n0 0.1\n1 0.9\n")
    return path


def memaslap(lab, host, port, conns, seconds, workdir, stats=False, stats_every_s=1):
    """memaslap GET/SET 90/10 with conns concurrent connections; latency only with stats
    (-S, which costs throughput, issue 5), then printed every stats_every_s seconds (the
    parser's "intervals": the experiment values profit per interval and can tell which ran on
    a slow host, tools/experiment/hostspeed.py)."""
    os.makedirs(workdir, exist_ok=True)
    threads = min(2, conns)
    whole = max(1, round(seconds))  # memaslap counts in whole seconds
    args = ["memcaslap", "-s", f"{host}:{port}", "-T", str(threads), "-c", str(conns),
            "-t", f"{whole}s", "-F", memaslap_config(workdir)]
    if stats:
        args += ["-S", f"{max(1, round(stats_every_s))}s"]
    text, raw = _run_tool(lab, args, seconds, workdir, f"memaslap-{conns}.txt")
    out = _parsed(parse_memaslap, text, args)
    out["raw"] = raw
    return out


def wrk(lab, host, port, conns, seconds, workdir, path=apps.INDEX_PATH):
    """wrk fetching the 175-byte page: many -t2 -c32, single -t1 -c1 (issue 5)."""
    threads = 2 if conns > 1 else 1
    args = ["wrk", f"-t{threads}", f"-c{conns}", f"-d{max(1, round(seconds))}s", "--latency",
            f"http://{host}:{port}{path}"]
    text, raw = _run_tool(lab, args, seconds, workdir, f"wrk-{conns}.txt")
    out = _parsed(parse_wrk, text, args)
    out["raw"] = raw
    return out


def _nptcp_session(lab, args, workdir, name, attempts=50):
    """Runs one NPtcp transmitter session. The guest restarts its receiver after each session,
    and NPtcp gives up on a refused first connect ("Cannot Connect! errno=111"), so a refused
    session is retried after a pause (a probe connection would consume the receiver's one
    accept)."""
    for _ in range(attempts):
        try:
            return _run_tool(lab, args, 30, workdir, name)
        except LoadError as e:
            if "Cannot Connect! errno=111" not in str(e):
                raise
            time.sleep(0.2)
    raise LoadError(f"{shlex.join(args)}: connection refused {attempts} times")


def _nptcp_sessions(lab, host, options, seconds, workdir, name):
    """NPtcp transmitter sessions with options, back to back until `seconds` passed; every
    session's output kept in workdir/name.txt. Returns (rows of every session, seconds, raw)."""
    os.makedirs(workdir, exist_ok=True)
    raw = os.path.join(workdir, f"{name}.txt")
    rows, start = [], time.monotonic()
    with open(raw, "w") as log:
        while time.monotonic() - start < seconds:
            args = [NPTCP, "-h", host, *options, "-o", os.path.join(workdir, f"{name}.out")]
            text, _ = _nptcp_session(lab, args, workdir, f"{name}-last.txt")
            log.write(text)
            rows += _parsed(parse_nptcp_stdout, text, args)
    return rows, time.monotonic() - start, raw


def nptcp_bidir(lab, host, seconds, workdir):
    """NetPIPE's both-ways mode (-2, apps.NETPIPE_BIDIR_ARGS): in each round both sides send a
    32 KiB message and receive the other's. Sessions back to back until `seconds` passed.
    Returns {"messages" (rounds: NetPIPE's timed trials, times x TRIALS per session; each
    round carries one message each way), "bytes" (each way), "seconds", "mbps" (NetPIPE's,
    2**20 bit/s, both ways combined, of the last session), "usec_per_message" (a round's time,
    NetPIPE's best trial's, mean over sessions), "sessions", "raw"}."""
    rows, elapsed, raw = _nptcp_sessions(lab, host, apps.NETPIPE_BIDIR_ARGS, seconds, workdir,
                                         "nptcp-bidir")
    messages = sum(r["times"] for r in rows) * apps.NETPIPE_TRIALS
    return {"messages": messages, "bytes": messages * apps.NETPIPE_BIDIR_BYTES,
            "seconds": elapsed, "mbps": rows[-1]["mbps"], "sessions": len(rows),
            "usec_per_message": sum(r["usec"] for r in rows) / len(rows), "raw": raw}


def nptcp_pingpong(lab, host, workdir):
    """One stock NPtcp ping-pong session of 1024-byte messages (apps.NETPIPE_PINGPONG_ARGS):
    [{"bytes", "times", "mbps", "usec"}]; usec is half the round trip, NetPIPE's convention."""
    args = [NPTCP, "-h", host, *apps.NETPIPE_PINGPONG_ARGS,
            "-o", os.path.join(workdir, "nptcp-pingpong.out")]
    text, raw = _nptcp_session(lab, args, workdir, "nptcp-pingpong.txt")
    rows = _parsed(parse_nptcp_stdout, text, args)
    return {"rows": rows, "raw": raw}


def nptcp_pingpong_for(lab, host, seconds, workdir):
    """Ping-pong sessions of 1024-byte messages (apps.NETPIPE_PINGPONG_ARGS) back to back
    until `seconds` passed. Returns {"round_trips", "seconds", "rtt_us" (mean over sessions,
    weighted by their round trips, of twice NetPIPE's per-message time: each session's best
    trial), "sessions", "raw"}. round_trips counts NetPIPE's timed trials: times x TRIALS."""
    rows, elapsed, raw = _nptcp_sessions(lab, host, apps.NETPIPE_PINGPONG_ARGS, seconds,
                                         workdir, "nptcp-pingpong-all")
    trips = [r["times"] * apps.NETPIPE_TRIALS for r in rows]
    rtt = sum(2 * r["usec"] * n for r, n in zip(rows, trips)) / max(sum(trips), 1)
    return {"round_trips": sum(trips), "seconds": elapsed, "rtt_us": rtt,
            "sessions": len(rows), "raw": raw}
