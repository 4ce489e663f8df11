"""priced in QEMU (TCG unless real KVM) with a provider on the host: does the board follow the
provider, does a subscriber hear of each change, and does bad input lose nothing? The price on
the board is observed through pricewatch (tests/guest/pricewatch.c, a nom/price.h
subscriber): each line it prints is one publication it was woken for, with the board's
sequence, so a publication of a bad price would show up there as an extra sequence."""
import re
import time

import pytest

from nomvm import Nic, boot_apps, free_port
from priced_vm import PRICED, PRICED_NIC, PRICEWATCH, FakeProvider, PricedVM, Provider, built

pytestmark = [pytest.mark.boot,
              pytest.mark.skipif(not built(), reason="needs the kernel, priced.elf and "
                                 "pricewatch.elf built")]
FAST = ["--period-ms=200", "--timeout-ms=1000", "--max-backoff-ms=800"]


def count(log, pattern):
    return len(re.findall(pattern, log, re.M))


def test_board_follows_the_provider_and_subscribers_hear_it():
    """1 $/Gbit, then SIGUSR2 steps the provider to 10 $/Gbit: does priced publish both, and
    does the subscriber wake for each and read it (callback and wait alike)?"""
    provider = Provider(schedule="0:1, 60:10", hold=True)
    try:
        with PricedVM(provider.port) as vm:
            vm.wait_watch(1.0, timeout=180)
            provider.step()
            waited, (_, seq, _) = vm.wait_watch(10.0, timeout=60)
            log = vm.log()
    finally:
        provider.stop()
    assert seq == 2  # two publications, nothing in between
    assert re.search(r"^priced: published 10\.000000 \$/Gbit at [\d.]+ s \(provider sequence "
                     r"\d+, board sequence 2\)", log, re.M)
    m = re.search(r"pricewatch: price 10\.000000 .* \(notifications (\d+), callback (\d+) saw "
                  r"(\d+); priced cpu \d+ ms\)", log)
    assert m and int(m.group(1)) >= 2 and int(m.group(2)) >= 2 and m.group(3) == "10000000"
    print(f"provider step -> subscriber line on the host: {waited * 1000:.0f} ms")


def test_dead_provider_at_start_then_started():
    """No provider at first: does priced say so once, keep trying, and publish as soon as one
    answers?"""
    port = free_port()
    with PricedVM(port, priced_args=FAST) as vm:
        vm.wait_for(r"^priced: provider unreachable: .*nothing published yet", 180)
        time.sleep(3)  # several backed-off retries
        provider = Provider(schedule="0:4", hold=True, port=port)
        try:
            vm.wait_watch(4.0, timeout=60)
            vm.wait_for(r"^priced: the provider answers again \(after \d+ failed polls\)", 30)
            log = vm.log()
        finally:
            provider.stop()
    assert count(log, r"^priced: provider unreachable") == 1
    failed = int(re.search(r"answers again \(after (\d+) failed", log).group(1))
    assert failed >= 2


BAD = [  # mode, what priced must say (once), the kind of episode
    ("garbage", r"bad answer from the provider: .*NUL byte"),
    ("html", r"price rejected: .*not key=value"),
    ("huge", r"bad answer from the provider: .*larger than 4096"),
    ("negative", r"price rejected: negative price -3\.000000"),
    ("absurd", r"price rejected: price 5000000\.000000 \$/Gbit is above the sanity limit"),
    ("error", r"provider error: .*503 Service Unavailable"),
    ("stall", r"provider too slow: no complete answer"),
]


def test_bad_answers_keep_the_last_good_price():
    """For each kind of bad answer in turn, then a good answer again: does priced say so once
    (not once per poll), keep 2 $/Gbit published but marked stale (one publication per
    episode), stay alive, say when the provider answers again (a fresh 2 $/Gbit), and never
    publish a bad price?"""
    fake = FakeProvider()
    good = ("good", 2.0, 1)
    fake.mode = good
    try:
        with PricedVM(fake.port, priced_args=FAST) as vm:
            vm.wait_watch(2.0, timeout=180)
            for episode, (mode, said) in enumerate(BAD, 1):
                fake.mode = mode
                vm.wait_for(r"^priced: " + said + r".*; keeping 2\.000000 \$/Gbit", 60)
                deadline = time.monotonic() + 60
                while fake.count(mode) < 3 and time.monotonic() < deadline:
                    time.sleep(0.1)  # at least three polls in this episode
                assert fake.count(mode) >= 3, f"priced stopped polling in mode {mode}"
                assert count(vm.log(), r"^priced: " + said) == 1, vm.log()
                vm.wait_for(r"^priced: published 2\.000000 \$/Gbit \(stale\)", 60)
                fake.mode = good  # the same price and sequence: published fresh, not stale
                deadline = time.monotonic() + 60
                while count(vm.log(), r"^priced: the provider answers again") < episode:
                    assert time.monotonic() < deadline, vm.log()
                    time.sleep(0.1)
            fake.mode = ("good", 3.0, 2)
            _, (_, seq, _) = vm.wait_watch(3.0, timeout=60)
            log = vm.log()
    finally:
        fake.stop()
    # 2 $/Gbit, then per episode 2 $/Gbit stale and 2 $/Gbit fresh, then 3 $/Gbit
    assert seq == 2 + 2 * len(BAD), log
    assert count(log, r"^priced: published") == 2 + 2 * len(BAD)
    assert count(log, r"^priced: published 2\.000000 \$/Gbit \(stale\)") == len(BAD)
    prices = {float(p) for p in re.findall(r"^pricewatch: price ([\d.]+) ", log, re.M)}
    assert prices == {2.0, 3.0}, log  # no bad price was ever published
    assert count(log, r"^priced: the provider answers again") == len(BAD)


def test_bad_flags_and_no_publisher_right():
    """Does priced answer bad flags with its usage and exit status 2, does a priced without
    the nom.price-publisher flag say how to start it and exit 1, and does a subscriber's wait
    end at its deadline when nothing is published?"""
    provider = Provider(schedule="0:1", hold=True)
    try:
        result = boot_apps([
            (PRICED, "priced --provider=http://10.0.2.2:1/price.txt --period-ms=0"),
            (PRICED, "priced --bogus"),
            (PRICED, f"priced --nic={PRICED_NIC} "
                     f"--provider=http://10.0.2.2:{provider.port}/price.txt"),
            (PRICEWATCH, "pricewatch --changes=1 --timeout-s=3"),
        ], nics=[Nic(mac="52:54:00:12:34:57")], timeout=240)
    finally:
        provider.stop()
    log = result.log
    assert "priced: --period-ms=0: must be 10-3600000" in log
    assert "priced: --bogus: unknown option" in log
    assert count(log, r"^usage: priced --provider=") == 2
    assert count(log, r"^nom: app priced exited 2 ") == 2
    assert re.search(r"^priced: the kernel refused to publish \(error 1\): start priced with "
                     r"the nom.price-publisher module flag", log, re.M)
    assert count(log, r"^nom: app priced exited 1 ") == 1
    assert "pricewatch: timed out after 0 changes" in log
    assert count(log, r"^nom: app pricewatch exited 1 ") == 1
