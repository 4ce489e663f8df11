"""Host unit tests of nom's NPtcp command line (port/np_args.c, tests/test_args.c): builds the
test program (apps/netpipe/Makefile, with ASan and UBSan) and runs each named case as its own
pytest case."""
import os
import re
import subprocess
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
TOP = HERE.parents[2]
BUILD = Path(os.environ.get("BUILD", TOP / "build"))
PROGRAM = BUILD / "apps" / "netpipe" / "tests" / "test_args"
CASES = re.findall(r'^\s*\{"(\w+)", \w+\},$', (HERE / "test_args.c").read_text(), re.M)


@pytest.fixture(scope="module")
def program():
    env = dict(os.environ, TOP=str(TOP), BUILD=str(BUILD))
    r = subprocess.run(["make", "-s", "-C", str(TOP / "apps" / "netpipe"), "unit-tests"],
                       env=env, capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    return PROGRAM


@pytest.mark.parametrize("case", CASES)
def test_args_case(program, case):
    r = subprocess.run([str(program), case], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and r.stdout.strip() == f"ok {case}", r.stdout + r.stderr


def test_every_case_is_collected(program):
    """Run without a name, the program runs every case it has: all of them are in CASES."""
    r = subprocess.run([str(program)], capture_output=True, text=True, timeout=60)
    assert [line.split()[1] for line in r.stdout.splitlines()] == CASES, r.stdout + r.stderr
