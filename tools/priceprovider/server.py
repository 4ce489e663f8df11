"""The cloud provider's price service (paper 3.7): a small REST server on the host.

GET /price      JSON {"resource", "unit", "price", "timestamp", "sequence", "next_change",
                "running"}: the price in force, when it took effect (Unix seconds), a sequence
                number that grows exactly when the price in force changes or the clock restarts,
                and when the next change is due (null if none or the clock is held).
GET /price.txt  the same as one line `resource=.. unit=.. price=.. timestamp=.. sequence=..`,
                for clients without a JSON parser (nom's priced may use either).
GET /schedule   the whole schedule and the clock state.
Anything else is a JSON error (404, 405, 400); a client that stalls is dropped after 5 s.

The schedule's clock starts when the server starts, or with --hold on SIGUSR1, which also
restarts it; SIGUSR2 moves the clock forward to the next step at once. The experiment runner
sends SIGUSR1 when its first load phase begins and SIGUSR2 when the load changes, so that the
price change falls exactly on the load change (paper 6.1) whatever the load tools' set-up
costs, even when the server runs inside a network namespace the runner cannot reach by HTTP.
"""
import argparse
import json
import signal
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from .schedule import DEFAULT_TEXT, Schedule

DEFAULT_PORT = 7070


class PriceClock:
    """The schedule plus the moment its clock started; thread-safe."""

    def __init__(self, schedule, resource="bandwidth", unit="$/Gbit", hold=False,
                 clock=time.time):
        self.schedule, self.resource, self.unit, self._clock = schedule, resource, unit, clock
        self._lock = threading.Lock()
        self._created = clock()
        self._generation = 0
        self._epoch = None if hold else self._created

    def start(self):
        """Starts, or restarts, the schedule at step 0 now."""
        with self._lock:
            self._generation += 1
            self._epoch = self._clock()

    def advance(self):
        """Moves the clock to the start of the next step now (starts it if held); at the
        last step it does nothing."""
        with self._lock:
            now = self._clock()
            if self._epoch is None:
                self._generation += 1
                self._epoch = now
            index = self.schedule.index_at(now - self._epoch)
            if index + 1 < len(self.schedule.steps):
                self._epoch = now - self.schedule.steps[index + 1][0]

    def quote(self):
        """The price in force now, as the dict GET /price returns."""
        with self._lock:
            epoch, generation = self._epoch, self._generation
        steps = self.schedule.steps
        if epoch is None:
            index, since, next_change = 0, self._created, None
        else:
            index = self.schedule.index_at(self._clock() - epoch)
            since = epoch + steps[index][0]
            next_change = epoch + steps[index + 1][0] if index + 1 < len(steps) else None
        return {"resource": self.resource, "unit": self.unit, "price": steps[index][1],
                "timestamp": since, "sequence": generation * len(steps) + index + 1,
                "next_change": next_change, "running": epoch is not None}

    def describe(self):
        with self._lock:
            epoch = self._epoch
        return {"resource": self.resource, "unit": self.unit, "epoch": epoch,
                "steps": [{"start_s": s, "price": p} for s, p in self.schedule.steps]}


class Handler(BaseHTTPRequestHandler):
    server_version = "nom-priceprovider/1"
    timeout = 5  # seconds a client may stall before its connection is dropped

    def do_GET(self):
        self._respond(send_body=True)

    def do_HEAD(self):
        self._respond(send_body=False)

    def _respond(self, send_body):
        path = self.path.split("?", 1)[0]
        clock = self.server.clock
        if path == "/price":
            self._send(200, _json(clock.quote()), "application/json", send_body)
        elif path == "/price.txt":
            q = clock.quote()
            line = (f"resource={q['resource']} unit={q['unit']} price={q['price']:.6f} "
                    f"timestamp={q['timestamp']:.6f} sequence={q['sequence']}\n")
            self._send(200, line.encode(), "text/plain", send_body)
        elif path == "/schedule":
            self._send(200, _json(clock.describe()), "application/json", send_body)
        else:
            self.send_error(404, f"no such resource {path!r}; try /price")

    def _method_not_allowed(self):
        self.send_error(405, f"{self.command} not allowed; use GET")

    do_POST = do_PUT = do_DELETE = do_PATCH = do_OPTIONS = _method_not_allowed

    def send_error(self, code, message=None, explain=None):
        # JSON instead of http.server's HTML page, for every error including malformed requests;
        # with a status line even when the request line was too broken to name a version.
        self.close_connection = True
        self.request_version = "HTTP/1.0"
        body = _json({"error": message or self.responses.get(code, ("",))[0], "code": code})
        try:
            self._send(code, body, "application/json", self.command != "HEAD")
        except OSError:
            pass

    def _send(self, code, body, ctype, send_body):
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        if code == 405:
            self.send_header("Allow", "GET, HEAD")
        self.end_headers()
        if send_body:
            self.wfile.write(body)

    def log_message(self, fmt, *args):
        if self.server.verbose:
            super().log_message(fmt, *args)


class PriceServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, address, clock, verbose=False):
        super().__init__(address, Handler)
        self.clock, self.verbose = clock, verbose


def _json(obj):
    return (json.dumps(obj) + "\n").encode()


def main(argv=None):
    ap = argparse.ArgumentParser(prog="priceprovider", description=__doc__.split("\n")[0])
    ap.add_argument("--bind", default="127.0.0.1", help="address to listen on")
    ap.add_argument("--port", type=int, default=DEFAULT_PORT, help="0 picks a free port")
    ap.add_argument("--schedule", default=DEFAULT_TEXT, help='steps "SECONDS:PRICE, ..."')
    ap.add_argument("--schedule-file", help="a file of SECONDS:PRICE steps (overrides --schedule)")
    ap.add_argument("--resource", default="bandwidth")
    ap.add_argument("--unit", default="$/Gbit")
    ap.add_argument("--hold", action="store_true",
                    help="hold the first price until SIGUSR1 starts the clock "
                         "(SIGUSR2 always jumps to the next step)")
    ap.add_argument("--verbose", action="store_true", help="log every request to stderr")
    args = ap.parse_args(argv)
    try:
        text = open(args.schedule_file).read() if args.schedule_file else args.schedule
        schedule = Schedule.parse(text)
    except (OSError, ValueError) as e:
        ap.error(str(e))
    clock = PriceClock(schedule, args.resource, args.unit, hold=args.hold)
    server = PriceServer((args.bind, args.port), clock, args.verbose)
    signal.signal(signal.SIGUSR1, lambda *_: clock.start())
    signal.signal(signal.SIGUSR2, lambda *_: clock.advance())
    signal.signal(signal.SIGTERM, lambda *_: threading.Thread(target=server.shutdown).start())
    host, port = server.server_address[:2]
    print(f"priceprovider: listening on {host}:{port} schedule {schedule.text()}"
          f"{' (held)' if args.hold else ''}", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    return 0

