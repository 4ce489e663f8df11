"""One-call boots for tests: build an ISO from a kernel and application modules, run it until
the kernel says every application ended (QEMU exits through isa-debug-exit), return the log."""
import os
import tempfile
from dataclasses import dataclass

from .image import make_iso
from .paths import KERNEL
from .vm import VM, Nic


@dataclass
class BootResult:
    exit_code: int  # QEMU's: (value << 1) | 1 from isa-debug-exit; 1 = every app exited 0
    log: str
    accel: str

    @property
    def all_apps_ok(self):
        return self.exit_code == 1


def boot_apps(modules, smp=1, nics=(), memory_mb=128, timeout=180, kernel=KERNEL, extra_args=(),
              grub_dir=None):
    """modules: [(elf_path, cmdline)]. Boots with `exit-when-idle` and waits for QEMU to end;
    grub_dir: the GRUB that boots it (make_iso's)."""
    work = tempfile.mkdtemp(prefix="nom-boot-")
    iso = make_iso(kernel, modules, os.path.join(work, "nom.iso"), kernel_cmdline="exit-when-idle",
                   grub_dir=grub_dir)
    vm = VM(iso=iso, smp=smp, nics=list(nics), memory_mb=memory_mb, workdir=work,
            extra_args=extra_args)
    with vm:
        code = vm.wait_exit(timeout)
        return BootResult(code, vm.log(), vm.accel)


def nics(count, base_mac="52:54:00:12:34:"):
    """count modern virtio-net NICs on unconnected user-mode backends."""
    return [Nic(mac=f"{base_mac}{i + 0x10:02x}") for i in range(count)]
