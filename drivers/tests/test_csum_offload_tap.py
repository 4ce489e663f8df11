"""Checksum offload on a real device (virtio 5.1.6.2, 5.1.6.4): does data cross intact both ways
between the host and nom's memcached on QEMU's virtio-net over a tap, with the offload
negotiated (the tap offers CSUM and GUEST_CSUM), turned off by the driver parameter
(--no-csum-offload), and not offered by the device (csum=off,guest_csum=off)? Each boot stores
random values from 1 byte to 300 KB and reads them back (csum_client.py), and the guest's
console says what was negotiated."""
import sys
from pathlib import Path

import pytest

from experiment.nom_driver import APPS
from nomvm import VM, Nic, make_iso

pytestmark = pytest.mark.boot

HERE = Path(__file__).resolve().parent
BUILD = HERE.parents[1] / "build"
KERNEL = BUILD / "kernel" / "nom.elf"
CLIENT = HERE / "csum_client.py"

CASES = {  # name: (memcached's extra arguments, QEMU's extra arguments, the console's line)
    "negotiated": ([], [], "tx on, rx on"),
    "driver_off": (["--no-csum-offload"], [], "tx off, rx off"),
    "device_off": ([], ["-global", "virtio-net-pci.csum=off", "-global",
                        "virtio-net-pci.guest_csum=off"], "tx off, rx off"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_values_cross_intact_both_ways(lab, tmp_path, case):
    app_args, qemu_args, said = CASES[case]
    elf = BUILD / APPS["memcached"][0]
    if not elf.exists() or not KERNEL.exists():
        pytest.skip(f"not built: {elf}")
    cmdline = " ".join(["memcached -p 11211 -U 0 -t 1 -m 64",
                        f"--ip={lab.guest_ip}/{lab.prefix_len}", *app_args])
    iso = make_iso(str(KERNEL), [(str(elf), cmdline)], str(tmp_path / "csum.iso"))
    vm = VM(iso=iso, nics=[Nic(mac="52:54:00:12:34:56", backend="tap", tap=lab.tap)],
            workdir=str(tmp_path))
    vm.args += qemu_args
    lab.start_vm(vm)
    vm.wait_for(r"net: \S+ gw \S+ \(static\)", 120)
    assert f"net: checksum offload {said}" in vm.log(), vm.tail(20)
    r = lab.run([sys.executable, str(CLIENT), lab.guest_ip], timeout=300)
    assert r.returncode == 0, f"{r.stdout}\n{r.stderr}\n{vm.tail(20)}"
    assert r.stdout.count("OK ") == 8, r.stdout
