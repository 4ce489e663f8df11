#!/usr/bin/env python3
"""Black-box fuzzing of nom's memcached over real TCP (issue 14): boots the guest binary on nom
(memcached.elf, the options it runs with in the experiment) with its NIC on a tap inside a
network namespace (tools/netlab), and throws mutated and garbage text- and binary-protocol
requests at it from inside the namespace, in batches of connections. After each batch a fresh
connection must still store and read back a value (set, then get: the same bytes) and the
console must show no fault, panic, kill or exit. The libFuzzer harness memcached_text
(apps/memcached/fuzz) covers the parser with feedback on a host build; this run is the guest's
whole path: lwIP, nom's sockets and poll, the driver, the kernel under memcached.

    tools/fuzz/memcached_wire.py --batches 200 --seed 1     # about 10 minutes under TCG

Prints one line per 10 batches and a summary; exit status 0 only if every check passed.
"""
import argparse
import json
import random
import re
import socket
import sys
import time
from pathlib import Path

from fuzz import guestlab
from fuzz.guestlab import BUILD, KERNEL, TROUBLE

ELF = BUILD / "apps" / "memcached" / "memcached.elf"
PORT = 11211

# Valid requests the mutations start from (memcached's protocol.txt, text and meta commands).
COMMANDS = [
    b"set k 0 0 5\r\nhello\r\n", b"add k2 1 100 3 noreply\r\nabc\r\n", b"get k k2 nokey\r\n",
    b"gets k\r\n", b"cas k 0 0 1 1\r\nx\r\n", b"append k 0 0 2\r\nzz\r\n",
    b"prepend k 0 0 2\r\naa\r\n", b"replace k 5 0 1\r\nq\r\n", b"delete k\r\n", b"incr n 5\r\n",
    b"decr n 18446744073709551615\r\n", b"touch k 10\r\n", b"gat 100 k\r\n", b"gats 0 k k2\r\n",
    b"mg k v f t s c k\r\n", b"ms k 3 T100 F5 I\r\nabc\r\n", b"md k q\r\n", b"ma n N100 J13 D2\r\n",
    b"mn\r\n", b"me k\r\n", b"stats\r\n", b"stats items\r\n", b"stats slabs\r\n",
    b"stats settings\r\n", b"stats conns\r\n", b"stats detail dump\r\n", b"version\r\n",
    b"verbosity 1\r\n", b"cache_memlimit 64\r\n", b"lru_crawler metadump all\r\n",
    b"watch fetchers\r\n", b"quit\r\n",
    # binary protocol: a GET of "k" and a SET of "k" (memcached runs -B auto)
    bytes.fromhex("80000001000000000000000100000000000000000000000000") + b"k",
    bytes.fromhex("8001000108000000000000000d00000000000000000000000000000000000000") + b"kvalue",
]
TOKENS = [b"0", b"-1", b"4294967295", b"18446744073709551616", b"999999999", b" ", b"\r\n",
          b"\n", b"\r", b"\0", b"noreply", b"k" * 251, b"%s%n", b"\xff\xfe", b"b", b"base64"]


def mutate(rng, data):
    data = bytearray(data)
    for _ in range(rng.randint(1, 6)):
        op = rng.randrange(7)
        pos = rng.randint(0, len(data))
        if op == 0 and data:
            data[min(pos, len(data) - 1)] ^= 1 << rng.randrange(8)
        elif op == 1:
            data[pos:pos] = rng.choice(TOKENS)
        elif op == 2:
            del data[pos:pos + rng.randint(1, 16)]
        elif op == 3:
            data[pos:pos] = rng.choice(COMMANDS)
        elif op == 4:
            data[pos:pos] = bytes(rng.randrange(256) for _ in range(rng.randint(1, 64)))
        elif op == 5:  # a number token made huge or negative
            data = bytearray(re.sub(rb"\d+", lambda m: rng.choice(TOKENS[:5]), bytes(data), count=1))
        else:
            data = data[:pos]
    return bytes(data)


def request(rng):
    kind = rng.randrange(10)
    if kind == 0:  # pure garbage
        return bytes(rng.randrange(256) for _ in range(rng.randint(1, 2048)))
    if kind == 1:  # a long line without an end
        return b"get " + b"x" * rng.randint(2048, 20000)
    return b"".join(mutate(rng, rng.choice(COMMANDS)) for _ in range(rng.randint(1, 8)))


