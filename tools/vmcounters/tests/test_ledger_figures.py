"""Do the per-request figures take exits and interrupts from the kvmcost ledger when it ran,
and keep the trace's figures when it did not?"""
import pytest

import kvmcost
import vmcounters

pytestmark = pytest.mark.unit


def ledger(counts, costs=None, dilation=4.0):
    costs = costs or {}
    return {"dilation": dilation, "cost_file": "x.conf", "final": False, "mono_ns": 0,
            "kinds": {k: {"count": counts.get(k, 0), "cost_ns": costs.get(k, 100),
                          "ns": counts.get(k, 0) * costs.get(k, 100),
                          "stall_ns": counts.get(k, 0) * costs.get(k, 100) * dilation}
                      for k in kvmcost.KINDS}}


def snap(mono_ns, trace, led=None):
    s = {"mono_ns": mono_ns, "accel": "tcg", "trace": dict(trace, mono_ns=mono_ns),
         "threads": None, "insns": None}
    if led:
        s["kvmcost"] = led
    return s


def test_without_the_ledger_the_trace_counts_stay():
    a = snap(0, {"virtio_queue_notify": 0, "apic_deliver_irq": 0})
    b = snap(2_000_000_000, {"virtio_queue_notify": 30, "apic_deliver_irq": 10})
    out = vmcounters.per_request(a, b, 10)
    assert "kvmcost" not in out and "all_irqs_per_req" not in out
    assert out["notifies_per_req"] == pytest.approx(3.0)


def test_ledger_counts_by_kind_per_second_and_per_request():
    a = snap(0, {}, ledger({"kick": 5, "irq_timer": 1}))
    b = snap(2_000_000_000, {}, ledger({"kick": 25, "irq_timer": 21, "irq_device": 10,
                                        "lapic_eoi": 31, "hlt": 4},
                                       costs={"lapic_eoi": 0}))
    out = vmcounters.per_request(a, b, 10)
    led = out["kvmcost"]
    assert led["by_kind"]["kick"] == {"count": 20, "per_s": 10.0, "per_req": 2.0,
                                      "ns_per_req": 200.0}
    # Exits: kicks and HLTs (an EOI costs 0 in this cost file: APICv, no exit); interrupts:
    # the device's and the timer's.
    assert out["ledger_exits_per_req"] == pytest.approx((20 + 4) / 10)
    assert out["all_irqs_per_req"] == pytest.approx((20 + 10) / 10)
    assert out["exit_equiv_per_req"] == pytest.approx(5.4)
    assert led["exits_s"] == pytest.approx(12.0) and led["irqs_s"] == pytest.approx(15.0)
    assert led["dilation"] == 4.0


def test_a_window_s_dilation_is_its_wall_time_over_the_guest_s():
    a, b = ledger({}), ledger({})
    a.update(mono_ns=1_000_000_000, guest_ns=300_000_000)
    b.update(mono_ns=3_000_000_000, guest_ns=550_000_000)
    out = vmcounters.per_request(snap(0, {}, a), snap(2_000_000_000, {}, b), 10)
    assert out["d_window"] == pytest.approx(8.0) and out["kvmcost"]["d_window"] == out["d_window"]
    # Ledgers from before patches/0011 have no guest clock; a clock that stood still no ratio.
    assert kvmcost.window_dilation(ledger({}), ledger({})) is None
    assert kvmcost.window_dilation(a, dict(b, guest_ns=300_000_000)) is None
