"""OSv's driver: the user's OSv image (tools/osvguest runs it), 1 vCPU, 128 MiB (paper 6.1).

The repository holds no OSv code: the user builds or downloads an image (tools/osvguest's
README says how) and passes it with --osv-image (or NOM_OSV_IMAGE). Without one every OSv cell
is "not run" with that reason. The VM itself comes from tools/osvguest, in the same shape as
tools/linuxguest: make_vm(app, nic, image, extra_args, workdir, accel) and wait_ready(vm).
"""
import os

from .driver import GuestError
from .labdriver import LabDriver
from .load import run_load

NO_IMAGE = ("no OSv image given (--osv-image PATH or NOM_OSV_IMAGE; tools/osvguest/README.md "
            "says how to build or download one)")


class OsvDriver(LabDriver):
    name = "osv"

    def __init__(self, accel, image, osvguest):
        super().__init__(accel)
        self.image, self.osvguest = image, osvguest

    def unavailable(self, app, variant):
        supported = getattr(self.osvguest, "APPS", None)
        if supported is not None and app not in supported:
            return f"tools/osvguest does not run {app} on OSv"
        return None

    def make_vm(self, app, variant, workdir, nic, extra_args):
        return self.osvguest.make_vm(app, nic, self.image, extra_args=extra_args,
                                     workdir=os.path.join(workdir, "vm"), accel=self.accel)

    def wait_ready(self, vm, app):
        try:
            self.osvguest.wait_ready(vm)
        except TimeoutError as e:
            raise GuestError(f"OSv did not become ready: {e}") from None

    def run_load(self, app, phase, seconds, lab, workdir, tag=None):
        return run_load(app, phase, seconds, lab, workdir, tag)


def make_driver(accel, osv_image, price_port):
    if not osv_image:
        raise GuestError(NO_IMAGE)
    if not os.path.isfile(osv_image):
        raise GuestError(f"the OSv image {osv_image} does not exist")
    try:
        import osvguest
    except ImportError as e:
        raise GuestError(f"tools/osvguest cannot load: {e}") from None
    if not hasattr(osvguest, "make_vm"):
        raise GuestError("tools/osvguest has no make_vm() yet")
    return OsvDriver(accel, osv_image, osvguest)
