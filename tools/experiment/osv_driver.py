"""OSv's driver: the user's OSv image, run by tools/osvguest, 1 vCPU, 128 MiB (paper 6.1).

The repository holds no OSv code: the user builds or downloads an image (tools/osvguest's
README says how) and passes it with --osv-image (or NOM_OSV_IMAGE): one image, or a folder
with an image per application (OSv serves the web load with lighttpd). Without one every OSv
cell is "not run" with tools/osvguest's reason.
"""
import os

import osvguest

from .driver import GuestError
from .labdriver import LabDriver, prepare


class OsvDriver(LabDriver):
    name = "osv"

    def __init__(self, accel, image):
        super().__init__(accel)
        self.image = image

    def unavailable(self, app, variant):
        reason = osvguest.unavailable(self.image, app)
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
    return OsvDriver(accel, osv_image)
