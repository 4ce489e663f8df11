"""Whole-system tests of the kernel: each boots nom in QEMU (TCG here, KVM only with vmx/svm)
with small test applications (apps/tests/kernel/) and reads the serial log."""
import os
import re

import pytest

from nomvm import TOP, boot_apps, nics

pytestmark = pytest.mark.boot

APPS = os.path.join(TOP, "build", "apps", "tests", "kernel")


def app(name, *args):
    return (os.path.join(APPS, f"{name}.elf"), " ".join((name,) + args))


def lines(log, prefix):
    return [l for l in log.splitlines() if l.startswith(prefix)]


@pytest.mark.parametrize("smp", [1, 2])
def test_every_cpu_comes_online_and_the_board_agrees(smp):
    r = boot_apps([app("hello", "one", "two")], smp=smp)
    assert r.all_apps_ok, r.log
    assert f"nom: {smp} cpu{'s' if smp > 1 else ''} online" in r.log
    assert len(re.findall(r"^bb: cpu \d+ apic \d+ online$", r.log, re.M)) == smp
    assert f"hello: bb magic ok abi 1 cpus {smp} " in r.log
    assert len(lines(r.log, "hello: cpu ")) == smp and "offline" not in r.log


def test_application_gets_argv_environment_and_ring3():
    r = boot_apps([(os.path.join(APPS, "hello.elf"), "GREETING=hi hello one two")])
    assert r.all_apps_ok, r.log
    assert "nom: app hello started" in r.log
    for expected in ["hello: argv[0]=hello", "hello: argv[1]=one", "hello: argv[2]=two",
                     "hello: env GREETING=hi", "hello: app id 1 ring 3", "hello: app hello state 1"]:
        assert expected in r.log
    assert re.search(r"^nom: app hello exited 0\b", r.log, re.M)


@pytest.mark.parametrize("count", [0, 1, 3])
def test_board_lists_exactly_the_nics_qemu_was_given(count):
    r = boot_apps([app("hello")], nics=nics(count))
    assert r.all_apps_ok, r.log
    boot_lines = re.findall(r"^bb: pci \d+ [0-9a-f:.]+ 1af4:(1041|1000) ", r.log, re.M)
    assert len(boot_lines) == count
    assert len(re.findall(r"^hello: pci \d+ 1af4:1041$", r.log, re.M)) == count


def test_nic_owner_reads_its_mac_and_a_second_app_is_refused():
    given = nics(2)
    r = boot_apps([app("nicmac", "own"), app("nicmac", "steal")], nics=given)
    assert r.all_apps_ok, r.log
    macs = re.findall(r"^nicmac: dev \d+ owner 1 mac ([0-9a-f:]+)$", r.log, re.M)
    assert sorted(macs) == sorted(n.mac for n in given)
    refused = re.findall(r"^nicmac-steal: dev \d+ acquire refused \(-6\), owner 1$", r.log, re.M)
    assert len(refused) == 2, r.log


def test_msix_interrupt_reaches_the_owner_as_an_upcall():
    r = boot_apps([app("msix")], nics=nics(1))
    assert r.all_apps_ok, r.log
    assert "msix: irq_attach 0" in r.log
    assert "msix: upcalls 1 type 2 cookie c0ffee used idx 1" in r.log


def test_page_faults_are_upcalls_to_the_application():
    r = boot_apps([app("pfault")])
    assert r.all_apps_ok, r.log
    assert "pfault: value 42 and 7 after 2 faults handled" in r.log


def test_faulting_applications_are_contained():
    crashes = ["writebb", "kernelmem", "jump0", "div0", "badstack"]
    mods = [app("witness", "30")] + [app("crash", c) for c in crashes] + [app("fuzz")]
    r = boot_apps(mods, smp=1, timeout=300)
    assert not r.all_apps_ok  # some were killed: QEMU reports it
    assert "PANIC" not in r.log
    killed = re.findall(r"^nom: app crash killed: (.*)$", r.log, re.M)
    assert len(killed) == len(crashes), r.log
    assert any("page fault at 7f0000000000" in k for k in killed)       # wrote the board
    assert any("page fault at ffffffff80100000" in k for k in killed)   # read kernel memory
    assert any(re.match(r"page fault at 0 \(rip 0,", k) for k in killed)  # jumped to 0
    assert any("divide error" in k for k in killed)
    assert any("upcall stack" in k for k in killed)
    assert re.search(r"^fuzz: 4000 calls, \d+ errors, survived$", r.log, re.M)
    assert re.search(r"^nom: app fuzz exited 0\b", r.log, re.M)
    assert "witness: still alive after 30 rounds" in r.log
    assert re.search(r"^nom: app witness exited 0\b", r.log, re.M)


def test_cpu_bound_apps_share_a_vcpu_and_a_blocked_app_costs_nothing():
    r = boot_apps([app("spin", "a"), app("spin", "b"), app("sleeper", "2000")], smp=1)
    assert r.all_apps_ok, r.log
    progress = [l for l in r.log.splitlines() if l.startswith("spin ")]
    assert len([l for l in progress if l.startswith("spin a")]) == 5
    assert len([l for l in progress if l.startswith("spin b")]) == 5
    # Both progressed while the other was still running: b reported before a finished.
    assert progress.index("spin b: progress 1") < progress.index("spin a: progress 5")
    m = re.search(r"^nom: app sleeper exited 0 \(cpu time (\d+) ms\)", r.log, re.M)
    slept = int(re.search(r"^sleeper: slept (\d+) ms", r.log, re.M).group(1))
    assert m and slept >= 2000
    assert int(m.group(1)) * 20 < slept  # under 5% of its wall time, against 100% for spinners


def test_notifications_timers_and_price_publication():
    r = boot_apps([app("ipc", "wait"), (os.path.join(APPS, "ipc.elf"), "nom.notify ipc send 1"),
                   (os.path.join(APPS, "ipc.elf"), "nom.price-publisher ipc publish")])
    assert r.all_apps_ok, r.log
    assert "nom: app ipc started (id 3, cpu 0, price publisher)" in r.log
    assert "ipc-send: notify 0, publish -1, notify unknown app -2" in r.log  # EPERM, ENOENT
    assert "ipc-publish: publish 0, bad slot -3" in r.log                    # EINVAL
    assert "ipc-wait: timer upcalls 1, notification bits 51, price 10000000 micro$/Gbit seq 1" in r.log


def test_block_hands_events_over_instead_of_upcalls():
    """libnom's way of blocking (abi.h NOM_SYS_BLOCK with an events pointer): the timer, the
    notification and the price notification come back from block, none as an upcall."""
    r = boot_apps([app("ipc", "take"), (os.path.join(APPS, "ipc.elf"), "nom.notify ipc send 1"),
                   (os.path.join(APPS, "ipc.elf"), "nom.price-publisher ipc publish")])
    assert r.all_apps_ok, r.log
    assert "ipc-take: timers taken 1, upcalls 0, notification bits 51, bad pointer -4" in r.log


def test_each_context_keeps_its_own_sse_state():
    r = boot_apps([app("fpu", "a"), app("fpu", "b")], smp=1)
    assert r.all_apps_ok, r.log
    assert len(re.findall(r"^fpu [ab]: \d+ rounds, 0 corrupted$", r.log, re.M)) == 2


def test_application_acquires_and_releases_a_second_core():
    r = boot_apps([app("cores")], smp=2)
    assert r.all_apps_ok, r.log
    assert "cores: first on cpu 0, second on cpu 1, third acquire -6, counter 1000000" in r.log
