"""Runs nomload's C unit tests (tests/test_parsers.c), one pytest case per named C case."""
import os
import subprocess

import pytest

import loadgen

pytestmark = pytest.mark.unit

BIN = os.path.join(os.path.dirname(loadgen.NOMLOAD), "test_parsers")
CASES = ["mc_value_reply", "mc_other_replies", "mc_request_mix", "http_framing",
         "stats_summary"]


@pytest.fixture(scope="module", autouse=True)
def built():
    loadgen.build()


def test_every_case_is_listed():
    assert subprocess.run([BIN], capture_output=True, text=True).stdout.split() == CASES


@pytest.mark.parametrize("case", CASES)
def test_case(case):
    r = subprocess.run([BIN, case], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
