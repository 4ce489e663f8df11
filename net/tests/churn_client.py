#!/usr/bin/env python3
"""Connection churn against one server: the load that stalled nom (issue 10).

Each round opens N connections at once, sends one request on each and checks the whole answer,
then ends them four ways, a quarter each: graceful close after the answer; reset (SO_LINGER 0)
after the answer; reset with a request still in flight; close with an answer left unread
(which the client's kernel turns into a reset). After every round a new connection must be
answered within --timeout seconds, and with --udp-control a datagram to netecho's control port
too (the case make test failed on). Prints one JSON line per round and a summary line; exits 1
at the first round that fails, 2 on a bad flag.

    churn_client.py --host 10.77.0.2 --port 80 --proto http --rounds 50 --conns 48
"""
import argparse
import errno
import json
import selectors
import socket
import struct
import sys
import threading
import time

REQUESTS = {
    "http": b"GET / HTTP/1.1\r\nHost: nom\r\n\r\n",
    "memcached": b"get churn\r\n",
    "echo": b"churn\n",
}
LINGER_RESET = struct.pack("ii", 1, 0)


def answer_complete(proto, data):
    """Whether data holds one whole answer to REQUESTS[proto]."""
    if proto == "memcached":
        return data.endswith(b"END\r\n")
    if proto == "echo":
        return len(data) >= len(REQUESTS["echo"])
    head, sep, body = data.partition(b"\r\n\r\n")
    if not sep:
        return False
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            return len(body) >= int(value)
    return False


def answer_ok(proto, data):
    if proto == "http":
        return data.startswith(b"HTTP/1.1 200 ")
    return data == (b"END\r\n" if proto == "memcached" else REQUESTS["echo"])


def open_all(host, port, n, deadline):
    """n non-blocking connects at once; returns the connected sockets or raises."""
    socks = []
    sel = selectors.DefaultSelector()
    for _ in range(n):
        s = socket.socket()
        s.setblocking(False)
        s.connect_ex((host, port))
        socks.append(s)
        sel.register(s, selectors.EVENT_WRITE)
    pending = len(socks)
    while pending:
        left = deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError(f"{pending} of {n} connections not established")
        for key, _ in sel.select(left):
            err = key.fileobj.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
            if err:
                raise ConnectionError(f"connect: {os_error(err)}")
            sel.unregister(key.fileobj)
            pending -= 1
    sel.close()
    return socks


def os_error(code):
    return f"{code} ({errno.errorcode.get(code, '?')})"


def exchange_all(socks, proto, deadline):
    """Sends one request on every socket and reads every whole answer."""
    got = {s: b"" for s in socks}
    sel = selectors.DefaultSelector()
    for s in socks:
        s.sendall(REQUESTS[proto])
        sel.register(s, selectors.EVENT_READ)
    while got and sel.get_map():
        left = deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError(f"{len(sel.get_map())} of {len(socks)} answers missing")
        for key, _ in sel.select(left):
            s = key.fileobj
            chunk = s.recv(65536)
            if not chunk:
                raise ConnectionError("connection closed before its answer")
            got[s] += chunk
            if answer_complete(proto, got[s]):
                if not answer_ok(proto, got[s]):
                    raise ValueError(f"bad answer {got[s][:60]!r}")
                sel.unregister(s)
    sel.close()


def end_all(socks, proto):
    """Ends the connections four ways (module docstring)."""
    for i, s in enumerate(socks):
        way = i % 4
        if way == 1 or way == 2:
            if way == 2:
                s.setblocking(True)
                s.sendall(REQUESTS[proto])
            s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, LINGER_RESET)
        elif way == 3:
            s.setblocking(True)
            s.sendall(REQUESTS[proto])  # its answer will arrive after the close: unread
        s.close()


def one_more(host, port, proto, timeout):
    with socket.create_connection((host, port), timeout=timeout) as s:
        s.sendall(REQUESTS[proto])
        data = b""
        while not answer_complete(proto, data):
            chunk = s.recv(65536)
            if not chunk:
                raise ConnectionError("closed before its answer")
            data += chunk
        if not answer_ok(proto, data):
            raise ValueError(f"bad answer {data[:60]!r}")


def ask_control(host, port, timeout):
    """One "stats" datagram to netecho's control port; returns how many times it had to be
    sent (a datagram lost to a full queue is resent once a second) or raises."""
    deadline = time.monotonic() + timeout
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as u:
        for sends in range(1, int(timeout) + 2):
            u.sendto(b"stats", (host, port))
            u.settimeout(max(0.01, min(1.0, deadline - time.monotonic())))
            try:
                json.loads(u.recv(65536))
                return sends
            except socket.timeout:
                if time.monotonic() >= deadline:
                    break
    raise TimeoutError(f"control datagram unanswered for {timeout:g} s")


def run_round(args):
    """One round (module docstring); returns what it measured."""
    deadline = time.monotonic() + args.timeout
    socks = open_all(args.host, args.port, args.conns, deadline)
    try:
        exchange_all(socks, args.proto, deadline)
    finally:
        end_all(socks, args.proto)
    one_more(args.host, args.port, args.proto, args.timeout)
    if args.udp_control:
        return {"control_sends": ask_control(args.host, args.udp_control, args.timeout)}
    return {}


