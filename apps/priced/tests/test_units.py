"""priced's host unit tests (tests/unit/unit_tests.c, under ASan/UBSan): one pytest case per
named C case. Each C case's question is the comment above it."""
import os
import subprocess
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from priced_vm import BUILD, build_host  # noqa: E402

UNIT = os.path.join(BUILD, "apps", "priced", "tests", "unit_tests")


def case_names():
    build_host()
    return subprocess.run([UNIT, "--list"], capture_output=True, text=True,
                          check=True).stdout.split()


@pytest.mark.parametrize("case", case_names())
def test_unit(case):
    r = subprocess.run([UNIT, case], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and r.stdout.strip() == f"ok {case}", r.stdout + r.stderr
