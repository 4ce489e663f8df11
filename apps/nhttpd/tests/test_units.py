"""Host unit tests of nhttpd's pure parts (tests/unit/test_units.c): builds the test program
(apps/nhttpd/Makefile, with ASan and UBSan) and runs each named case as its own pytest case."""
import os
import re
import subprocess
from pathlib import Path

import pytest

pytestmark = pytest.mark.unit

HERE = Path(__file__).resolve().parent
TOP = HERE.parents[2]
BUILD = TOP / "build"
PROGRAM = BUILD / "apps" / "nhttpd" / "tests" / "test_units"
CASES = re.findall(r"^\s*CASE\((\w+)\),$", (HERE / "unit" / "test_units.c").read_text(), re.M)


@pytest.fixture(scope="module")
def program():
    env = dict(os.environ, TOP=str(TOP), BUILD=str(BUILD))
    r = subprocess.run(["make", "-s", "-C", str(TOP / "apps" / "nhttpd"), "unit-tests"],
                       env=env, capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    return PROGRAM


@pytest.mark.parametrize("case", CASES)
def test_unit_case(program, case):
    r = subprocess.run([str(program), case], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and f"PASS {case}" in r.stdout, r.stdout + r.stderr


def test_every_case_is_collected(program):
    r = subprocess.run([str(program), "--list"], capture_output=True, text=True, check=True)
    assert r.stdout.split() == CASES
