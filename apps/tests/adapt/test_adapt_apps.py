"""The controller inside the real applications, in QEMU (TCG here): nhttpd's GET /nom/stats and
memcached's `stats` report the batching delay, the price the application acts on (published by
the test's pricepub), the utility, the load class and the expected profit rate, and these agree
with the application's profile (apps/<app>/profile/profile.json, read as the controller reads
it: tools/profile's kvm_equivalent) through tools/profit's Python.
One connection at a time is the "single" class, so W is the profile's best single W."""
import json
import socket
from pathlib import Path

import pytest

from choices import best
from nomvm import Guest, hostcases
from profile_data import kvm_equivalent, load_profile

pytestmark = pytest.mark.boot

HERE = Path(__file__).resolve().parent
TOP = HERE.parents[2]
BUILD = TOP / "build"
KERNEL = BUILD / "kernel" / "nom.elf"
PRICEPUB = BUILD / "apps" / "tests" / "adapt" / "pricepub.elf"
NHTTPD = BUILD / "apps" / "nhttpd" / "nhttpd.elf"
MEMCACHED = BUILD / "apps" / "memcached" / "memcached.elf"


def profile_choice(app, cls, price, kind):
    """(W, U) the Python picks from the committed profile: the best W, the lowest among equals."""
    prof = kvm_equivalent(load_profile(TOP / "apps" / app / "profile" / "profile.json"))
    point, u = best(prof["classes"][cls], kind, price)
    return point["w_us"], u


@pytest.fixture(scope="module")
def pricepub():
    if not KERNEL.exists():
        pytest.skip("the kernel is not built")
    hostcases.make(HERE)  # this folder's test applications
    return PRICEPUB


def boot(tmp_path, elf, cmdline, guest_port):
    if not elf.exists():
        pytest.skip(f"not built: {elf}")
    guest = Guest([(elf, cmdline), (PRICEPUB, "nom.price-publisher pricepub 2.5")], tmp_path,
                  tcp=[guest_port], kernel=KERNEL)
    guest.start(ready=())
    return guest.vm, guest.host_port(guest_port)


def request(port, data, until=None):
    """Sends data, reads until `until` is in the answer (None: until the server closes)."""
    with socket.create_connection(("127.0.0.1", port), timeout=30) as s:
        s.sendall(data)
        out = b""
        while until is None or until not in out:
            chunk = s.recv(65536)
            if not chunk:
                break
            out += chunk
    return out.decode()


def test_nhttpd_stats_report_the_controller(tmp_path, pricepub):
    vm, port = boot(tmp_path, NHTTPD, "nhttpd --port=80 --utility=bonus", 80)
    try:
        # At start or at a later decision, whichever comes after pricepub's publication.
        vm.wait_for(r"adapt: W=\d+ us \(\w+: .*price 2500000 u\$/Gbit, adaptive bonus", 120)
        vm.wait_for(r"nhttpd: listening", 60)
        answer = request(port, b"GET /nom/stats HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        stats = json.loads(answer.split("\r\n\r\n", 1)[1])
    finally:
        vm.stop()
    w, rate = profile_choice("nhttpd", "single", 2.5, "bonus")
    a = stats["adapt"]
    assert a["utility"] == "bonus" and a["load_class"] == "single", stats
    assert stats["batching_delay_us"] == w and stats["batching_delay_fixed"] is False, stats
    assert stats["bandwidth_price_usd_per_gbit"] == 2.5, stats
    assert a["expected_profit_micro_usd_per_s"] == round(rate * 1e6), stats


def test_memcached_stats_report_the_controller(tmp_path, pricepub):
    vm, port = boot(tmp_path, MEMCACHED, "memcached -t 1 -m 16 -p 11211 -U 0 --utility=refund",
                    11211)
    try:
        vm.wait_for(r"adapt: W=\d+ us \(\w+: .*price 2500000 u\$/Gbit, adaptive refund", 120)
        text = ""
        for _ in range(60):  # memcached listens a moment after the controller starts
            try:
                text = request(port, b"stats\r\n", b"END\r\n")
                break
            except OSError:
                vm.wait_for(r"", 1)
        stats = dict(l.split(" ", 2)[1:] for l in text.splitlines() if l.startswith("STAT "))
    finally:
        vm.stop()
    w, rate = profile_choice("memcached", "single", 2.5, "refund")
    assert stats["batching_delay_us"] == str(w) and stats["batching_delay_adaptive"] == "1", stats
    assert stats["utility"] == "refund" and stats["load_class"] == "single", stats
    assert float(stats["bandwidth_price_usd_per_gbit"]) == 2.5, stats
    assert float(stats["profit_rate_usd_per_s"]) == pytest.approx(rate, rel=1e-8), stats
    assert "curr_items" in stats  # memcached's own statistics are all still there
