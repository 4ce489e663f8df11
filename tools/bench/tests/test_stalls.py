"""tools/bench/stalls.py: its stall grouping and `info jit` reading, and on a real boot the
behaviour it was written to show: nom serving 32 connections makes QEMU flush its soft TLB not
once (before the kernel's lazy idle address space, 140-300 flushes a second, each a memset of
the whole table: kernel/README.md)."""
import json
import subprocess
import sys
from pathlib import Path

import pytest

from bench.stalls import stalls, tlb_flushes

HERE = Path(__file__).resolve().parent
SCRIPT = HERE.parent / "stalls.py"


@pytest.mark.unit
def test_info_jit_of_qemu_7_2_is_read():
    text = (HERE / "fixtures" / "info-jit-qemu-7.2.txt").read_text()
    assert tlb_flushes(text) == {"full": 0, "partial": 4111, "elided": 30553}
    with pytest.raises(ValueError):
        tlb_flushes("unknown command: 'info jit'")


@pytest.mark.unit
def test_slow_requests_close_together_are_one_stall():
    fast, slow = 800.0, 5000.0
    lat = [fast] * 10 + [slow] * 32 + [fast] * 5 + [slow] * 3 + [fast] * 100 + [slow] + [fast]
    # 32 slow in a row, then 3 more within a connection count: one stall; a lone one later.
    assert stalls(lat, 2500.0, 32) == [(10, 35, slow), (150, 1, slow)]
    assert stalls([fast] * 50, 2500.0, 32) == []


@pytest.mark.boot
def test_serving_the_web_load_flushes_no_soft_tlb(tmp_path):
    out = tmp_path / "stalls.json"
    r = subprocess.run([sys.executable, str(SCRIPT), "--w", "10", "--seconds", "3",
                        "--output", str(out)], capture_output=True, text=True, timeout=900)
    assert r.returncode == 0, f"exit {r.returncode}\n{r.stdout[-3000:]}\n{r.stderr[-3000:]}"
    row = json.loads(out.read_text())["rows"][0]
    assert row["nomload"]["requests_per_s"] > 0 and row["wrk"]["requests_per_s"] > 0
    flushes = row["soft_tlb_flushes_per_s"]
    assert flushes["full"] == 0 and flushes["partial"] == 0, row
