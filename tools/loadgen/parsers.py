"""Parsers of the load tools' outputs: memaslap (Debian's memcaslap), wrk, NPtcp, nomload.

Each returns a dict of numbers; latencies are in microseconds. tests/fixtures/ holds real
captured outputs of each (README there says how they were made).
"""
import json
import re

_UNITS_US = {"us": 1.0, "ms": 1e3, "s": 1e6, "m": 60e6}


class ParseError(ValueError):
    """The text is not the output this parser expects (the tool failed or changed)."""


def _duration_us(text):
    m = re.fullmatch(r"([\d.]+)(us|ms|s|m)", text)
    if not m:
        raise ParseError(f"not a wrk duration: {text!r}")
    return float(m.group(1)) * _UNITS_US[m.group(2)]


def _count(text):
    """wrk's counts: 620.00, 0.93k, 1.2M."""
    scale = {"k": 1e3, "M": 1e6, "G": 1e9}
    return float(text[:-1]) * scale[text[-1]] if text[-1] in scale else float(text)


def parse_wrk(text):
    """wrk (with --latency): {"requests", "seconds", "rps", "errors", "latency_us": {"mean",
    "stddev", "max", "p50", "p75", "p90", "p99"}}. errors: socket errors + non-2xx/3xx."""
    m = re.search(r"^\s*(\d+) requests in ([\d.]+)(us|ms|s|m),", text, re.M)
    rps = re.search(r"^Requests/sec:\s+([\d.]+)", text, re.M)
    lat = re.search(r"^\s*Latency\s+(\S+)\s+(\S+)\s+(\S+)\s+", text, re.M)
    if not (m and rps and lat):
        raise ParseError("no wrk summary in the output")
    out = {"requests": int(m.group(1)), "seconds": _duration_us(m.group(2) + m.group(3)) / 1e6,
           "rps": float(rps.group(1)), "errors": 0,
           "latency_us": {"mean": _duration_us(lat.group(1)),
                          "stddev": _duration_us(lat.group(2)),
                          "max": _duration_us(lat.group(3))}}
    for pct, value in re.findall(r"^\s+(50|75|90|99)%\s+(\S+)[ \t]*$", text, re.M):
        out["latency_us"][f"p{pct}"] = _duration_us(value)
    sock = re.search(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", text)
    if sock:
        out["errors"] += sum(int(g) for g in sock.groups())
    non2xx = re.search(r"Non-2xx or 3xx responses: (\d+)", text)
    if non2xx:
        out["errors"] += int(non2xx.group(1))
    return out


_MEMASLAP_PERIOD = re.compile(
    r"^Total Statistics\n[^\n]*\nPeriod\s+[\d.]+\s+(\d+)\s+\S+\s+\S+\s+\S+\s+\S+\s+\S+\s+"
    r"([\d.]+)\s+([\d.]+)\s+\S+\s*\nGlobal\s+([\d.]+)\s", re.M)


def parse_memaslap(text):
    """memaslap: {"ops", "tps", "seconds", "cmd_get", "cmd_set", "get_misses", "latency_us",
    "intervals"}. latency_us ({"mean", "stddev", "min", "max"} over every command) only with
    -S, else None. intervals: one {"t_s", "ops", "mean_us", "stddev_us"} per statistics period
    of -S (its "Total Statistics" Period row, t_s its Global row's seconds since the start; the
    tool prints whole microseconds for the mean), [] without -S."""
    final = re.search(r"^Run time: ([\d.]+)s Ops: (\d+) TPS: (\d+)", text, re.M)
    if not final:
        raise ParseError("no memaslap summary (Run time: ... Ops: ... TPS:) in the output")
    out = {"seconds": float(final.group(1)), "ops": int(final.group(2)),
           "tps": int(final.group(3)), "latency_us": None}
    for key in ("cmd_get", "cmd_set", "get_misses"):
        m = re.search(rf"^{key}: (\d+)", text, re.M)
        out[key] = int(m.group(1)) if m else None
    total = re.search(r"^Total Statistics \((\d+) events\)\s*\n((?:\s+\w[^\n]*\n)+)", text, re.M)
    if total:
        fields = dict(re.findall(r"^\s+(Min|Max|Avg|Std):\s+([\d.]+)", total.group(2), re.M))
        out["latency_us"] = {"mean": float(fields["Avg"]), "stddev": float(fields["Std"]),
                             "min": float(fields["Min"]), "max": float(fields["Max"])}
        out["latency_events"] = int(total.group(1))
    out["intervals"] = [{"t_s": float(t), "ops": int(ops), "mean_us": float(mean),
                         "stddev_us": float(sd)}
                        for ops, mean, sd, t in _MEMASLAP_PERIOD.findall(text)]
    return out


_NP_LINE = re.compile(r"^\s*(\d+):\s+(\d+) bytes\s+(\d+) times -->\s+([\d.]+) Mbps in\s+"
                      r"([\d.]+) usec", re.M)


def parse_nptcp_stdout(text):
    """NPtcp transmitter's progress lines: [{"n", "bytes", "times", "mbps", "usec"}].
    NetPIPE's Mbps are 2**20 bits per second; usec is its time per message (one way)."""
    rows = [{"n": int(n), "bytes": int(b), "times": int(t), "mbps": float(mbps),
             "usec": float(us)} for n, b, t, mbps, us in _NP_LINE.findall(text)]
    if not rows:
        raise ParseError("no NPtcp result line in the output")
    return rows


def parse_nptcp_out(text):
    """NPtcp's -o file: [{"bytes", "mbps", "seconds"}], one row per message size."""
    rows = []
    for line in text.splitlines():
        words = line.split()
        if len(words) == 3:
            rows.append({"bytes": int(words[0]), "mbps": float(words[1]),
                         "seconds": float(words[2])})
    if not rows:
        raise ParseError("no NPtcp rows in the output file")
    return rows


def parse_nomload(text):
    """nomload: its JSON object plus "intervals": [{"t_s", "requests", "mean_us",
    "stddev_us"}] from the --interval-ms lines."""
    intervals, result = [], None
    for line in text.splitlines():
        if line.startswith("interval "):
            t, n, mean, sd = line.split()[1:5]
            intervals.append({"t_s": float(t), "requests": int(n), "mean_us": float(mean),
                              "stddev_us": float(sd)})
        elif line.startswith("{"):
            result = json.loads(line)
    if result is None:
        raise ParseError("no nomload JSON result in the output")
    result["intervals"] = intervals
    return result
