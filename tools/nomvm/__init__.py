"""Host-side helpers to build nom boot images and run them in QEMU (tests, make run, benchmarks)."""
from .accel import choose_accel
from .image import make_iso, read_module_list
from .vm import VM, Nic
from .session import BootResult, boot_apps, nics
from .guest import NET_UP, Guest
from .paths import BUILD, KERNEL, TOP
from .ports import free_port

__all__ = ["choose_accel", "make_iso", "read_module_list", "VM", "Nic", "BootResult",
           "boot_apps", "nics", "Guest", "NET_UP", "free_port", "BUILD", "KERNEL", "TOP"]
