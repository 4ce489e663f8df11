#!/usr/bin/env python3
"""The load side of rawecho's benchmark and tests: one UDP client run where the traffic must
originate (on the host for QEMU user networking, inside the namespace for tap). Prints JSON.

    echo_client.py HOST PORT single N        {"rtts_us": [...]}      one request at a time
    echo_client.py HOST PORT many N WINDOW   {"done", "seconds", "lost"}  WINDOW in flight
    echo_client.py HOST PORT ask TEXT        {"reply": "..."}        retried until answered
"""
import json
import socket
import sys
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


def main(argv):
    host, port, mode = argv[1], int(argv[2]), argv[3]
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        sock.settimeout(5)
        addr = (host, port)
        if mode == "single":
            out = single(sock, addr, int(argv[4]))
        elif mode == "many":
            out = many(sock, addr, int(argv[4]), int(argv[5]))
        else:
            reply = ask(sock, addr, argv[4].encode())
            out = {"reply": reply.decode(errors="replace") if reply is not None else None}
    print(json.dumps(out))


if __name__ == "__main__":
    main(sys.argv)
