"""Does every libFuzzer harness (tools/fuzz/run.py's list) build and run a short fuzz (seed 1, a
bounded number of runs over its seed corpus, so no time limit to miss) without a crash? `make
fuzz` runs them for longer (tools/fuzz/README.md)."""
import pytest

from fuzz import run

pytestmark = pytest.mark.slow

needs_clang = pytest.mark.skipif(not run.clang_available(),
                                 reason="clang not installed (Debian: clang, libclang-rt-14-dev)")


@needs_clang
@pytest.mark.parametrize("harness", run.HARNESSES, ids=lambda h: h.name)
def test_fuzz_smoke(harness):
    r = run.smoke(harness)
    assert r.crashes == 0 and r.returncode == 0, r.log[-6000:]
    assert r.executions >= harness.smoke_runs, r.log[-3000:]
    assert r.cov > 0, r.log[-3000:]
