"""Turns the guest's readings (sources.py) into the dashboard's rows and time series.

One row per application on the bulletin board (name, state, cores, memory, and what it reports:
W, the price it acts on, its profit rate), joined by name with what the application's own stats
say: its other knobs (utility function, adaptive or fixed W), load class, throughput, latency
and exits. Rates are differences between two polls of cumulative counters, so the dashboard
changes nothing in the guest (nhttpd's "interval" window stays the benchmarks'). Exits are the
data path's exit-causing events the applications count: kicks (tx + rx) plus interrupts; under
TCG they are events, not VM exits (DESIGN.md). Latency is nhttpd's in-server latency, the mean
over the poll window; memcached does not measure latency, so its cell stays empty.
"""
import collections
import threading
import time

from dashboard import sources

# Series the page plots: key -> (title, unit).
METRICS = {
    "price": ("price the application acts on", "$/Gbit"),
    "w_us": ("batching delay W", "us"),
    "throughput": ("throughput", "requests or operations/s"),
    "latency_us": ("mean latency", "us"),
    "exits_per_s": ("exits (kicks + interrupts)", "/s"),
    "profit": ("profit rate", "u$/s"),
}
APP_STATES = {0: "empty", 1: "running", 2: "exited", 3: "killed"}
BANDWIDTH = 1  # enum nom_resource NOM_RES_BANDWIDTH (kernel/include/nom/abi.h)


class Rates:
    """Per-second rates of cumulative counters between consecutive polls."""

    def __init__(self):
        self.last = {}

    def rate(self, key, t, value):
        """value's growth per second since the previous call with key; None the first time or
        when the counter went back (the application restarted)."""
        prev, self.last[key] = self.last.get(key), (t, value)
        if prev is None or t <= prev[0] or value < prev[1]:
            return None
        return (value - prev[1]) / (t - prev[0])


def _number(text):
    try:
        return float(text)
    except (TypeError, ValueError):
        return None


def board_rows(board):
    """{name: row} from /nom/board's application rows."""
    rows = {}
    for app_id, a in sorted((board or {}).get("apps", {}).items(), key=lambda kv: int(kv[0])):
        rows[a["name"]] = {
            "id": int(app_id), "state": APP_STATES.get(a["state"], str(a["state"])),
            "cores": a["cores"], "mem_mib": a["mem_pages"] * 4096 / 2**20,
            "w_us": a["batching_delay_ns"] / 1000, "price": a["price_seen_micro"] / 1e6,
            "profit": float(a["profit_rate_micro"]), "cpu_s": a["cpu_ns"] / 1e9}
    return rows


def published_price(board):
    """The bandwidth price on the board in $/Gbit, its sequence; (None, None) if none."""
    for p in (board or {}).get("prices", {}).values():
        if p["resource"] == BANDWIDTH:
            return p["price_micro"] / 1e6, p["sequence"]
    return None, None


