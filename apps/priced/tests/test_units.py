"""priced's host unit tests (tests/unit/unit_tests.c, under ASan/UBSan): one pytest case per
named C case. Each C case's question is the comment above it."""
import os

import pytest

from nomvm import hostcases
from priced_vm import BUILD, build_host

pytestmark = pytest.mark.unit

UNIT = os.path.join(BUILD, "apps", "priced", "tests", "unit_tests")


def case_names():
    build_host()
    return hostcases.list_cases(UNIT)


@pytest.mark.parametrize("case", case_names())
def test_unit(case):
    hostcases.run_case(UNIT, case, timeout=60)
