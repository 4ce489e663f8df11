"""Price faults (issue 14): the provider goes down, answers too slowly, answers garbage, or
quotes an absurd price. Does the application keep serving, does the board mark the price stale
(NOM_PRICE_STALE and the time of the last good answer), do the application's stats say so with
the staleness's age, and does its controller fall back to the safe W (nom/adapt.h
NOM_ADAPT_SAFE_W_US, 0) and return to the price's best W once the provider answers again?
nhttpd (adaptive, penalty utility) runs beside priced; its /nom/stats and /nom/board are read
from the host."""
import json
import os
import re
import sys
import time
import urllib.request

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from nomvm import VM, Nic, make_iso  # noqa: E402
from priced_vm import BUILD, KERNEL, PRICED, PRICED_NIC, FakeProvider, free_port  # noqa: E402

NHTTPD = os.path.join(BUILD, "apps", "nhttpd", "nhttpd.elf")
FAST = ["--period-ms=200", "--timeout-ms=1000", "--max-backoff-ms=800"]
SAFE_W_US = 0  # nom/adapt.h NOM_ADAPT_SAFE_W_US
GOOD = ("good", 2.0, 1)
FAULTS = ["down", "stall", "garbage", "absurd"]  # stall: slower than priced's timeout

pytestmark = [pytest.mark.boot, pytest.mark.skipif(
    not all(os.path.isfile(p) for p in (KERNEL, PRICED, NHTTPD)),
    reason="needs the kernel, priced.elf and nhttpd.elf built")]


def get(port, path):
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    with opener.open(f"http://127.0.0.1:{port}{path}", timeout=60) as r:
        return r.status, r.read()


def stats(port):
    return json.loads(get(port, "/nom/stats")[1])


def wait_stats(port, vm, pred, timeout=90):
    deadline = time.monotonic() + timeout
    while True:
        s = stats(port)
        if pred(s):
            return s
        assert time.monotonic() < deadline and vm.proc.poll() is None, (s, vm.tail(30))
        time.sleep(0.5)


def price_slot0(port):
    return json.loads(get(port, "/nom/board")[1])["board"]["prices"]["0"]


def test_price_faults_mark_the_price_stale_and_fall_back_to_the_safe_w(tmp_path):
    fake = FakeProvider()
    fake.mode = GOOD
    web = free_port()
    modules = [(PRICED, " ".join(["nom.price-publisher", "priced", f"--nic={PRICED_NIC}",
                                  f"--provider=http://10.0.2.2:{fake.port}/price.txt", *FAST])),
               (NHTTPD, "nhttpd --nic=2 --port=80")]
    iso = make_iso(KERNEL, modules, str(tmp_path / "nom.iso"))
    vm = VM(iso=iso, nics=[Nic(mac="52:54:00:12:34:57"),
                           Nic(mac="52:54:00:12:34:58", hostfwd=[(web, 80)])],
            workdir=str(tmp_path), name="price-faults")
    seen = {}
    try:
        with vm:
            vm.wait_for(r"nhttpd: listening on", 180)
            fresh = lambda s: (s["bandwidth_price_usd_per_gbit"] == 2.0  # noqa: E731
                               and not s["adapt"]["price_stale"])
            best_w = wait_stats(web, vm, fresh)["batching_delay_us"]
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
                    fake = FakeProvider(port=fake.port)
                fake.mode = GOOD
                s = wait_stats(web, vm, fresh)
                assert s["batching_delay_us"] == best_w and s["adapt"]["price_stale_age_s"] == 0
                assert price_slot0(web)["flags"] == 0
            log = vm.log()
    finally:
        fake.stop()
    assert not re.search(r"PANIC|nom: fault|killed", log), log
    assert len(re.findall(r"^priced: published 2\.000000 \$/Gbit \(stale\)", log, re.M)) == len(FAULTS)
    print(f"price's best W {best_w} us; per fault (W while stale, age after 1.5 s): {seen}")
