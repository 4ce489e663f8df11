"""nhttpd stays up and correct under abuse: random malformed requests, slow and stalled
clients, idle connections, thousands of concurrent connections, more clients than it admits."""
import json
import random
import resource
import selectors
import socket
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor

import pytest

pytestmark = pytest.mark.boot

VALID = [
    b"GET / HTTP/1.1\r\nHost: t\r\n\r\n",
    b"HEAD /index.html HTTP/1.1\r\nHost: t\r\nAccept: */*\r\n\r\n",
    b"GET /large.bin HTTP/1.0\r\nUser-Agent: x\r\n\r\n",
    b"POST /x HTTP/1.1\r\nHost: t\r\nContent-Length: 5\r\n\r\nhello",
    b"GET /nom/stats?x=1 HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n",
]
# Every status nhttpd may send; a malformed request must get one of these or a plain close.
STATUSES = {200, 400, 404, 405, 408, 413, 414, 431, 501, 505}


def mutate(rng, raw):
    """One random corruption of a request: byte flips, cuts, insertions, garbage, repeats."""
    b = bytearray(raw)
    kind = rng.randrange(7)
    if kind == 0:
        for _ in range(rng.randint(1, 8)):
            b[rng.randrange(len(b))] = rng.randrange(256)
    elif kind == 1:
        del b[rng.randrange(len(b)):]
    elif kind == 2:
        i = rng.randrange(len(b))
        b[i:i] = bytes(rng.randrange(256) for _ in range(rng.randint(1, 64)))
    elif kind == 3:
        b = bytearray(rng.randbytes(rng.randint(1, 300)))
    elif kind == 4:
        i = rng.randrange(len(b))
        b[i:i] = rng.choice([b"\r", b"\n", b" ", b"\0", b":", b"%", b"..", b"\t", b"\x7f"]) * \
            rng.randint(1, 9000)
    elif kind == 5:
        b = b.replace(b"\r\n", rng.choice([b"\n", b"\r", b"\r\r\n", b"\n\r"]))
    else:
        b = b * rng.randint(2, 50)
    return bytes(b)


def send_malformed(server, raw):
    """Sends raw, half-closes, reads until the server closes; returns the status lines."""
    with server.connect(timeout=60) as s:
        try:
            s.sendall(raw)
            s.shutdown(socket.SHUT_WR)
            data = server.wait_closed(s, 60)
        except ConnectionResetError:
            return []  # the server may reset a client still sending after its 4xx
    return [line for line in data.split(b"\r\n") if line.startswith(b"HTTP/1.1 ")]


def test_random_malformed_requests(nhttpd):
    """Do 10,000 random malformed requests each get a proper status (or a close), and leave
    the server answering correctly?"""
    rng = random.Random(4)
    requests = [mutate(rng, rng.choice(VALID)) for _ in range(10000)]
    with ThreadPoolExecutor(max_workers=16) as pool:
        for lines in pool.map(lambda raw: send_malformed(nhttpd, raw), requests):
            for line in lines:
                assert int(line.split(b" ")[1]) in STATUSES, line
    assert nhttpd.alive()


def test_slow_requests_are_answered(nhttpd):
    """Is a request that trickles in, within the timeout, answered normally while other
    clients are served meanwhile?"""
    raw = b"GET /index.html HTTP/1.1\r\nHost: t\r\n\r\n"
    socks = [nhttpd.connect() for _ in range(20)]
    step = nhttpd.idle_timeout / 4 / len(raw)
    for i in range(len(raw)):
        for s in socks:
            s.sendall(raw[i:i + 1])
        if i % 10 == 0:
            assert nhttpd.alive()
        time.sleep(step)
    for s in socks:
        with s:
            assert s.makefile("rb").readline().startswith(b"HTTP/1.1 200")


def test_stalled_partial_request_gets_408(nhttpd):
    """Is a request head that stops arriving answered 408 and closed after the timeout?"""
    with nhttpd.connect() as s:
        s.sendall(b"GET /index.html HTTP/1.1\r\nHo")
        assert nhttpd.alive()
        data = nhttpd.wait_closed(s, nhttpd.idle_timeout + 30)
    assert data.startswith(b"HTTP/1.1 408 ")


def test_idle_connections_are_closed(nhttpd):
    """Are a silent connection and a keep-alive connection after its response both closed
    once idle past the timeout?"""
    with nhttpd.connect() as silent, nhttpd.connect() as kept:
        kept.sendall(b"GET / HTTP/1.1\r\nHost: t\r\n\r\n")
        data = nhttpd.wait_closed(kept, nhttpd.idle_timeout + 30)
        assert data.startswith(b"HTTP/1.1 200 ") and data.endswith(b"</html>\n")
        assert nhttpd.wait_closed(silent, nhttpd.idle_timeout + 30) == b""


