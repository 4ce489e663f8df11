"""The dashboard's HTTP server on 127.0.0.1: `/` the page, `/api/state` the latest rows as
JSON, `/api/series/METRIC` a series as JSON, `/plot/METRIC.svg` its plot (collector.METRICS)."""
import json
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlsplit

from dashboard import page, plot
from dashboard.collector import METRICS


def make_server(collector, port, bind="127.0.0.1"):
    """A ThreadingHTTPServer on bind:port (0: a free port) answering from collector."""

    class Handler(BaseHTTPRequestHandler):
        def _send(self, status, ctype, body):
            data = body.encode()
            self.send_response(status)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(data)))
            self.send_header("Cache-Control", "no-store")
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self):
            path = urlsplit(self.path).path
            metric = path.rsplit("/", 1)[-1].removesuffix(".svg")
            if path == "/":
                self._send(200, "text/html; charset=utf-8", page.html())
            elif path == "/api/state":
                self._send(200, "application/json", json.dumps(collector.state()))
            elif path.startswith("/api/series/") and metric in METRICS:
                self._send(200, "application/json", json.dumps(collector.series(metric)))
            elif path.startswith("/plot/") and path.endswith(".svg") and metric in METRICS:
                title, unit = METRICS[metric]
                self._send(200, "image/svg+xml", plot.svg(title, unit, collector.series(metric)))
            else:
                self._send(404, "text/plain", "not found\n")

        def log_message(self, *args):  # quiet: a poll a second per open page
            pass

    return ThreadingHTTPServer((bind, port), Handler)
