"""nhttpd under the paper's load generator: wrk fetching the 175-byte index (paper section 6)."""
import json
import re
import subprocess

import pytest

pytestmark = pytest.mark.boot


def run_wrk(url, threads=2, connections=32, seconds=5):
    r = subprocess.run(["wrk", f"-t{threads}", f"-c{connections}", f"-d{seconds}s", url],
                       capture_output=True, text=True, timeout=seconds + 120)
    assert r.returncode == 0, r.stdout + r.stderr
    return r.stdout


def test_wrk_has_no_errors(nhttpd):
    """Does `wrk -t2 -c32 -d5s` end with zero socket errors and zero non-2xx responses, and
    does /nom/stats count what it served?"""
    before = json.loads(nhttpd.get("/nom/stats").body)["requests"]
    out = run_wrk(nhttpd.base_url + "/index.html")
    done = int(re.search(r"(\d+) requests in", out).group(1))
    assert done > 0, out
    assert "Socket errors" not in out, out
    assert "Non-2xx" not in out, out
    after = json.loads(nhttpd.get("/nom/stats").body)["requests"]
    assert after - before >= done


@pytest.mark.parametrize("delay_us", [0, 20])
def test_wrk_at_fixed_batching_delay(nom_server_with, delay_us):
    """On nom, at a fixed batching delay W (paper 3.6), does wrk still see no errors, and does
    /nom/stats report that W as fixed, with the driver's counters moving?"""
    server = nom_server_with(f"--batching-delay={delay_us}")
    out = run_wrk(server.base_url + "/index.html")
    assert "Socket errors" not in out and "Non-2xx" not in out, out
    stats = json.loads(server.get("/nom/stats").body)
    assert stats["batching_delay_us"] == delay_us and stats["batching_delay_fixed"]
    assert stats["driver"]["tx_packets"] > 0 and stats["driver"]["rx_packets"] > 0
