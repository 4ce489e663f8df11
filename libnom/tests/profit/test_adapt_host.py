"""Host tests of libnom's controller (src/profit/, nom/adapt.h): builds it with the host gcc
over fakes of the rest of libnom, the board and the stack (tests/profit/Makefile) and runs each
named case of adapt_test.c; then checks the C against tools/profit's Python: the same utility on
shared operating points, the same choice of W over the test profile at every price."""
import itertools
import json
import math
import re
import subprocess
from pathlib import Path

import pytest

from nomvm import hostcases
from profit.utility import KINDS, utility

pytestmark = pytest.mark.unit

HERE = Path(__file__).resolve().parent
LIBNOM = HERE.parents[1]
TOP = LIBNOM.parent
BUILD = TOP / "build"
TEST_PROFILE = HERE / "profile.json"
CASES = hostcases.cases_in(HERE / "adapt_test.c", r'^\s*\{ "(\w+)", case_\w+ \},$')


@pytest.fixture(scope="module")
def adapt_test():
    hostcases.make(HERE)
    return str(BUILD / "libnom" / "profit-test" / "adapt_test")


@pytest.mark.parametrize("case", CASES)
def test_adapt_case(adapt_test, case):
    hostcases.run_case(adapt_test, case, timeout=60)


def test_every_case_is_collected(adapt_test):
    assert hostcases.list_cases(adapt_test) == CASES


# Operating points around the paper's figures (table 1) and the edges of each function: the
# SLO itself, no jitter, refunds beyond alpha, tiny latencies for the bonus, prices above alpha.
POINTS = [(t, l, j, p) for t, (l, j), p in itertools.product(
    (0.0, 0.0168, 1.0, 9.4),
    ((63, 13), (399, 121), (402, 499), (750, 0), (750, 10), (760, 0), (1999, 5), (2500, 300),
     (7638, 24148), (0.5, 0.1)),
    (0.0, 1.0, 10.0, 25.0))]


def _python_or_einval(kind, t, l, j, p):
    try:
        return utility(kind, t, l, j, p)
    except ValueError:
        return "EINVAL"


def test_utility_matches_python(adapt_test):
    """Every kind at every shared point: the C's double equals the Python's (to 1e-12)."""
    cases = [(k,) + pt for k in KINDS for pt in POINTS]
    cases += [("bonus", 1.0, 0.0, 0.0, 1.0), ("penalty", -1.0, 10.0, 1.0, 1.0),
              ("penalty", 1.0, 10.0, -1.0, 1.0), ("refund", 1.0, -5.0, 0.0, 1.0)]
    stdin = "".join(f"{k} {t!r} {l!r} {j!r} {p!r}\n" for k, t, l, j, p in cases)
    r = subprocess.run([adapt_test, "utility"], input=stdin, capture_output=True, text=True,
                       check=True)
    got = r.stdout.split()
    assert len(got) == len(cases)
    for case, c in zip(cases, got):
        py = _python_or_einval(*case)
        if py == "EINVAL" or c == "EINVAL":
            assert c == py, case
        else:
            assert math.isclose(float(c), py, rel_tol=1e-12, abs_tol=1e-15), (case, c, py)


def test_choice_matches_python(adapt_test):
    """At every price, kind and class the C picks the W that maximizes the Python's utility
    over the test profile (the lowest W among equals)."""
    prof = json.loads(TEST_PROFILE.read_text())
    prices = (0.0, 1.0, 2.5, 5.0, 10.0, 15.0, 20.0, 40.0)
    queries = [(k, c, p) for k in KINDS for c in ("many", "single") for p in prices]
    stdin = "".join(f"{k} {c} {p!r}\n" for k, c, p in queries)
    r = subprocess.run([adapt_test, "best"], input=stdin, capture_output=True, text=True,
                       check=True)
    lines = r.stdout.splitlines()
    assert len(lines) == len(queries)
    for (kind, cls, price), line in zip(queries, lines):
        pts = prof["classes"][cls]
        us = [utility(kind, q["t_gbps"], q["latency_us"], q["jitter_us"], price) for q in pts]
        best = us.index(max(us))
        w, rate = line.split()
        assert int(w) == pts[best]["w_us"], (kind, cls, price, us)
        assert math.isclose(float(rate), us[best], rel_tol=1e-12, abs_tol=1e-15)


def test_choices_the_test_profile_was_made_for(adapt_test):
    """The hand-made profile's intent (penalty): many takes W=40 at 1 $/Gbit and W=10 at 10,
    single takes W=0 at both (the in-QEMU test relies on these)."""
    stdin = "penalty many 1\npenalty many 10\npenalty single 1\npenalty single 10\n"
    r = subprocess.run([adapt_test, "best"], input=stdin, capture_output=True, text=True,
                       check=True)
    assert [l.split()[0] for l in r.stdout.splitlines()] == ["40", "10", "0", "0"]


def _symbols(*files):
    """(defined, undefined) symbol names of object files or archives (nm)."""
    nm = subprocess.run(["nm", *map(str, files)], capture_output=True, text=True,
                        check=True).stdout
    defined = {l.split()[-1] for l in nm.splitlines() if re.search(r" [TDBRVWC] ", l)}
    undefined = {l.split()[-1] for l in nm.splitlines() if re.search(r" U ", l)}
    return defined, undefined


def test_guest_objects_call_only_libnom_and_newlib():
    """src/profit's guest objects in libnom.a call nothing of the stack, the driver or the
    applications: every symbol they need is libnom's or newlib's (libc, libm)."""
    hostcases.make(LIBNOM)
    _, needed = _symbols(*sorted((BUILD / "libnom" / "obj" / "profit").glob("*.o")))
    sysroot = BUILD / "libnom" / "newlib" / "install" / "x86_64-elf" / "lib"
    below, _ = _symbols(BUILD / "libnom" / "libnom.a", sysroot / "libc.a", sysroot / "libm.a")
    assert needed - below == set()
