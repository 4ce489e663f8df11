"""Does the patched QEMU charge each exit-equivalent once, under its kind, at its cost?

The exit guest (exit_guest.c) drives ROUNDS kicks, port writes, self-IPIs and LAPIC-timer
interrupts woken from HLT, and ROUNDS PAUSEs (counted, never charged), after a handshake through shared guest RAM that lets the test take a
ledger snapshot once the firmware and the guest's set-up are done. No timing is asserted."""

import pytest

import kvmcost

pytestmark = pytest.mark.boot

ROUNDS = 100  # exit_guest.c

# What the guest drives per round, kind by kind (exit_guest.c, guest_main); every other kind 0.
EXPECTED = {
    "kick": ROUNDS,            # a doorbell write each
    "pio": ROUNDS,             # an outb to 0x80 each (the exit write to 0xf4 ends QEMU first)
    "lapic_icr": ROUNDS,       # a self-IPI each
    "irq_ipi": ROUNDS,
    "lapic_timer": 2 * ROUNDS,  # LVT timer and initial count, per timer round
    "irq_timer": ROUNDS,
    "hlt": ROUNDS,             # one HLT per timer round, woken by the timer
    "lapic_eoi": 2 * ROUNDS,   # one per IPI and one per timer interrupt
    "pause": ROUNDS,           # counted at cost 0; the guest runs on past each (no exit)
}


def test_every_exit_the_guest_drives_is_charged_once_at_its_cost(run_exit_guest):
    run = run_exit_guest("GO")
    assert run.status == 1, f"guest exit code {run.status >> 1} (exit_guest.c)\n{run.stderr}"
    after = run.after
    assert after["final"] and after["dilation"] == 1 and after["clock"] == "wall"
    charged = kvmcost.difference(run.before, after)
    for kind in kvmcost.KINDS:
        cost = after["kinds"][kind]["cost_ns"]
        n = EXPECTED.get(kind, 0)
        assert charged[kind] == {"count": n, "ns": n * cost, "stall_ns": n * cost}, kind
