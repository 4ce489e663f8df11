"""priced's host unit tests (tests/unit/unit_tests.c, under ASan/UBSan): one pytest case per
named C case. Each C case's question is the comment above it."""
import os
import subprocess

import pytest

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(
    __file__)))))
UNIT = os.path.join(TOP, "build", "apps", "priced", "tests", "unit_tests")


def build():
    env = dict(os.environ, TOP=TOP, BUILD=os.path.join(TOP, "build"))
    r = subprocess.run(["make", "-s", "-C", os.path.join(TOP, "apps", "priced"), "host"],
                       env=env, capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr


def case_names():
    build()
    return subprocess.run([UNIT, "--list"], capture_output=True, text=True,
                          check=True).stdout.split()


@pytest.mark.parametrize("case", case_names())
def test_unit(case):
    r = subprocess.run([UNIT, case], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and r.stdout.strip() == f"ok {case}", r.stdout + r.stderr
