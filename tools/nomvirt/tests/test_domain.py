"""Does the generated libvirt domain describe the VM `make run` boots, and do the tools' flags
behave (--help only prints, a bad flag exits 2)?"""
import os
import subprocess
import sys
import xml.etree.ElementTree as ET

import pytest

from nomrun import DEFAULT_NICS
from nomvirt import domain

pytestmark = pytest.mark.unit

QEMU = "{%s}" % domain.QEMU_NS
TOOLS = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def parse(accel="tcg", shift=0, vcpus=2, preload=None):
    text = domain.domain_xml("nomx", "/images/nom.iso", "/logs/serial.log",
                             domain.nics_for(shift), accel, 256, vcpus, preload=preload)
    return ET.fromstring(text)


def qemu_args(dom):
    return [a.get("value") for a in dom.find(f"{QEMU}commandline").iter(f"{QEMU}arg")]


def test_tcg_domain_is_qemu_type_with_the_maximum_cpu():
    dom = parse("tcg")
    assert dom.get("type") == "qemu"
    assert dom.find("cpu").get("mode") == "maximum"  # QEMU's -cpu max, as tools/nomvm
    assert dom.find("os/type").get("machine") == "q35"


def test_kvm_domain_passes_the_host_cpu_through():
    dom = parse("kvm")
    assert dom.get("type") == "kvm"
    assert dom.find("cpu").get("mode") == "host-passthrough"


def test_one_vcpu_under_tcg_still_allows_two():
    """tools/nomvm/vm.py smp_option: TCG keeps memory barriers only with maxcpus > 1."""
    vcpu = parse("tcg", vcpus=1).find("vcpu")
    assert (vcpu.text, vcpu.get("current")) == ("2", "1")


def test_image_and_console_are_where_asked():
    dom = parse()
    assert dom.find("devices/disk[@device='cdrom']/source").get("file") == "/images/nom.iso"
    assert dom.find("devices/serial[@type='file']/source").get("path") == "/logs/serial.log"
    assert dom.find("devices/memballoon").get("model") == "none"  # no PCI device of libvirt's


def test_every_make_run_port_is_forwarded_and_shifted():
    args = " ".join(qemu_args(parse(shift=1000)))
    for _, forwards in DEFAULT_NICS:
        for host, guest in forwards:
            assert f"hostfwd=tcp:127.0.0.1:{host + 1000}-:{guest}" in args


def test_nic_n_sits_in_pci_slot_n_plus_one():
    """apps/default-image.txt's --nic=N+1 expects NIC N at slot N+1 of pcie.0."""
    devices = [a for a in qemu_args(parse()) if a.startswith("virtio-net-pci")]
    assert len(devices) == len(DEFAULT_NICS)
    for i, (mac, _) in enumerate(DEFAULT_NICS):
        assert f"mac={mac}" in devices[i] and devices[i].endswith(f"bus=pcie.0,addr={i + 1:#x}")


def test_qemu_gets_the_listen_backlog_library_after_its_arguments():
    """libslirp listens with backlog 1 (tools/nomvm/listen_backlog); libvirt's QEMU needs the
    preload as tools/nomvm's does, and libvirt's schema wants <qemu:env> after <qemu:arg>."""
    children = list(parse(preload="/d/liblistenbacklog.so").find(f"{QEMU}commandline"))
    assert [c.tag for c in children[-1:]] == [f"{QEMU}env"]
    assert all(c.tag == f"{QEMU}arg" for c in children[:-1])
    assert children[-1].attrib == {"name": "LD_PRELOAD", "value": "/d/liblistenbacklog.so"}


def test_no_preload_no_environment():
    assert parse().find(f"{QEMU}commandline/{QEMU}env") is None


def test_missing_preload_library_exits_2_naming_the_fix(tmp_path):
    r = subprocess.run([sys.executable, os.path.join(TOOLS, "nomvirt", "domain.py"), "--iso",
                        "x.iso", "--preload", str(tmp_path / "none.so")], capture_output=True,
                       text=True, cwd=tmp_path, timeout=60)
    assert r.returncode == 2 and "none.so" in r.stderr and "make all" in r.stderr


@pytest.mark.parametrize("tool", ["domain.py", "run.py"])
def test_help_only_prints(tool, tmp_path):
    r = subprocess.run([sys.executable, os.path.join(TOOLS, "nomvirt", tool), "--help"],
                       capture_output=True, text=True, cwd=tmp_path, timeout=60)
    assert r.returncode == 0 and "usage:" in r.stdout
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("tool", ["domain.py", "run.py"])
def test_bad_flag_exits_2_saying_which(tool, tmp_path):
    r = subprocess.run([sys.executable, os.path.join(TOOLS, "nomvirt", tool), "--iso", "x.iso",
                        "--no-such-flag"], capture_output=True, text=True, cwd=tmp_path,
                       timeout=60)
    assert r.returncode == 2 and "--no-such-flag" in r.stderr
