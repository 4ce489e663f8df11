#!/usr/bin/env python3
"""The load side of rawecho's benchmark and tests: one UDP client run where the traffic must
originate (on the host for QEMU user networking, inside the namespace for tap). Prints JSON.

    echo_client.py HOST PORT single N        {"rtts_us": [...]}      one request at a time
    echo_client.py HOST PORT many N WINDOW   {"done", "seconds", "lost"}  WINDOW in flight
    echo_client.py HOST PORT ask TEXT        {"reply": "..."}        retried until answered
"""
import argparse
import json
import socket
import time

PAYLOAD = bytes(64)


def ask(sock, addr, payload, tries=5):
    """Sends payload until an answer comes (the first may wait for ARP); None if none."""
    for _ in range(tries):
        sock.sendto(payload, addr)
        try:
            return sock.recvfrom(4096)[0]
        except socket.timeout:
            continue
    return None


def single(sock, addr, n):
    rtts = []
    for _ in range(n):
        t = time.perf_counter_ns()
        if ask(sock, addr, PAYLOAD) == PAYLOAD:
            rtts.append((time.perf_counter_ns() - t) / 1000)
    return {"rtts_us": rtts}


def many(sock, addr, n, window):
    """Keeps `window` requests in flight until n came back or 1 s passes without an answer."""
    sock.settimeout(1)
    sent = got = 0
    t = time.perf_counter()
    for _ in range(min(window, n)):
        sock.sendto(PAYLOAD, addr)
        sent += 1
    while got < n:
        try:
            sock.recvfrom(4096)
        except socket.timeout:
            break
        got += 1
        if sent < n:
            sock.sendto(PAYLOAD, addr)
            sent += 1
    return {"done": got, "seconds": time.perf_counter() - t, "lost": sent - got}


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("host")
    p.add_argument("port", type=int)
    modes = p.add_subparsers(dest="mode", required=True)
    one = modes.add_parser("single", help="N requests, one at a time: each round trip")
    one.add_argument("n", type=int)
    window = modes.add_parser("many", help="N requests, WINDOW in flight: the rate")
    window.add_argument("n", type=int)
    window.add_argument("window", type=int)
    ask_one = modes.add_parser("ask", help="TEXT, retried until answered: the reply")
    ask_one.add_argument("text")
    return p.parse_args(argv)


def main(argv=None):
    a = parse_args(argv)
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        sock.settimeout(5)
        addr = (a.host, a.port)
        if a.mode == "single":
            out = single(sock, addr, a.n)
        elif a.mode == "many":
            out = many(sock, addr, a.n, a.window)
        else:
            reply = ask(sock, addr, a.text.encode())
            out = {"reply": reply.decode(errors="replace") if reply is not None else None}
    print(json.dumps(out))


if __name__ == "__main__":
    main()
