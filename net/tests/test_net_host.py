"""Host tests of net/: builds the port, the netif and the socket layer with a fake driver and a
fake libnom (net/Makefile, target host) and runs each named case of net_test.c as its own
pytest case: two lwIP stacks in two processes on a fake cable exchange data byte for byte,
refuse, reset and half-close connections, fill windows, batch by W, lease an address by DHCP.
Also checks what the nom build of the libraries expects from outside them."""
import os
import re
import subprocess
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
NET = HERE.parent
TOP = NET.parent
BUILD = TOP / "build"
OUT = BUILD / "net"
CASES = re.findall(r'^\s*\{ "(\w+)", case_\w+ \},$', (HERE / "net_test.c").read_text(), re.M)


def make(target):
    env = dict(os.environ, TOP=str(TOP), BUILD=str(BUILD))
    r = subprocess.run(["make", "-s", "-j2", "-C", str(NET), target], env=env,
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    return OUT


@pytest.fixture(scope="module")
def host_build():
    return make("host")


@pytest.mark.parametrize("case", CASES)
def test_net_case(host_build, case):
    r = subprocess.run([str(host_build / "host" / "net_test"), case], capture_output=True,
                       text=True, timeout=300)
    assert r.returncode == 0 and f"PASS {case}" in r.stdout, r.stdout + r.stderr


def test_every_case_is_collected(host_build):
    r = subprocess.run([str(host_build / "host" / "net_test"), "--list"], capture_output=True,
                       text=True, check=True)
    assert r.stdout.split() == CASES


def test_guest_libraries_need_only_libnom_newlib_and_the_driver():
    """libnomnet.a + liblwip.a for nom call libnom (nom_*), newlib and the driver (vnet_*),
    nothing of the host's."""
    out = make("guest")
    nm = subprocess.run(["nm", "-A", str(out / "libnomnet.a"), str(out / "liblwip.a")],
                        capture_output=True, text=True, check=True).stdout
    defined = {l.split()[-1] for l in nm.splitlines() if re.search(r" [TDBRVW] ", l)}
    undefined = {l.split()[-1] for l in nm.splitlines() if re.search(r" U ", l)}
    newlib = {"__errno", "__getreent", "abort", "calloc", "free", "fcntl", "fflush", "memcpy",
              "memcmp", "memmove", "memset", "printf", "puts", "putchar", "strchr", "strcmp",
              "strcpy", "strdup", "strlen", "strncmp", "strtol", "atoi", "_ctype_"}
    foreign = {s for s in undefined - defined
               if not s.startswith(("nom_", "vnet_")) and s not in newlib}
    assert not foreign, sorted(foreign)
