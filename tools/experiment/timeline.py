"""A nom run's time series for the experiment report: W, price, load class, profit rate and
throughput once a second, read the way the live dashboard (tools/dashboard) reads a running nom.

The sampler is a process of its own inside the run's network namespace (where the load
generators run and the guest's address answers), started by nom_driver after the guest serves
and stopped with it: `python3 -m experiment.timeline --app APP ...`. Each second it appends one
JSON line of raw readings to timeline.jsonl:
    t               host time (s since the epoch)
    stats           what the application exposes, as tools/dashboard/sources.py reads it: one
                    memcached `stats` or one nhttpd GET /nom/stats (one small request a second
                    on the application's own port, beside thousands of the load's); NetPIPE has
                    no stats port (its receivers serve one connection a run), so nothing
    console         the controller's new "adapt: W=.." console lines (libnom's log_decision:
                    W, load class, price, expected profit rate), which is all NetPIPE exposes
    tap_rx_bytes    the guest's outbound bytes so far, read on the host side of its tap
    error           why the application did not answer, if it did not
After the run, write_series() turns the readings into timeline.csv through the dashboard's own
collector (rates between polls) and timeline.json (when each load phase began), which
report.py draws with the dashboard's own plot.
"""
import argparse
import csv
import gzip
import json
import os
import re
import signal
import sys
import threading
import time

from dashboard import sources
from dashboard.collector import Collector

# The CSV's columns: seconds since the first load phase began, the phase, then the series.
COLUMNS = ("t_s", "phase", "w_us", "price", "load_class", "profit", "throughput",
           "exits_per_s", "latency_us", "out_mbit_s")
# libnom/src/profit/controller.c log_decision()'s line.
ADAPT_LINE = re.compile(r"adapt: W=(\d+) us \([^:]*: load (\w+), \d+ active connections, "
                        r"price (-?\d+) u\$/Gbit, \w+ \w+ expected (-?\d+) u\$/s\)")
RAW, SERIES, META = "timeline.jsonl", "timeline.csv", "timeline.json"


# -- the sampler (inside the namespace) -------------------------------------------------------
def read_stats(app, host, port):
    """One reading of what app exposes (None for NetPIPE, which exposes no stats port)."""
    if app == "memcached":
        return sources.memcached_stats(host, port)
    if app == "nhttpd":
        return sources.nhttpd_stats(host, port)
    return None


class ConsoleTail:
    """The controller's lines added to the serial log since the previous call."""

    def __init__(self, path):
        self.path, self.offset, self.partial = path, 0, ""

    def new_lines(self):
        try:
            with open(self.path, errors="replace") as f:
                f.seek(self.offset)
                text = f.read()
                self.offset = f.tell()
        except OSError:
            return []
        lines = (self.partial + text).split("\n")
        self.partial = lines.pop()
        return [line.strip() for line in lines if ADAPT_LINE.search(line)]


def tap_rx_bytes(tap):
    try:
        with open(f"/sys/class/net/{tap}/statistics/rx_bytes") as f:
            return int(f.read())
    except (OSError, ValueError):
        return None


def sample(args, stopping):
    """Appends one reading per interval to args.out until stopping is set."""
    console = ConsoleTail(args.serial) if args.serial else None
    with open(args.out, "a") as out:
        while not stopping.is_set():
            started = time.monotonic()
            reading = {"t": time.time()}
            try:
                reading["stats"] = read_stats(args.app, args.host, args.port)
            except (OSError, ValueError) as e:
                reading["error"] = str(e)
            reading["console"] = console.new_lines() if console else []
            reading["tap_rx_bytes"] = tap_rx_bytes(args.tap) if args.tap else None
            out.write(json.dumps(reading) + "\n")
            out.flush()
            stopping.wait(max(0.0, args.interval - (time.monotonic() - started)))


def parse_args(argv):
    ap = argparse.ArgumentParser(prog="python3 -m experiment.timeline",
                                 description="once a second, a nom application's W, price, "
                                 "load class, profit rate and counters as JSON lines "
                                 "(tools/experiment/timeline.py)")
    ap.add_argument("--app", required=True, choices=("memcached", "nhttpd", "netpipe"))
    ap.add_argument("--host", required=True, help="the guest's address")
    ap.add_argument("--port", type=int, required=True, help="the application's port")
    ap.add_argument("--out", required=True, help="the JSON-lines file to append to")
    ap.add_argument("--tap", help="the guest's tap, whose rx bytes are what the guest sent")
    ap.add_argument("--serial", help="the guest's serial log, for the controller's lines")
    ap.add_argument("--interval", type=float, default=1.0, help="seconds between readings")
    return ap.parse_args(argv)


