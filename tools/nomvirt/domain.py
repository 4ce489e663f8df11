"""A libvirt domain for a nom image: the same VM as `make run` (tools/nomrun.py), as XML.

The machine, CPU, memory and NICs follow tools/nomvm: q35, TCG with `-cpu max` (domain type
'qemu', CPU mode 'maximum') unless the host has hardware virtualization (type 'kvm', CPU
'host-passthrough'), the ISO on the q35's built-in SATA CD-ROM, the serial console into a file.
The NICs are QEMU user networking with host port forwarding, which libvirt 9.0 (Debian 12) can
express only for its 'passt' backend: they go to QEMU verbatim through <qemu:commandline>, with
the same -netdev/-device words tools/nomvm gives QEMU, each NIC pinned to PCI slot N+1 of pcie.0
as apps/default-image.txt's --nic numbers expect. libvirt adds no PCI device of its own (no
balloon, USB, video), so nothing else takes those slots. QEMU's environment gets the library
that raises libslirp's listen backlog (tools/nomvm/listen_backlog, as tools/nomvm/vm.py gives
every VM with port forwards) through <qemu:env>, so simultaneous connects are not dropped.

    python3 tools/nomvirt/domain.py --iso build/nom.iso --name nom1 > nom1.xml
    virsh define nom1.xml && virsh start nom1
"""
import argparse
import os
import sys
import xml.etree.ElementTree as ET

from nomrun import DEFAULT_NICS
from nomvm import Nic, choose_accel
from nomvm.vm import LISTEN_BACKLOG_LIB, VM

QEMU_NS = "http://libvirt.org/schemas/domain/qemu/1.0"


def nics_for(port_shift=0):
    """make run's NICs (tools/nomrun.py DEFAULT_NICS) with every host port moved by port_shift."""
    return [Nic(mac=mac, hostfwd=[(h + port_shift, g) for h, g in fwd])
            for mac, fwd in DEFAULT_NICS]


def nic_args(nics):
    """QEMU's words for the NICs: tools/nomvm's, each device pinned to pcie.0 slot i+1."""
    args = []
    for i, nic in enumerate(nics):
        words = VM._nic_args(i, nic)
        words[-1] += f",bus=pcie.0,addr={i + 1:#x}"
        args += words
    return args


def _sub(parent, tag, text=None, **attrs):
    e = ET.SubElement(parent, tag, attrs)
    if text is not None:
        e.text = str(text)
    return e


def domain_xml(name, iso, serial_path, nics, accel, memory_mb=256, vcpus=2,
               emulator="/usr/bin/qemu-system-x86_64", preload=None):
    """The domain's XML text. accel: 'tcg' or 'kvm' (tools/nomvm/accel.py decides); preload: a
    library for QEMU's LD_PRELOAD (the listen-backlog one), readable by the user QEMU runs as."""
    ET.register_namespace("qemu", QEMU_NS)
    dom = ET.Element("domain", type="kvm" if accel == "kvm" else "qemu")
    _sub(dom, "name", name)
    _sub(dom, "memory", memory_mb, unit="MiB")
    # One vCPU more allowed than present under TCG, as tools/nomvm/vm.py's smp_option says why.
    if accel == "tcg" and vcpus < 2:
        _sub(dom, "vcpu", 2, current=str(vcpus))
    else:
        _sub(dom, "vcpu", vcpus)
    os_ = _sub(dom, "os")
    _sub(os_, "type", "hvm", arch="x86_64", machine="q35")
    _sub(os_, "boot", dev="cdrom")
    features = _sub(dom, "features")
    _sub(features, "acpi")  # the kernel finds its vCPUs in the ACPI MADT
    _sub(dom, "cpu", mode="host-passthrough" if accel == "kvm" else "maximum")
    _sub(dom, "on_reboot", "destroy")  # -no-reboot: a guest that resets stops instead
    devices = _sub(dom, "devices")
    _sub(devices, "emulator", emulator)
    disk = _sub(devices, "disk", type="file", device="cdrom")
    _sub(disk, "driver", name="qemu", type="raw")
    _sub(disk, "source", file=os.path.abspath(iso))
    _sub(disk, "target", dev="sda", bus="sata")
    _sub(disk, "readonly")
    serial = _sub(devices, "serial", type="file")
    _sub(serial, "source", path=os.path.abspath(serial_path))
    _sub(serial, "target", port="0")
    _sub(devices, "controller", type="usb", model="none")
    _sub(devices, "memballoon", model="none")
    cmdline = _sub(dom, f"{{{QEMU_NS}}}commandline")
    # isa-debug-exit as tools/nomvm gives every VM: a guest that ends itself stops QEMU.
    for word in ["-device", "isa-debug-exit,iobase=0xf4,iosize=0x04"] + nic_args(nics):
        _sub(cmdline, f"{{{QEMU_NS}}}arg", value=word)
    if preload:  # libvirt's schema puts every <qemu:env> after the <qemu:arg>s
        _sub(cmdline, f"{{{QEMU_NS}}}env", name="LD_PRELOAD", value=os.path.abspath(preload))
    ET.indent(dom)
    return ET.tostring(dom, encoding="unicode") + "\n"


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--iso", required=True, help="the nom image (build/nom.iso)")
    p.add_argument("--name", default="nom", help="the domain's name (default nom)")
    p.add_argument("--serial", help="file for the serial console (default NAME-serial.log "
                   "beside the ISO)")
    p.add_argument("--port-shift", type=int, default=0,
                   help="add this to every forwarded host port, as `make run` does")
    p.add_argument("--memory-mb", type=int, default=256)
    p.add_argument("--vcpus", type=int, default=2)
    p.add_argument("--accel", choices=["tcg", "kvm"],
                   help="default: kvm only with vmx/svm (tools/nomvm/accel.py)")
    p.add_argument("--preload", default=LISTEN_BACKLOG_LIB,
                   help="library QEMU gets in LD_PRELOAD; must be readable by the user libvirt "
                   "runs QEMU as (default %(default)s, `make all` builds it; '' for none)")
    a = p.parse_args(argv)
    if a.preload and not os.path.isfile(a.preload):
        p.error(f"--preload {a.preload}: no such file (`make all` builds the listen-backlog "
                "library; --preload '' leaves it out)")
    if not 0 <= a.port_shift < 50000:
        p.error("--port-shift must be in [0, 50000)")
    accel = a.accel or choose_accel()[0]
    serial = a.serial or os.path.join(os.path.dirname(os.path.abspath(a.iso)),
                                      f"{a.name}-serial.log")
    sys.stdout.write(domain_xml(a.name, a.iso, serial, nics_for(a.port_shift), accel,
                                a.memory_mb, a.vcpus, preload=a.preload))


if __name__ == "__main__":
    main()
