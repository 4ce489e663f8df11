"""Host tests of net/'s IPv4 hook (hook_test.c, built by net/Makefile's host target): a segment
with a bad TCP checksum or IP lengths that do not fit must not end a connection in TIME-WAIT,
which the hook used to do because it runs before lwIP checks anything (issue 14, item 11)."""
import subprocess
from pathlib import Path

import pytest

from nomvm import hostcases

pytestmark = pytest.mark.unit

HERE = Path(__file__).resolve().parent
EXE = HERE.parents[1] / "build" / "net" / "host" / "hook_test"
CASES = hostcases.cases_in(HERE / "hook_test.c", r"^\s*RUN\((\w+)\);$")


@pytest.fixture(scope="module")
def verdicts():
    hostcases.make(HERE.parent, "host", jobs=2)
    r = subprocess.run([EXE], capture_output=True, text=True, timeout=120)
    return hostcases.verdicts(r.stdout), r


@pytest.mark.parametrize("case", CASES)
def test_hook_case(verdicts, case):
    got, r = verdicts
    assert got.get(case) == "PASS", f"{case}: {got.get(case)}\n{r.stdout}{r.stderr}"


def test_cases_are_found():
    assert len(CASES) >= 4  # the pattern still finds the RUN lines
