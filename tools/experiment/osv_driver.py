"""OSv's driver: the OSv images, run by tools/osvguest, 1 vCPU, 128 MiB (paper 6.1).

The repository holds no OSv code: tools/osvguest/build.py builds the images from an OSv tree
into build/osv/, used by default; --osv-image (or NOM_OSV_IMAGE) names others: one image, or
a folder with an image per application (OSv serves the web load with nginx or lighttpd).
Without any, the experiment says so in one line and every OSv cell is "not run" with
tools/osvguest's reason.
"""
import os
import sys

import osvguest

from .driver import GuestError
from .labdriver import LabDriver, prepare


KVMCOST_DEVICES = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                               "kvmcost", "devices.mak")


def exit_cost_reason(kvmcost_name, devices=KVMCOST_DEVICES):
    """Why OSv cannot run on the exit-cost QEMU (kvmcost_name, "off": the stock QEMU), or
    None. OSv's clock needs a paravirtual clock (KVM's only) or an HPET; under TCG only the
    HPET is there, and tools/kvmcost's QEMU has only the devices its devices.mak lists."""
    if kvmcost_name == "off":
        return None
    try:
        with open(devices) as f:
            if any(line.strip() == "CONFIG_HPET=y" for line in f):
                return None
    except OSError:
        return None  # nothing to go by: the boot will say
    return ("OSv does not boot on the exit-cost QEMU: it needs an HPET under TCG ('Neither "
            "paravirtual clock nor HPET'), which tools/kvmcost/devices.mak does not build in; "
            "OSv runs in the raw-TCG-only pass")


class OsvDriver(LabDriver):
    name = "osv"

    def __init__(self, accel, image):
        super().__init__(accel)
        self.image = image

    def unavailable(self, app, variant):
        reason = osvguest.unavailable(self.image, app) or exit_cost_reason(self.kvmcost_name)
        return reason[len("not run: "):] if reason and reason.startswith("not run: ") else reason

    def make_vm(self, app, variant, workdir, nic, extra_args):
        return osvguest.make_vm(app, nic, self.image, extra_args=extra_args,
                                workdir=os.path.join(workdir, "vm"), accel=self.accel)

    def wait_ready(self, vm, app):
        try:
            osvguest.wait_ready(vm)
        except TimeoutError as e:
            raise GuestError(f"OSv did not become ready: {e}") from None


def make_driver(accel, osv_image, price_port):
    prepare()
    if all(osvguest.unavailable(osv_image, app) for app in osvguest.APPS):
        print(f"OSv: {osvguest.unavailable(osv_image, osvguest.APPS[0])}", file=sys.stderr)
    return OsvDriver(accel, osv_image)
