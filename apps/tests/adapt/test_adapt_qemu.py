"""libnom's controller on nom in QEMU (TCG here): adaptapp (adaptapp.c, an echo server running
the controller over the hand-made test profile) and pricepub (pricepub.c, a price
publisher with the `nom.price-publisher` flag) in one image. Does the application change W when
its load class changes (many connections, then one) and when the published price changes, and
does its bulletin-board row report W, the price and the expected profit rate?

The test profile's choices under the penalty function (test_adapt_host.py checks them): single
-> W=0; many -> W=40 at 1 $/Gbit, W=10 at 10 $/Gbit. pricepub publishes 1 $/Gbit at boot and
10 $/Gbit once adaptapp reports W=40, so the order of events does not depend on timing."""
import json
import re
import socket
import threading
from pathlib import Path

import pytest

from nomvm import Guest, hostcases
from profit.utility import utility

pytestmark = pytest.mark.boot

HERE = Path(__file__).resolve().parent
TOP = HERE.parents[2]
BUILD = TOP / "build"
KERNEL = BUILD / "kernel" / "nom.elf"
OUT = BUILD / "apps" / "tests" / "adapt"
PROFILE = json.loads((TOP / "libnom" / "tests" / "profit" / "profile.json").read_text())
LOAD_CONNS = 8


@pytest.fixture(scope="module")
def elfs():
    needed = [KERNEL, BUILD / "libnom" / "libnom.a", BUILD / "drivers" / "libvirtio_net.a",
              BUILD / "net" / "libnomnet.a"]
    missing = [str(p) for p in needed if not p.exists()]
    if missing:
        pytest.skip(f"not built: {missing}")
    hostcases.make(HERE)  # this folder's test applications
    return OUT / "adaptapp.elf", OUT / "pricepub.elf"


class Load:
    """conns connections to the echo server, each sending a small message and reading the echo
    in a loop (a user per connection), until stop()."""

    def __init__(self, port, conns):
        self.port, self.done = port, threading.Event()
        self.errors = []
        self.threads = [threading.Thread(target=self._user, daemon=True) for _ in range(conns)]
        for t in self.threads:
            t.start()

    def _user(self):
        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=30) as s:
                while not self.done.is_set():
                    s.sendall(b"x" * 64)
                    got = 0
                    while got < 64:
                        chunk = s.recv(64 - got)
                        if not chunk:
                            raise ConnectionError("closed")
                        got += len(chunk)
        except OSError as e:
            self.errors.append(e)

    def stop(self):
        self.done.set()
        for t in self.threads:
            t.join(30)


def stats(port):
    with socket.create_connection(("127.0.0.1", port), timeout=30) as s:
        s.sendall(b"stats\n")
        line = b""
        while not line.endswith(b"\n"):
            chunk = s.recv(512)
            if not chunk:
                break
            line += chunk
    return dict(kv.split("=", 1) for kv in line.decode().split())


def expected_rate_micro(cls, w_us, price, kind="penalty"):
    p = next(q for q in PROFILE["classes"][cls] if q["w_us"] == w_us)
    return round(utility(kind, p["t_gbps"], p["latency_us"], p["jitter_us"], price) * 1e6)


def boot(tmp_path, elfs, app_args):
    adaptapp, pricepub = elfs
    guest = Guest([(adaptapp, f"adaptapp {app_args}".strip()),
                   (pricepub, "nom.price-publisher pricepub 1 10@40")], tmp_path, tcp=[7],
                  kernel=KERNEL)
    guest.start(ready=())
    return guest.vm, guest.host_port(7)


def test_w_follows_load_and_price(tmp_path, elfs):
    vm, port = boot(tmp_path, elfs, "--utility=penalty")
    try:
        vm.wait_for(r"adapt: W=0 us \(start: load single", 120)
        vm.wait_for(r"adaptapp: serving", 60)
        st = stats(port)
        assert st["load"] == "single" and st["w"] == "0" and st["subscribed"] == "1", st
        assert st["board_price_micro"] == "1000000", st
        load = Load(port, LOAD_CONNS)
        try:
            vm.wait_for(r"adapt: W=40 us \(load: load many", 90)
            # pricepub saw W=40 on the board and publishes 10 $/Gbit: NOM_NOTIFY_PRICE.
            vm.wait_for(r"adapt: W=10 us \(price: load many, \d+ active connections, "
                        r"price 10000000 u\$/Gbit", 90)
            st = stats(port)
        finally:
            load.stop()
        assert not load.errors, load.errors
        assert st["w"] == "10" and st["load"] == "many", st
        assert st["board_w_ns"] == "10000" and st["board_price_micro"] == "10000000", st
        rate = expected_rate_micro("many", 10, 10.0)
        assert abs(int(st["board_rate_micro"]) - rate) <= 1, (st, rate)
        # One user, one request at a time: back to single and W=0.
        single = Load(port, 1)
        try:
            vm.wait_for(r"adapt: W=0 us \(load: load single", 90)
            st = stats(port)
        finally:
            single.stop()
        assert not single.errors, single.errors
        assert st["w"] == "0" and st["load"] == "single" and st["board_w_ns"] == "0", st
        assert int(st["board_rate_micro"]) == expected_rate_micro("single", 0, 10.0), st
    finally:
        vm.stop()


def test_fixed_w_stays_and_is_rated(tmp_path, elfs):
    """--batching-delay=20: the load changes, W does not; the board still gets price and rate."""
    vm, port = boot(tmp_path, elfs, "--batching-delay=20 --utility=refund")
    try:
        vm.wait_for(r"adapt: W=20 us \(start: load single.*fixed refund", 120)
        vm.wait_for(r"adaptapp: serving", 60)
        load = Load(port, LOAD_CONNS)
        try:
            vm.wait_for(r"adapt: W=20 us \(load: load many", 90)
            st = stats(port)
        finally:
            load.stop()
        assert st["w"] == "20" and st["board_w_ns"] == "20000", st
        assert int(st["board_rate_micro"]) == expected_rate_micro("many", 20, 1.0, "refund"), st
    finally:
        vm.stop()


def refused(tmp_path, elfs, app_args, message):
    """adaptapp started with app_args prints message and exits 1; the kernel goes on."""
    vm, _ = boot(tmp_path, elfs, app_args)
    try:
        vm.wait_for(message, 120)
        vm.wait_for(r"nom: app adaptapp exited 1", 60)
    finally:
        vm.stop()


@pytest.mark.parametrize("grid", ["40,10", "0,x", "0,2000000", ""])
def test_a_bad_adapt_grid_is_refused_by_name(tmp_path, elfs, grid):
    """--adapt-grid must be rising microseconds up to NOM_ADAPT_MAX_W_US: anything else stops
    the application with the option named and the accepted form, and the kernel goes on."""
    refused(tmp_path, elfs, f"--adapt-grid={grid}",
            rf"adapt: bad option --adapt-grid={re.escape(grid)} \(.*--adapt-grid=W,W,"
            r"\.\.\. \(us, rising\)")


def test_a_grid_too_large_for_the_learner_is_refused(tmp_path, elfs):
    """Eleven W values, each with three idle poll budgets, are 33 settings: one too many."""
    grid = ",".join(str(w) for w in range(0, 55, 5))
    refused(tmp_path, elfs, f"--adapt-knob=idle-poll --adapt-grid={grid}",
            r"adapt: --adapt-grid: 11 W values x 3 idle poll budgets are more than the "
            r"learner's 32 settings")
