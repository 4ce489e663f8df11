"""The Linux guest's driver: Debian's kernel with the application (tools/linuxguest).

Variants: memcached and NetPIPE run as Debian builds them; the web load goes to nhttpd built
for Linux ("default") or to nginx ("nginx").
"""
import os

import linuxguest

from .driver import GuestError
from .labdriver import LabDriver, prepare

BOOT_TIMEOUT_S = 300.0  # TCG boots of Debian's kernel take 10-60 s on a loaded machine


def guest_app(app, variant):
    if app == "nhttpd":
        return "nginx" if variant["name"] == "nginx" else "nhttpd"
    return app


class LinuxDriver(LabDriver):
    name = "linux"

    def unavailable(self, app, variant):
        try:
            built = linuxguest.build()
        except linuxguest.BuildError as e:
            return f"the Linux guest cannot be built: {e}"
        if guest_app(app, variant) not in built["apps"]:
            return f"{guest_app(app, variant)} is not in the Linux guest (not built)"
        return None

    def make_vm(self, app, variant, workdir, nic, extra_args):
        try:
            return linuxguest.make_vm([guest_app(app, variant)], nic, extra_args=extra_args,
                                      workdir=os.path.join(workdir, "vm"), accel=self.accel)
        except linuxguest.BuildError as e:
            raise GuestError(str(e)) from None

    def wait_ready(self, vm, app):
        try:
            linuxguest.wait_ready(vm, BOOT_TIMEOUT_S)
        except TimeoutError as e:
            raise GuestError(f"the Linux guest did not become ready: {e}") from None


def make_driver(accel, osv_image, price_port):
    prepare()
    return LinuxDriver(accel)
