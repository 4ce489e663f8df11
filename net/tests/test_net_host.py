"""Host tests of net/: builds the port, the netif and the socket layer with a fake driver and a
fake libnom (net/Makefile, target host) and runs each named case of net_test.c as its own
pytest case: two lwIP stacks in two processes on a fake cable exchange data byte for byte,
refuse, reset and half-close connections, fill windows, batch by W, lease an address by DHCP.
Also checks what the nom build of the libraries expects from outside them."""
import re
import subprocess
from pathlib import Path

import pytest

from nomvm import hostcases

pytestmark = pytest.mark.unit

HERE = Path(__file__).resolve().parent
NET = HERE.parent
TOP = NET.parent
BUILD = TOP / "build"
OUT = BUILD / "net"
CASES = hostcases.cases_in(HERE / "net_test.c", r'^\s*\{ "(\w+)", case_\w+ \},$')


def make(target):
    hostcases.make(NET, target, jobs=2)
    return OUT


@pytest.fixture(scope="module")
def host_build():
    return make("host")


@pytest.mark.parametrize("case", CASES)
def test_net_case(host_build, case):
    hostcases.run_case(host_build / "host" / "net_test", case)


def test_every_case_is_collected(host_build):
    assert hostcases.list_cases(host_build / "host" / "net_test") == CASES


def test_guest_libraries_need_only_libnom_newlib_and_the_driver():
    """libnomnet.a + liblwip.a for nom call libnom (nom_*), newlib and the driver (vnet_*),
    nothing of the host's."""
    out = make("guest")
    nm = subprocess.run(["nm", "-A", str(out / "libnomnet.a"), str(out / "liblwip.a")],
                        capture_output=True, text=True, check=True).stdout
    defined = {l.split()[-1] for l in nm.splitlines() if re.search(r" [TDBRVW] ", l)}
    undefined = {l.split()[-1] for l in nm.splitlines() if re.search(r" U ", l)}
    newlib = {"__errno", "__getreent", "abort", "atexit", "calloc", "free", "fcntl", "fflush", "memcpy",
              "memcmp", "memmove", "memset", "printf", "puts", "putchar", "strchr", "strcmp",
              "strcpy", "strdup", "strlen", "strncmp", "strncpy", "strtol", "atoi", "_ctype_",
              "mmap", "mprotect"}  # libnom's POSIX layer: lwIP's heap arena (lwip_heap.c)
    foreign = {s for s in undefined - defined
               if not s.startswith(("nom_", "vnet_")) and s not in newlib}
    assert not foreign, sorted(foreign)
