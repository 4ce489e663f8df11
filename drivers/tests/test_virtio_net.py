"""Host tests of drivers/virtio-net: builds the driver and its simulated-device test program
(drivers/Makefile) and runs each named case of test_vnet.c as its own pytest case; checks that
the guest library needs nothing from outside the driver but libnom and memcpy/memset."""
import re
import subprocess
from pathlib import Path

import pytest

from nomvm import hostcases

pytestmark = pytest.mark.unit

HERE = Path(__file__).resolve().parent
TOP = HERE.parents[1]
BUILD = TOP / "build"
OUT = BUILD / "drivers"
CASES = hostcases.cases_in(HERE / "test_vnet.c", r"^\s*CASE\((\w+)\),$")


@pytest.fixture(scope="module")
def built():
    hostcases.make(TOP / "drivers")
    return OUT


@pytest.mark.parametrize("case", CASES)
def test_driver_case(built, case):
    hostcases.run_case(built / "tests" / "vnet_test", case, timeout=120)


def test_every_case_is_collected(built):
    assert hostcases.list_cases(built / "tests" / "vnet_test") == CASES


def test_guest_library_needs_only_libnom(built):
    """The nom build of the driver may call libnom (nom_*) and memcpy/memset, nothing else."""
    nm = subprocess.run(["nm", "-A", str(built / "libvirtio_net.a")], capture_output=True,
                        text=True, check=True).stdout
    defined = {l.split()[-1] for l in nm.splitlines() if re.search(r" [TDBR] ", l)}
    undefined = {l.split()[-1] for l in nm.splitlines() if re.search(r" U ", l)}
    foreign = {s for s in undefined - defined
               if not s.startswith("nom_") and s not in ("memcpy", "memset")}
    assert not foreign, sorted(foreign)
