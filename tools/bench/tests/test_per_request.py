"""tools/bench/per_request.py on real boots: one 1-second window per application; does it write
the table and, for each of memcached, nhttpd, NetPIPE's ping-pong and both-ways, instructions
per request split into work and idle polling, with kicks?"""
import json
import subprocess
import sys
from pathlib import Path

import pytest

from bench.per_request import parse_args

SCRIPT = Path(__file__).resolve().parents[1] / "per_request.py"


@pytest.mark.unit
def test_bad_flags_are_refused():
    for argv in (["--runs", "0"], ["--seconds", "0"], ["--dilation", "5"],
                 ["--kvmcost", "apicv", "--dilation", "0"]):
        with pytest.raises(SystemExit):
            parse_args(argv)


@pytest.mark.boot
def test_every_application_gets_work_and_idle_apart(tmp_path):
    r = subprocess.run([sys.executable, str(SCRIPT), "--runs", "1", "--seconds", "1",
                        "--output", str(tmp_path)], capture_output=True, text=True, timeout=900)
    assert r.returncode == 0, f"exit {r.returncode}\n{r.stdout[-3000:]}\n{r.stderr[-3000:]}"
    result = json.loads((tmp_path / "per-request.json").read_text())
    assert set(result["apps"]) == {"memcached", "nhttpd", "netpipe", "netpipe-bidir"}
    for name, app in result["apps"].items():
        m = app["medians"]
        assert app["requests"] > 0 and m["work_insns_per_req"] > 0, name
        assert m["idle_insns_per_req"] >= 0 and m["notifies_per_req"] > 0, name
    assert result["apps"]["memcached"]["settings"]["value_size"] == 1024
    assert result["apps"]["netpipe-bidir"]["settings"]["conns"] > 1
    assert "| netpipe |" in (tmp_path / "per-request.md").read_text()
