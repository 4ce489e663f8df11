"""Do memcached and nhttpd on nom, loaded at once (memcaslap and wrk), keep every value they were
given, evict nothing, keep the board's free memory steady and the console clean? The short
version of tools/fuzz/soak.py (the 10-minute run: tools/fuzz/README.md)."""
import shutil

import pytest

import netlab
from fuzz import soak

pytestmark = pytest.mark.boot


def test_memcached_and_nhttpd_under_load_at_once_lose_nothing(tmp_path):
    missing = [str(p) for p in (soak.KERNEL, soak.MEMCACHED, soak.NHTTPD) if not p.exists()]
    missing += [t for t in ("memcaslap", "wrk") if not shutil.which(t)]
    if missing:
        pytest.skip(f"not built or not installed: {missing}")
    try:
        s = soak.run(seconds=30, warmup=10, workdir=str(tmp_path))
    except netlab.NetLabError as e:
        pytest.skip(f"no network namespace here: {e}")
    assert s.failures() == [], (s.summary or s.output, s.log[-3000:])
    assert s.summary["memaslap"]["cmd_get"] > 0 and s.summary["wrk_requests"] > 0, s.summary
