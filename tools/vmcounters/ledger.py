"""Exit-equivalents by kind from the kvmcost ledger (tools/kvmcost), per second and per request.

Where the patched QEMU runs (tools/kvmcost, any guest alike), its ledger counts every point at
which hardware KVM would exit or inject: kicks, other MMIO and port I/O, LAPIC accesses by
register (EOI, timer programming, IPI sends), interrupts by source and HLTs. The trace counters
(trace.py) see only kicks and MSI-routed interrupts (QEMU 7.2's apic_deliver_irq misses LAPIC
timer and IPI interrupts), so under the ledger these figures replace theirs.

Groups (each a sum of ledger kinds):
- exits: the accesses that trap, every non-interrupt kind the cost file charges (cost > 0);
  with APICv an EOI costs 0 and is not an exit; an HPET read (kvm-clock's stand-in) and a PAUSE never are.
- irqs: every interrupt delivered, timers and IPIs too (paper table 2's "all interrupts").
- exit_ns: what a hardware-KVM host would spend on all of them, undilated (count x cost).
Per second is per second of the run's wall time, i.e. dilated (multiply by D for the
KVM-equivalent rate). d_window is the dilation the window measured (kvmcost.window_dilation:
wall over guest time): on the instruction clock the D to multiply by, as no D is set for it.
"""
import kvmcost

IRQ_KINDS = ("irq_device", "irq_timer", "irq_ipi", "irq_other")
# What the report names each kind (issue 11, item 3).
LABELS = {"kick": "kicks", "mmio": "MMIO", "pio": "PIO", "lapic_eoi": "EOIs",
          "lapic_timer": "timer programming", "lapic_icr": "IPIs sent",
          "lapic_other": "other LAPIC", "irq_device": "device interrupts",
          "irq_timer": "timer interrupts", "irq_ipi": "IPIs received",
          "irq_other": "other interrupts", "hlt": "HLTs",
          "hpet": "HPET reads (not exits)", "pause": "PAUSEs (not exits)"}


def figures(a, b, requests, seconds):
    """{"by_kind": {kind: {"count", "per_s", "per_req", "ns_per_req"}}, "exits_per_req",
    "irqs_per_req", "exit_ns_per_req", "exits_s", "irqs_s", "dilation", "d_window",
    "cost_file"} between ledgers a and b (tools/kvmcost.read_ledger dicts, b later)."""
    n, s = max(requests, 1), seconds if seconds > 0 else None
    by_kind = {}
    for kind, now in b["kinds"].items():
        count = now["count"] - a["kinds"][kind]["count"]
        ns = now["ns"] - a["kinds"][kind]["ns"]
        by_kind[kind] = {"count": count, "per_s": count / s if s else None,
                         "per_req": count / n, "ns_per_req": ns / n}
    exits = sum(v["count"] for k, v in by_kind.items()
                if k not in IRQ_KINDS and b["kinds"][k]["cost_ns"] > 0)
    irqs = sum(by_kind[k]["count"] for k in IRQ_KINDS)
    return {"by_kind": by_kind, "exits_per_req": exits / n, "irqs_per_req": irqs / n,
            "exit_ns_per_req": sum(v["ns_per_req"] for v in by_kind.values()),
            "exits_s": exits / s if s else None, "irqs_s": irqs / s if s else None,
            "dilation": b.get("dilation"), "d_window": kvmcost.window_dilation(a, b),
            "cost_file": b.get("cost_file")}
