"""The two guests the benchmark boots: nom with nhttpd alone at a fixed W, and the Linux guest.

Both are tools/experiment's lab drivers (its own netlab namespace with a tap, the VM counters,
the same address and port), so the benchmark and the experiment measure the same guests the
same way. nom's image here holds nhttpd only: priced, which the experiment adds, would run
its own instructions and interrupts and blur the per-request counters.
"""
import os

from experiment.driver import GuestError
from experiment.linux_driver import LinuxDriver
from experiment.nom_driver import APPS, BUILD, KERNEL, MEMORY_MB, NomDriver
from experiment.labdriver import prepare
from nomvm import VM, make_iso

APP = "nhttpd"

__all__ = ["APP", "GuestError", "NomBenchDriver", "start_guest"]


class NomBenchDriver(NomDriver):
    """NomDriver whose image is one application alone (nhttpd for the benchmark), with
    --batching-delay=W."""

    # More arguments for the application (e.g. insn_profile.py's --idle-poll-us=US).
    guest_args = ()

    def __init__(self, accel):
        super().__init__(accel, price_port=None)

    def make_vm(self, app, variant, workdir, nic, extra_args):
        elf, args = APPS[app][:2]
        # W undilated under the exit-cost model (LabDriver.guest_us).
        cmdline = " ".join([app, *args, f"--batching-delay={self.guest_us(variant['w_us']):g}",
                            *self.guest_args])
        iso = make_iso(KERNEL, [(os.path.join(BUILD, elf), cmdline)],
                       os.path.join(workdir, "vm", "nom.iso"))
        self.image = {"modules": [f"{elf} {cmdline}"], "iso": iso}
        return VM(iso=iso, smp=1, memory_mb=MEMORY_MB, nics=[nic], accel=self.accel,
                  extra_args=extra_args, workdir=os.path.join(workdir, "vm"), name="nom")


def start_guest(guest, accel, workdir, w_us=None, kvmcost="off", app=APP):
    """Boots guest ("nom" at w_us, or "linux") serving app (nhttpd unless told) alone in a
    lab of its own, under the
    exit-cost model kvmcost ("off": the stock QEMU); returns the started driver (call its
    stop() in every case). Raises GuestError when the guest cannot be built or does not come
    up."""
    prepare()
    if guest == "nom":
        driver, variant = NomBenchDriver(accel), {"name": f"w={w_us:g}", "w_us": w_us}
    else:
        driver, variant = LinuxDriver(accel), {"name": "default"}
    driver.kvmcost_name = kvmcost
    reason = driver.unavailable(app, variant)
    if reason:
        raise GuestError(reason)
    try:
        driver.info = driver.start(app, variant, workdir)
    except BaseException:
        driver.stop()
        raise
    return driver