def drain(sock, idle=0.3, limit=1 << 20):
    """Reads until the server is quiet for idle seconds, closes, or limit bytes came."""
    got = 0
    sock.settimeout(idle)
    try:
        while got < limit:
            chunk = sock.recv(65536)
            if not chunk:
                break
            got += len(chunk)
    except OSError:
        pass
    return got


def one_connection(host, rng, r):
    """A few fuzzed requests on one connection, each followed by reading what comes back."""
    with socket.create_connection((host, PORT), timeout=10) as s:
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        for _ in range(rng.randint(1, 4)):
            data = request(rng)
            try:
                s.sendall(data)
            except OSError:  # the server closed on an earlier request (e.g. a line too long)
                break
            r["bytes"] += len(data)
            drain(s)
        if rng.randrange(2):  # half of them end with a reset: no TIME_WAIT, an abrupt peer
            s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\1\0\0\0\0\0\0\0")


def still_serves(host, batch, rng):
    """set then get of a fresh key on a fresh connection: the same bytes come back."""
    key = f"wirecheck:{batch}".encode()
    value = bytes(rng.randrange(33, 127) for _ in range(rng.randint(1, 3000)))
    with socket.create_connection((host, PORT), timeout=30) as s:
        s.settimeout(30)
        s.sendall(b"set %s 7 0 %d\r\n%s\r\nget %s\r\n" % (key, len(value), value, key))
        want = b"STORED\r\nVALUE %s 7 %d\r\n%s\r\nEND\r\n" % (key, len(value), value)
        got = b""
        while len(got) < len(want):
            chunk = s.recv(65536)
            if not chunk:
                break
            got += chunk
    return got == want


def client(a):
    """The fuzzing loop, run inside the namespace; prints a JSON summary last."""
    rng = random.Random(a.seed)
    serial = Path(a.serial)
    r = {"seed": a.seed, "batches": 0, "connections": 0, "bytes": 0, "refused": 0,
         "failed_checks": [], "trouble": None}
    t0 = time.monotonic()
    for batch in range(a.batches):
        for _ in range(a.connections):
            try:
                one_connection(a.host, rng, r)
            except OSError:
                r["refused"] += 1  # a connect the guest refused or timed out: counted, not fatal
            r["connections"] += 1
        r["batches"] += 1
        if not still_serves(a.host, batch, rng):
            r["failed_checks"].append(batch)
        m = TROUBLE.search(serial.read_text(errors="replace"))
        if m:
            r["trouble"] = m.group(0)
        if batch % 10 == 9:
            print(f"batch {batch + 1}: {r['connections']} connections, {r['refused']} refused, "
                  f"{len(r['failed_checks'])} failed checks, {time.monotonic() - t0:.0f} s",
                  flush=True)
        if r["failed_checks"] or r["trouble"]:
            break
    r["seconds"] = round(time.monotonic() - t0)
    print(json.dumps(r), flush=True)
    return 0


class Run(guestlab.GuestRun):
    @property
    def ok(self):
        s = self.summary
        return bool(s) and s["batches"] > 0 and not s["failed_checks"] and not s["trouble"]


def run(batches, connections, seed, workdir):
    """Boots memcached on nom in a fresh NetLab and runs the client inside it."""
    import netlab
    from nomvm import Nic
    args = f"memcached --ip={netlab.GUEST_IP}/{netlab.PREFIX_LEN} -p {PORT} -U 0 -t 1 -m 64"
    with netlab.NetLab() as lab:
        vm = guestlab.boot(lab, [(ELF, args)], [Nic(mac="52:54:00:12:34:56", backend="tap", tap=lab.tap)],
                           workdir, "memcached-wire")
        output, summary = guestlab.run_inside(
            lab, __file__, ["--client", lab.guest_ip, "--serial", vm.serial_path, "--batches", batches,
                            "--connections", connections, "--seed", seed],
            timeout=batches * connections * 60 + 300)
        vm.stop()
        return Run(summary=summary, output=output, log=vm.log())


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--batches", type=int, default=200)
    ap.add_argument("--connections", type=int, default=20, help="per batch")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--workdir", default=str(BUILD / "fuzz" / "memcached_wire"))
    ap.add_argument("--client", help=argparse.SUPPRESS)  # the guest's address: run the loop
    ap.add_argument("--serial", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.client:
        a.host = a.client
        return client(a)
    r = run(a.batches, a.connections, a.seed, a.workdir)
    print(r.output, end="")
    if not r.ok:
        print("console tail:\n" + "\n".join(r.log.splitlines()[-30:]))
    return 0 if r.ok else 1


if __name__ == "__main__":
    sys.exit(main())