def raise_fd_limit(n):
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and hard < n:
        pytest.skip(f"needs {n} descriptors, the hard limit is {hard}")
    if soft < n:
        resource.setrlimit(resource.RLIMIT_NOFILE, (n, hard))


# Connections opened between two passes over the ready ones (many_clients).
OPEN_BATCH = 100


def many_clients(server, n, request):
    """Opens n connections at once, sends request on each as soon as it is connected, reads
    every response and closes; returns the status lines. Requests go out between batches of
    OPEN_BATCH connects: opening all n first kept the first connections silent for as long
    as the host took to open the rest, time that counts against the server's idle timeout."""
    sel = selectors.DefaultSelector()
    socks, got = [], {}
    pending = set()

    def serve_ready(timeout):
        for key, ev in sel.select(timeout=timeout):
            s = key.fileobj
            if ev & selectors.EVENT_WRITE:
                s.send(request)
                sel.modify(s, selectors.EVENT_READ)
                continue
            chunk = s.recv(65536)
            got[s] += chunk
            if not chunk or got[s].endswith(b"</html>\n"):
                sel.unregister(s)
                pending.discard(s)
                s.close()  # done, as a browser would be: its slot is free again

    try:
        for i in range(n):
            s = socket.socket()
            s.setblocking(False)
            s.connect_ex((server.host, server.port))
            socks.append(s)
            pending.add(s)
            sel.register(s, selectors.EVENT_WRITE)
            got[s] = b""
            if i % OPEN_BATCH == OPEN_BATCH - 1:
                serve_ready(0)
        deadline = time.monotonic() + 120
        while pending and time.monotonic() < deadline:
            serve_ready(1)
        return [got[s].split(b"\r\n", 1)[0] for s in socks]
    finally:
        for s in socks:
            s.close()
        sel.close()


def test_thousands_of_concurrent_connections(nhttpd):
    """Do 4,000 clients connected at once all get the index (those beyond the listen backlog
    through SYN retransmission)?"""
    raise_fd_limit(8192)
    lines = many_clients(nhttpd, 4000, b"GET / HTTP/1.1\r\nHost: t\r\n\r\n")
    if lines.count(b"HTTP/1.1 200 OK") != 4000:  # say what the others got, and what the server saw
        stats = json.loads(nhttpd.get("/nom/stats").body)
        pytest.fail(f"first lines: {dict(Counter(lines))}; server: {stats['connections']}, "
                    f"driver: {stats.get('driver')}")
    assert nhttpd.alive()


def test_accept_backpressure(linux_server):
    """With --max-conns=50, are 600 simultaneous clients all served (the excess waits in the
    listen backlog instead of costing memory), and does the server say it paused?"""
    raise_fd_limit(4096)
    server = linux_server("--max-conns=50")
    lines = many_clients(server, 600, b"GET / HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n")
    assert lines.count(b"HTTP/1.1 200 OK") == 600
    stats = json.loads(server.get("/nom/stats").body)
    assert stats["connections"]["accept_paused"] > 0
    assert stats["connections"]["max"] == 50


def test_buffer_memory_is_capped(linux_server):
    """With room for only a few connection buffers, are clients beyond it turned away alone
    while the others keep their place, and does the server serve again once they leave
    (bounded memory per connection, and in all)?"""
    server = linux_server("--buffer-mb=1")  # 42 pairs of 8 + 16 KiB
    held = [server.connect() for _ in range(100)]
    for s in held:
        s.sendall(b"GET / HTTP/1.1\r\nHost: t\r\nX-Partial: ")  # each pins an input buffer
    turned_away = 0
    for s in held:
        s.settimeout(0.5)
        try:
            turned_away += s.recv(1) == b""
        except TimeoutError:
            pass  # still holding its buffer
        except ConnectionResetError:
            turned_away += 1
    for s in held:
        s.close()
    assert 0 < turned_away < 100
    time.sleep(0.2)
    stats = json.loads(server.get("/nom/stats").body)
    assert stats["buffers"]["peak"] <= 2 * ((1 << 20) // (8192 + 16384))
    assert stats["buffers"]["refused"] > 0
    assert server.alive()


def test_trickled_endless_head_is_cut_off(nhttpd):
    """Is a client that keeps sending a never-ending head, a byte at a time, cut off with a
    408 at the timeout (reads do not extend it: slowloris)?"""
    with nhttpd.connect() as s:
        s.sendall(b"GET / HTTP/1.1\r\nHost: t\r\nX-Slow: ")
        s.settimeout(0.2)
        end = time.monotonic() + nhttpd.idle_timeout + 30
        data = b""
        while time.monotonic() < end:
            try:
                s.sendall(b"a")
                chunk = s.recv(4096)
            except socket.timeout:
                continue
            except (BrokenPipeError, ConnectionResetError):
                break
            if not chunk:
                break
            data += chunk
    assert data.startswith(b"HTTP/1.1 408 "), data
    assert nhttpd.alive()
