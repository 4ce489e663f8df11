"""A nom guest whose applications the host reaches: builds its image, forwards free ports of
127.0.0.1 to the guests' ports (QEMU user networking, one virtio-net NIC), boots it and waits
for its console to say the stack is up (and whatever else the caller waits for).

QEMU accepts a forwarded connection before the guest listens, so a connect proves nothing:
callers wait for the application's own line (`ready`) or ask it something.
"""
import os
import socket

from .image import make_iso
from .paths import KERNEL
from .ports import free_port
from .vm import VM, Nic

NET_UP = r"net: \S+ gw \S+ \((dhcp|static)\)"  # nom_net_start's line (net/include/nom/net.h)
BOOT_TIMEOUT_S = 180.0
MAC = "52:54:00:12:34:56"


class Guest:
    """modules: [(elf_path, cmdline)]; tcp, udp: the guest ports to forward. After start(),
    host_port(guest_port) is where 127.0.0.1 reaches each. Other keyword arguments go to VM
    (memory_mb, smp, name, extra_args, qemu ...). Stopped by stop() or leaving `with`:
    `with Guest(...) as g:` or, to wait for other lines, `with Guest(...).start(ready=...) as g:`."""

    def __init__(self, modules, workdir, tcp=(), udp=(), mac=MAC, kernel=KERNEL, grub_dir=None,
                 **vm_args):
        """grub_dir: the GRUB make_iso boots with (default: image.GRUB_PC_DIR)."""
        missing = [p for p in [kernel] + [elf for elf, _ in modules] if not os.path.isfile(p)]
        if missing:
            raise FileNotFoundError(f"not built: {', '.join(map(str, missing))}")
        self.tcp = {g: free_port() for g in tcp}
        self.udp = {g: free_port(socket.SOCK_DGRAM) for g in udp}
        iso = make_iso(str(kernel), [(str(e), c) for e, c in modules],
                       os.path.join(workdir, "nom.iso"), grub_dir=grub_dir)
        nic = Nic(mac=mac, hostfwd=[(h, g) for g, h in self.tcp.items()],
                  udp_hostfwd=[(h, g) for g, h in self.udp.items()])
        self.vm = VM(iso=iso, nics=[nic], workdir=str(workdir), **vm_args)

    def host_port(self, guest_port, proto="tcp"):
        return (self.tcp if proto == "tcp" else self.udp)[guest_port]

    def start(self, ready=(NET_UP,), timeout=BOOT_TIMEOUT_S):
        """Boots and waits for each regular expression of ready on the console, in order;
        raises TimeoutError (with the console's tail) if one does not come."""
        self.vm.start()
        try:
            for pattern in ready:
                self.vm.wait_for(pattern, timeout)
        except BaseException:
            self.vm.stop()
            raise
        return self

    def stop(self):
        self.vm.stop()

    def __enter__(self):
        """Starts it with start()'s defaults unless started already (`with g.start(...):`)."""
        return self if self.vm.proc else self.start()

    def __exit__(self, *exc):
        self.stop()
