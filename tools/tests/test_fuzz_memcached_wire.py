"""Does nom's memcached, on a tap, survive mutated and garbage protocol over real TCP and still
store and return a value after each batch, with nothing on the console? A short run of
tools/fuzz/memcached_wire.py (the long runs: tools/fuzz/README.md)."""
import pytest

import netlab
from fuzz import memcached_wire

pytestmark = pytest.mark.boot


def test_memcached_on_nom_survives_garbage_and_still_serves(tmp_path):
    missing = [str(p) for p in (memcached_wire.KERNEL, memcached_wire.ELF) if not p.exists()]
    if missing:
        pytest.skip(f"not built: {missing}")
    try:
        r = memcached_wire.run(batches=4, connections=5, seed=3, workdir=str(tmp_path))
    except netlab.NetLabError as e:
        pytest.skip(f"no network namespace here: {e}")
    assert r.summary, r.output + r.log[-3000:]
    assert r.summary["batches"] == 4 and r.summary["connections"] == 20, r.summary
    assert r.summary["failed_checks"] == [], r.output + r.log[-3000:]
    assert r.summary["trouble"] is None, r.log[-3000:]
