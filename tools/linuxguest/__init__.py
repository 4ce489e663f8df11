"""The Linux comparison guest: Debian's kernel and an initramfs with the applications.

    g = linuxguest.build()                       # cached in build/linuxguest/
    vm = linuxguest.make_vm(["memcached"], nic, extra_args=counters.qemu_args())
    lab.start_vm(vm); linuxguest.wait_ready(vm)  # inside a netlab.NetLab

1 vCPU, 256 MiB (paper section 6), one virtio-net NIC, static address (netlab.GUEST_IP).
Applications: memcached (port 11211), nginx and nhttpd (port 80; one of them per boot),
netpipe (NPtcp receivers on 5002 ping-pong and 5003 streaming; loadgen/apps.py).
"""
from nomvm import VM

from .build import (build, BuildError, kernel_release, module_order, unpacked_versions,
                    write_cpio, OUT)

__all__ = ["build", "make_vm", "wait_ready", "BuildError", "APPS", "READY", "MEMORY_MB",
           "unpacked_versions"]

APPS = ("memcached", "nginx", "nhttpd", "netpipe")
READY = r"linuxguest: ready"
MEMORY_MB = 256
DEFAULT_IP = "10.77.0.2/24"  # netlab.GUEST_IP inside netlab's /24
# The TSC as clocksource, as a KVM cloud guest has kvm-clock: without it Linux under TCG (no
# kvm-clock, the TSC marked unstable at boot as "unsynchronized") falls back to the ACPI PM
# timer and every clock read, vDSO ones included, is a port read (0x608), a VM exit on
# hardware KVM (README.md).
CLOCK_ARGS = "clocksource=tsc tsc=reliable"


def make_vm(apps, nic, ip=DEFAULT_IP, extra_args=(), workdir=None, accel=None,
            memory_mb=MEMORY_MB, smp=1):
    """A nomvm.VM (not started) booting the guest with `apps` on `nic` (a nomvm.Nic).
    Raises BuildError if the guest cannot be built, ValueError for an unknown application."""
    apps = [apps] if isinstance(apps, str) else list(apps)
    unknown = [a for a in apps if a not in APPS]
    if unknown:
        raise ValueError(f"unknown application(s) {unknown}; known: {APPS}")
    if "nginx" in apps and "nhttpd" in apps:
        raise ValueError("nginx and nhttpd both serve port 80: boot one at a time")
    guest = build()
    if "nhttpd" in apps and "nhttpd" not in guest["apps"]:
        raise BuildError("nhttpd-linux is not built (build/apps/nhttpd/nhttpd-linux)")
    append = (f"console=ttyS0 panic=-1 loglevel=4 {CLOCK_ARGS} nom.ip={ip} "
              f"nom.apps={','.join(apps)}")
    return VM(kernel=guest["kernel"], initrd=guest["initrd"], append=append, smp=smp,
              memory_mb=memory_mb, nics=[nic], accel=accel, extra_args=extra_args,
              workdir=workdir, name="linux")


def wait_ready(vm, timeout=300.0):
    """Waits for init's ready line (every application listens); raises TimeoutError with the
    console's tail if it does not come."""
    return vm.wait_for(READY, timeout)
