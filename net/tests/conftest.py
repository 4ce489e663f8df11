"""Fixtures the guest tests of net/ share."""
import os
import subprocess
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
TOP = HERE.parents[1]
BUILD = TOP / "build"


@pytest.fixture(scope="session")
def netecho_elf():
    """build/net/tests/netecho.elf (tests/guest/netecho.c), built once per session."""
    needed = [BUILD / "kernel" / "nom.elf", BUILD / "libnom" / "libnom.a",
              BUILD / "drivers" / "libvirtio_net.a"]
    missing = [str(p) for p in needed if not p.exists()]
    if missing:
        pytest.skip(f"not built: {missing}")
    env = dict(os.environ, TOP=str(TOP), BUILD=str(BUILD))
    r = subprocess.run(["make", "-s", "-j2", "-C", str(HERE.parent), "guest-tests"], env=env,
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    return BUILD / "net" / "tests" / "netecho.elf"
