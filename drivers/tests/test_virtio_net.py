"""Host tests of drivers/virtio-net: builds the driver and its simulated-device test program
(drivers/Makefile) and runs each named case of test_vnet.c as its own pytest case; checks that
the guest library needs nothing from outside the driver but libnom and memcpy/memset."""
import os
import re
import subprocess
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
TOP = HERE.parents[1]
BUILD = TOP / "build"
OUT = BUILD / "drivers"
CASES = re.findall(r"^\s*CASE\((\w+)\),$", (HERE / "test_vnet.c").read_text(), re.M)


@pytest.fixture(scope="module")
def built():
    env = dict(os.environ, TOP=str(TOP), BUILD=str(BUILD))
    r = subprocess.run(["make", "-s", "-C", str(TOP / "drivers"), "all"], env=env,
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    return OUT


@pytest.mark.parametrize("case", CASES)
def test_driver_case(built, case):
    r = subprocess.run([str(built / "tests" / "vnet_test"), case], capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == 0 and f"PASS {case}" in r.stdout, r.stdout + r.stderr


def test_every_case_is_collected(built):
    r = subprocess.run([str(built / "tests" / "vnet_test"), "--list"], capture_output=True,
                       text=True, check=True)
    assert r.stdout.split() == CASES


def test_guest_library_needs_only_libnom(built):
    """The nom build of the driver may call libnom (nom_*) and memcpy/memset, nothing else."""
    nm = subprocess.run(["nm", "-A", str(built / "libvirtio_net.a")], capture_output=True,
                        text=True, check=True).stdout
    defined = {l.split()[-1] for l in nm.splitlines() if re.search(r" [TDBR] ", l)}
    undefined = {l.split()[-1] for l in nm.splitlines() if re.search(r" U ", l)}
    foreign = {s for s in undefined - defined
               if not s.startswith("nom_") and s not in ("memcpy", "memset")}
    assert not foreign, sorted(foreign)
