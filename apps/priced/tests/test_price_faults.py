"""Price faults (issue 14): the provider goes down, answers too slowly, answers garbage, or
quotes an absurd price. Does the application keep serving, does the board mark the price stale
(NOM_PRICE_STALE and the time of the last good answer), do the application's stats say so with
the staleness's age, and does its controller fall back to the safe W (nom/adapt.h
NOM_ADAPT_SAFE_W_US, 0) and return to the price's best W once the provider answers again?
nhttpd (adaptive, penalty utility) runs beside priced; its /nom/stats and /nom/board are read
from the host; memcached runs too, and its `stats` must say the same."""
import os
import re
import time
import urllib.request

import pytest

from dashboard import sources
from nomvm import VM, Nic, free_port, make_iso
from priced_vm import BUILD, KERNEL, PRICED, PRICED_NIC, FakeProvider

NHTTPD = os.path.join(BUILD, "apps", "nhttpd", "nhttpd.elf")
MEMCACHED = os.path.join(BUILD, "apps", "memcached", "memcached.elf")
FAST = ["--period-ms=200", "--timeout-ms=1000", "--max-backoff-ms=800"]
SAFE_W_US = 0  # nom/adapt.h NOM_ADAPT_SAFE_W_US
GOOD = ("good", 2.0, 1)
FAULTS = ["down", "stall", "garbage", "absurd"]  # stall: slower than priced's timeout

pytestmark = [pytest.mark.boot, pytest.mark.skipif(
    not all(os.path.isfile(p) for p in (KERNEL, PRICED, NHTTPD, MEMCACHED)),
    reason="needs the kernel, priced.elf, nhttpd.elf and memcached.elf built")]


def get(port, path):
    with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=60) as r:
        return r.status, r.read()


def stats(port):
    return sources.nhttpd_stats("127.0.0.1", port, timeout_s=60)


def wait_stats(port, vm, pred, timeout=90):
    deadline = time.monotonic() + timeout
    while True:
        s = stats(port)
        if pred(s):
            return s
        assert time.monotonic() < deadline and vm.proc.poll() is None, (s, vm.tail(30))
        time.sleep(0.5)


def memcached_stats(port, timeout=60):
    """memcached's `stats`, retried while it does not answer yet (QEMU accepts forwarded
    connections before the guest listens)."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            return sources.memcached_stats("127.0.0.1", port, timeout_s=30)
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.5)


def price_slot0(port):
    return sources.nhttpd_board("127.0.0.1", port, timeout_s=60)["prices"]["0"]


def test_price_faults_mark_the_price_stale_and_fall_back_to_the_safe_w(tmp_path):
    fake = FakeProvider()
    fake.mode = GOOD
    web, mc = free_port(), free_port()
    modules = [(PRICED, " ".join(["nom.price-publisher", "priced", f"--nic={PRICED_NIC}",
                                  f"--provider=http://10.0.2.2:{fake.port}/price.txt", *FAST])),
               (NHTTPD, "nhttpd --nic=2 --port=80"),
               (MEMCACHED, "memcached --nic=3 -t 1 -m 16 -p 11211 -U 0")]
    iso = make_iso(KERNEL, modules, str(tmp_path / "nom.iso"))
    vm = VM(iso=iso, nics=[Nic(mac="52:54:00:12:34:57"),
                           Nic(mac="52:54:00:12:34:58", hostfwd=[(web, 80)]),
                           Nic(mac="52:54:00:12:34:59", hostfwd=[(mc, 11211)])],
            workdir=str(tmp_path), name="price-faults")
    mc_stale = {}
    seen = {}
    try:
        with vm:
            vm.wait_for(r"nhttpd: listening on", 180)
            fresh = lambda s: (s["bandwidth_price_usd_per_gbit"] == 2.0  # noqa: E731
                               and not s["adapt"]["price_stale"])
            best_w = wait_stats(web, vm, fresh)["batching_delay_us"]
            memcached_stats(mc)  # memcached serves too
            for fault in FAULTS:
                if fault == "down":
                    fake.stop()  # connections refused until a provider listens again
                else:
                    fake.mode = fault
                s = wait_stats(web, vm, lambda s: s["adapt"]["price_stale"])
                time.sleep(1.5)
                later = stats(web)
                slot = price_slot0(web)
                status, body = get(web, "/index.html")
                seen[fault] = (s["batching_delay_us"], later["adapt"]["price_stale_age_s"])
                assert status == 200 and body, fault  # still serving
                assert s["batching_delay_us"] == SAFE_W_US, (fault, s)
                assert later["bandwidth_price_usd_per_gbit"] == 2.0, (fault, later)  # the last good
                assert later["adapt"]["price_stale_age_s"] > s["adapt"]["price_stale_age_s"] >= 0
                assert slot["flags"] & 1 and slot["stale_since_tsc"] > 0, (fault, slot)
                if fault == "down":
                    m = memcached_stats(mc)
                    mc_stale = {k: m[k] for k in ("bandwidth_price_stale", "batching_delay_us",
                                                  "bandwidth_price_stale_age_s")}
                if fault == "down":
                    fake = FakeProvider(port=fake.port)
                fake.mode = GOOD
                s = wait_stats(web, vm, fresh)
                assert s["batching_delay_us"] == best_w and s["adapt"]["price_stale_age_s"] == 0
                assert price_slot0(web)["flags"] == 0
            m = memcached_stats(mc)
            log = vm.log()
    finally:
        fake.stop()
    assert not re.search(r"PANIC|nom: fault|killed", log), log
    # memcached saw the same (its controller's status, nom/adapt.h), and the fresh price after
    assert mc_stale["bandwidth_price_stale"] == "1" and mc_stale["batching_delay_us"] == "0"
    assert float(mc_stale["bandwidth_price_stale_age_s"]) > 0, mc_stale
    assert m["bandwidth_price_stale"] == "0" and float(m["bandwidth_price_usd_per_gbit"]) == 2.0
    assert len(re.findall(r"^priced: published 2\.000000 \$/Gbit \(stale\)", log, re.M)) == len(FAULTS)
    print(f"price's best W {best_w} us; per fault (W while stale, age after 1.5 s): {seen}")
