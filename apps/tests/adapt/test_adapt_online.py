"""memcached learning W while it serves (--adapt-mode=online: libnom/src/profit/online.c over
nom/learn.h), in QEMU (TCG here): a price change moves W in the running application.

One client, one request at a time (the "single" class), under the refund utility, over two W
values (--adapt-grid=0,1000): 0 and 1 ms. Why not the experiment's 0-40 us: under TCG the
guest's round trip is ~300 us of host time, so 40 us moves the request rate by ~10 %, about a
window's noise on the AMD EPYC host (0.5 s windows at W = 0, 20 and 40 all served 2.2-4.9K
requests/s), and which W of 0-40 wins there is noise, not price; 1 ms cuts the rate ~4x.
pricepub publishes 1 $/Gbit at boot, where the fastest W earns most, then 100000 $/Gbit once the
board has shown W = 0 for 4 s (the client has been served at W = 0 meanwhile, so the learner
has measured it), where the bandwidth bill dominates and the slowest W loses least, then
1 $/Gbit again once the board has shown W = 1000 for 3 s (the learner chose it at that price,
not only tried it). The learner must act on the new price at the first window that sees it:
its next decision is W = 0, learned (its estimates re-scored at the new price), not an
exploration. (It can learn W = 0 only if it measured it: with 100000 $/Gbit from the boot on,
W = 0 was measured only if an early exploration landed in a window the load meter trusted,
and when none had, the move back to 0 was rightly an exploration: the CI failure of
2026-12-02 on a loaded host.) The host tests (libnom/tests/host/
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
               (PRICEPUB, "nom.price-publisher pricepub 1 100000@0:4 1@1000:3")]
    stop, counts = threading.Event(), [0]
    with Guest(modules, tmp_path, tcp=[11211]) as guest:
        vm = guest.vm
        vm.wait_for(r"adapt: W=\d+ us \(start online: load single", 120)
        client = threading.Thread(target=one_client, args=(guest.host_port(11211), stop, counts))
        client.start()
        try:
            # The log holds the boot's "published 1" too: each wait looks past the rise.
            rise = r"^pricepub: published 100000\r?$[\s\S]*"
            vm.wait_for(rise, 180)  # W = 0 held for 4 s
            vm.wait_for(rise + r"^pricepub: published 1\r?$", 180)  # then W = 1000 for 3 s
            published = time.monotonic()
            moved = vm.wait_for(rise + r"^pricepub: published 1\r?$[\s\S]*?adapt: W=(\d+) us "
                                r"\((\w+): load single, \d+ active connections, "
                                r"price 1000000 u\$/Gbit", 120)
            print(f"\nmemcached online: W={moved.group(1)} us ({moved.group(2)}) "
                  f"{time.monotonic() - published:.1f} s after the price change (TCG, wall)")
        finally:
            stop.set()
            client.join(30)
        log = vm.log()
    rose = re.search(r"pricepub: published 100000\r?\n", log).end()
    after = log[rose + re.search(r"pricepub: published 1\r?\n", log[rose:]).end():]
    first = re.search(r"adapt: W=(\d+) us \((\w+): .*price 1000000 u", after)
    assert first and first.groups() == ("0", "learn"), after[:3000]
    assert re.search(r"adapt: W=1000 us \((?:learn|explore): .*price 100000000000 u", log), \
        log[-3000:]
    assert counts[0] > 0