class Collector:
    """Polls the guest every interval_s on a thread of its own; state() and series() read the
    latest rows and the last `keep` polls."""

    def __init__(self, host, nhttpd_port, memcached_port, interval_s=1.0, keep=600):
        self.host, self.nhttpd_port, self.memcached_port = host, nhttpd_port, memcached_port
        self.interval_s = interval_s
        self.rates = Rates()
        self.history = collections.deque(maxlen=keep)  # (t, {app: {metric: value}})
        self.latest = {"time": None, "apps": {}, "price": None, "price_sequence": None,
                       "errors": {}, "polls": 0}
        self.lock = threading.Lock()
        self.stopping = threading.Event()
        self.thread = None

    def _nhttpd(self, t, row, stats):
        total, adapt = stats["total"], stats.get("adapt") or {}
        driver = stats.get("driver") or {}
        lat = total["latency_us"]
        row.update(utility=adapt.get("utility"), load_class=adapt.get("load_class"),
                   adaptive=not stats.get("batching_delay_fixed", True),
                   throughput_unit="requests/s",
                   throughput=self.rates.rate("nhttpd.requests", t, total["requests"]),
                   latency_us=self.rates.rate("nhttpd.lat_sum", t, lat["mean"] * lat["samples"]),
                   latency_p99_us=lat["p99"])
        samples = self.rates.rate("nhttpd.lat_samples", t, lat["samples"])
        row["latency_us"] = row["latency_us"] / samples if row["latency_us"] and samples else None
        row.setdefault("w_us", stats.get("batching_delay_us"))
        if "price" not in row:
            row["price"] = stats.get("bandwidth_price_usd_per_gbit")
        if "profit" not in row:  # no board (tools/experiment/timeline.py): the controller's
            row["profit"] = adapt.get("expected_profit_micro_usd_per_s")
        if driver:
            row["exits_per_s"] = self.rates.rate(
                "nhttpd.exits", t, driver["tx_kicks"] + driver["rx_kicks"] + driver["interrupts"])

    def _memcached(self, t, row, stats):
        ops = int(stats.get("cmd_get", 0)) + int(stats.get("cmd_set", 0))
        row.update(utility=stats.get("utility"), load_class=stats.get("load_class"),
                   adaptive=stats.get("batching_delay_adaptive") == "1",
                   throughput_unit="operations/s",
                   throughput=self.rates.rate("memcached.ops", t, ops), latency_us=None)
        row.setdefault("w_us", _number(stats.get("batching_delay_us")))
        if "price" not in row:
            row["price"] = _number(stats.get("bandwidth_price_usd_per_gbit"))
        if "profit" not in row and _number(stats.get("profit_rate_usd_per_s")) is not None:
            row["profit"] = _number(stats["profit_rate_usd_per_s"]) * 1e6
        if "net_tx_kicks" in stats:
            exits = sum(int(stats[k]) for k in ("net_tx_kicks", "net_rx_kicks", "net_interrupts"))
            row["exits_per_s"] = self.rates.rate("memcached.exits", t, exits)

    def poll(self, t=None):
        """Reads the guest once; returns the new state (also kept for state())."""
        t = time.time() if t is None else t
        errors, board, stats = {}, None, {}
        try:
            board = sources.nhttpd_board(self.host, self.nhttpd_port)
            stats["nhttpd"] = sources.nhttpd_stats(self.host, self.nhttpd_port)
        except (OSError, ValueError, KeyError) as e:
            errors["nhttpd"] = str(e)
        try:
            stats["memcached"] = sources.memcached_stats(self.host, self.memcached_port)
        except (OSError, ValueError) as e:
            errors["memcached"] = str(e)
        return self.ingest(t, board, stats, errors)

    def ingest(self, t, board, stats, errors=None):
        """One poll's readings (board: /nom/board's "board" or None; stats: {app: its stats
        document}) into the state; poll() reads them live, tools/experiment's timeline from
        what it recorded."""
        errors = dict(errors or {})
        apps = board_rows(board)
        for name, read in (("nhttpd", self._nhttpd), ("memcached", self._memcached)):
            if name in stats:
                try:
                    read(t, apps.setdefault(name, {}), stats[name])
                except (KeyError, TypeError, ValueError) as e:
                    errors[name] = f"unexpected stats: {e!r}"
        price, sequence = published_price(board)
        state = {"time": t, "apps": apps, "price": price, "price_sequence": sequence,
                 "errors": errors}
        with self.lock:
            state["polls"] = self.latest["polls"] + 1
            self.latest = state
            self.history.append((t, {name: {m: row.get(m) for m in METRICS}
                                     for name, row in apps.items()}))
        return state

    def state(self):
        with self.lock:
            return self.latest

    def series(self, metric):
        """{app: [(t, value)]} over the kept polls, values None where unknown."""
        out = {}
        with self.lock:
            for t, apps in self.history:
                for name, values in apps.items():
                    out.setdefault(name, []).append((t, values.get(metric)))
        return out

    def _run(self):
        while not self.stopping.is_set():
            started = time.monotonic()
            self.poll()
            self.stopping.wait(max(0.0, self.interval_s - (time.monotonic() - started)))

    def start(self):
        self.thread = threading.Thread(target=self._run, name="dashboard-collector", daemon=True)
        self.thread.start()
        return self

    def stop(self):
        self.stopping.set()
        if self.thread:
            self.thread.join(10)