def main(argv=None):
    args = parse_args(argv)
    stopping = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stopping.set())
    signal.signal(signal.SIGINT, lambda *_: stopping.set())
    sample(args, stopping)
    return 0


# -- readings -> series (after the run) -------------------------------------------------------
def load_readings(path):
    """The readings of a timeline.jsonl (or its .gz, compress_raw); a line cut short by the
    sampler's end is dropped."""
    out = []
    with (gzip.open(path, "rt") if str(path).endswith(".gz") else open(path)) as f:
        for line in f:
            try:
                out.append(json.loads(line))
            except ValueError:
                continue
    return out


def series(app, readings, t0):
    """Rows (dicts of COLUMNS, t_s since t0) from the readings, through the dashboard's
    collector; the controller's console lines fill what the stats lack (NetPIPE: all of it),
    each holding until the next decision."""
    col = Collector(None, None, None)
    decided, rows, last_bytes = {}, [], None
    for r in readings:
        for line in r.get("console") or []:
            w, load, price, profit = ADAPT_LINE.search(line).groups()
            decided = {"w_us": float(w), "load_class": load, "price": int(price) / 1e6,
                       "profit": float(profit)}
        stats = {app: r["stats"]} if r.get("stats") is not None else {}
        row = dict(col.ingest(r["t"], None, stats)["apps"].get(app) or {})
        for k, v in decided.items():
            if row.get(k) is None:
                row[k] = v
        out_rate = None
        if r.get("tap_rx_bytes") is not None:
            out_rate = col.rates.rate("tap.rx_bytes", r["t"], r["tap_rx_bytes"])
        row["out_mbit_s"] = None if out_rate is None else out_rate * 8 / 1e6
        row["t_s"] = r["t"] - t0
        rows.append({k: row.get(k) for k in COLUMNS})
    return rows


def compress_raw(folder):
    """Replaces folder's timeline.jsonl by timeline.jsonl.gz (once the series are written,
    nothing but a reader of the raw readings needs it): at undilated phases (12 minutes a run)
    the readings are 1.9 MB a run, gzipped 0.1 MB. Returns the new path, or None."""
    raw = os.path.join(folder, RAW)
    if not os.path.exists(raw):
        return None
    with open(raw, "rb") as src, gzip.open(raw + ".gz", "wb") as dst:
        dst.writelines(src)
    os.remove(raw)
    return raw + ".gz"


def write_series(folder, app, phase_starts):
    """timeline.csv and timeline.json in folder from its timeline.jsonl; phase_starts: {phase:
    host time it began}. Returns the CSV's path, or None without readings."""
    raw = os.path.join(folder, RAW)
    if not os.path.exists(raw) and os.path.exists(raw + ".gz"):
        raw += ".gz"
    if not phase_starts or not os.path.exists(raw):
        return None
    t0 = min(phase_starts.values())
    order = sorted(phase_starts.items(), key=lambda kv: kv[1])
    rows = series(app, load_readings(raw), t0)
    for row in rows:
        row["phase"] = next((p for p, t in reversed(order) if row["t_s"] + t0 >= t), "boot")
    with open(os.path.join(folder, SERIES), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=COLUMNS)
        w.writeheader()
        w.writerows({k: ("" if v is None else v) for k, v in row.items()} for row in rows)
    with open(os.path.join(folder, META), "w") as f:
        json.dump({"app": app, "phase_starts_s": {p: t - t0 for p, t in phase_starts.items()},
                   "samples": len(rows), "columns": list(COLUMNS)}, f, indent=1)
        f.write("\n")
    return os.path.join(folder, SERIES)


def read_series(folder):
    """(rows with numbers as floats, timeline.json) of a run folder; None when it has none or
    they do not read (the report then draws no timeline for that run)."""
    try:
        with open(os.path.join(folder, META)) as f:
            meta = json.load(f)
        with open(os.path.join(folder, SERIES), newline="") as f:
            rows = [{k: _cell(k, v) for k, v in row.items()} for row in csv.DictReader(f)]
    except (OSError, ValueError):
        return None
    return rows, meta


def _cell(column, text):
    if text == "":
        return None
    return text if column in ("phase", "load_class") else float(text)


if __name__ == "__main__":
    sys.exit(main())
