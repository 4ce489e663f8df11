"""`make libvirt-run`: boots a nom image as a libvirt domain, as `make run` boots it under QEMU.

It defines a domain (tools/nomvirt/domain.py's XML) under the connection tools/nomvirt/
libvirtd.py picks, starts it, starts the price provider for the image's priced as nomrun does,
and prints the serial console; Ctrl-C (or SIGTERM) destroys and undefines the domain. The ISO
is copied into a folder of the run's own (libvirt hands it to the libvirt-qemu user).

    python3 tools/nomvirt/run.py --iso build/nom.iso [--name nom] [--port-shift N]
"""
import argparse
import os
import re
import shutil
import signal
import sys
import tempfile
import time

import nomrun
from nomvm import choose_accel
from nomvirt import domain
from nomvirt.libvirtd import Libvirt
from priceprovider import process as provider_process


class NomDomain:
    """One nom image as a defined and running libvirt domain; destroyed and undefined on exit,
    also when starting it failed half-way."""

    def __init__(self, lv, iso, name, port_shift=0, accel=None, memory_mb=256, vcpus=2):
        self.lv, self.name = lv, name
        self.accel = accel or choose_accel()[0]
        self.workdir = tempfile.mkdtemp(prefix=f"nom-libvirt-{name}-")
        os.chmod(self.workdir, 0o755)  # QEMU runs as libvirt-qemu under qemu:///system
        self.iso = shutil.copy(iso, os.path.join(self.workdir, "nom.iso"))
        self.serial_path = os.path.join(self.workdir, "serial.log")
        self.xml_path = os.path.join(self.workdir, "domain.xml")
        with open(self.xml_path, "w") as f:
            f.write(domain.domain_xml(name, self.iso, self.serial_path,
                                      domain.nics_for(port_shift), self.accel, memory_mb, vcpus))
        self.defined = False

    def __enter__(self):
        try:
            self.lv.virsh("define", self.xml_path)
            self.defined = True
            self.lv.virsh("start", self.name)
        except BaseException:
            self.__exit__(None, None, None)
            raise
        return self

    def running(self):
        r = self.lv.virsh("domstate", self.name, check=False)
        return r.returncode == 0 and r.stdout.strip() == "running"

    def log(self):
        try:
            with open(self.serial_path, errors="replace") as f:
                return f.read()
        except OSError:
            return ""

    def wait_for(self, pattern, timeout=180.0):
        """The first match of pattern in the console's complete lines; TimeoutError (with the
        console's end) if the domain stopped or timeout passed first."""
        rx, deadline = re.compile(pattern, re.M), time.monotonic() + timeout
        while True:
            log = self.log()
            m = rx.search(log, 0, log.rfind("\n") + 1)
            if m:
                return m
            if not self.running() or time.monotonic() > deadline:
                raise TimeoutError(f"no /{pattern}/ (domain running: {self.running()}):\n"
                                   + "\n".join(log.splitlines()[-40:]))
            time.sleep(0.5)

    def __exit__(self, *exc):
        if self.defined:
            self.lv.virsh("destroy", self.name, check=False)
            self.lv.virsh("undefine", self.name, check=False)
            self.defined = False
        shutil.rmtree(self.workdir, ignore_errors=True)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--iso", required=True, help="the nom image (build/nom.iso)")
    p.add_argument("--name", default="nom", help="the domain's name (default nom)")
    p.add_argument("--port-shift", type=int, default=0,
                   help="add this to every forwarded host port, the provider's too")
    p.add_argument("--kernel", help="nom.elf, to rebuild the image for a shifted provider port")
    p.add_argument("--modules", help="the image's module list (apps/default-image.txt), likewise")
    a = p.parse_args(argv)
    if not 0 <= a.port_shift < 50000:
        p.error("--port-shift must be in [0, 50000)")
    if (a.kernel is None) != (a.modules is None):
        p.error("--kernel and --modules go together")
    iso, own = a.iso, tempfile.mkdtemp(prefix="nom-libvirt-image-")
    if a.port_shift and a.kernel:
        iso = nomrun.shifted_image(a.kernel, a.modules, a.port_shift, own)
    signal.signal(signal.SIGTERM, lambda *_: (_ for _ in ()).throw(KeyboardInterrupt()))
    provider = nomrun.start_price_provider(nomrun.PRICE_PORT + a.port_shift,
                                           os.path.join(own, "priceprovider.log"))
    try:
        with Libvirt() as lv, NomDomain(lv, iso, a.name, a.port_shift) as dom:
            print(f"libvirt-run: domain {a.name} on {lv.uri}, accelerator {dom.accel}")
            for nic in domain.nics_for(a.port_shift):
                for h, g in nic.hostfwd:
                    print(f"libvirt-run: 127.0.0.1:{h} -> guest port {g} (NIC {nic.mac})")
            print(f"libvirt-run: serial console below ({dom.serial_path}); Ctrl-C destroys "
                  "and undefines the domain")
            shown = 0
            while dom.running():
                text = dom.log()
                sys.stdout.write(text[shown:])
                sys.stdout.flush()
                shown = len(text)
                time.sleep(0.5)
            print("libvirt-run: the domain stopped")
    except KeyboardInterrupt:
        print("\nlibvirt-run: destroying the domain")
    finally:
        provider_process.stop(provider)
        shutil.rmtree(own, ignore_errors=True)


if __name__ == "__main__":
    main()
