"""What every guest driver shares: a NetLab of its own, the VM counters, the billed bytes.

A guest driver (linux_driver.py, osv_driver.py, nom_driver.py) subclasses LabDriver and
supplies two things: make_vm() (the guest's QEMU with one NIC on the lab's tap) and
wait_ready() (until the application serves). LabDriver does the rest the same way for every
guest, so that the comparison is fair: the namespace (tools/netlab), the load of each phase
(tools/loadgen's run_phase with the paper's tools, after a short warm-up outside the measured
window), the counters (tools/vmcounters: instructions, notifications, interrupts, vCPU time,
KVM's counters under KVM), and bytes_out, the guest's outbound traffic counted on the host side
of its tap (what the provider bills; the tap's rx counter is what the guest sent).
"""
import functools
import os
import subprocess
import time

import kvmcost
import loadgen
import netlab
import vmcounters
from nomvm import Nic, placement

from kvmcost import dilation

from . import hostspeed
from .driver import GuestDriver, GuestError, HostBusy

MAC = "52:54:00:12:34:56"
WARMUP_S = 1.0  # of each phase, loaded but not measured: connections, caches, the TCG cache


@functools.lru_cache(maxsize=None)
def prepare():
    """Builds what every lab-based driver needs on the host (our TCG plugin, nomload and the
    patched NPtcp) once per experiment; raises GuestError saying what failed."""
    for what, build in (("tools/vmcounters", vmcounters.build), ("tools/loadgen", loadgen.build),
                        ("tools/kvmcost's calibration mix", dilation.build)):
        try:
            build()
        except (subprocess.CalledProcessError, OSError) as e:
            raise GuestError(f"{what} does not build: {e}") from None


