"""csum_client: stores random values of sizes around the segment boundaries in a memcached and
reads each back, byte for byte (run inside the test's network namespace by
test_csum_offload_tap.py). Prints one line per value; exits 1 at the first difference.

    python3 csum_client.py HOST [--port 11211]
"""
import argparse
import os
import socket
import sys

# One byte, a segment's worth (MSS 1460) and one over, several segments, a window and more.
SIZES = (1, 1000, 1460, 1461, 2920, 3001, 65536, 300000)


def read_until(sock, buf, done):
    """Receives onto buf until done(buf); returns buf."""
    while not done(buf):
        chunk = sock.recv(65536)
        if not chunk:
            raise EOFError("connection closed")
        buf += chunk
    return buf


def line_in(buf):
    return b"\r\n" in buf


def round_trip(sock, key, value):
    """set then get; returns the value memcached gave back."""
    sock.sendall(b"set %s 0 0 %d\r\n" % (key, len(value)) + value + b"\r\n")
    buf = read_until(sock, b"", line_in)
    line, _, buf = buf.partition(b"\r\n")
    if line != b"STORED":
        raise ValueError(f"set {key!r}: {line!r}")
    sock.sendall(b"get %s\r\n" % key)
    buf = read_until(sock, buf, line_in)
    head, _, buf = buf.partition(b"\r\n")
    words = head.split()
    if len(words) != 4 or words[0] != b"VALUE" or int(words[3]) != len(value):
        raise ValueError(f"get {key!r}: {head!r}")
    whole = len(value) + len(b"\r\nEND\r\n")
    buf = read_until(sock, buf, lambda b: len(b) >= whole)
    if buf[len(value):] != b"\r\nEND\r\n":
        raise ValueError(f"get {key!r}: bad end {buf[len(value):]!r}")
    return buf[:len(value)]


def main(argv=None):
    ap = argparse.ArgumentParser(prog="csum_client.py", description=__doc__.splitlines()[0])
    ap.add_argument("host", help="memcached's IPv4 address")
    ap.add_argument("--port", type=int, default=11211)
    args = ap.parse_args(argv)
    with socket.create_connection((args.host, args.port), timeout=60) as sock:
        for i, size in enumerate(SIZES):
            value = os.urandom(size)
            got = round_trip(sock, b"k%d" % i, value)
            if got != value:
                first = next(j for j in range(size) if got[j] != value[j])
                print(f"DIFFER {size} bytes: first difference at byte {first}")
                return 1
            print(f"OK {size} bytes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
