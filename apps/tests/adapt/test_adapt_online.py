"""memcached learning W while it serves (--adapt-mode=online: libnom/src/profit/online.c over
nom/learn.h), in QEMU (TCG here): a price change moves W in the running application.

One client, one request at a time (the "single" class), under the refund utility. pricepub
publishes 100000 $/Gbit at boot, where the bandwidth bill dominates and the slowest W loses
least, and 1 $/Gbit as soon as the board shows W = 40 (the last W of the learner's first sweep,
so every W has been measured once). At 1 $/Gbit the fastest W earns most; under TCG that is
the lowest (apps/memcached/profile: single, 5,842 requests/s at W = 0 and 1,683 at W = 40). The
learner starts from memcached's profile (its W grid; each point counts for half a window) and
from then on learns from its windows' counters. The host test (libnom/tests/host/
test_online.c) checks both directions and what W stays at while the price does not change,
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
                           "--utility=refund"),
               (PRICEPUB, "nom.price-publisher pricepub 100000 1@40")]
    stop, counts = threading.Event(), [0]
    with Guest(modules, tmp_path, tcp=[11211]) as guest:
        vm = guest.vm
        vm.wait_for(r"adapt: W=\d+ us \(start online: load single", 120)
        client = threading.Thread(target=one_client, args=(guest.host_port(11211), stop, counts))
        client.start()
        try:
            vm.wait_for(r"^pricepub: published 1$", 180)  # the sweep reached W = 40
            published = time.monotonic()
            # The learner's best W at the new price; its first guesses may be off (a window
            # or two of each W so far), so what is waited for is a fast W being chosen.
            moved = vm.wait_for(r"adapt: W=(0|5|10) us \(learn: load single, \d+ active "
                                r"connections, price 1000000 u\$/Gbit, online refund", 120)
            print(f"\nmemcached online: W={moved.group(1)} us learned "
                  f"{time.monotonic() - published:.1f} s after the price change (TCG, wall)")
        finally:
            stop.set()
            client.join(30)
        log = vm.log()
    before = re.findall(r"adapt: W=(\d+) us \((?:learn|explore): .*price 100000000000 u", log)
    assert "40" in before, log[-3000:]  # the sweep ran at the first price
    assert counts[0] > 0
