"""Projection of per-request time on a hardware-KVM host from counts that TCG measures exactly.

Under TCG the wall-clock speed of a guest says little about KVM, but what the guest *does* per
request does not depend on the emulator: the instructions it executes and the events that would
be VM exits (guest -> device notifications, interrupts delivered to it; paper table 2). The
model:

    time per request = instructions x CPI / f  +  exits x C_exit / f

with exits = notifications + interrupts per request (under KVM: KVM's own exit count), and
these constants (all parameters of project()):

- f = 1.9 GHz: the clock of the paper's host (Intel Core i7-3517U, paper 6.1).
- CPI = 1.0 cycle per instruction: an assumption, not a measurement (TCG cannot measure
  cycles); kernel network paths typically run at 0.5-2 CPI on such cores, so the report gives
  the instruction term at 0.5 and 2 as well.
- C_exit = 2,000 cycles for the direct cost of an exit (the world switch out and back), as
  measured for KVM on a Xeon X5570 by Landau, Ben-Yehuda and Gordon, "SplitX: Split
  Guest/Hypervisor Execution on Multi-Core", WIOSCA 2011, table 1; the same paper shows the
  indirect (cache) and synchronous (handling) costs can add an order of magnitude, so the
  report also gives C_exit = 20,000 cycles as the high estimate.

It ignores what the host does for the guest outside its exits (QEMU's device emulation runs
in another thread) and the time a request waits, so it is a lower bound on latency, and its
inverse an upper bound on the throughput of one vCPU.
"""
from dataclasses import dataclass


@dataclass(frozen=True)
class KvmModel:
    clock_hz: float = 1.9e9
    cpi: float = 1.0
    exit_cycles: float = 2000.0
    cpi_range: tuple = (0.5, 2.0)
    exit_cycles_high: float = 20000.0


DEFAULT = KvmModel()


def project_us(insns_per_req, exits_per_req, cpi, exit_cycles, clock_hz):
    """Projected microseconds per request; None if either count is unknown."""
    if insns_per_req is None or exits_per_req is None:
        return None
    return (insns_per_req * cpi + exits_per_req * exit_cycles) / clock_hz * 1e6


def project(insns_per_req, exits_per_req, m=DEFAULT):
    """{"us": central estimate, "low": best case, "high": worst case} per request."""
    return {
        "us": project_us(insns_per_req, exits_per_req, m.cpi, m.exit_cycles, m.clock_hz),
        "low": project_us(insns_per_req, exits_per_req, m.cpi_range[0], m.exit_cycles,
                          m.clock_hz),
        "high": project_us(insns_per_req, exits_per_req, m.cpi_range[1], m.exit_cycles_high,
                           m.clock_hz),
    }


# -- Under the exit-cost model (tools/kvmcost, --kvmcost) ------------------------------------
# There the patched QEMU charges each exit-equivalent its published cost x D, D being the run's
# time dilation (tools/kvmcost/dilation.py), so that inside the vCPU guest work and exits keep a
# hardware-KVM host's proportions, both D times slower; and it dilates the guest's clock by the
# same D (its TSC and every device timer run at 1/D of wall time), so what the guest measures
# and waits for itself (W, the SLO, its latencies and rates, timers, idle polls) is in
# undilated, KVM-equivalent time already, for nom, Linux and OSv alike. What the host measures
# (the load generators' latencies and rates) is wall time: D times too slow. Two
# KVM-equivalent figures of it follow, both modelled, neither measured:
#
#   dilated:   throughput_kvm = throughput_raw x D,  latency_kvm = latency_raw / D
#              (exact for what the vCPU does and waits for; the host side of a request -- the
#              load generator, the tap, QEMU's virtio back end -- is not dilated, so
#              latency_kvm understates it and throughput_kvm holds only while the guest's vCPU
#              is the bottleneck; the same for every guest);
#   projected: time per request = instructions x CPI / f + the ledger's exit cost per request
#              (undilated ns, by kind, from the cost file) -- project() with the measured exit
#              costs in place of a flat C_exit, independent of D.
#
# On the instruction clock (--guest-clock insn, tools/kvmcost README "The instruction clock")
# the guest's time is its instructions at insn_ps each (one host cycle: CPI 1 on this host) plus
# each charged cost, and wall time / D only while it is halted; how much wall time a window's
# guest second took depends on the code it ran, so no D set beforehand describes it. The
# dilated model then takes the window's measured dilation instead, wall time over the guest's
# time between the ledgers around it (d_window, kvmcost.window_dilation): throughput_kvm is
# then exactly the requests served per second of the guest's time, and latency_kvm keeps the
# dilated model's caveat (the host side is not dilated).


def valuation_d(kvmcost_fig, pass_d=None):
    """The D at which a phase measured under the exit-cost model is valued (its figure's
    "kvmcost": {"dilation", "clock", "d_window"}): on the instruction clock the window's
    measured d_window, else pass_d (the D a pass's runs all ran at, analysis.py) or the D the
    phase ran at. None without a cost model, or on the instruction clock without d_window
    (a ledger from before patches/0011)."""
    if not kvmcost_fig or not kvmcost_fig.get("dilation"):
        return None
    if kvmcost_fig.get("clock") == "insn":
        return kvmcost_fig.get("d_window")
    return pass_d or kvmcost_fig["dilation"]


def dilated(ops_s, latency_us, dilation):
    """{"ops_s", "latency_us"} KVM-equivalent by the dilated model (None where unknown)."""
    if not dilation:
        return {"ops_s": None, "latency_us": None}
    return {"ops_s": ops_s * dilation if ops_s is not None else None,
            "latency_us": latency_us / dilation if latency_us is not None else None}


def project_ledger_us(insns_per_req, exit_ns_per_req, m=DEFAULT):
    """Projected microseconds per request from instructions and the ledger's exit cost."""
    if insns_per_req is None or exit_ns_per_req is None:
        return None
    return insns_per_req * m.cpi / m.clock_hz * 1e6 + exit_ns_per_req / 1e3


# What a batching delay can buy at most. Under saturating load ("many") the guest's time per
# request is 1 / its KVM-equivalent throughput, and W saves time only by sparing exits (the
# instruction clock prices every instruction alike, so batching's better cache locality on a
# real CPU is not modelled): the share of that time the ledger charged to exits is the most any
# W could add to throughput at the same instructions per request.
def exit_share(exit_ns_per_req, ops_s_kvm):
    """The charged exits' share of a request's KVM-equivalent time (exit ns per request x
    KVM-equivalent requests per second); None if either is unknown."""
    if exit_ns_per_req is None or not ops_s_kvm:
        return None
    return exit_ns_per_req * ops_s_kvm / 1e9