def burst_outcomes(args):
    """--burst: opens --conns connections at once, sends one request on each and sorts every
    connection by how it ended: answered, refused (a reset or refusal: the client learns at
    once), failed otherwise (a connect timed out), closed without an answer, or still silent
    at --timeout (a hang)."""
    deadline = time.monotonic() + args.timeout
    sel = selectors.DefaultSelector()
    got, outcome = {}, {}
    for _ in range(args.conns):
        s = socket.socket()
        s.setblocking(False)
        s.connect_ex((args.host, args.port))
        got[s] = None  # None: request not sent yet (still connecting)
        sel.register(s, selectors.EVENT_WRITE)
    while sel.get_map() and time.monotonic() < deadline:
        for key, _ in sel.select(max(0.0, deadline - time.monotonic())):
            s = key.fileobj
            try:
                if got[s] is None:
                    err = s.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
                    if err:
                        raise OSError(err, os_error(err))
                    s.send(REQUESTS[args.proto])
                    got[s] = b""
                    sel.modify(s, selectors.EVENT_READ)
                    continue
                chunk = s.recv(65536)
            except OSError as e:
                refused = e.errno in (errno.ECONNREFUSED, errno.ECONNRESET)
                outcome[s] = "refused" if refused else "failed"
            else:
                if chunk:
                    got[s] += chunk
                    if not answer_complete(args.proto, got[s]):
                        continue
                    outcome[s] = "answered" if answer_ok(args.proto, got[s]) else "bad"
                else:
                    outcome[s] = "closed"
            sel.unregister(s)
    counts = {k: 0 for k in ("answered", "refused", "failed", "closed", "bad", "silent")}
    for s in got:
        counts[outcome.get(s, "silent")] += 1
        s.close()
    sel.close()
    return counts


HOARD_VALUE = 900_000  # memcached: a value big enough that a few gets fill any window


def hoard_payload(proto):
    """What a hoarder sends: requests whose answers it never reads, in segments too big to be
    copied out of the receive pool (net/rx_budget.h), so that the server, once its answers
    block, leaves the rest unread."""
    if proto == "memcached":
        value = b"v" * 1000
        return b"get hoard\r\n" * 4 + b"".join(
            b"set h%d 0 0 1000\r\n%s\r\n" % (i, value) for i in range(150))
    if proto == "http":
        return (b"GET / HTTP/1.1\r\nHost: nom\r\nX-Pad: " + b"p" * 1300 + b"\r\n\r\n") * 150
    return REQUESTS[proto] * 20000


def hoard(args):
    """--hoard N: N clients send requests and never read the answers; while they hold the
    server's receive memory, and again after they reset, a new connection must be answered.
    Returns the phases' verdicts."""
    if args.proto == "memcached":
        with socket.create_connection((args.host, args.port), timeout=args.timeout) as s:
            s.sendall(b"set hoard 0 0 %d\r\n" % HOARD_VALUE + b"h" * HOARD_VALUE + b"\r\n")
            if s.recv(100) != b"STORED\r\n":
                raise ValueError("the big value was not stored")
    payload = hoard_payload(args.proto)
    hoarders = []

    def push(s):
        try:
            s.sendall(payload * 3)  # ends when the server stops taking it (timeout)
        except OSError:
            pass

    threads = []
    for _ in range(args.hoard):
        s = socket.create_connection((args.host, args.port), timeout=args.timeout)
        s.settimeout(8)
        hoarders.append(s)
        threads.append(threading.Thread(target=push, args=(s,)))
        threads[-1].start()
    for t in threads:
        t.join()
    one_more(args.host, args.port, args.proto, args.timeout)
    for s in hoarders:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, LINGER_RESET)
        s.close()
    one_more(args.host, args.port, args.proto, args.timeout)
    return {"hoarders": args.hoard, "answered_while_held": True, "answered_after": True}


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--host", required=True)
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--proto", choices=sorted(REQUESTS), required=True)
    p.add_argument("--rounds", type=int, default=10)
    p.add_argument("--conns", type=int, default=48, help="connections opened at once per round")
    p.add_argument("--timeout", type=float, default=60.0,
                   help="seconds a round (and the connection after it) may take")
    p.add_argument("--burst", action="store_true",
                   help="one burst of --conns; print how each connection ended (no rounds)")
    p.add_argument("--hoard", type=int, default=0, metavar="N",
                   help="N clients that never read hold the server's receive memory; then a new "
                        "connection must be answered (no rounds)")
    p.add_argument("--udp-control", type=int, default=0, metavar="PORT",
                   help="after each round, netecho's control datagram must be answered")
    args = p.parse_args(argv)
    if args.rounds < 1 or args.conns < 1 or args.timeout <= 0:
        p.error("--rounds, --conns and --timeout must be positive")
    return args


def main(argv=None):
    args = parse_args(argv)
    if args.burst:
        print(json.dumps(burst_outcomes(args)), flush=True)
        return 0
    if args.hoard:
        try:
            print(json.dumps(hoard(args)), flush=True)
        except (OSError, ValueError) as e:
            print(json.dumps({"hoarders": args.hoard, "error": f"{type(e).__name__}: {e}"}),
                  flush=True)
            return 1
        return 0
    passed = 0
    for r in range(args.rounds):
        t0 = time.monotonic()
        try:
            seen = run_round(args)
        except (OSError, ValueError) as e:  # TimeoutError and ConnectionError are OSErrors
            print(json.dumps({"round": r, "ok": False, "error": f"{type(e).__name__}: {e}",
                              "seconds": round(time.monotonic() - t0, 3)}), flush=True)
            break
        passed += 1
        print(json.dumps({"round": r, "ok": True, "seconds": round(time.monotonic() - t0, 3),
                          **seen}), flush=True)
    print(json.dumps({"rounds": args.rounds, "passed": passed}), flush=True)
    return 0 if passed == args.rounds else 1


if __name__ == "__main__":
    sys.exit(main())