class LabDriver(GuestDriver):
    # Whether the instruction counter also profiles where the guest's instructions went
    # (vmcounters.guestprofile; tools/bench/insn_profile.py sets it; TCG only).
    profile_insns = False
    # The exit-cost model (tools/kvmcost: "off" for the stock QEMU, "skylake", "apicv" or
    # "zero"); the runner sets it (--kvmcost), alike for every guest. Each start() calibrates
    # D anew, and runs at the reference's D when there is one (calibration.py says why).
    kvmcost_name = "off"
    # The pass's reference calibration of D ({"native_ticks", "tcg_ticks"}, runner:
    # calibration.py): the D every run runs at, and against which start() tells a busy host;
    # None: each run runs at its own calibration's D, not checked.
    calibration_reference = None
    # A fixed D for every start, no calibration (tools/bench/holds.py --dilation: boots compared
    # with each other at one cost model; a boot's own calibration ranges 3.4-10 on a noisy host).
    dilation = None
    # What the dilated guest clock counts (kvmcost.GUEST_CLOCKS): wall time, the vCPU
    # thread's CPU time or the guest's instructions while it runs (--guest-clock of the runner,
    # tools/profile/sweep.py and tools/bench/holds.py).
    guest_clock = kvmcost.DEFAULT_GUEST_CLOCK
    # The load's client (loadgen.phase): the paper's tools, memcaslap, wrk and NPtcp.
    client = "paper"
    # Whether the guest's vCPU thread gets a host CPU of its own, and the harness, the load
    # generator and QEMU's other threads the rest (tools/nomvm/placement.py says why); the
    # runner sets it (--pin-vcpu), alike for every guest. Every lab guest has one vCPU.
    pin_vcpu = False
    VCPUS = 1

    def __init__(self, accel):
        self.accel = accel
        self.lab = self.vm = self.counters = self.kvmcost = self.placement = None
        self.app = self.variant = self.workdir = None

    def guest_us(self, us):
        """An economic time constant (W) of us microseconds undilated, in the guest's clock:
        us as it is. Under the exit-cost model the guest's clock is dilated by D (QEMU's
        -kvmcost ...,dilation=D, tools/kvmcost patches/0003; Gupta et al. NSDI'06), so its
        microseconds are undilated ones; without it there is no D to undo."""
        return us

    # -- hooks of a guest driver ---------------------------------------------------------------
    def make_vm(self, app, variant, workdir, nic, extra_args):
        """The nomvm.VM running app (variant) with `nic` and `extra_args` (counters), its
        workdir (serial log) workdir/vm."""
        raise NotImplementedError

    def wait_ready(self, vm, app):
        """Returns when app serves on self.lab.guest_ip; raises GuestError otherwise."""
        raise NotImplementedError

    def run_load(self, app, phase, seconds, lab, workdir):
        """The load of app/phase for seconds inside lab: driver.py's figures less what
        LabDriver adds (bytes_out, counters)."""
        try:
            return loadgen.run_phase(app, phase, seconds, lab, workdir, client=self.client)
        except loadgen.LoadError as e:
            raise GuestError(f"{app} {phase} load: {e}") from None

    # -- the protocol ----------------------------------------------------------------------------
    def start(self, app, variant, workdir, on_network=None):
        self.app, self.variant, self.workdir = app, variant, workdir
        self.placement = self._confine_harness()
        try:
            # Calibrated before the guest boots (tools/kvmcost/dilation.py): the reference's D,
            # or the run's own without one.
            self.kvmcost = kvmcost.model(self.kvmcost_name, dilation=self.dilation,
                                         reference=self.calibration_reference,
                                         clock=self.guest_clock)
        except (OSError, RuntimeError, KeyError) as e:
            raise GuestError(f"exit-cost model {self.kvmcost_name}: {e}") from None
        why = ((self.kvmcost or {}).get("calibration") or {}).get("disturbed")
        if why:
            # D drives the stalls and the guest's clock: a wrong D is another cost model, so
            # the run would measure another system. Nothing has booted yet.
            raise HostBusy(f"host busy while D was calibrated ({why}), "
                           f"{len(self.kvmcost['calibration']['attempts'])} attempts")
        try:
            self.lab = netlab.NetLab().setup()
        except netlab.NetLabError as e:
            raise GuestError(f"network lab: {e}") from None
        if on_network:
            on_network()
        self.counters = vmcounters.RunCounters(os.path.join(workdir, "counters"), self.accel,
                                               profile=self.profile_insns, kvmcost=self.kvmcost)
        os.makedirs(os.path.join(workdir, "vm"), exist_ok=True)
        try:
            nic = Nic(mac=MAC, backend="tap", tap=self.lab.tap)
            self.vm = self.make_vm(app, variant, workdir, nic, self.counters.qemu_args())
        except (OSError, ValueError) as e:
            raise GuestError(f"cannot make the {self.name} VM: {e}") from None
        # Every guest's VM is a nomvm.VM whose argv starts with the binary: the cost model's
        # QEMU replaces the stock one here, once for all guest drivers.
        self.vm.args[0] = self.counters.qemu
        if self.vm.smp != self.VCPUS:
            raise GuestError(f"the {self.name} VM has {self.vm.smp} vCPUs, not {self.VCPUS}")
        self.counters.start()
        self.lab.start_vm(self.vm)
        self.counters.attach(self.vm.proc.pid)
        if self.placement:
            try:
                self.placement["vcpu_threads"] = placement.pin_vcpus(self.vm.proc.pid,
                                                                     self.placement)
            except placement.PlacementError as e:
                raise GuestError(f"--pin-vcpu: {e}") from None
        self.wait_ready(self.vm, app)
        info = {"accel": self.accel, "qemu_args": self.vm.args, "placement": self.placement}
        if self.kvmcost:
            info["kvmcost"] = {k: self.kvmcost[k] for k in ("name", "cost_file", "dilation",
                                                            "calibration", "clock", "insn_ps")
                               if k in self.kvmcost}
        return info

    def _confine_harness(self):
        """Under pin_vcpu, moves the harness (and so what it starts from now on: the
        calibration of D, the lab, QEMU, the load) off the CPU the vCPU will have; returns the
        placement (placement.plan), or None unpinned."""
        if not self.pin_vcpu:
            return None
        try:
            return placement.confine_harness(self.VCPUS)
        except placement.PlacementError as e:
            raise GuestError(f"--pin-vcpu: {e}") from None

    def service_address(self):
        # Every address of the namespace: its tap (the guest's NIC 0 reaches lab.host_ip) and
        # its loopback (where a user-mode NIC of a QEMU inside the namespace arrives). Nothing
        # outside the namespace sees it.
        return "0.0.0.0"

    def spawn(self, argv, **popen_kwargs):
        return self.lab.popen(argv, **popen_kwargs)

    def load(self, phase, seconds):
        if self.vm.proc.poll() is not None:
            raise GuestError(f"the {self.name} guest died before {phase}:\n{self.vm.tail(20)}")
        warm = min(WARMUP_S, seconds / 10)
        self.run_load(self.app, phase, warm, self.lab, os.path.join(self.workdir, "warmup"))
        before_bytes, before = self._tap_rx_bytes(), self.counters.snapshot()
        monitor = hostspeed.Monitor(self._speed_reference()).start()
        try:
            fig = dict(self.run_load(self.app, phase, seconds - warm, self.lab, self.workdir))
        finally:
            host_speed = monitor.stop()
        after, after_bytes = self.counters.snapshot(), self._tap_rx_bytes()
        fig["host_speed"] = host_speed
        fig.setdefault("seconds", seconds - warm)
        fig["bytes_out"] = after_bytes - before_bytes
        fig["counters"] = vmcounters.per_request(before, after, fig["ops"])
        if "all_irqs_per_req" not in fig["counters"]:  # the kvmcost ledger's count is whole
            # What the APIC delivered by MSI (QEMU 7.2's apic_deliver_irq misses LAPIC timer
            # and IPI interrupts, which paper table 2 counts too: run --kvmcost for those).
            apic = (after["trace"].get("apic_deliver_irq", 0)
                    - before["trace"].get("apic_deliver_irq", 0))
            fig["counters"]["all_irqs_per_req"] = apic / max(fig["ops"], 1)
        if self.kvmcost:
            fig["kvmcost"] = {k: self.kvmcost[k] for k in ("name", "dilation", "calibration",
                                                           "clock")}
            # The dilation the guest ran at in this window, measured by its own clock: on the
            # instruction clock, the D its KVM-equivalent figures take (kvmmodel.valuation_d).
            fig["kvmcost"]["d_window"] = fig["counters"].get("d_window")
        if not fig["ops"]:  # figures of no request at all are not figures
            fig["latency_us"] = {k: None for k in ("mean", "p50", "p99", "stddev")}
            fig["counters"] = {k: (None if k.endswith("_per_req") else v)
                               for k, v in fig["counters"].items()}
            fig["note"] = "no operation completed in the measured window"
        return fig

    def _speed_reference(self):
        """The native ticks the host's speed during a phase is compared with: the reference
        calibration this run was checked against, else its own calibration, else None (the
        window's fastest sample; hostspeed.summarize)."""
        cal = (self.kvmcost or {}).get("calibration") or {}
        return (cal.get("reference") or {}).get("native_ticks") or cal.get("native_ticks")

    def stop(self):
        try:
            if self.vm:
                self.vm.stop()
            if self.counters:
                self.counters.stop()
        finally:
            if self.lab:
                self.lab.teardown()
            self.lab = self.vm = self.counters = None

    def wait_port(self, vm, port, timeout_s):
        """Waits until the guest accepts TCP connections on port (probed from inside the lab:
        a connection opened and closed). Raises GuestError if QEMU ends or time runs out."""
        probe = ["bash", "-c", f"exec 3<>/dev/tcp/{self.lab.guest_ip}/{port}"]
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if vm.proc.poll() is not None:
                raise GuestError(f"QEMU ended ({vm.proc.returncode}):\n{vm.tail(30)}")
            if self.lab.run(probe, timeout=30).returncode == 0:
                return
            time.sleep(0.5)
        raise GuestError(f"nothing accepts connections on port {port} after {timeout_s:g} s:\n"
                         f"{vm.tail(30)}")

    def _tap_rx_bytes(self):
        r = self.lab.run(["cat", f"/sys/class/net/{self.lab.tap}/statistics/rx_bytes"],
                         timeout=30)
        if r.returncode != 0:
            raise GuestError(f"cannot read the tap's counters: {r.stderr.strip()}")
        return int(r.stdout)
