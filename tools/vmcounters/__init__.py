"""Per-run counters of a guest that do not depend on the emulator's speed (paper section 6).

Usage (the experiment runner's view):

    c = vmcounters.RunCounters(workdir, accel)           # accel: "tcg" or "kvm"
    vm = nomvm.VM(..., extra_args=c.qemu_args())
    c.start(); vm.start(); c.attach(vm.proc.pid)
    a = c.snapshot(); ...load for a while...; b = c.snapshot()
    figures = vmcounters.per_request(a, b, requests)     # dict, see per_request()
    vm.stop(); c.stop()

Under TCG: guest instructions (our TCG plugin, insn_count.c), virtio notifications and
interrupts (QEMU trace events), vCPU thread CPU time. Under KVM: KVM's own exit and injection
counters over QMP replace the instruction count (a TCG plugin cannot run there); the trace
events are counted the same way.

Under the exit-cost model (kvmcost=tools/kvmcost.model(...): the patched QEMU, whose path is
RunCounters.qemu), the kvmcost ledger counts every exit-equivalent by kind (ledger.py) and
per_request() takes exits and interrupts from it instead of from the trace.
"""
import os

from .insns import InsnCounter, InsnSample, parse_insn_file, build, PLUGIN
from .trace import TraceCounter, count_trace_events, notifications, interrupts, DEFAULT_EVENTS
from .threads import sample_vcpu_threads, utilization, read_task_stat
from . import ledger
from .kvmstats import Qmp, qmp_args, read_kvm_stats, sum_vcpu_stats, EXIT_STATS, INJECTION_STATS

__all__ = ["RunCounters", "per_request", "InsnCounter", "InsnSample", "parse_insn_file", "build",
           "PLUGIN", "TraceCounter", "count_trace_events", "notifications", "interrupts",
           "DEFAULT_EVENTS", "sample_vcpu_threads", "utilization", "read_task_stat", "Qmp",
           "qmp_args", "read_kvm_stats", "sum_vcpu_stats", "EXIT_STATS", "INJECTION_STATS"]


class RunCounters:
    """Every counter of one QEMU run; snapshot() reads them all at one moment."""

    def __init__(self, workdir, accel="tcg", interval_ms=100, trace_events=DEFAULT_EVENTS,
                 profile=False, kvmcost=None):
        os.makedirs(workdir, exist_ok=True)
        self.workdir, self.accel, self.kvmcost = workdir, accel, kvmcost
        # The QEMU binary to run: the stock one, or the exit-cost model's.
        self.qemu = kvmcost["qemu"] if kvmcost else "qemu-system-x86_64"
        self.ledger_path = os.path.join(workdir, "kvmcost-ledger.json") if kvmcost else None
        self.snapshots = 0
        self.insns = InsnCounter(workdir, interval_ms, profile=profile) if accel == "tcg" else None
        self.trace = TraceCounter(workdir, trace_events)
        self.qmp_path = os.path.join(workdir, "qmp.sock") if accel == "kvm" else None
        self.qmp = None
        self.pid = None

    def qemu_args(self):
        # debug-threads names the vCPU threads ("CPU 0/TCG"), which threads.py looks for.
        args = ["-name", "guest,debug-threads=on"] + self.trace.qemu_args()
        if self.insns:
            args += self.insns.qemu_args()
        if self.qmp_path:
            args += qmp_args(self.qmp_path)
        if self.kvmcost:
            import kvmcost
            # The guest's clock dilated by the same D (tools/kvmcost README, "Time dilation").
            args += kvmcost.args_for(self.kvmcost["cost_file"], self.ledger_path,
                                     dilation=self.kvmcost["dilation"],
                                     clock=self.kvmcost.get("clock", "dilated"),
                                     insn_ps=self.kvmcost.get("insn_ps"))
        return args

    def start(self):
        """Call before QEMU starts (the trace FIFO needs its reader)."""
        self.trace.start()
        return self

    def attach(self, pid):
        """Call once QEMU runs: pid is QEMU's (nomvm.VM.proc.pid)."""
        self.pid = pid
        if self.qmp_path:
            self.qmp = Qmp(self.qmp_path)

    def snapshot(self):
        """{"mono_ns", "insns" (None under KVM), "trace": {event: n}, "threads": {...},
        "kvm": {stat: n} (only under KVM)}."""
        snap = {"trace": self.trace.snapshot(), "accel": self.accel}
        snap["mono_ns"] = snap["trace"]["mono_ns"]
        snap["threads"] = sample_vcpu_threads(self.pid) if self.pid else None
        if self.insns:
            s = self.insns.latest()
            snap["insns"] = s.total if s else 0
            snap["idle_insns"] = s.idle if s else 0
            snap["idle_spins"] = s.spins if s else 0
            snap["insns_mono_ns"] = s.mono_ns if s else snap["mono_ns"]
        else:
            snap["insns"] = None
        if self.qmp:
            snap["kvm"] = read_kvm_stats(self.qmp)
        if self.kvmcost:
            import kvmcost
            self.snapshots += 1
            out = os.path.join(self.workdir, f"kvmcost-{self.snapshots}.json")
            snap["kvmcost"] = kvmcost.snapshot(self.ledger_path, out)
        return snap

    def stop(self):
        if self.qmp:
            self.qmp.close()
            self.qmp = None
        return self.trace.stop()


