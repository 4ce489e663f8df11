"""What the dashboard reads from a running nom, over the ports `make run` forwards.

nhttpd: GET /nom/board (the bulletin board's read-only export: every application's W, price
seen and profit rate, the published prices) and GET /nom/stats (its own counters); memcached:
the text protocol's `stats` (apps/memcached/README.md: W, load class, price, profit rate, the
driver's kicks and interrupts). Each reader raises OSError (or ValueError on a malformed answer)
when the application does not answer; the collector shows that application as unreachable.
"""
import json
import socket
import urllib.request


def http_json(host, port, path, timeout_s=5.0):
    """GET http://host:port/path as JSON."""
    with urllib.request.urlopen(f"http://{host}:{port}{path}", timeout=timeout_s) as r:
        return json.loads(r.read())


def nhttpd_board(host, port, timeout_s=5.0):
    """The "board" object of nhttpd's /nom/board (None on a Linux nhttpd, which has none)."""
    return http_json(host, port, "/nom/board", timeout_s).get("board")


def nhttpd_stats(host, port, timeout_s=5.0):
    """nhttpd's /nom/stats. The dashboard reads only its "total" window: each query starts a
    new "interval", which a benchmark reading /nom/stats around its run relies on."""
    return http_json(host, port, "/nom/stats", timeout_s)


def memcached_stats(host, port, timeout_s=5.0):
    """memcached's `stats` as {name: value string}."""
    with socket.create_connection((host, port), timeout=timeout_s) as s:
        s.sendall(b"stats\r\n")
        data = b""
        while not data.endswith(b"END\r\n"):
            chunk = s.recv(65536)
            if not chunk:
                raise ConnectionError("memcached closed the connection mid-stats")
            data += chunk
    stats = {}
    for line in data.decode(errors="replace").splitlines():
        words = line.split(" ", 2)
        if len(words) == 3 and words[0] == "STAT":
            stats[words[1]] = words[2]
    if not stats:
        raise ValueError(f"no STAT lines in memcached's answer: {data[:200]!r}")
    return stats
