"""priced's host unit tests (tests/unit/unit_tests.c, under ASan/UBSan): one pytest case per
named C case. Each C case's question is the comment above it."""
import os
import sys

import pytest

from nomvm import hostcases

pytestmark = pytest.mark.unit

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from priced_vm import BUILD, build_host  # noqa: E402

UNIT = os.path.join(BUILD, "apps", "priced", "tests", "unit_tests")


def case_names():
    build_host()
    return hostcases.list_cases(UNIT)


@pytest.mark.parametrize("case", case_names())
def test_unit(case):
    hostcases.run_case(UNIT, case, timeout=60)