def per_request(a, b, requests):
    """Figures per request between snapshots a and b (requests: completed in between).
    Returns a dict: seconds, insns_per_req (None under KVM) and of it idle_insns_per_req (the
    guest's marked idle polling), work_insns_per_req (the rest) and idle_spins_per_req (empty
    idle-poll turns), notifies_per_req, irqs_per_req,
    exit_equiv_per_req (notifications + interrupts, the TCG stand-in for exits; both None
    under KVM, where kvm_exits_per_req is the real figure),
    vcpu_util (share of a host core, summed over vCPUs), d_insn (tools/kvmcost/dilation.py:
    host clock over TCG's instruction rate while busy, CPI 1), and under KVM kvm_exits_per_req
    and kvm_injections_per_req. With the kvmcost ledger in both snapshots: "kvmcost"
    (ledger.figures: by kind, per second and per request), and exits, interrupts (timers and
    IPIs too: all_irqs_per_req), exit_equiv_per_req and d_window (the window's wall time over
    its guest time, kvmcost.window_dilation) from it."""
    n = max(requests, 1)
    seconds = (b["mono_ns"] - a["mono_ns"]) / 1e9
    diff = {k: b["trace"].get(k, 0) - a["trace"].get(k, 0) for k in b["trace"] if k != "mono_ns"}
    out = {"seconds": seconds, "requests": requests,
           "notifies_per_req": notifications(diff) / n, "irqs_per_req": interrupts(diff) / n}
    out["exit_equiv_per_req"] = out["notifies_per_req"] + out["irqs_per_req"]
    if b.get("accel") == "kvm":
        # Under KVM a kick is an ioeventfd write handled in the kernel: QEMU's
        # virtio_queue_notify never runs, so only KVM's own exit counter sees it.
        out["notifies_per_req"] = out["exit_equiv_per_req"] = None
    out["insns_per_req"] = out["idle_insns_per_req"] = out["work_insns_per_req"] = None
    out["idle_spins_per_req"] = None
    if a.get("insns") is not None and b.get("insns") is not None:
        out["insns_per_req"] = (b["insns"] - a["insns"]) / n
        # Idle polling's empty turns, marked by the guest (insn_count.c), are not work.
        idle = b.get("idle_insns", 0) - a.get("idle_insns", 0)
        out["idle_insns_per_req"] = idle / n
        out["work_insns_per_req"] = out["insns_per_req"] - idle / n
        out["idle_spins_per_req"] = (b.get("idle_spins", 0) - a.get("idle_spins", 0)) / n
    out["vcpu_util"] = None
    if a.get("threads") and b.get("threads"):
        out["vcpu_util"] = sum(utilization(a["threads"], b["threads"]).values())
    out["d_insn"] = None
    if out["insns_per_req"] is not None and out["vcpu_util"]:
        from kvmcost import dilation
        out["d_insn"] = dilation.from_instructions(out["insns_per_req"] * n,
                                                   out["vcpu_util"] * seconds,
                                                   dilation.host_clock_hz())
    if a.get("kvmcost") and b.get("kvmcost"):
        led = out["kvmcost"] = ledger.figures(a["kvmcost"], b["kvmcost"], requests, seconds)
        out["ledger_exits_per_req"] = led["exits_per_req"]
        out["all_irqs_per_req"] = out["ledger_irqs_per_req"] = led["irqs_per_req"]
        out["exit_ns_per_req"] = led["exit_ns_per_req"]
        out["exit_equiv_per_req"] = led["exits_per_req"] + led["irqs_per_req"]
        out["d_window"] = led["d_window"]
    if "kvm" in a and "kvm" in b:
        d = {k: v - a["kvm"].get(k, 0) for k, v in b["kvm"].items()}
        out["kvm_exits_per_req"] = d.get("exits", 0) / n
        out["kvm_injections_per_req"] = sum(d.get(k, 0) for k in INJECTION_STATS) / n
    return out
