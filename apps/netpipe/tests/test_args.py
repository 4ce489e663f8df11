"""Host unit tests of nom's NPtcp command line (port/np_args.c, tests/test_args.c): builds the
test program (apps/netpipe/Makefile, with ASan and UBSan) and runs each named case as its own
pytest case."""
from pathlib import Path

import pytest

from nomvm import hostcases

pytestmark = pytest.mark.unit

HERE = Path(__file__).resolve().parent
TOP = HERE.parents[2]
PROGRAM = Path(hostcases.BUILD) / "apps" / "netpipe" / "tests" / "test_args"
CASES = hostcases.cases_in(HERE / "test_args.c", r'^\s*\{"(\w+)", \w+\},$')


@pytest.fixture(scope="module")
def program():
    hostcases.make(TOP / "apps" / "netpipe", "unit-tests")
    return PROGRAM


@pytest.mark.parametrize("case", CASES)
def test_args_case(program, case):
    hostcases.run_case(program, case, timeout=60)


def test_every_case_is_collected(program):
    """The program's own list of cases is the one collected here; run without a name, it
    runs every one of them."""
    assert hostcases.list_cases(program) == CASES
    assert set(hostcases.run_all(program, min_cases=len(CASES))) == set(CASES)
