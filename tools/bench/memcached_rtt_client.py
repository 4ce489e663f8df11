#!/usr/bin/env python3
"""memcached's single-request round trip, the client side: one TCP connection (TCP_NODELAY),
one stored key with a 64-byte value (rawecho's payload size), then (after a few untimed) N `get`s one at a time,
each timed from its send to its whole answer, the way apps/rawecho/echo_client.py times an
echo. Run where the traffic must originate (inside the lab's namespace). Prints JSON.

    memcached_rtt_client.py HOST PORT N     {"rtts_us": [...], "value_bytes": 64}
"""
import argparse
import json
import socket
import time

KEY = b"rtt"
VALUE = bytes(range(64))
ANSWER = b"VALUE %s 0 %d\r\n%s\r\nEND\r\n" % (KEY, len(VALUE), VALUE)


def read_until(sock, end):
    data = b""
    while not data.endswith(end):
        chunk = sock.recv(4096)
        if not chunk:
            raise ConnectionError(f"memcached closed the connection after {data!r}")
        data += chunk
    return data


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("host")
    p.add_argument("port", type=int)
    p.add_argument("n", type=int)
    p.add_argument("--warmup", type=int, default=20, help="untimed gets first (default 20)")
    a = p.parse_args(argv)
    try:
        s = socket.create_connection((a.host, a.port), timeout=10)
    except OSError as e:
        raise SystemExit(f"memcached_rtt_client: cannot connect to {a.host}:{a.port}: {e}")
    with s:
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        s.sendall(b"set %s 0 0 %d\r\n%s\r\n" % (KEY, len(VALUE), VALUE))
        if read_until(s, b"\r\n") != b"STORED\r\n":
            raise SystemExit("memcached did not store the key")
        rtts = []
        for i in range(a.warmup + a.n):
            t = time.perf_counter_ns()
            s.sendall(b"get %s\r\n" % KEY)
            answer = read_until(s, b"END\r\n")
            if i >= a.warmup:
                rtts.append((time.perf_counter_ns() - t) / 1000)
            if answer != ANSWER:
                raise SystemExit(f"unexpected answer {answer!r}")
    print(json.dumps({"rtts_us": rtts, "value_bytes": len(VALUE)}))


if __name__ == "__main__":
    main()
