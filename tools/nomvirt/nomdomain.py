"""One nom image as a libvirt domain for as long as a `with` block: the ISO and the listen-backlog
library copied into a folder of its own (under qemu:///system QEMU runs as libvirt-qemu, and
libvirt chowns the ISO without giving it back), the XML from domain.py, define + start on
entry, destroy + undefine on exit, also when the start failed half-way; wait_for() reads the
serial console."""
import os
import re
import shutil
import tempfile
import time

from nomvm import choose_accel
from nomvm.vm import listen_backlog_lib, match_complete_lines, read_console
from nomvirt import domain


class NomDomain:
    """One nom image as a defined and running libvirt domain; destroyed and undefined on exit,
    also when starting it failed half-way."""

    def __init__(self, lv, iso, name, port_shift=0, accel=None, memory_mb=256, vcpus=2):
        self.lv, self.name = lv, name
        self.accel = accel or choose_accel()[0]
        library = listen_backlog_lib()  # before mkdtemp: a missing library leaves no folder
        self.workdir = tempfile.mkdtemp(prefix=f"nom-libvirt-{name}-")
        os.chmod(self.workdir, 0o755)  # QEMU runs as libvirt-qemu under qemu:///system
        self.iso = shutil.copy(iso, os.path.join(self.workdir, "nom.iso"))
        preload = shutil.copy(library, os.path.join(self.workdir, "liblistenbacklog.so"))
        os.chmod(preload, 0o644)
        self.serial_path = os.path.join(self.workdir, "serial.log")
        self.xml_path = os.path.join(self.workdir, "domain.xml")
        with open(self.xml_path, "w") as f:
            f.write(domain.domain_xml(name, self.iso, self.serial_path,
                                      domain.nics_for(port_shift), self.accel, memory_mb, vcpus,
                                      preload=preload))
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
        return read_console(self.serial_path)

    def wait_for(self, pattern, timeout=180.0):
        """The first match of pattern in the console's complete lines; TimeoutError (with the
        console's end) if the domain stopped or timeout passed first."""
        rx, deadline = re.compile(pattern, re.M), time.monotonic() + timeout
        while True:
            log = self.log()
            m = match_complete_lines(rx, log)
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
