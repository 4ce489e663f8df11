"""memcached learning W while it serves (--adapt-mode=online: libnom/src/profit/online.c over
nom/learn.h), in QEMU (TCG here): a price change moves W in the running application.

One client, one request at a time (the "single" class), under the refund utility, over two W
values (--adapt-grid=0,1000): 0 and 1 ms. Why not the experiment's 0-40 us: under TCG the
guest's round trip is ~300 us of host time, so 40 us moves the request rate by ~10 %, about a
window's noise on the AMD EPYC host (0.5 s windows at W = 0, 20 and 40 all served 2.2-4.9K
requests/s), and which W of 0-40 wins there is noise, not price; 1 ms cuts the rate ~4x.
pricepub publishes 100000 $/Gbit at boot, where the bandwidth bill dominates and the slowest W
loses least, and 1 $/Gbit once the board has shown W = 1000 for 3 s (the learner chose it at
that price, not only tried it); at 1 $/Gbit the fastest W earns most. The learner must act on
the new price at the first window that sees it: its next decision is W = 0, learned (its
estimates re-scored at the new price), not an exploration. The host tests (libnom/tests/host/
test_online.c) check both directions and what W stays at while the price does not change,
on a synthetic server."""
import pathlib
import re
import socket
import threading
import time

import pytest

from nomvm import BUILD, Guest, hostcases

pytestmark = pytest.mark.boot

HERE = pathlib.Path(__file__).resolve().parent
MEMCACHED = pathlib.Path(BUILD) / "apps" / "memcached" / "memcached.elf"
PRICEPUB = pathlib.Path(BUILD) / "apps" / "tests" / "adapt" / "pricepub.elf"


def one_client(port, stop, counts):
    """A memcached user doing set/get, one request at a time, until stop is set."""
    deadline = time.monotonic() + 120
    while not stop.is_set():
        try:
            s = socket.create_connection(("127.0.0.1", port), timeout=10)
            break
        except OSError:
            if time.monotonic() > deadline:
                return
            time.sleep(0.5)
    with s:
        buf = b""
        while not stop.is_set():
            s.sendall(b"set k 0 0 5\r\nhello\r\nget k\r\n")
            while b"END\r\n" not in buf:
                chunk = s.recv(65536)
                if not chunk:
                    return
                buf += chunk
            buf = buf.split(b"END\r\n", 1)[1]
            counts[0] += 2


def test_a_price_change_moves_w_in_a_running_memcached(tmp_path):
    if not MEMCACHED.exists():
        pytest.skip(f"not built: {MEMCACHED}")
    hostcases.make(str(HERE))
    modules = [(MEMCACHED, "memcached -t 1 -m 16 -p 11211 -U 0 --adapt-mode=online "
                           "--utility=refund --adapt-grid=0,1000"),
               (PRICEPUB, "nom.price-publisher pricepub 100000 1@1000:3")]
    stop, counts = threading.Event(), [0]
    with Guest(modules, tmp_path, tcp=[11211]) as guest:
        vm = guest.vm
        vm.wait_for(r"adapt: W=\d+ us \(start online: load single", 120)
        client = threading.Thread(target=one_client, args=(guest.host_port(11211), stop, counts))
        client.start()
        try:
            vm.wait_for(r"^pricepub: published 1$", 180)  # W = 1000 held for 3 s
            published = time.monotonic()
            moved = vm.wait_for(r"adapt: W=(\d+) us \((\w+): load single, \d+ active "
                                r"connections, price 1000000 u\$/Gbit", 120)
            print(f"\nmemcached online: W={moved.group(1)} us ({moved.group(2)}) "
                  f"{time.monotonic() - published:.1f} s after the price change (TCG, wall)")
        finally:
            stop.set()
            client.join(30)
        log = vm.log()
    after = log[re.search(r"pricepub: published 1\r?\n", log).end():]
    first = re.search(r"adapt: W=(\d+) us \((\w+): .*price 1000000 u", after)
    assert first and first.groups() == ("0", "learn"), after[:3000]
    assert re.search(r"adapt: W=1000 us \((?:learn|explore): .*price 100000000000 u", log), \
        log[-3000:]
    assert counts[0] > 0
